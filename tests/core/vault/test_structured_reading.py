"""Typed properties, task lines and daily-note dates as read from a note's bytes."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from core.base.structured import PropertyType, TaskStatus
from core.vault.notes import parse_note
from core.vault.obsidian_settings import VaultSettings, load_settings, strptime_format
from core.vault.properties import read_properties
from core.vault.tasks import read_tasks


def types_of(data: dict[str, object], types: dict[str, PropertyType] | None = None) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {p.key: (p.type.value, p.values) for p in read_properties(data, types).properties}


def test_types_are_inferred_from_values_as_obsidian_does() -> None:
    got = types_of(
        {"Status": "draft", "rating": 4, "score": 2.5, "done": True, "due": dt.date(2026, 12, 1),
         "at": dt.datetime(2026, 12, 1, 9, 30), "quoted": "2026-01-02", "people": ["Ann", "Bob"], "empty": None}
    )
    assert got == {
        "status": ("text", ("draft",)),
        "rating": ("number", ("4",)),
        "score": ("number", ("2.5",)),
        "done": ("checkbox", ("true",)),
        "due": ("date", ("2026-12-01",)),
        "at": ("datetime", ("2026-12-01T09:30:00",)),
        "quoted": ("date", ("2026-01-02",)),
        "people": ("multitext", ("Ann", "Bob")),
        "empty": ("text", ()),
    }


def test_declared_types_convert_values_and_report_the_ones_that_cannot() -> None:
    read = read_properties({"rating": "3", "n": "lots", "ok": "maybe", "when": "2023-02-30"},
                           {"rating": PropertyType.NUMBER, "n": PropertyType.NUMBER, "ok": PropertyType.CHECKBOX, "when": PropertyType.DATE})
    assert {p.key: p.values for p in read.properties} == {"rating": ("3",), "n": (), "ok": (), "when": ()}
    assert len(read.problems) == 3 and "'lots' is not a valid number" in read.problems[0]


def test_a_list_where_text_is_declared_is_read_as_a_list_and_reported() -> None:
    read = read_properties({"status": ["draft", "review"]}, {"status": PropertyType.TEXT})
    assert read.properties[0].type is PropertyType.LIST and read.properties[0].values == ("draft", "review")
    assert "holds a list" in read.problems[0]


def test_links_in_properties_are_links_and_their_target_is_the_value() -> None:
    read = read_properties({"project": "[[Launch|the launch]]", "people": ["[[Ann]]", "Bob"], "nested": {"a": 1}})
    assert [(link.target, link.context) for link in read.links] == [("Launch", "project: [[Launch|the launch]]"), ("Ann", "people: [[Ann]]")]
    assert {p.key: p.values for p in read.properties} == {"project": ("Launch",), "people": ("Ann", "Bob")}
    assert read.problems == ("property 'nested' is a nested object; not indexed",)


def test_a_task_with_three_dates_a_priority_and_a_heading() -> None:
    text = "# Plan\n## Week\n- [ ] Book the venue 📅 2026-12-01 ⏳ 2026-11-28 🛫 2026-11-26 ⏫ #work\n"
    (task,) = read_tasks(text, first_line=5).tasks
    assert (task.line, task.heading, task.text) == (7, "Plan > Week", "Book the venue #work")
    assert (task.due, task.scheduled, task.start, task.priority) == ("2026-12-01", "2026-11-28", "2026-11-26", "high")


@pytest.mark.parametrize(
    ("line", "status", "field", "value"),
    [
        ("- [x] Paid ✅ 2026-11-10", TaskStatus.DONE, "done", "2026-11-10"),
        ("* [-] Dropped ❌ 2026-11-01", TaskStatus.CANCELLED, "cancelled", "2026-11-01"),
        ("1. [/] Writing ➕ 2026-10-01", TaskStatus.IN_PROGRESS, "created", "2026-10-01"),
        ("- [?] Ask someone [due:: 2026-05-01]", TaskStatus.OTHER, "due", "2026-05-01"),
        ("- [ ] Dataview parens (scheduled:: 2026-05-02) [priority:: lowest]", TaskStatus.OPEN, "scheduled", "2026-05-02"),
        ("- [ ] With a variation selector 📅\ufe0f 2026-05-03", TaskStatus.OPEN, "due", "2026-05-03"),
    ],
)
def test_statuses_and_both_date_formats(line: str, status: TaskStatus, field: str, value: str) -> None:
    (task,) = read_tasks(line).tasks
    assert task.status is status and getattr(task, field) == value
    assert status is not TaskStatus.OTHER or task.status.is_open


def test_bad_task_dates_are_reported_and_code_blocks_hold_no_tasks() -> None:
    read = read_tasks("- [ ] Fix 📅 2026-13-45\n```\n- [ ] example\n```\n- [ ] real\n")
    assert [t.text for t in read.tasks] == ["Fix", "real"]
    assert read.tasks[0].due is None
    assert read.problems == ("task on line 1: due date '2026-13-45' is not a date (YYYY-MM-DD); ignored",)


@pytest.mark.parametrize(
    ("fmt", "folder", "rel_path", "expected"),
    [
        ("YYYY-MM-DD", "", "Journal/2026-11-24.md", "2026-11-24"),
        ("YYYY-MM-DD", "Daily", "Journal/2026-11-24.md", None),
        ("DD.MM.YYYY", "", "24.11.2026.md", "2026-11-24"),
        ("YYYY/MM/YYYY-MM-DD", "Daily", "Daily/2026/11/2026-11-24.md", "2026-11-24"),
        ("[Log] YYYY-MM-DD dddd", "", "Log 2026-11-24 Tuesday.md", "2026-11-24"),
        ("YYYY-MM-DD", "", "Ideas.md", None),
        ("YYYY-MM-DD", "", "2026 plans.md", None),  # a year but not the format
        ("DD.MM.YYYY", "", "2026-11/24.11.2026.md", "2026-11-24"),  # the name is read, not the folders
        # The default format is read without strptime (issue #30): the same answers as strptime's.
        ("YYYY-MM-DD", "", "2026-2-5.md", "2026-02-05"),  # strptime's one-digit month and day
        ("YYYY-MM-DD", "", "2026-02-30.md", None),
        ("YYYY-MM-DD", "", "0000-01-01.md", None),
        ("YYYY-MM-DD", "", "20261124.md", None),  # fromisoformat would read it; the format does not
        ("YYYY-MM-DD", "", "2026-W48-2.md", None),
        ("YYYY-MM-DD", "", "Stress Test/limit 2000.md", None),
        ("YYYY-MM-DD", "", "2026-11- 4.md", "2026-11-04"),  # strptime's %d reads " 4"
    ],
)
def test_daily_note_dates_come_from_the_vaults_format(fmt: str, folder: str, rel_path: str, expected: str | None) -> None:
    assert VaultSettings(daily_format=fmt, daily_folder=folder).daily_date(rel_path) == expected


def test_settings_files_are_read_and_bad_ones_reported(tmp_path: Path) -> None:
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "types.json").write_text(json.dumps({"types": {"Rating": "number", "x": "weird"}}))
    (tmp_path / ".obsidian" / "daily-notes.json").write_text("{not json")
    settings = load_settings(tmp_path)
    assert settings.types == {"rating": PropertyType.NUMBER}
    assert settings.daily_format == "YYYY-MM-DD"
    assert len(settings.problems) == 2
    assert strptime_format("HH:mm") is None


def test_a_note_gets_its_properties_tasks_and_daily_date() -> None:
    raw = "---\nrating: '4'\n---\n# Day\n- [ ] Call 📅 2026-01-05\n".encode()
    doc = parse_note("v", "2026-01-04.md", raw, size=len(raw), mtime_ns=0, settings=VaultSettings(types={"rating": PropertyType.NUMBER}))
    assert [(p.key, p.type, p.values) for p in doc.properties] == [("rating", PropertyType.NUMBER, ("4",))]
    assert [(t.line, t.due, t.heading) for t in doc.tasks] == [(5, "2026-01-05", "Day")]
    assert doc.date == "2026-01-04"


def test_a_date_text_of_iso_shape_reads_as_strptime_reads_it() -> None:
    """`_date` reads `YYYY-MM-DD[THH:MM[:SS]]` without `strptime`: the same answer as the formats' loop for
    generated texts of that shape (impossible months, days, hours and seconds among them) and near it."""
    import random

    from core.vault import properties

    rng = random.Random(5)

    def two(top: int) -> str:
        return f"{rng.randrange(0, top):02d}"

    texts = {"2024-03-23T15:14", "2024-03-23 15:14", "2024-02-29", "2023-02-29", "0000-01-01", "2024-1-2", "2024-01-02T9:05",
             "2024-01-02T24:00", "2024-01-02T23:59:60", "2024-01-02T23:59:61", " 2024-01-02 ", "2024-01-02t10:00", "２０２４-01-02"}
    for _ in range(4000):
        day = f"{rng.randrange(0, 10000):04d}-{two(14)}-{two(33)}"
        texts |= {day, f"{day}T{two(26)}:{two(62)}", f"{day} {two(26)}:{two(62)}:{two(63)}", f"{day}T{two(24)}:{two(60)}:{two(60)}"}
    for text in sorted(texts):
        for with_time in (False, True):
            value = text.strip().replace(" ", "T")
            parsed = properties._by_formats(value)
            want = None if parsed is None else parsed.isoformat(timespec="seconds") if with_time and "T" in value else parsed.date().isoformat()
            assert properties._date(text, with_time=with_time) == want, text
    assert properties._ISO_DATETIME.fullmatch("2024-03-23T15:14")
    assert sum(properties._ISO_DATETIME.fullmatch(t.strip().replace(" ", "T")) is not None for t in texts) > 10_000
