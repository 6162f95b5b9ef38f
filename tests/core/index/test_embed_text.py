"""Chunks with nothing in them for a vector stay keyword-searchable but are not embedded."""

from __future__ import annotations

import base64
import random
from pathlib import Path

import pytest

from core.base.paths import AppPaths
from core.engine import Engine
from core.index.embed_text import NO_VECTOR, chunk_body, chunk_hash, embedding_input, input_hash, vector_worthy
from core.search.search import SearchRequest
from tests.helpers import BagOfWordsEmbedder

LINKS = "- [Datasette](https://datasette.io/)\n- [sqlite-utils](https://sqlite-utils.datasette.io/) - 2022-02-01\n- <https://example.com/x>\n* [[Other note]]\n"
NUMBERS = "| year | q1 | q2 | q3 |\n|---|---|---|---|\n| 2021 | 1.5 | 2.25 | 3.0 |\n| 2022 | 1.75 | 2.5 | 3.5 |\n| 2023 | 2.0 | 2.75 | 4.0 |\n"
DATA_URI = "![](data:image/png;base64," + base64.b64encode(bytes(range(256)) * 4).decode() + ")\n"
MINIFIED = "!function(e,t){" + "var a=e[t]||{};a.b=function(c){return c*2};" * 30 + "}(window,'x');\n"


@pytest.mark.parametrize("body", [LINKS, NUMBERS, DATA_URI, MINIFIED], ids=["link-list", "number-table", "data-uri", "minified"])
def test_chunks_without_meaning_get_no_vector(body: str) -> None:
    assert not vector_worthy(body)


@pytest.mark.parametrize(
    "body",
    [
        "Sourdough rests overnight in the fridge before baking.",
        "Here's where [I've got to so far](https://github.com/simonw/datasette-lite/blob/daba69708c7a72adad20dce3c534b9a399ef11c8/tests/x.py):",
        "![Functions shown in Datasette Lite with facets for deterministic](https://github.com/simonw/til/assets/9599/ef3d8238.png)",
        "```python\nimport subprocess\nsubprocess.run(['sleep', '5'], timeout=2)\n```\n",
        "| name | what it does |\n|---|---|\n| tar | archive files into one |\n| gzip | compress a file |\n",
        "在压缩包里找到文件的方法",
        "",
    ],
    ids=["prose", "sentence-with-long-link", "image-with-alt-text", "code", "table-of-words", "chinese", "heading-only"],
)
def test_chunks_with_meaning_keep_their_vector(body: str) -> None:
    assert vector_worthy(body)


def test_the_hash_is_the_inputs_hash_marked_when_left_out() -> None:
    bread = "# Bread\n\nSourdough rests overnight."
    assert chunk_hash("Bread", "Bread", bread) == input_hash(embedding_input("Bread", "Bread", bread))
    assert chunk_hash("Links", "Links", "# Links\n\n" + LINKS) == NO_VECTOR + input_hash(embedding_input("Links", "Links", "# Links\n\n" + LINKS))


def test_a_link_list_is_keyword_searchable_but_not_embedded_and_coverage_is_whole(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "bread.md").write_text("# Bread\n\nSourdough loaf rests overnight in the fridge.\n")
    (vault / "links.md").write_text("# Reading list\n\n" + LINKS.replace("Datasette", "Zanzibarite"))
    emb = BagOfWordsEmbedder()
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=lambda vc: emb)
    name = engine.add_vault(vault).name
    stats = engine.sync([name])[0].embedding
    assert stats is not None
    assert (stats.desired, stats.embedded, stats.skipped) == (1, 1, 1)
    assert emb.texts_embedded == 1
    keyword = engine.search(SearchRequest("zanzibarite", mode="keyword")).hits
    assert [h.chunk.rel_path for h in keyword] == ["links.md"]
    assert not any(h.chunk.rel_path == "links.md" for h in engine.search(SearchRequest("reading list zanzibarite", mode="semantic")).hits)
    assert engine.sync([name])[0].embedding.embedded == 0  # type: ignore[union-attr]  # left out stays left out, not retried
    assert engine.status()[0].semantic_fraction == 1.0  # a left-out chunk is not "still to embed"
    engine.close()


def _reference_vector_worthy(body: str) -> bool:
    """The rule written plainly (as it was before its passes were skipped where they cannot match)."""
    from core.index import embed_text as et

    lines = [line for line in body.splitlines() if line.strip()]
    if not lines:
        return True
    if all(et._LINK_LINE.fullmatch(line) for line in lines):
        return False
    kept = [line for line in lines if len(line) < et.MINIFIED_LINE or line.count(" ") >= et.MIN_SPACE_SHARE * len(line)]
    cleaned = et._BASE64.sub(" ", et._URL.sub(" ", "\n".join(kept)))
    visible = sum(len(line) for line in lines) - sum(len(line) for line in kept) + len(cleaned)
    visible -= cleaned.count(" ") + cleaned.count("\t") + cleaned.count("\n")
    letters = sum(len(w) for w in et._WORD.findall(cleaned) if len(w) < 40)
    return letters > 0 and letters >= et.MIN_LETTER_SHARE * max(visible, 1)


def test_the_fast_rule_decides_as_the_plain_one() -> None:
    import random

    rng = random.Random(4)
    pieces = ["word", "Größe", "中文字", "12", "x", "a" * 45, "Q" * 90, "ab/+" * 30, "https://x.org/p", "[t](u.md)", "data:x/y;base64,QUJD",
              "- [a](b)", "|", "3.5", " ", "  ", "\n", "\t", "_", "==", "é" * 41,
              "’", "“", "—", "\u00a0", "\u2003", "\x1c", "²", "٣", "naïve", "I", "\u0301", "b" * 39, "c" * 40]
    for _ in range(6000):
        body = "".join(rng.choice(pieces) + rng.choice([" ", "", "\n"]) for _ in range(rng.randint(0, 30)))
        assert vector_worthy(body) == _reference_vector_worthy(body), repr(body)


def test_chunk_body_drops_exactly_its_own_heading_line() -> None:
    """`chunk_body` returns the text untouched without looking when no heading line can be dropped."""

    def reference(heading_path: str, text: str) -> str:
        first, _, rest = text.partition("\n")
        if first.startswith("#") and heading_path and first.lstrip("#").strip() == heading_path.split(" > ")[-1]:
            return rest.lstrip("\n")
        return text

    rng = random.Random(8)
    paths = ["", "A", "A > B", "B", " > "]
    pieces = ["#", "# ", "A", "B", "\n", "\n\n", " ", "text", "##", " > "]
    for _ in range(4000):
        path = rng.choice(paths)
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        assert chunk_body(path, text) == reference(path, text), (path, text)
