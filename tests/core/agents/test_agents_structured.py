"""Properties, tasks, Bases, the check-up and property filters through the shared server, per scope.

A real server on 127.0.0.1 and the SDK's client, over a vault whose `Team/` folder is the
scoped agents' area. `Outside/Gamma.md` carries a unique property value, task and broken
link; a restricted and an internal note inside `Team/` carry their own. None of them may
reach an agent that is not allowed to see them, not even as a count.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import anyio
import pytest

from core.agents.runner import AgentService, ServerOptions
from core.agents.scope import Area, Scope, Tool
from core.base.paths import AppPaths
from core.engine import Engine
from tests.core.agents.agent_helpers import Call, run_session

PUBLIC = "---\nconfidentiality: public\n{props}---\n"
SECRET = "sk-abcdefghijklmnopqrstuvwx1234"
NOTES = {
    "Team/Alpha.md": PUBLIC.format(props=f"status: draft\nrating: 4\ndeploy: {SECRET}\n") + "# Alpha\n\nSee [[Beta]].\n\n- [ ] water the ferns 📅 2026-12-01\n",
    "Team/Beta.md": PUBLIC.format(props="status: done\nrating: five\n") + f"# Beta\n\nBack to [[Alpha]].\n\n- [x] file the report with {SECRET}\n",
    "Team/Lonely.md": PUBLIC.format(props="") + "# Lonely\n\nNobody here links anywhere; [[Nowhere]] does not exist.\n",
    "Team/Hidden.md": "---\nconfidentiality: restricted\nstatus: quokkastatus\n---\n# Hidden\n\n- [ ] pay the quokka 📅 2026-01-01\n",
    "Team/Inside.md": "---\nstatus: lemurstatus\n---\n# Inside\n\n- [ ] lemur review\n",
    "Outside/Gamma.md": PUBLIC.format(props="status: zanzibarstatus\nrating: 9\n")
    + "# Gamma\n\nPoints at [[Lonely]] and [[Ocelotland]].\n\n- [ ] feed the ocelot 📅 2026-02-02\n",
    "Team/team.base": "views:\n  - type: table\n    name: All\n    order:\n      - file.name\n      - status\n",
    "Outside/out.base": "views:\n  - type: table\n    name: Out\n",
}
HIDDEN = ("zanzibar", "ocelot", "Gamma", "Outside", "quokka", "Hidden", "lemur", "Inside")
AGENTS = {
    "team": Scope(areas=(Area("lab", "Team"),), tools=frozenset({Tool.SEARCH, Tool.CHECKUP}), rate=0),
    "team-search": Scope(areas=(Area("lab", "Team"),), tools=frozenset({Tool.SEARCH}), rate=0),
    "full": Scope(internal=True, rate=0),
}
Session = Callable[[str, dict[str, Call]], dict[str, tuple[bool, str]]]


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    vault = tmp_path_factory.mktemp("vaults") / "lab"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    paths = AppPaths(tmp_path_factory.mktemp("agents-home"))
    engine = Engine(paths)
    engine.add_vault(vault)
    engine.sync(embed=False)
    service = AgentService(paths, lambda: engine, ServerOptions(port=0))
    tokens = {name: service.store.add(name, scope)[1] for name, scope in AGENTS.items()}
    service.start()
    assert service.wait_running(), service.error
    yield lambda agent, calls: anyio.run(run_session, service.url, tokens[agent], calls)
    service.stop()
    engine.close()


CALLS: dict[str, Call] = {
    "properties": ("tool", ("list_properties", {})),
    "status values": ("tool", ("list_properties", {"key": "status"})),
    "tasks": ("tool", ("list_tasks", {})),
    "open tasks with a word": ("tool", ("list_tasks", {"query": "ocelot", "state": "open"})),
    "due before": ("tool", ("list_tasks", {"due_before": "2026-06-30"})),
    "base": ("tool", ("base_rows", {"base": "lab/Team/team.base"})),
    "base searched": ("tool", ("base_rows", {"base": "lab/Team/team.base", "query": "Alpha"})),
    "checkup": ("tool", ("vault_checkup", {"vault": "lab"})),
    "where draft": ("tool", ("search_notes", {"query": "Alpha", "where": ["status=draft"], "mode": "keyword"})),
    "where outside value": ("tool", ("search_notes", {"query": "Points", "where": ["status=zanzibarstatus"], "mode": "keyword"})),
    "where in the query": ("tool", ("search_notes", {"query": "status:zanzibarstatus", "mode": "keyword"})),
    "bad where": ("tool", ("search_notes", {"query": "Alpha", "where": ["rating"]})),
}
#: A Base outside the scope, or made up, or reached by a path trick, reads exactly like one that does not exist.
BASE_ESCAPES = {
    "outside": "lab/Outside/out.base",
    "missing": "lab/Team/none.base",
    "traversal": "lab/Team/../Outside/out.base",
    "file-system path": "/etc/hostname",
    "not a base": "lab/Outside/Gamma.md",
}


@pytest.fixture(scope="module")
def team(session: Session) -> dict[str, tuple[bool, str]]:
    calls = dict(CALLS) | {f"base {k}": ("tool", ("base_rows", {"base": v})) for k, v in BASE_ESCAPES.items()}
    return session("team", calls)


@pytest.fixture(scope="module")
def full(session: Session) -> dict[str, tuple[bool, str]]:
    return session("full", CALLS)


def _json(answer: tuple[bool, str]) -> dict:
    error, text = answer
    assert not error, text
    return json.loads(text.partition("\n")[0])


def _unsent(key: str, text: str) -> str:
    """The answer without what the caller itself sent (a search echoes its query)."""
    for value in CALLS[key][1][1].values():
        if isinstance(value, str):
            text = text.replace(value, "<sent>")
    return text


def test_nothing_outside_the_folder_reaches_the_scoped_agent(team: dict[str, tuple[bool, str]]) -> None:
    leaked = {k: [m for m in HIDDEN if m.lower() in _unsent(k, text).lower()] for k, (_, text) in team.items() if k in CALLS}
    assert all(not found for found in leaked.values()), {k: (v, team[k][1][:600]) for k, v in leaked.items() if v}


def test_property_counts_are_those_of_the_notes_in_scope(team: dict[str, tuple[bool, str]], full: dict[str, tuple[bool, str]]) -> None:
    mine = {p["key"]: p for p in _json(team["properties"])}
    everyone = {p["key"]: p for p in _json(full["properties"])}
    assert mine["status"]["notes"] == 2 and everyone["status"]["notes"] == 4  # Alpha, Beta (+ Gamma, Inside)
    assert mine["rating"]["notes"] == 2 and everyone["rating"]["notes"] == 3
    values = {v["value"] for v in _json(team["status values"])[0]["values"]}
    assert values == {"draft", "done"}
    assert "zanzibarstatus" in full["status values"][1] and "quokkastatus" not in full["status values"][1]


def test_tasks_are_those_of_the_notes_in_scope_and_never_restricted(team: dict[str, tuple[bool, str]], full: dict[str, tuple[bool, str]]) -> None:
    mine = _json(team["tasks"])
    assert {t["text"] for t in mine["tasks"]} >= {"water the ferns"} and mine["count"] == 2
    assert {t["rel_path"] for t in mine["tasks"]} == {"Team/Alpha.md", "Team/Beta.md"}
    assert _json(team["open tasks with a word"])["count"] == 0
    assert [t["text"] for t in _json(full["open tasks with a word"])["tasks"]] == ["feed the ocelot"]
    assert _json(team["due before"])["count"] == 0 and _json(full["due before"])["count"] == 1
    everyone = {t["rel_path"] for t in _json(full["tasks"])["tasks"]}
    assert "Team/Inside.md" in everyone and "Team/Hidden.md" not in everyone


def test_base_rows_are_the_notes_in_scope(team: dict[str, tuple[bool, str]], full: dict[str, tuple[bool, str]]) -> None:
    mine = _json(team["base"])
    assert {r["rel_path"] for r in mine["rows"]} == {"Team/Alpha.md", "Team/Beta.md", "Team/Lonely.md"} and mine["count"] == 3
    assert "Outside/Gamma.md" in {r["rel_path"] for r in _json(full["base"])["rows"]}
    error, text = team["base searched"]
    assert not error and "Team/Alpha.md" in text


@pytest.mark.parametrize("attempt", list(BASE_ESCAPES))
def test_a_base_outside_the_scope_is_not_found(team: dict[str, tuple[bool, str]], attempt: str) -> None:
    error, text = team[f"base {attempt}"]
    assert error and text.endswith(f": no Base at {BASE_ESCAPES[attempt]!r}")


def test_checkup_findings_stay_inside_the_scope(team: dict[str, tuple[bool, str]], full: dict[str, tuple[bool, str]]) -> None:
    mine = _json(team["checkup"])
    kinds = {(i["kind"], i["rel_path"]) for i in mine["items"]}
    assert ("broken_link", "Team/Lonely.md") in kinds and ("orphan", "Team/Lonely.md") in kinds  # linked only from outside
    assert ("inconsistent_property", "Team/Beta.md") in kinds
    everyone = {(i["kind"], i["rel_path"]) for i in _json(full["checkup"])["items"]}
    assert ("broken_link", "Outside/Gamma.md") in everyone and ("orphan", "Team/Lonely.md") not in everyone


def test_where_filters_search_within_the_scope(team: dict[str, tuple[bool, str]], full: dict[str, tuple[bool, str]]) -> None:
    assert "Team/Alpha.md" in team["where draft"][1]
    assert "Outside/Gamma.md" not in team["where outside value"][1] and "Outside/Gamma.md" in full["where outside value"][1]
    assert "Outside/Gamma.md" in full["where in the query"][1]
    assert all(answer["bad where"][0] and "is not a property condition" in answer["bad where"][1] for answer in (team, full))


def test_a_tool_not_granted_is_refused_and_not_listed(session: Session) -> None:
    out = session("team-search", {"checkup": ("tool", ("vault_checkup", {"vault": "lab"})), "tools": ("tools", None)})
    error, text = out["checkup"]
    assert error and "may not call vault_checkup" in text
    listed = set(out["tools"][1].splitlines())
    assert {"list_properties", "list_tasks", "base_rows", "search_notes"} <= listed and "vault_checkup" not in listed


def test_property_values_and_task_lines_are_secret_masked(team: dict[str, tuple[bool, str]]) -> None:
    assert not [k for k, (_, text) in team.items() if SECRET in text]
    deploy = next(p for p in _json(team["properties"]) if p["key"] == "deploy")
    assert [v["value"] for v in deploy["values"]] == ["[REDACTED]"]
    assert "file the report with [REDACTED]" in {t["text"] for t in _json(team["tasks"])["tasks"]}
