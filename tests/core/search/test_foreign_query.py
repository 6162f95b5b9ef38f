"""An English-only embedder's vectors do not vote on a query in a language it cannot read."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from core.search.search import _foreign_query
from core.vault.language import query_language


def side(languages: frozenset[str] | None) -> Any:
    return SimpleNamespace(embedder=SimpleNamespace(languages=languages) if languages is not None else SimpleNamespace())


def test_query_language_needs_only_a_few_cjk_characters() -> None:
    assert query_language("保存并退出") == "zh"
    assert query_language("隠しファイル") == "ja"
    assert query_language("wie entpacke ich eine Datei aus dem Archiv") == "de"
    assert query_language("how long does the dough rest") == "en"


def test_a_cjk_query_is_foreign_to_an_english_only_model() -> None:
    english = side(frozenset({"en"}))
    assert _foreign_query("怎么解压 tar 文件", [english]) == "zh"
    assert _foreign_query("sourdough rest time", [english]) == ""


def test_a_model_that_reads_every_language_keeps_its_vote() -> None:
    assert _foreign_query("怎么解压 tar 文件", [side(None)]) == ""
    assert _foreign_query("怎么解压 tar 文件", [side(frozenset({"en"})), side(None)]) == ""
    assert _foreign_query("怎么解压 tar 文件", []) == ""
