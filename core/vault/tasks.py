"""Task lines (`- [ ] …`) of a note, read in the Tasks plugin's formats.

The Tasks plugin's emoji signifiers (📅 due, ⏳ scheduled, 🛫 start, ➕ created, ✅ done,
❌ cancelled; 🔺⏫🔼🔽⏬ priorities) and its Dataview form (`[due:: 2026-05-01]`) are the
de-facto standard for tasks in Obsidian vaults; both are read. Checkbox characters map to
the plugin's core statuses (space open, x done, / in progress, - cancelled); any other
character is a custom status, counted as open. Task lines inside code blocks are
examples, not tasks, and are left out. A date that is not one is reported, and the task
kept without it.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from core.base.structured import Task, TaskStatus

MAX_TASKS = 5_000  # per note
_TASK = re.compile(r"^[ \t>]*(?:[-*+]|\d+[.)])[ \t]+\[(.)\][ \t]+(.*)$")
_ANY_TASK = re.compile(r"^[ \t>]*(?:[-*+]|\d+[.)])[ \t]+\[.\][ \t]", re.MULTILINE)  # most notes have none: one scan says so
_CHECKBOX = re.compile(r"\[.\][ \t]")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t>]*(```|~~~)")
_LINE_STARTS = frozenset("`~#-*+")
_VS = "\ufe0f"  # a variation selector some editors add after an emoji
_DATE_SIGNS = {
    "due": "📅📆🗓",
    "scheduled": "⏳⌛",
    "start": "🛫",
    "created": "➕",
    "done": "✅",
    "cancelled": "❌",
}
_PRIORITY_SIGNS = {"🔺": "highest", "⏫": "high", "🔼": "medium", "🔽": "low", "⏬": "lowest"}
_DATAVIEW_KEYS = {"due": "due", "scheduled": "scheduled", "start": "start", "created": "created", "completion": "done", "cancelled": "cancelled"}
_SIGN_DATE = re.compile("([" + "".join(_DATE_SIGNS.values()) + "])" + _VS + r"?[ \t]*(\S+)")
_SIGN_PRIORITY = re.compile("([" + "".join(_PRIORITY_SIGNS) + "])" + _VS + "?")
_DATAVIEW = re.compile(r"[\[(]([a-z]+)::[ \t]*([^\])]*)[\])]", re.IGNORECASE)
# The date signs' first characters (a quick search before the substitution) and each sign's field.
_ANY_DATE_SIGN = re.compile("[" + "".join(_DATE_SIGNS.values()) + "]")
_SIGN_FIELD = {sign: field for field, signs in _DATE_SIGNS.items() for sign in signs}
_FENCE_STARTS = frozenset("`~")
_STATUS = {" ": TaskStatus.OPEN, "x": TaskStatus.DONE, "X": TaskStatus.DONE, "/": TaskStatus.IN_PROGRESS, "-": TaskStatus.CANCELLED}


@dataclass(frozen=True, slots=True)
class TaskRead:
    """A note's tasks, and what in them could not be read (shown as the note's warnings)."""

    tasks: tuple[Task, ...]
    problems: tuple[str, ...]


def read_tasks(text: str, first_line: int = 1) -> TaskRead:
    """The tasks of a note's body `text`, whose first line is line `first_line` of the file."""
    if not _has_task(text):
        return TaskRead((), ())
    tasks: list[Task] = []
    problems: list[str] = []
    headings: list[tuple[int, str]] = []
    path = ""  # the heading path of `headings`, joined once a heading (not once a task)
    fence: str | None = None
    for n, line in enumerate(text.splitlines(), start=first_line):
        head = line.lstrip(" \t>")[:1]
        if head not in _LINE_STARTS and not head.isdigit():
            continue  # no fence, heading or list item: nothing to read here
        if head in _FENCE_STARTS and (opening := _FENCE.match(line)):
            fence = None if fence == opening.group(1) else (fence or opening.group(1))
            continue
        if fence:
            continue
        if head == "#" and (heading := _HEADING.match(line)):  # a heading starts its line: `head` is its "#"
            level = len(heading.group(1))
            headings = [h for h in headings if h[0] < level] + [(level, heading.group(2).strip())]
            path = " > ".join(h for _, h in headings if h)
            continue
        m = _TASK.match(line)
        if m is None:
            continue
        if len(tasks) >= MAX_TASKS:
            problems.append(f"more than {MAX_TASKS:,} tasks; the rest are not indexed")
            break
        task, bad = parse_task(m.group(1), m.group(2), n, path)
        tasks.append(task)
        if bad:
            problems.extend(f"task on line {n}: {b}" for b in bad)
    return TaskRead(tuple(tasks), tuple(problems))


