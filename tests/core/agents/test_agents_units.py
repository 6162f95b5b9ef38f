"""The pure parts: scopes, folder intersections, the back-off and the token store's failure modes."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.agents.access import _intersect
from core.agents.gate import BackOff
from core.agents.scope import Area, Scope, Tool, parse_folder, parse_tools
from core.agents.tokens import AgentStore
from core.base.paths import AppPaths


def test_an_area_covers_its_folder_and_below_but_not_a_lookalike() -> None:
    area = Area("notes", "Projects")
    assert area.covers("notes", "Projects/a.md") and area.covers("notes", "Projects/x/b.md")
    assert not area.covers("notes", "Projects2/a.md") and not area.covers("notes", "Projects.md") and not area.covers("other", "Projects/a.md")


@pytest.mark.parametrize(
    ("level", "internal", "seen"),
    [("public", False, True), ("internal", False, False), ("internal", True, True), ("restricted", True, False), ("secret", True, False)],
)
def test_confidentiality_levels_an_agent_sees(level: str, internal: bool, seen: bool) -> None:
    assert Scope(internal=internal).sees("v", "a.md", level) is seen


def test_folder_filters_per_vault() -> None:
    scope = Scope(areas=(Area("a", "X"), Area("a", "Y"), Area("b")))
    assert scope.folders_for("a") == ("X", "Y") and scope.folders_for("b") == () and scope.folders_for("c") is None
    assert Scope().folders_for("anything") == ()


@pytest.mark.parametrize(
    ("granted", "asked", "kept"),
    [((), (), ()), (("X",), (), ("X",)), ((), ("Z",), ("Z",)), (("X",), ("X/sub",), ("X/sub",)), (("X/sub",), ("X",), ("X/sub",)), (("X",), ("Y",), None)],
)
def test_granted_and_asked_folders_meet(granted: tuple[str, ...], asked: tuple[str, ...], kept: tuple[str, ...] | None) -> None:
    assert _intersect(granted, asked) == kept


def test_parsing_tools_and_folders() -> None:
    assert parse_tools(None) == frozenset(Tool) and parse_tools("search, fetch") == {Tool.SEARCH, Tool.FETCH}
    with pytest.raises(ValueError, match="unknown tool"):
        parse_tools("search,rm")
    assert parse_folder("team/notes/Projects/Q3", ["team", "team/notes"]) == Area("team/notes", "Projects/Q3")
    with pytest.raises(ValueError):
        parse_folder("team", ["team"])


def test_a_stored_scope_with_unknown_tools_narrows() -> None:
    scope = Scope.from_json({"areas": [{"vault": "v", "folder": "/F/"}], "tools": ["search", "delete"], "internal": 1, "rate": -5})
    assert scope == Scope(areas=(Area("v", "F"),), tools=frozenset({Tool.SEARCH}), internal=True, rate=0)


def test_the_back_off_grows_then_forgets() -> None:
    b = BackOff(free_failures=2, base_delay=1.0, max_delay=8.0)
    waits = [b.failed(100.0 + i * 0.001) for i in range(7)]
    assert waits[0] == 0.0 and waits[1] == pytest.approx(1.0, abs=0.01) and waits[-1] == pytest.approx(8.0, abs=0.01)
    assert waits == sorted(waits)
    assert b.wait(100.01) > 0 and b.wait(200.0) == 0.0 and b.failures == 0


def test_a_damaged_agents_file_lets_nobody_in(tmp_path: Path) -> None:
    store = AgentStore(AppPaths(tmp_path))
    _, token = store.add("a", Scope())
    assert store.verify(token) is not None
    store.file.write_text("{not json")
    assert AgentStore(AppPaths(tmp_path)).verify(token) is None
    assert store.verify("cairn_" + "x" * 43) is None and store.verify(token.removeprefix("cairn_")) is None
