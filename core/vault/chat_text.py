"""AI chat exports: ChatGPT's and Claude's `conversations.json`, one unit per conversation.

Both services export a JSON list of conversations (read with the standard library's
`json`; there is no maintained reader for either format). ChatGPT keeps each conversation
as a tree of message nodes (`mapping`, with edits and regenerations as branches): the
thread shown to the user is the path from `current_node` up to the root. Claude keeps a
flat `chat_messages` list with `sender` human/assistant.

A conversation's unit is headed "Title (date)" and each turn is a section under it
("Title (2024-05-01) > 3. You"), so a hit is cited to the turn. System prompts, tool calls
and tool output are left out: they are not what either side said.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.vault.kinds import KindText, UnitBuilder
from core.vault.pdf import PdfPage, PdfProblem

SPEAKERS = {"user": "You", "human": "You"}


def extract_chat(path: Path) -> KindText:
    """Read an export's conversations. Raises `PdfProblem` for a file that is not one."""
    try:
        with path.open("rb") as fh:
            data = json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise PdfProblem("malformed", f"not valid JSON ({exc})") from None
    if isinstance(data, dict) and isinstance(data.get("conversations"), list):
        data = data["conversations"]
    if not isinstance(data, list):
        raise PdfProblem("malformed", "not a chat export: expected a list of conversations")
    pages: list[PdfPage] = []
    service = "ChatGPT"
    for conversation in data:
        if not isinstance(conversation, dict):
            continue
        if "chat_messages" in conversation:
            service = "Claude"
            title, when, turns = _claude(conversation)
        elif "mapping" in conversation:
            title, when, turns = _chatgpt(conversation)
        else:
            continue
        page = conversation_unit(title, when, turns, len(pages) + 1)
        if page is not None:
            pages.append(page)
    if not pages:
        raise PdfProblem("no_text", "no conversation with text in this export")
    return KindText(f"{service} conversations", tuple(pages))


def conversation_unit(title: str, when: str | None, turns: list[tuple[str, str]], number: int) -> PdfPage | None:
    """One conversation as a unit: a section per turn, headed by its number and speaker."""
    out = UnitBuilder(top=f"{title} ({when})" if when else title)
    for i, (speaker, text) in enumerate(turns, 1):
        if text.strip():
            out.heading(1, f"{i}. {speaker}")
            out.block(text)
    return None if out.empty else out.page(number)


def _chatgpt(conversation: dict[str, Any]) -> tuple[str, str | None, list[tuple[str, str]]]:
    mapping = conversation.get("mapping") or {}
    if not isinstance(mapping, dict):
        mapping = {}
    thread: list[dict[str, Any]] = []
    node_id = conversation.get("current_node")
    seen: set[str] = set()
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:  # a cycle would loop forever
        seen.add(node_id)
        node = mapping[node_id] if isinstance(mapping[node_id], dict) else {}
        if isinstance(node.get("message"), dict):
            thread.append(node["message"])
        node_id = node.get("parent")
    if not seen:  # no current node: the nodes in the order they were stored
        thread = [n["message"] for n in reversed(list(mapping.values())) if isinstance(n, dict) and isinstance(n.get("message"), dict)]
    turns: list[tuple[str, str]] = []
    for message in reversed(thread):
        role = str((message.get("author") or {}).get("role", ""))
        content = message.get("content") or {}
        if role not in ("user", "assistant") or not isinstance(content, dict):
            continue
        parts = content.get("parts") or ([content["text"]] if isinstance(content.get("text"), str) else [])
        text = "\n\n".join(p for p in parts if isinstance(p, str))
        if text.strip():
            turns.append((SPEAKERS.get(role, "ChatGPT"), text))
    return _title(conversation.get("title")), _date(conversation.get("create_time")), turns


def _claude(conversation: dict[str, Any]) -> tuple[str, str | None, list[tuple[str, str]]]:
    turns: list[tuple[str, str]] = []
    for message in conversation.get("chat_messages") or []:
        if not isinstance(message, dict):
            continue
        text = message.get("text") if isinstance(message.get("text"), str) else ""
        if not text:
            blocks = message.get("content") or []
            text = "\n\n".join(b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str))
        if text.strip():
            turns.append((SPEAKERS.get(str(message.get("sender")), "Claude"), text))
    return _title(conversation.get("name")), _date(conversation.get("created_at")), turns


def _title(value: Any) -> str:
    return " ".join(str(value or "").split()) or "Untitled conversation"


def _date(value: Any) -> str | None:
    try:
        if isinstance(value, int | float):
            return datetime.fromtimestamp(value, UTC).date().isoformat()
        if isinstance(value, str) and value:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).date().isoformat()
    except (ValueError, OverflowError, OSError):
        return None
    return None
