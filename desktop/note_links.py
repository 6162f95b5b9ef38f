"""Links in the Preview, pure Python: wikilinks become clickable, embeds become excerpts or images,
and a place in a note (heading, block, line) becomes a byte range to show. No Qt here.

Qt's markdown importer knows nothing of `[[wikilinks]]`, so they are rewritten into ordinary
markdown links with a `cairn-note:` address before the note is rendered; the Preview resolves
that address with the vault's link graph when it is clicked.
"""

from __future__ import annotations

import posixpath
import re
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

from core.index.manifest import ChunkRecord
from core.vault.links import IMAGE_EXTS, is_attachment, key, new_link_parser, rewrite_links, split_wikilink

NOTE_SCHEME = "cairn-note"
EXCERPT_CHARS = 280
_BLOCK_ID = re.compile(r"\s\^([\w-]+)\s*$")
BLOCK_ID_TAIL = re.compile(r"[ \t]\^[\w-]+[ \t]*$", re.MULTILINE)  # Obsidian hides `^block-id` markers

#: Editor command presets: {path} and {line} are filled in; "" means the system's default app.
EDITOR_PRESETS: dict[str, str] = {
    "System default": "",
    "VS Code": "code --goto {path}:{line}",
    "Sublime Text": "subl {path}:{line}",
    "Neovim (Neovide)": "neovide {path} -- +{line}",
    "Vim (gVim)": "gvim +{line} {path}",
}


@dataclass(frozen=True, slots=True)
class Excerpt:
    """The start of an embedded note, for the collapsed embed block."""

    title: str
    text: str


def note_url(target: str, anchor: str = "") -> str:
    """`cairn-note:Target%20name#Heading`: a wikilink's target, as written, in a URL."""
    url = f"{NOTE_SCHEME}:{quote(target, safe='/')}"
    return url + (f"#{quote(anchor, safe='^')}" if anchor else "")


def parse_note_url(url: str) -> tuple[str, str] | None:
    if not url.startswith(NOTE_SCHEME + ":"):
        return None
    rest = url[len(NOTE_SCHEME) + 1 :]
    target, _, anchor = rest.partition("#")
    return unquote(target), unquote(anchor)


def preview_markdown(
    markdown: str,
    *,
    excerpt: Callable[[str, str], Excerpt | None],
    attachment: Callable[[str], Path | None],
) -> str:
    """The note's markdown with wikilinks as links, note embeds as excerpts and image embeds as images."""

    missing: set[str] = set()  # a missing image is named once, not at every embed of it

    def repl(m: re.Match[str]) -> str:
        target, anchor, label = split_wikilink(m.group("wiki"))
        embed = m.group(0).startswith("!")
        if embed and is_attachment(target):
            found = attachment(target)
            ext = target.rpartition(".")[2].lower()
            name = posixpath.basename(target)
            if found is not None and ext in IMAGE_EXTS:
                return f"![{_md(name)}](<{found.as_uri()}>)"
            if found is None and ext in IMAGE_EXTS:
                if is_icon(name, anchor) or name in missing:
                    return ""  # Obsidian's own icons (`lucide-*.svg#icon`) live in its app, not the vault
                missing.add(name)
                return _md(f"🖼 {name} (missing)")
            shown = f"📎 {name}" + ("" if found else " (missing)")
            return f"[{_md(shown)}](<{found.as_uri()}>)" if found else _md(shown)
        link = f"[{_md(label)}]({note_url(target, anchor)})"
        if not embed:
            return link
        ex = excerpt(target, anchor)
        if ex is None:
            return f"[{_md('↪ ' + label + ' (not found)')}]({note_url(target, anchor)})"
        body = " ".join(ex.text.split())
        body = body if len(body) <= EXCERPT_CHARS else body[: EXCERPT_CHARS - 1] + "…"
        # Collapsed: the embedded note's title as a link and its first lines, one quoted paragraph.
        return f"\n\n> **[{_md('↪ ' + ex.title)}]({note_url(target, anchor)})** — {_md(body)}\n\n"

    return rewrite_links(BLOCK_ID_TAIL.sub("", markdown), repl, parser=new_link_parser())


