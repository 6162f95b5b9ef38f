"""Answers that quote what answers: a row with its table's header, an item with its list's lead-in."""

from __future__ import annotations

from core.answer.extractive import render
from core.answer.models import Quote
from core.answer.units import ITEM, ROW, split_units

SYNC = """# Plans

Each plan comes with its own limits.

| Plan | Total storage | Version history |
| --- | --- | --- |
| Sync Standard | 1 GB | 1 month |
| Sync Plus | 10 GB | 12 months |

Refunds are available for the following services:

- Catalyst licenses within 14 days of purchase
- Sync subscriptions within 14 days of payment

## Other

- an unrelated list item under a heading
"""


def test_a_table_row_carries_its_header_row() -> None:
    rows = [u for u in split_units(SYNC) if u.kind == ROW]
    standard = next(u for u in rows if u.text.startswith("Sync Standard"))
    assert standard.text == "Sync Standard | 1 GB | 1 month"  # verbatim between the outer pipes
    assert standard.intro == "Plan | Total storage | Version history"


def test_a_list_item_carries_the_sentence_that_leads_into_the_list() -> None:
    items = [u for u in split_units(SYNC) if u.kind == ITEM]
    assert [u.intro for u in items[:2]] == ["Refunds are available for the following services:"] * 2
    assert items[2].intro == ""  # a list right under a heading has no lead-in


def _quote(kind: str, text: str, intro: str) -> Quote:
    return Quote(1, text, kind, "Plans.md", "Plans", 0, 0, 10, intro=intro)


def test_a_row_is_rendered_under_its_header_and_an_item_under_its_lead_in() -> None:
    row = render([_quote(ROW, "Sync Standard | 1 GB | 1 month", "Plan | Total storage | Version history")])
    assert "- Plan: Sync Standard; Total storage: 1 GB; Version history: 1 month [1]" in row
    item = render([_quote(ITEM, "- Catalyst licenses within 14 days of purchase", "Refunds are available for the following services:")])
    assert "- Refunds are available for the following services: [1]\n  - Catalyst licenses within 14 days of purchase" in item
