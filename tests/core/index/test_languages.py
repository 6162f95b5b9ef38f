"""Keyword search in every language, over real tldr pages in Chinese, Japanese, German and English."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.base.models import SearchResponse
from core.base.paths import AppPaths
from core.engine import Engine
from core.search.search import SearchRequest

TLDR = next((p / "shared/data/vaults/tldr" for p in Path(__file__).resolve().parents if (p / "shared/data/vaults/tldr").is_dir()), Path("/nonexistent"))
PAGES = [f"pages{suffix}/common/{cmd}.md" for suffix in ("", ".zh", ".ja", ".de") for cmd in ("tar", "vim", "ls", "cp", "less", "gpg")]
GERMAN = {"notes/Sicherung.md": "# Sicherung\n\nDie Dateien werden jede Nacht auf die externe Festplatte gesichert.\n"}

pytestmark = pytest.mark.skipif(not TLDR.is_dir(), reason="needs the tldr vault")


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """A copy of 24 tldr pages (6 commands × 4 languages) plus a German note; never the vault itself."""
    root = tmp_path_factory.mktemp("tldr-copy")
    for rel in PAGES:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(TLDR / rel, root / rel)
    for rel, text in GERMAN.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    eng = Engine(AppPaths(tmp_path_factory.mktemp("cairn-home")), embedder_factory=None)
    eng.add_vault(root, name="tldr")
    eng.sync(embed=False)
    yield eng
    eng.close()


def search(engine: Engine, query: str) -> SearchResponse:
    return engine.search(SearchRequest(query, mode="keyword", k=10))


def notes(resp: SearchResponse) -> list[str]:
    return list(dict.fromkeys(h.chunk.rel_path for h in resp.hits))


def test_a_chinese_word_inside_a_sentence_is_found(engine: Engine) -> None:
    # "保存并退出" stands inside the line "- 保存并退出：" of the vim page; the old analyzer made
    # the whole line one token and found nothing.
    assert notes(search(engine, "保存并退出"))[0] == "pages.zh/common/vim.md"


def test_a_natural_chinese_question_finds_its_page(engine: Engine) -> None:
    assert notes(search(engine, "怎么解压缩存档文件到目标目录"))[0] == "pages.zh/common/tar.md"


def test_a_japanese_word_inside_a_sentence_is_found(engine: Engine) -> None:
    assert notes(search(engine, "隠しファイル"))[0] == "pages.ja/common/ls.md"


def test_a_query_in_one_language_is_not_drowned_by_another(engine: Engine) -> None:
    # The same command in four languages: the page in the query's language comes first.
    assert notes(search(engine, "公開鍵をインポートする"))[0] == "pages.ja/common/gpg.md"
    assert notes(search(engine, "导入一个公钥"))[0] == "pages.zh/common/gpg.md"
    assert notes(search(engine, "öffentlichen Schlüssel importieren"))[0] == "pages.de/common/gpg.md"
    assert notes(search(engine, "import a public key"))[0] == "pages/common/gpg.md"


def test_german_is_stemmed_as_german(engine: Engine) -> None:
    # "Datei" is in no note; the German stemmer makes "Dateien" and "Datei" one term.
    assert "notes/Sicherung.md" in notes(search(engine, "Datei gesichert"))[:2]


def test_hits_carry_their_language_and_lang_filters_on_it(engine: Engine) -> None:
    every = search(engine, "tar")
    assert {h.lang for h in every.hits} >= {"en", "zh", "ja", "de"}
    only = search(engine, "tar lang:de")
    assert only.hits and {h.lang for h in only.hits} == {"de"}
    assert notes(search(engine, "tar lang:zh lang:ja")) and all(
        n.startswith(("pages.zh/", "pages.ja/")) for n in notes(search(engine, "tar lang:zh lang:ja"))
    )


def test_cjk_highlights_cover_the_matched_characters_once(engine: Engine) -> None:
    hit = search(engine, "保存并退出").hits[0]
    assert "**保存并退出**" in hit.snippet


def test_a_single_cjk_character_finds_the_words_that_hold_it(engine: Engine) -> None:
    # "鍵" (key) stands only inside words (公開鍵, 秘密鍵): indexed as bigrams, never alone.
    assert "pages.ja/common/gpg.md" in notes(search(engine, "鍵"))[:3]
