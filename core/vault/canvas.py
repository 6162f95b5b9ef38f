"""Obsidian canvases (`.canvas`, the JSON Canvas format) as searchable documents.

A canvas is JSON: `nodes` (text cards, file cards pointing at notes, link cards with a URL,
groups with a label) and `edges` (arrows, maybe labelled). Its text is laid out as plain
text — each group's label as a heading over the cards inside it, each text card as a
paragraph, a file card as `[[path]]`, a link card as its URL, then the labelled arrows — and
chunked like an attachment's; offsets index that text (as a PDF's index its extracted
text), and a hit opens the canvas file. File cards become links, so the notes on a canvas
are not orphans. A file card whose file is missing, or a canvas that is not JSON Canvas,
is reported; neither stops indexing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from core.base.models import Chunk, FileWarning, Link, LinkKind
from core.vault.chunker import ChunkLimits, chunk_plain_range

MAX_NODES = 10_000


@dataclass(frozen=True, slots=True)
class CanvasText:
    """A canvas laid out as text, with the links its file cards make and what was wrong."""

    text: str
    sections: tuple[tuple[str, int, int], ...]  # (heading, start byte, end byte) of the text
    links: tuple[Link, ...]
    problems: tuple[str, ...]


def read_canvas(raw: bytes, root: Path | None = None) -> CanvasText:
    """The canvas's text; `root` (the vault) lets a file card's missing file be reported."""
    try:
        data = json.loads(raw.decode("utf-8-sig", "replace"))
    except ValueError as exc:
        return CanvasText("", (), (), (f"not valid JSON Canvas: {exc}",))
    if not isinstance(data, dict) or not isinstance(data.get("nodes", []), list):
        return CanvasText("", (), (), ("not valid JSON Canvas: no list of nodes",))
    nodes = [n for n in data.get("nodes", []) if isinstance(n, dict)][:MAX_NODES]
    problems: list[str] = [] if len(data.get("nodes", [])) <= MAX_NODES else [f"only the first {MAX_NODES:,} cards are indexed"]
    groups = _groups(nodes)
    by_group: dict[str, list[str]] = {}
    links: list[Link] = []
    for node in sorted(nodes, key=_position):
        piece = _node_text(node, root, links, problems)
        if piece:
            by_group.setdefault(_group_of(node, groups), []).append(piece)
    edges = _edge_lines(data.get("edges"), nodes)
    if edges:
        by_group.setdefault("Connections", []).extend(edges)
    return _layout(by_group, links, problems)


def _layout(by_group: dict[str, list[str]], links: list[Link], problems: list[str]) -> CanvasText:
    parts: list[str] = []
    sections: list[tuple[str, int, int]] = []
    offset = 0
    for heading, pieces in by_group.items():
        block = "\n\n".join(pieces) + "\n\n"
        size = len(block.encode("utf-8"))
        sections.append((heading, offset, offset + size))
        parts.append(block)
        offset += size
    return CanvasText("".join(parts), tuple(sections), tuple(links), tuple(problems))


def _position(node: dict[str, Any]) -> tuple[float, float]:
    """Top to bottom, then left to right: reading order on the board."""
    return (_number(node.get("y")), _number(node.get("x")))


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _groups(nodes: Sequence[dict[str, Any]]) -> list[tuple[str, float, float, float, float]]:
    out = []
    for n in nodes:
        if n.get("type") == "group":
            x, y = _number(n.get("x")), _number(n.get("y"))
            out.append((str(n.get("label") or "Group"), x, y, x + _number(n.get("width")), y + _number(n.get("height"))))
    return sorted(out, key=lambda g: (g[3] - g[1]) * (g[4] - g[2]))  # the smallest enclosing group wins


def _group_of(node: dict[str, Any], groups: list[tuple[str, float, float, float, float]]) -> str:
    x, y = _number(node.get("x")), _number(node.get("y"))
    for label, x0, y0, x1, y1 in groups:
        if x0 <= x <= x1 and y0 <= y <= y1 and node.get("type") != "group":
            return label
    return ""


def _node_text(node: dict[str, Any], root: Path | None, links: list[Link], problems: list[str]) -> str:
    kind = node.get("type")
    if kind == "text":
        return str(node.get("text") or "").strip()
    if kind == "file":
        target = str(node.get("file") or "").strip()
        if not target:
            return ""
        links.append(Link(LinkKind.EMBED, target, label=PurePosixPath(target).stem, context=f"canvas card: {target}"))
        if root is not None and not (root / target).exists():
            problems.append(f"card {node.get('id', '?')} points to a missing file: {target}")
        return f"[[{target}]]"
    if kind == "link":
        return str(node.get("url") or "").strip()
    return ""


def _edge_lines(edges: Any, nodes: Sequence[dict[str, Any]]) -> list[str]:
    if not isinstance(edges, list):
        return []
    names = {str(n.get("id")): _short(n) for n in nodes}
    out = []
    for e in edges:
        if isinstance(e, dict) and e.get("label"):
            out.append(f"{names.get(str(e.get('fromNode')), '?')} → {e['label']} → {names.get(str(e.get('toNode')), '?')}")
    return out


def _short(node: dict[str, Any]) -> str:
    text = str(node.get("text") or node.get("file") or node.get("url") or node.get("label") or "").strip()
    return text.splitlines()[0][:60] if text else "?"


def canvas_chunks(canvas: CanvasText, limits: ChunkLimits) -> tuple[list[Chunk], list[FileWarning]]:
    """Chunks of the laid-out text, each under its group's label."""
    raw = canvas.text.encode("utf-8")
    chunks: list[Chunk] = []
    for heading, start, end in canvas.sections:
        for c in chunk_plain_range(raw, start, end, heading, limits):
            chunks.append(Chunk(len(chunks), c.heading_path, c.start_byte, c.end_byte, c.text))
    return chunks, []