def _has_task(text: str) -> bool:
    """Whether a task line is anywhere: `_ANY_TASK.search(text)`, but stepping only to each `[x] `.

    The anchored expression was tried at every line start and every character of a note
    (~7 ms over rust-book, ~16 ms over simonw-til, which hold almost no tasks); a one-character
    bracket pair before a space is rare outside tasks, and `re` finds it by its "[" in C."""
    for m in _CHECKBOX.finditer(text):
        if _ANY_TASK.match(text, text.rfind("\n", 0, m.start()) + 1) is not None:
            return True
    return False


def parse_task(symbol: str, rest: str, line: int, heading: str) -> tuple[Task, list[str]]:
    """One task from its checkbox character and the text after it; problems with its dates.

    Each pass runs only where its signs can be: a Tasks vault has ~1,000 task lines, and
    three substitutions and a search on each were most of reading its tasks."""
    dates: dict[str, str] = {}
    bad: list[str] = []
    priority = "normal"
    text = rest
    if _ANY_DATE_SIGN.search(text) is not None:
        text = _SIGN_DATE.sub(lambda m: _take_date(_SIGN_FIELD[m.group(1)], m.group(2), dates, bad), text)
    if "::" in text:
        found: list[str] = []
        text = _DATAVIEW.sub(lambda m: _take_dataview(m, dates, bad, found), text)
        if found:
            priority = found[-1]
    signs = _SIGN_PRIORITY.findall(text)
    if signs:
        priority = _PRIORITY_SIGNS[signs[-1]]
        text = _SIGN_PRIORITY.sub("", text)
    task = Task(
        line=line,
        symbol=symbol,
        status=task_status(symbol),
        text=" ".join(text.split()),
        heading=heading,
        priority=priority,
        **dates,
    )
    return task, bad


def _take_date(field: str, value: str, dates: dict[str, str], bad: list[str]) -> str:
    """Keep a task's date (or say why not); the sign and date leave the task's text."""
    day = _iso_date(value)
    if day is None:
        bad.append(f"{field} date {value!r} is not a date (YYYY-MM-DD); ignored")
    else:
        dates[field] = day
    return ""


def _take_dataview(m: re.Match[str], dates: dict[str, str], bad: list[str], priorities: list[str]) -> str:
    """A Dataview field: a date or priority leaves the text (a known priority is noted); others stay."""
    key, value = m.group(1).lower(), m.group(2).strip()
    if key == "priority":
        if value.lower() in _PRIORITY_SIGNS.values():
            priorities.append(value.lower())
        return ""
    field = _DATAVIEW_KEYS.get(key)
    return _take_date(field, value, dates, bad) if field else m.group(0)


def task_status(symbol: str) -> TaskStatus:
    """The status a checkbox character stands for (an unknown one is a custom, open status)."""
    return _STATUS.get(symbol, TaskStatus.OTHER)


def _iso_date(value: str) -> str | None:
    try:
        return dt.date.fromisoformat(value.strip()[:10]).isoformat() if len(value.strip()) == 10 else None
    except ValueError:
        return None
