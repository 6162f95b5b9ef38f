"""Scope escapes: an agent granted `work/Projects` (public notes only) tries, by every tool and by
crafted references, to find, read, link to or learn of anything else. Zero leaks allowed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from core.agents.scope import TOOL_PERMISSION, Tool
from tests.core.agents.agent_helpers import HIDDEN_MARKERS, RESTRICTED_MARKERS, Served

S = "search_notes"
F = "fetch_note_chunk"
L = "note_links"
R = "related_notes"

#: (attempt, call). Each is made by the scoped agent; none may show a hidden marker.
ESCAPES: dict[str, tuple[str, Any]] = {
    "search for a private note's word": ("tool", (S, {"query": "zanzibar"})),
    "search another vault's word": ("tool", (S, {"query": "ocelot"})),
    "search the other vault by name": ("tool", (S, {"query": "garden plan", "vault": "other-vault"})),
    "search an unknown vault": ("tool", (S, {"query": "garden plan", "vault": "no-such-vault"})),
    "search the private folder": ("tool", (S, {"query": "garden plan", "folder": "Private"})),
    "search a traversing folder": ("tool", (S, {"query": "garden plan", "folder": "Projects/../Private"})),
    "folder filter inside the query": ("tool", (S, {"query": "folder:Private garden plan"})),
    "tag shared with a private note": ("tool", (S, {"query": "garden", "tags": ["garden"], "k": 30})),
    "search an internal note's word": ("tool", (S, {"query": "lemur budget"})),
    "search a restricted note's word": ("tool", (S, {"query": "quokka salary"})),
    "broad search, many results": ("tool", (S, {"query": "garden plan", "k": 30, "mode": "keyword"})),
    "fetch a private chunk": ("tool", (F, {"ref": "work/Private/Secret plan.md#0"})),
    "fetch another vault's chunk": ("tool", (F, {"ref": "other-vault/Notes.md#0"})),
    "fetch an internal chunk": ("tool", (F, {"ref": "work/Projects/Internal notes.md#0"})),
    "fetch a restricted chunk": ("tool", (F, {"ref": "work/Projects/Restricted.md#0"})),
    "fetch by traversal": ("tool", (F, {"ref": "work/Projects/../Private/Secret plan.md#0"})),
    "fetch by absolute-looking path": ("tool", (F, {"ref": "/work/Private/Secret plan.md#0"})),
    "links of a private note by path": ("tool", (L, {"note": "Private/Secret plan.md", "vault": "work"})),
    "links of a private note by name": ("tool", (L, {"note": "Secret plan", "vault": "work"})),
    "links of an in-scope note (private backlink, link out)": ("tool", (L, {"note": "Plan", "vault": "work"})),
    "links in another vault": ("tool", (L, {"note": "Notes", "vault": "other-vault"})),
    "related notes of an in-scope note": ("tool", (R, {"note": "Garden", "vault": "work", "k": 30})),
    "related notes of a private note": ("tool", (R, {"note": "Secret plan", "vault": "work"})),
    "ask about a private note": ("tool", ("ask_notes", {"question": "What is the zanzibar garden plan?"})),
    "ask in another vault": ("tool", ("ask_notes", {"question": "What is the ocelot plan?", "vault": "other-vault"})),
    "list vaults": ("tool", ("list_vaults", {})),
    "search with a property filter": ("tool", (S, {"query": "garden plan", "where": ["has:confidentiality"], "k": 30, "mode": "keyword"})),
    "properties of every note": ("tool", ("list_properties", {"key": "confidentiality"})),
    "properties of another vault": ("tool", ("list_properties", {"vault": "other-vault"})),
    "tasks of another vault": ("tool", ("list_tasks", {"vault": "other-vault"})),
    "a Base in another vault": ("tool", ("base_rows", {"base": "other-vault/All.base"})),
    "check-up of the granted vault": ("tool", ("vault_checkup", {"vault": "work"})),
    "check-up of another vault": ("tool", ("vault_checkup", {"vault": "other-vault"})),
    "list resources": ("resources", None),
    "read a private note as a resource": ("read", "cairn://work/Private/Secret plan.md"),
    "read another vault's note as a resource": ("read", "cairn://other-vault/Notes.md"),
    "read a resource by traversal": ("read", "cairn://work/Projects/../Private/Secret plan.md"),
    "read a restricted note as a resource": ("read", "cairn://work/Projects/Restricted.md"),
}


@pytest.fixture(scope="module")
def escapes(session: Callable[..., dict[str, tuple[bool, str]]]) -> dict[str, tuple[bool, str]]:
    return session("scoped", ESCAPES)


def leaks(call: tuple[str, Any], text: str, markers: tuple[str, ...] = HIDDEN_MARKERS) -> list[str]:
    """Markers in the answer, after taking out what the caller itself sent (a query or reference echoed back)."""
    kind, arg = call
    sent = [arg] if isinstance(arg, str) else [v for v in (arg[1].values() if kind == "tool" else ()) if isinstance(v, str)]
    sent += [s.lstrip("/") for s in sent] + [p for s in sent if s.startswith("cairn://") for p in s[8:].split("/", 1)]
    for s in sorted(sent, key=len, reverse=True):
        text = text.replace(s, "<sent>")
    return [m for m in markers if m.lower() in text.lower()]


@pytest.mark.parametrize("attempt", list(ESCAPES))
def test_scoped_agent_learns_nothing_outside_its_folder(escapes: dict[str, tuple[bool, str]], attempt: str) -> None:
    _, text = escapes[attempt]
    assert leaks(ESCAPES[attempt], text) == [], f"{attempt}: {text[:400]}"


def test_the_table_has_at_least_twenty_attempts_and_zero_leaks(escapes: dict[str, tuple[bool, str]]) -> None:
    leaked = [a for a, (_, text) in escapes.items() if leaks(ESCAPES[a], text)]
    assert len(escapes) >= 20 and leaked == []


def test_in_scope_notes_are_still_found_read_and_linked(session: Callable[..., dict[str, tuple[bool, str]]]) -> None:
    got = session(
        "scoped",
        {
            "search": ("tool", (S, {"query": "garden plan", "mode": "keyword", "k": 10})),
            "fetch": ("tool", (F, {"ref": "work/Projects/Garden.md#0"})),
            "links": ("tool", (L, {"note": "Plan", "vault": "work"})),
            "read": ("read", "cairn://work/Projects/Plan.md"),
            "resources": ("resources", None),
        },
    )
    assert "work/Projects/Plan.md" in got["search"][1] and "work/Projects/Garden.md" in got["search"][1]
    assert not got["fetch"][0] and "Tomatoes and basil" in got["fetch"][1]
    assert '"rel_path": "Projects/Garden.md"' in got["links"][1]
    assert not got["read"][0] and "The garden plan" in got["read"][1]
    assert sorted(got["resources"][1].split("\n")) == ["cairn://work/Projects/Garden.md", "cairn://work/Projects/Keys.md", "cairn://work/Projects/Plan.md"]


def test_secrets_are_masked_in_everything_returned(session: Callable[..., dict[str, tuple[bool, str]]]) -> None:
    got = session(
        "scoped",
        {
            "search": ("tool", (S, {"query": "deploy api_key robot", "mode": "keyword"})),
            "fetch": ("tool", (F, {"ref": "work/Projects/Keys.md#0"})),
            "read": ("read", "cairn://work/Projects/Keys.md"),
        },
    )
    for key, (is_error, text) in got.items():
        assert not is_error and "sk-abcdefghijklmnopqrstuvwx1234" not in text and "[REDACTED]" in text, key


def test_a_hidden_note_reads_exactly_like_a_missing_one(session: Callable[..., dict[str, tuple[bool, str]]]) -> None:
    got = session(
        "scoped",
        {
            "hidden": ("tool", (F, {"ref": "work/Private/Secret plan.md#0"})),
            "missing": ("tool", (F, {"ref": "work/Private/No such note.md#0"})),
            "hidden_links": ("tool", (L, {"note": "Private/Secret plan.md", "vault": "work"})),
            "missing_links": ("tool", (L, {"note": "Private/No such note.md", "vault": "work"})),
            "hidden_vault": ("tool", (S, {"query": "plan", "vault": "other-vault"})),
            "missing_vault": ("tool", (S, {"query": "plan", "vault": "no-such-vault"})),
        },
    )
    pairs = (("hidden", "missing", "Secret plan.md"), ("hidden_links", "missing_links", "Secret plan.md"), ("hidden_vault", "missing_vault", "other-vault"))
    for hidden, missing, name in pairs:
        assert got[hidden][0] and got[missing][0]
        other = "No such note.md" if name.endswith(".md") else "no-such-vault"
        assert got[hidden][1].replace(name, "X") == got[missing][1].replace(other, "X")


def test_a_link_out_of_scope_does_not_say_where_it_leads(session: Callable[..., dict[str, tuple[bool, str]]]) -> None:
    import json

    text = session("scoped", {"links": ("tool", (L, {"note": "Plan", "vault": "work"}))})["links"][1]
    data = json.loads(text)
    secret = next(o for o in data["outgoing"] if o["target"] == "Secret plan")
    assert secret["rel_path"] is None and secret["title"] is None and not secret["resolved"]
    assert [b["rel_path"] for b in data["backlinks"]] == ["Projects/Garden.md"]


def test_a_tool_outside_the_scope_is_neither_listed_nor_callable(session: Callable[..., dict[str, tuple[bool, str]]]) -> None:
    got = session("search-only", {"tools": ("tools", None), "fetch": ("tool", (F, {"ref": "work/Projects/Plan.md#0"}))})
    assert set(got["tools"][1].splitlines()) == {name for name, perm in TOOL_PERMISSION.items() if perm == Tool.SEARCH}
    assert got["fetch"][0] and "may not call fetch_note_chunk" in got["fetch"][1] and "garden" not in got["fetch"][1]


RESTRICTED_ATTEMPTS: dict[str, tuple[str, Any]] = {
    "search": ("tool", (S, {"query": "quokka salary", "k": 30})),
    "fetch": ("tool", (F, {"ref": "work/Projects/Restricted.md#0"})),
    "links": ("tool", (L, {"note": "Restricted", "vault": "work"})),
    "backlinks of a note it links to": ("tool", (L, {"note": "Plan", "vault": "work"})),
    "related": ("tool", (R, {"note": "Plan", "vault": "work", "k": 30})),
    "ask": ("tool", ("ask_notes", {"question": "What is the quokka salary?"})),
    "resource": ("read", "cairn://work/Projects/Restricted.md"),
    "resources": ("resources", None),
}


def test_restricted_notes_never_reach_even_the_widest_agent(session: Callable[..., dict[str, tuple[bool, str]]]) -> None:
    got = session("full", RESTRICTED_ATTEMPTS)
    leaked = {k: t[:200] for k, (_, t) in got.items() if leaks(RESTRICTED_ATTEMPTS[k], t, RESTRICTED_MARKERS)}
    assert leaked == {}
    assert "lemur" in session("full", {"s": ("tool", (S, {"query": "lemur budget"}))})["s"][1]  # internal: allowed here


def test_references_are_stable_across_calls(session: Callable[..., dict[str, tuple[bool, str]]]) -> None:
    calls = {f"s{i}": ("tool", (S, {"query": "tomatoes basil", "mode": "keyword", "k": 3})) for i in range(2)}
    calls["fetch"] = ("tool", (F, {"ref": "work/Projects/Garden.md#0"}))
    got = session("full", calls)
    assert got["s0"][1] == got["s1"][1]
    assert "S1 = work/Projects/Garden.md" in got["s0"][1] and "Tomatoes" in got["fetch"][1]


def test_every_call_is_in_the_audit_log_with_references_not_text(served: Served, escapes: dict[str, tuple[bool, str]]) -> None:
    entries = served.service.audit.entries(client="scoped", limit=1000)
    assert len(entries) >= len(ESCAPES) - 1  # listing resources is not a tool call
    assert {e.outcome for e in entries} >= {"ok", "not found"}
    for e in entries:
        assert all("\n" not in r and len(r) < 200 for r in e.refs)
        assert not any(m in " ".join(e.refs) for m in ("zanzibar", "ocelot", "Private/"))
    fetched = served.service.audit.entries(client="scoped", note="Private/Secret plan.md", limit=50)
    assert fetched and all(e.outcome != "ok" for e in fetched)