def is_icon(name: str, anchor: str) -> bool:
    """An icon embed as the Obsidian Help vault writes them: `![[lucide-send.svg#icon]]`."""
    return anchor.lower() == "icon" or name.lower().startswith("lucide-")


def answer_links(text: str) -> str:
    """An answer's `[[wikilinks]]` as clickable links (no excerpts: an answer is read, not browsed)."""

    def repl(m: re.Match[str]) -> str:
        target, anchor, label = split_wikilink(m.group("wiki"))
        return f"[{_md(label)}]({note_url(target, anchor)})"

    return rewrite_links(text, repl)


def _md(text: str) -> str:
    """Text that markdown shows as is."""
    return re.sub(r"([\\`*_\[\]<>#|])", r"\\\1", text)


def resolve_relative(source_rel: str, href: str) -> str:
    """A relative link of a note, as a vault path (`../Home.md` from `Projects/Plan.md` -> `Home.md`)."""
    path = unquote(href.split("#", 1)[0])
    if path.startswith("/"):
        return path.lstrip("/")
    return posixpath.normpath(posixpath.join(posixpath.dirname(source_rel), path))


# -- places in a note ---------------------------------------------------------------------


def anchor_range(chunks: Sequence[ChunkRecord], raw: bytes, anchor: str) -> tuple[int, int] | None:
    """The byte range to show for `#Heading` or `#^block` (the chunk holding it), or None."""
    if not anchor:
        return None
    if anchor.startswith("^"):
        block = anchor[1:]
        pos = 0
        for line in raw.split(b"\n"):
            m = _BLOCK_ID.search(line.decode("utf-8", "replace"))
            if m and m.group(1) == block:
                return chunk_at(chunks, pos)
            pos += len(line) + 1
        return None
    wanted = key(anchor)
    for c in chunks:
        parts = [p.strip() for p in c.heading_path.split(">")]
        if parts and key(parts[-1]) == wanted:
            return c.start_byte, c.end_byte
    for c in chunks:  # a nested heading named by a parent's name: Obsidian allows `#Parent#Child`
        if any(key(p.strip()) == key(anchor.split("#")[-1]) for p in c.heading_path.split(">")):
            return c.start_byte, c.end_byte
    return None


def chunk_at(chunks: Sequence[ChunkRecord], byte: int) -> tuple[int, int] | None:
    for c in chunks:
        if c.start_byte <= byte < c.end_byte:
            return c.start_byte, c.end_byte
    return None


def byte_of_line(raw: bytes, line: int) -> int:
    """Where 1-based `line` starts in the raw note."""
    pos = 0
    for _ in range(max(0, line - 1)):
        nxt = raw.find(b"\n", pos)
        if nxt < 0:
            return len(raw)
        pos = nxt + 1
    return pos


def line_of(raw: bytes, byte: int) -> int:
    """The 1-based line a byte offset falls on (what editors' "go to line" wants)."""
    return raw.count(b"\n", 0, max(0, byte)) + 1


# -- open at the spot ---------------------------------------------------------------------


def editor_argv(template: str, path: Path, line: int) -> list[str]:
    """The editor's command line with {path} and {line} filled in; no shell is involved.

    Raises:
        ValueError: The template is empty or not a valid command line.
    """
    parts = shlex.split(template, posix=sys.platform != "win32")
    parts = [p[1:-1] if len(p) > 1 and p[0] == p[-1] == '"' else p for p in parts]  # Windows mode keeps quotes
    if not parts:
        raise ValueError("no editor command is set")
    return [p.replace("{path}", str(path)).replace("{line}", str(max(1, line))) for p in parts]
