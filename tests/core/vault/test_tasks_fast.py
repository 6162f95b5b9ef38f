"""`read_tasks`, whose passes run only where their signs can be, reads what the plain loop read."""

from __future__ import annotations

import datetime as dt
import random
import re

from core.base.structured import Task
from core.vault.tasks import (
    _ANY_TASK,
    _DATAVIEW,
    _DATAVIEW_KEYS,
    _DATE_SIGNS,
    _FENCE,
    _HEADING,
    _PRIORITY_SIGNS,
    _SIGN_DATE,
    _SIGN_PRIORITY,
    _TASK,
    _has_task,
    read_tasks,
    task_status,
)


def _reference(text: str, first_line: int) -> tuple[list[Task], list[str]]:
    """The loop `read_tasks` replaced: every pass on every task line, the heading path joined per task."""
    tasks: list[Task] = []
    problems: list[str] = []
    headings: list[tuple[int, str]] = []
    fence: str | None = None
    for n, line in enumerate(text.splitlines(), start=first_line):
        opening = _FENCE.match(line)
        if opening:
            fence = None if fence == opening.group(1) else (fence or opening.group(1))
            continue
        if fence:
            continue
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            headings = [h for h in headings if h[0] < level] + [(level, heading.group(2).strip())]
            continue
        m = _TASK.match(line)
        if m is None:
            continue
        task, bad = _reference_task(m.group(1), m.group(2), n, " > ".join(h for _, h in headings if h))
        tasks.append(task)
        problems.extend(f"task on line {n}: {b}" for b in bad)
    return tasks, problems


def _reference_task(symbol: str, rest: str, line: int, heading: str) -> tuple[Task, list[str]]:
    dates: dict[str, str] = {}
    bad: list[str] = []
    priority = "normal"

    def take_date(field: str, value: str) -> str:
        value_ = value.strip()
        try:
            day = dt.date.fromisoformat(value_[:10]).isoformat() if len(value_) == 10 else None
        except ValueError:
            day = None
        if day is None:
            bad.append(f"{field} date {value!r} is not a date (YYYY-MM-DD); ignored")
        else:
            dates[field] = day
        return ""

    def take_sign(m: re.Match[str]) -> str:
        return take_date(next(f for f, signs in _DATE_SIGNS.items() if m.group(1) in signs), m.group(2))

    def take_dataview(m: re.Match[str]) -> str:
        nonlocal priority
        key, value = m.group(1).lower(), m.group(2).strip()
        if key == "priority":
            priority = value.lower() if value.lower() in _PRIORITY_SIGNS.values() else priority
            return ""
        field = _DATAVIEW_KEYS.get(key)
        return take_date(field, value) if field else m.group(0)

    text = _DATAVIEW.sub(take_dataview, _SIGN_DATE.sub(take_sign, rest))
    for m in _SIGN_PRIORITY.finditer(text):
        priority = _PRIORITY_SIGNS[m.group(1)]
    text = _SIGN_PRIORITY.sub("", text)
    return Task(line, symbol, task_status(symbol), " ".join(text.split()), heading, priority=priority, **dates), bad


_PIECES = [
    "- [ ] ", "- [x] ", "* [/] ", "1. [-] ", "> - [?] ", "  - [ ] ", "-[ ] ", "- [ ]", "# H", "## Sub #", "### ", "```", "~~~",
    "> ```", "text", " ", "📅 2024-01-31", "📅️2024-02-30", "⏳ 2024-1-1", "🛫 2023-12-01", "➕ x", "✅ 2024-03-03", "❌ 2024-03-04",
    "🔺", "⏫", "🔼️", "🔽", "⏬", "[due:: 2024-05-01]", "(scheduled:: 2024-05-02)", "[priority:: High]", "[priority:: urgent]",
    "[completion:: 2024-05-03]", "[owner:: me]", "[[link]]", "#tag", "::", "\n", "\n", "\n",
]  # fmt: skip


def test_generated_notes_read_as_the_plain_loop_read_them() -> None:
    rng = random.Random(11)
    seen = 0
    for _ in range(3000):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 24)))
        got = read_tasks(text, 3)
        want = _reference(text, 3)
        assert (list(got.tasks), list(got.problems)) == want, repr(text)
        seen += len(got.tasks)
    assert seen > 500


def test_a_task_line_is_found_where_the_anchored_search_finds_one() -> None:
    rng = random.Random(12)
    pieces = ["- ", "* ", "1. ", "> ", " ", "\t", "[x]", "[ ]", "[]", "[[]", "[ab]", "text", "\n", "\r", "-", "2)", "[x]\t", "- [ ] "]
    found = 0
    for _ in range(6000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        want = _ANY_TASK.search(text) is not None
        assert _has_task(text) == want, repr(text)
        found += want
    assert found > 500
