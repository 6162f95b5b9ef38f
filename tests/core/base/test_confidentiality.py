"""The privacy rule, typed: one level type, one "may this chunk go to this provider" used everywhere."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.base.confidentiality import Confidentiality, is_restricted, may_send, sends_text_away

REPO = Path(__file__).resolve().parents[3]


@dataclass
class Provider:
    remote: bool


class Unflagged:
    """A provider that does not say whether it is remote."""


@pytest.mark.parametrize(
    ("written", "level"),
    [(None, "internal"), ("", "internal"), ("public", "public"), (" Restricted ", "restricted"), ("INTERNAL", "internal"),
     ("secret", "restricted"), ("top secret", "restricted"), (3, "restricted")],
)  # fmt: skip
def test_a_written_level_is_read_and_an_unknown_one_fails_closed(written: object, level: str) -> None:
    assert Confidentiality.parse(written) == level


def test_the_stored_form_is_the_plain_string() -> None:
    assert json.dumps({"c": Confidentiality.RESTRICTED}) == '{"c": "restricted"}'
    assert is_restricted("restricted") and is_restricted(Confidentiality.RESTRICTED)
    assert not is_restricted("internal") and not is_restricted(None)


@pytest.mark.parametrize("level", list(Confidentiality))
def test_may_send_keeps_restricted_text_on_this_machine_and_nothing_else(level: Confidentiality) -> None:
    assert may_send(level, None)  # no provider: nothing leaves
    assert may_send(level, Provider(remote=False))
    assert may_send(level, Provider(remote=True)) == (level != Confidentiality.RESTRICTED)
    assert may_send(level, Unflagged()) == (level != Confidentiality.RESTRICTED)  # unflagged counts as remote


def test_a_provider_that_does_not_say_is_remote() -> None:
    assert sends_text_away(Unflagged()) and sends_text_away(Provider(True)) and not sends_text_away(Provider(False))
    assert not sends_text_away(None)


def test_every_place_that_applies_the_rule_asks_the_shared_predicates() -> None:
    """No module compares a level with the literal "restricted" (a typo there would leak a note)."""
    compare = re.compile(r"""confidentiality\s*[!=]=\s*["']restricted["']|["']restricted["']\s*[!=]=""")
    offenders = [
        f"{p.relative_to(REPO)}:{n}"
        for root in ("core", "desktop")
        for p in sorted((REPO / root).rglob("*.py"))
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if compare.search(line)
    ]
    assert offenders == []


def test_ask_rerank_and_embedding_agree_on_the_rule() -> None:
    from core.answer.pipeline import unsafe_for
    from core.base.models import Hit
    from core.providers.embedding.registry import default_registry

    hit = Hit.__new__(Hit)
    object.__setattr__(hit, "confidentiality", "restricted")
    assert unsafe_for(hit, Provider(remote=True)) and unsafe_for(hit, Unflagged())
    assert not unsafe_for(hit, Provider(remote=False)) and not unsafe_for(hit, None)
    registry = default_registry()
    assert not may_send("restricted", registry["ollama"]) and not may_send("restricted", registry["openai"])
    assert may_send("restricted", registry["builtin"])
