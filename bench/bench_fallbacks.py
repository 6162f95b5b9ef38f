"""How many notes of a vault leave the fast paths, and where: `python bench/bench_fallbacks.py VAULT...`.

A cold `cairn index` reads a note's blocks with the line scanner (`core.vault.simple_blocks`), its
front matter with the simple reader (`core.vault.frontmatter_simple`) and the links and tags of its
inline texts with `plain_links` / `plain_tags`; whatever they decline goes to markdown-it or
PyYAML, whose imports alone cost a small vault ~25 ms. For each vault this prints the notes the
scanner declines, the front matter blocks the simple reader declines, the notes whose parse used
a markdown-it parser at all, and for each declined note the shortest run of lines (from a blank
line to a blank line) the scanner declines on its own: where to look for the shape to read next.
Read-only: it parses the notes as `cairn index` does and writes nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.vault.chunker import new_parser  # noqa: E402
from core.vault.frontmatter import split_front_matter  # noqa: E402
from core.vault.frontmatter_simple import NOT_SIMPLE, load_simple  # noqa: E402
from core.vault.links import new_link_parser  # noqa: E402
from core.vault.notes import BOM, parse_note  # noqa: E402
from core.vault.scanner import Scanner, read_note_bytes  # noqa: E402
from core.vault.simple_blocks import simple_blocks  # noqa: E402


class _Counting:
    """A parser stand-in that counts its uses (made on first use, as `LazyParser`)."""

    def __init__(self, make: Any) -> None:
        self.make, self.made, self.uses = make, None, 0

    def __getattr__(self, name: str) -> Any:
        self.uses += 1
        if self.made is None:
            self.made = self.make()
        return getattr(self.made, name)


def declined_lines(text: str) -> tuple[int, list[str]]:
    """The shortest run of lines between blank lines that the scanner declines on its own."""
    lines = text.split("\n")
    starts = [0] + [k + 1 for k, line in enumerate(lines) if not line.strip()]
    best = (0, len(lines))
    for a in starts:
        for b in [*(s for s in starts if s > a), len(lines)]:
            if simple_blocks("\n".join(lines[a:b])) is None:
                best = min(best, (a, b), key=lambda r: r[1] - r[0])
                break
    return best[0], lines[best[0] : best[1]]


def report(vault: Path) -> None:
    notes = blocks = front = front_declined = chunker_md = links_md = 0
    where: list[tuple[str, int, list[str]]] = []
    for entry in Scanner(vault).scan().entries:
        raw = read_note_bytes(entry)
        if not isinstance(raw, bytes) or not entry.rel_path.lower().endswith((".md", ".markdown")):
            continue
        notes += 1
        yaml_text, body_start = split_front_matter(raw, len(BOM) if raw.startswith(BOM) else 0)
        if yaml_text is not None:
            front += 1
            front_declined += load_simple(yaml_text) is NOT_SIMPLE
        text = raw[body_start:].decode("utf-8", "replace")
        if simple_blocks(text) is None:
            blocks += 1
            where.append((entry.rel_path, *declined_lines(text)))
        parser, link_parser = _Counting(new_parser), _Counting(new_link_parser)
        parse_note(vault.name, entry.rel_path, raw, size=len(raw), mtime_ns=0, parser=parser, link_parser=link_parser)  # type: ignore[arg-type]
        chunker_md += parser.uses > 0
        links_md += link_parser.uses > 0
    print(f"{vault.name}: {notes} notes; block scanner declined {blocks}; front matter declined {front_declined} of {front}; "
          f"markdown-it used for {chunker_md} notes' blocks or tags, {links_md} notes' links")
    for rel_path, first, lines in where:
        print(f"  {rel_path}, lines {first + 1}-{first + len(lines)}:")
        for line in lines[:12]:
            print(f"    |{line[:140]!r}")


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        report(Path(arg))
