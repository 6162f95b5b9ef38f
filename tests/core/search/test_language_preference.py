"""Cross-language sanity: a query in one language is not drowned by pages in another (real tldr vault)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from core.base.models import ChunkRef, Hit, Term
from core.base.paths import AppPaths
from core.engine import Engine
from core.eval.golden import load_golden
from core.search.language_preference import SAME_LANGUAGE_BONUS, prefer_query_language
from core.search.search import SearchRequest
from core.vault.language import confident_query_language

REPO = Path(__file__).resolve().parents[3]
TLDR = next((p / "shared/data/vaults/tldr" for p in REPO.parents if (p / "shared/data/vaults/tldr").is_dir()), Path("/nonexistent"))
FOLDER = {"en": "pages/", "zh": "pages.zh/", "ja": "pages.ja/", "de": "pages.de/"}


def hit(rel: str, lang: str, score: float) -> Hit:
    return replace(Hit(ChunkRef("v", rel, 0, rel), score, rel, "", 0, 1, None, None, (Term("rrf", score),)), lang=lang)


@pytest.mark.parametrize(
    "query,lang",
    [
        ("create a gzipped tar archive of a directory", "en"),
        ("Dateien nach Erweiterung suchen", "de"),
        ("导入一个公钥", "zh"),
        ("公開鍵をインポートする", "ja"),
        ("tar Archiv entpacken", ""),  # no function word: it could be either
        ("tar", ""),
    ],
)
def test_the_query_language_is_named_only_when_it_shows(query: str, lang: str) -> None:
    assert confident_query_language(query) == lang


def test_a_hit_in_the_query_language_passes_a_foreign_one_that_matched_about_as_well() -> None:
    hits = [hit("pages.de/tar.md", "de", 0.01639), hit("pages/git-archive.md", "en", 0.01613), hit("pages/tar.md", "en", 0.01587)]
    out = prefer_query_language(hits, "create a gzipped tar archive of a directory")
    assert [h.chunk.rel_path for h in out] == ["pages/git-archive.md", "pages/tar.md", "pages.de/tar.md"]
    assert out[0].contributions[-1] == Term("in the query's language (en)", SAME_LANGUAGE_BONUS)
    assert all(abs(h.score - sum(t.value for t in h.contributions)) < 1e-12 for h in out)


def test_a_strong_foreign_match_stays_ahead_and_one_language_lists_are_untouched() -> None:
    strong = [hit("pages.de/tar.md", "de", 0.0330), hit("pages/tar.md", "en", 0.0164)]  # first in both lists
    assert [h.chunk.rel_path for h in prefer_query_language(strong, "create a tar archive of a folder")][0] == "pages.de/tar.md"
    english = [hit("a.md", "en", 0.02), hit("b.md", "en", 0.01)]
    assert prefer_query_language(english, "create a tar archive of a folder") is english
    assert prefer_query_language(strong, "tar") is strong  # the language does not show


@pytest.fixture(scope="module")
def tldr(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """The whole tldr vault (English, Chinese, Japanese and German pages), keyword index only."""
    if not TLDR.is_dir():
        pytest.skip("needs the tldr vault")
    kept = os.environ.get("CAIRN_EVAL_CACHE")
    home = Path(kept) / "tldr-all-home" if kept else tmp_path_factory.mktemp("tldr-all")
    engine = Engine(AppPaths(home), embedder_factory=None)
    if engine.config.vault_named("tldr") is None:
        engine.add_vault(TLDR, name="tldr")
    engine.sync(embed=False)
    yield engine
    engine.close()


def _language(rel: str) -> str:
    return next((lang for lang, folder in FOLDER.items() if lang != "en" and rel.startswith(folder)), "en")


@pytest.mark.parametrize("lang,own_share", [("en", 0.90), ("zh", 0.95), ("ja", 0.95), ("de", 0.84)])
def test_each_languages_questions_get_pages_in_their_language_first(tldr: Engine, lang: str, own_share: float) -> None:
    # Measured on all 6,417 pages: before the same-language bonus 2 of 30 English questions had a German page
    # first (top-1 in the query's language en 0.93, zh/ja/de 1.00); with it every language 1.00. The share of
    # the top 10 in the question's language: en 0.88 -> 0.92, zh 0.96 -> 0.98, ja 0.99, de 0.83 -> 0.87
    # (0.845 after round 3's ranking changes, cause not isolated; every language's top 1 unchanged).
    golden = load_golden(REPO / "tests" / "golden" / f"tldr-{lang}.yaml")
    off, own, shown = [], 0, 0
    for case in golden.cases:
        rels = list(dict.fromkeys(h.chunk.rel_path for h in tldr.search(SearchRequest(case.query, mode="keyword", k=10)).hits))
        assert rels, case.id
        if _language(rels[0]) != lang:
            off.append((case.id, rels[0]))
        own += sum(_language(r) == lang for r in rels)
        shown += len(rels)
    assert off == [], "a page in another language came first"
    assert own / shown >= own_share
