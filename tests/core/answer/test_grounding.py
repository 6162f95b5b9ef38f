"""Citation support: a [n] must be backed by what source n says, not merely exist."""

from __future__ import annotations

from core.answer.grounding import check_support, supports
from core.answer.models import Source


def source(number: int, text: str, title: str = "Note") -> Source:
    return Source(number, "v", f"n{number}.md", title, title, (0,), 0, len(text), text, ())


LSOF = source(1, "To find out which process is listening on a specific port, use `lsof -i :8000`.", "Using lsof on macOS")
WAL = source(2, "Here's the incantation: sqlite3 github.db 'PRAGMA journal_mode=WAL;'", "Enabling WAL mode")


def test_a_claim_sharing_the_sources_key_words_or_quoting_its_code_is_supported() -> None:
    assert supports("Use lsof to see which process listens on a port [1].", LSOF)
    assert supports("Run `lsof -i :8000` [1].", LSOF)
    assert not supports("Bake the bread at 250 degrees for an hour [1].", LSOF)


def test_unsupported_markers_are_removed_and_reported_supported_ones_kept() -> None:
    text = "Use `lsof -i :8000` to find the process on a port [1]. Turn on WAL mode with a pragma [1][2]. Sourdough needs a starter [2]."
    g = check_support(text, [LSOF, WAL])
    assert "port [1]." in g.text and "pragma [2]." in g.text and "starter." in g.text
    assert g.supported == (1, 2) and g.unsupported == (1, 2)  # [1] on the WAL claim, [2] on the starter
    only_wrong = check_support("Sourdough needs a starter [2].", [LSOF, WAL])
    assert only_wrong.supported == () and only_wrong.unsupported == (2,) and only_wrong.text == "Sourdough needs a starter."
