"""Prepare a note for the preview: its properties, and markdown with the hit's chunk marked.

Qt's markdown importer cannot take a highlight, so the chunk's bounds are
marked with plain-word sentinels inserted after any block prefix (`### `, `- `,
`> `), located in the rendered document, then removed. Pure Python: no Qt here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from core.vault.frontmatter import split_front_matter

START = "CAIRNCHUNKSTARTMARK"
END = "CAIRNCHUNKENDMARK"
MAX_PREVIEW_BYTES = 5 * 1024 * 1024
BOM = b"\xef\xbb\xbf"
_PREFIX = re.compile(r"[ \t]*(?:(?:#{1,6}[ \t]+)|(?:[-*+][ \t]+(?:\[[ xX]\][ \t]+)?)|(?:\d+[.)][ \t]+)|(?:>[ \t]?))*")

_CALLOUT_LINE = re.compile(r"^[ \t]*(?:>[ \t]?)+\[!")


@dataclass(frozen=True, slots=True)
class NoteForPreview:
    """What the preview shows: properties, and the body with sentinels around the chunk."""

    properties: list[tuple[str, str]]
    properties_error: str | None
    markdown: str
    marked: bool  # False when the chunk's bytes could not be placed (the file changed)


def read_note(path: Path) -> bytes:
    """The note's bytes, refusing huge files so the preview stays responsive."""
    if path.stat().st_size > MAX_PREVIEW_BYTES:
        raise OSError(f"{path.name} is larger than {MAX_PREVIEW_BYTES // (1024 * 1024)} MB; open it in an editor")
    return path.read_bytes()


def prepare(raw: bytes, start_byte: int, end_byte: int) -> NoteForPreview:
    """Split off the front matter and mark the chunk [start_byte, end_byte) of the raw note."""
    offset = len(BOM) if raw.startswith(BOM) else 0
    yaml_text, body_start = split_front_matter(raw, offset)
    properties, error = _properties(yaml_text)
    marked = body_start <= start_byte < end_byte <= len(raw)
    if not marked:
        return NoteForPreview(properties, error, raw[body_start:].decode("utf-8", "replace"), False)
    before = raw[body_start:start_byte].decode("utf-8", "replace")
    chunk = raw[start_byte:end_byte].decode("utf-8", "replace")
    after = raw[end_byte:].decode("utf-8", "replace")
    text = before + _insert_after_prefix(chunk, START)
    text += _insert_after_prefix(after, END) if after.strip() else after + f"\n\n{END}"
    return NoteForPreview(properties, error, text, True)


def _insert_after_prefix(text: str, marker: str) -> str:
    """Put `marker` at the start of the first non-blank line's content, after its block prefix."""
    stripped = len(text) - len(text.lstrip("\r\n"))
    line_end = text.find("\n", stripped)
    line = text[stripped : line_end if line_end >= 0 else len(text)]
    if line.lstrip().startswith(("```", "~~~", "|", "---", "***", "<")) or _CALLOUT_LINE.match(line):
        # Fences, tables, rules, HTML and callouts' `[!kind]` lines would swallow or break on a word:
        # mark the line before.
        return text[:stripped] + f"{marker}\n\n" + text[stripped:]
    m = _PREFIX.match(line)
    cut = stripped + (m.end() if m else 0)
    return text[:cut] + marker + " " + text[cut:]


def _properties(yaml_text: str | None) -> tuple[list[tuple[str, str]], str | None]:
    if yaml_text is None:
        return [], None
    try:
        data = yaml.safe_load(yaml_text)
    except yaml.YAMLError as exc:
        return [], f"Front matter is not valid YAML: {str(exc).splitlines()[0] if str(exc) else exc}"
    if data is None:
        return [], None
    if not isinstance(data, dict):
        return [], "Front matter is not a mapping of keys to values"
    return [(str(k), _show(v)) for k, v in data.items()], None


def _show(value: Any) -> str:
    if isinstance(value, (list, tuple, set)):
        return ", ".join(_show(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_show(v)}" for k, v in value.items())
    return "" if value is None else str(value)
