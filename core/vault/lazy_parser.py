"""The markdown parsers of an index run, made when the first note needs one.

Most notes are read by the line scanners (`core.vault.simple_blocks`, `core.vault.wikilinks_plain`)
without markdown-it; a vault whose notes all are (obsidian-tasks-demo's 205) never needs it.
Making the parsers up front imported markdown-it (~25 ms, ~70 modules) and built two
parsers into every cold `cairn index` and into the parallel build's worker. A `LazyParser`
stands where the parser is passed (`parse_note(parser=...)`) and makes it on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from core.vault.chunker import new_parser
from core.vault.links import new_link_parser

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


class LazyParser:
    """Stands in for the parser `make()` returns, and makes it the first time it is used."""

    __slots__ = ("_made", "_make")

    def __init__(self, make: Callable[[], MarkdownIt]) -> None:
        self._make = make
        self._made: MarkdownIt | None = None

    def __getattr__(self, name: str) -> Any:  # only for what the stand-in lacks: the parser's own attributes
        parser = self._made
        if parser is None:
            parser = self._made = self._make()
        return getattr(parser, name)


def lazy_parsers() -> tuple[MarkdownIt, MarkdownIt]:
    """The chunker's and the link extractor's parsers (`new_parser`, `new_link_parser`), each made on first use."""
    return cast("MarkdownIt", LazyParser(new_parser)), cast("MarkdownIt", LazyParser(new_link_parser))
