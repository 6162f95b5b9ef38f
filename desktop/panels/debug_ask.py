"""The Debug tab's section for the newest question asked: how it was searched, and folder routing's choice.

Folder routing is opt-in and spends a model call before every search, so when it
is on a user needs to see what it did: which folders were searched first, with
what weight, which of them the user chose, and — when the model's choice was not
used — why (it failed, timed out, or replied with no folder of the vault) and
what was searched instead. Everything shown comes from `AskResponse.debug` as
the core wrote it; nothing is re-derived here.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QTreeWidgetItem

from core.answer import AskResponse

ROUTING_OFF = "Folder routing: off (Settings › Language model › Route questions to likely folders first)"
ROUTING_NEEDS_MODEL = "Folder routing: not used (it needs a language model)"
REPLY_CHARS = 90  # the full reply is in Copy as JSON; a long row would push the columns off screen
FALLBACK_CAUSE = {
    "timeout": "the model timed out",
    "failed": "the model failed",
    "invalid_reply": "the model's reply named no folder of the vault",
    "no_folders": "the vault has no folders",
}


def routing_title(routing: dict[str, Any] | None, provider: str) -> str:
    """One line that says what routing did, shown on the section's own row."""
    if routing is None:
        return ROUTING_NEEDS_MODEL if provider == "extractive" else ROUTING_OFF
    pairs = ", ".join(f"{f} ×{w:.1f}" for f, w in zip(routing["folders"], routing["weights"]))
    kind = routing.get("fallback_kind")
    if kind is None:
        return f"Folder routing: {pairs}"
    cause = FALLBACK_CAUSE.get(kind, "the model's choice was not used")
    if routing.get("searched_all_folders", not routing["folders"]):
        return f"Folder routing fell back to all folders: {cause}"
    return f"Folder routing: only your folders ({pairs}): {cause}"


def routing_rows(routing: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(folder, position, weight, chosen by) for each folder searched first, in search order."""
    chosen_by = routing.get("chosen_by") or ["model"] * len(routing["folders"])
    return [
        (folder, str(i), f"{weight:.1f}", "chosen by you" if who == "you" else "chosen by the model")
        for i, (folder, weight, who) in enumerate(zip(routing["folders"], routing["weights"], chosen_by), 1)
    ]


def routing_notes(routing: dict[str, Any], route_ms: float | None) -> list[str]:
    """The lines under the folders: the fallback's full reason, what was searched instead, the reply, the time."""
    lines = []
    if routing.get("fallback"):
        lines.append(f"fallback: {routing['fallback']}")
        lines.append("searched: all folders" if routing.get("searched_all_folders", not routing["folders"]) else "searched: only your folders")
    elif routing["folders"]:
        lines.append("hits weighed by their folder's position (1.0, 0.9, … min 0.1)")
    if routing.get("reply"):
        reply = " ".join(str(routing["reply"]).split())  # one row: a reply of code or prose spans many lines
        lines.append(f"model's reply: {reply if len(reply) <= REPLY_CHARS else reply[: REPLY_CHARS - 1] + '…'}")
    if route_ms is not None:
        lines.append(f"routing took {route_ms:.0f} ms")
    return lines


def fill_ask_section(section: QTreeWidgetItem, response: AskResponse) -> QTreeWidgetItem:
    """Fill `section` with the question's details; returns the folder-routing item (tests read it)."""
    if response.standalone_question:
        _info(section, f"searched as: {response.standalone_question}")
    by = "extractive (no language model)" if response.provider == "extractive" else f"{response.provider} · {response.model or '?'}"
    outcome = f"abstained ({response.abstain_reason})" if response.abstained else f"{len(response.references)} citation(s)"
    _info(section, f"answered by: {by}; {outcome}")
    routing = response.debug.get("folder_routing")
    item = QTreeWidgetItem([routing_title(routing, response.provider)])
    item.setToolTip(0, item.text(0))
    section.addChild(item)
    item.setFirstColumnSpanned(True)
    if routing is not None:
        for row in routing_rows(routing):
            item.addChild(QTreeWidgetItem(list(row)))
        for line in routing_notes(routing, response.timings_ms.get("route")):
            _info(item, line)
        item.setExpanded(True)
    timings = " · ".join(f"{stage} {ms:.0f}" for stage, ms in response.timings_ms.items())
    if timings:
        _info(section, f"timings (ms): {timings}")
    for w in response.warnings:
        _info(section, f"warning: {w}")
    return item


def ask_json(response: AskResponse) -> dict[str, Any]:
    """What "Copy as JSON" adds for the question: the same facts the section shows."""
    return {
        "question": response.question,
        "standalone_question": response.standalone_question,
        "provider": response.provider,
        "model": response.model,
        "abstained": response.abstained,
        "folder_routing": response.debug.get("folder_routing"),
        "timings_ms": response.timings_ms,
        "warnings": list(response.warnings),
    }


def _info(parent: QTreeWidgetItem, text: str) -> None:
    item = QTreeWidgetItem([text])
    item.setToolTip(0, text)
    parent.addChild(item)
    item.setFirstColumnSpanned(True)
