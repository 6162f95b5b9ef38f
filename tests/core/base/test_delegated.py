"""A delegated attribute reads through to the part, live, and is read-only on the owner."""

from __future__ import annotations

import pytest

from core.base.delegated import Delegated


class Part:
    def __init__(self) -> None:
        self.size = 1
        self.label = "a"


class Owner:
    size: Delegated[int] = Delegated("part")
    name: Delegated[str] = Delegated("part", "label", doc="the part's label")

    def __init__(self) -> None:
        self.part = Part()


def test_reads_the_part_as_it_is_now_under_its_own_or_another_name() -> None:
    owner = Owner()
    assert (owner.size, owner.name) == (1, "a")
    owner.part.size, owner.part.label = 2, "b"
    assert (owner.size, owner.name) == (2, "b")
    assert isinstance(Owner.name, Delegated) and Owner.name.__doc__ == "the part's label"


def test_the_owner_cannot_set_it() -> None:
    owner = Owner()
    with pytest.raises(AttributeError):
        owner.size = 3
