"""Canvases (JSON Canvas) as text: cards in reading order under their group, file cards as links."""

from __future__ import annotations

import json
from pathlib import Path

from core.base.models import LinkKind
from core.vault.canvas import canvas_chunks, read_canvas
from core.vault.chunker import ChunkLimits

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "structured_vault"


def test_cards_groups_links_and_labelled_arrows() -> None:
    canvas = read_canvas((FIXTURE / "Board.canvas").read_bytes(), FIXTURE)
    assert [s[0] for s in canvas.sections] == ["Launch board", "", "Connections"]
    assert "Kayak rental partnership" in canvas.text and "[[Projects/Pricing.md]]" in canvas.text
    assert "https://example.com/zeppelin" in canvas.text
    assert "Kayak rental partnership for the launch weekend → needs prices from → Projects/Pricing.md" in canvas.text
    assert [(link.kind, link.target) for link in canvas.links] == [(LinkKind.EMBED, "Projects/Pricing.md"), (LinkKind.EMBED, "Projects/Gone.md")]
    assert canvas.problems == ("card f2 points to a missing file: Projects/Gone.md",)


def test_chunks_index_the_laid_out_text() -> None:
    canvas = read_canvas((FIXTURE / "Board.canvas").read_bytes())
    chunks, _ = canvas_chunks(canvas, ChunkLimits())
    raw = canvas.text.encode()
    assert chunks and all(raw[c.start_byte : c.end_byte].decode() == c.text for c in chunks)
    assert chunks[0].heading_path == "Launch board"


def test_a_torn_or_foreign_file_is_reported_not_fatal() -> None:
    torn = read_canvas((FIXTURE / "Torn.canvas").read_bytes())
    assert torn.text == "" and "not valid JSON Canvas" in torn.problems[0]
    other = read_canvas(json.dumps({"nodes": "x"}).encode())
    assert other.problems == ("not valid JSON Canvas: no list of nodes",)
