"""What the plain-note scanner (`core.vault.simple_blocks`) reads a note into, and the inline
pass over it: the chunker reads tags, and the link reader links, from these inline texts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # markdown-it loads with the first parser: a keyword search never parses markdown
    from markdown_it import MarkdownIt
    from markdown_it.token import Token


@dataclass(frozen=True, slots=True)
class InlineText:
    """An inline token's source text (`content`) and the line its block starts on (`map[0]`)."""

    content: str
    line: int


@dataclass(frozen=True, slots=True)
class SimpleBlock:
    """A top-level block as line numbers (markdown-it's `map`), its heading level and text."""

    start_line: int
    end_line: int
    heading_level: int  # 0 for a paragraph, quote or list
    heading_text: str


class SimpleNote(NamedTuple):
    """What the scanner read: blocks, inline texts, and the note's link reference definitions."""

    blocks: list[SimpleBlock]
    inline: list[InlineText]
    references: list[str]  # one-line `[label]: url` definitions, in order; markdown-it resolves them


def parse_inline(md: MarkdownIt, texts: Sequence[InlineText], env: dict[str, object] | None = None) -> list[Token]:
    """The inline tokens of these texts as `md.parse` would make them (its inline and text_join rules).

    `env` holds the note's link references (`md.parse` of its definitions) when it has any.
    """
    from markdown_it.rules_core import StateCore
    from markdown_it.rules_core.text_join import text_join
    from markdown_it.token import Token

    env = {} if env is None else env
    tokens = []
    for text in texts:
        children: list[Token] = []
        md.inline.parse(text.content, md, env, children)
        tokens.append(Token("inline", "", 0, content=text.content, children=children, map=[text.line, text.line + 1]))
    text_join(StateCore("", md, env, tokens))
    return tokens
