"""The manifest file: a round trip, and every damaged shape read as "missing" (the caller recovers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.index.manifest import MANIFEST_FORMAT, ChunkRecord, FileRecord, load_manifest, save_manifest


def _record(n: int) -> FileRecord:
    chunks = tuple(ChunkRecord(i, f"hash{n}-{i}", i * 10, i * 10 + 9, f"Heading {i}") for i in range(n % 3 + 1))
    return FileRecord("v1", 100 + n, 1_700_000_000_000_000_000 + n, f"Note {n}", ("a", "b"), "2024-01-02", None, "internal", chunks)


def test_round_trip_keeps_every_record(tmp_path: Path) -> None:
    files = {f"folder/note {n}.md": _record(n) for n in range(50)} | {"ünï/cödé.md": _record(7)}
    path = tmp_path / "manifest.json"
    save_manifest(path, "hash-1", files)
    assert load_manifest(path) == ("hash-1", files)


def test_the_file_is_one_json_line_a_note_between_header_and_trailer(tmp_path: Path) -> None:
    """The bytes as `json.dumps` writes each line (rows are encoded one by one, not as one string
    of the whole file), notes in name order, non-ASCII kept as UTF-8."""
    files = {"ünï/cödé 🌱.md": _record(7), "a.md": _record(1)}
    path = tmp_path / "manifest.json"
    save_manifest(path, "hash-1", files)
    rows = [json.dumps({"rel_path": rel, "record": files[rel].to_json()}, ensure_ascii=False, separators=(",", ":")) for rel in sorted(files)]
    header = json.dumps({"manifest": MANIFEST_FORMAT, "chunking_hash": "hash-1", "count": 2})
    assert path.read_bytes() == "\n".join([header, *rows, json.dumps({"end": 2}), ""]).encode("utf-8")
    save_manifest(path, "hash-1", {})
    assert path.read_bytes() == b'{"manifest": "jsonl-1", "chunking_hash": "hash-1", "count": 0}\n{"end": 0}\n'
    assert load_manifest(path) == ("hash-1", {})


def test_a_row_made_before_and_pickled_with_its_record_is_the_row_json_dumps_writes(tmp_path: Path) -> None:
    """A parallel build makes each note's row where it indexed the note (`FileRecord.encoded`) and the row
    travels pickled with the record; the manifest joins them: the same bytes, odd paths and titles too."""
    import pickle
    from dataclasses import replace

    odd = replace(_record(2), title='a "quoted" \\ title\t\u2028 🌱', tags=("ünï", "\x00"))
    files = {'q"uote\\d\n.md': odd, "ünï/cödé 🌱.md": _record(7), "a.md": _record(1)}
    for record in files.values():
        record.encoded()
    files = {rel: pickle.loads(pickle.dumps(record)) for rel, record in files.items()}  # as the worker's answer arrives
    assert all(record._row is not None for record in files.values())
    path = tmp_path / "manifest.json"
    save_manifest(path, "hash-1", files)
    rows = [json.dumps({"rel_path": rel, "record": files[rel].to_json()}, ensure_ascii=False, separators=(",", ":")) for rel in sorted(files)]
    header = json.dumps({"manifest": MANIFEST_FORMAT, "chunking_hash": "hash-1", "count": 3})
    assert path.read_bytes() == "\n".join([header, *rows, json.dumps({"end": 3}), ""]).encode("utf-8")
    assert load_manifest(path) == ("hash-1", files)
    # Saved, the rows are let go: a vault the app keeps open holds no second manifest (11 MB at 10k notes).
    assert all(record._row is None for record in files.values())
    save_manifest(path, "hash-1", files)  # the next save makes them again: the same bytes
    assert path.read_bytes() == "\n".join([header, *rows, json.dumps({"end": 3}), ""]).encode("utf-8")
    changed = replace(files["a.md"], title="Changed")  # a record made anew makes its own row
    assert json.loads(changed.encoded())["title"] == "Changed"


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: b"", id="empty"),
        pytest.param(lambda data: data.splitlines(keepends=True)[0], id="header only"),
        pytest.param(lambda data: b"".join(data.splitlines(keepends=True)[:-1]), id="trailer torn off"),
        pytest.param(lambda data: b"".join(data.splitlines(keepends=True)[:2] + data.splitlines(keepends=True)[-1:]), id="rows missing"),
        pytest.param(lambda data: data[: len(data) // 2], id="cut mid-row"),
        pytest.param(lambda data: b"\xff\xfe not json", id="garbage"),
    ],
)
def test_a_damaged_manifest_reads_as_missing(tmp_path: Path, damage) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "manifest.json"
    save_manifest(path, "hash-1", {f"n{n}.md": _record(n) for n in range(5)})
    path.write_bytes(damage(path.read_bytes()))
    assert load_manifest(path) is None


def test_a_missing_manifest_reads_as_missing(tmp_path: Path) -> None:
    assert load_manifest(tmp_path / "nope.json") is None


def test_task_rows_and_the_health_records_warnings_round_trip() -> None:
    """A task row keeps the dates set (any of them) and `IndexInfo.to_json` spells a warning out as
    `dataclasses.asdict` did (~30x cheaper: the demo vault's 100 warnings took 0.3 ms)."""
    import dataclasses
    from itertools import product

    from core.base.models import FileWarning
    from core.base.structured import Task
    from core.index.manifest import _TASK_DATES, IndexInfo, task_from_row, task_row
    from core.vault.tasks import task_status

    for present in product((False, True), repeat=len(_TASK_DATES)):
        dates = {f: f"2024-01-0{i + 1}" for i, (f, on) in enumerate(zip(_TASK_DATES, present, strict=True)) if on}
        task = Task(3, "x", task_status("x"), "Pay rent", "Home", priority="high", **dates)
        row = task_row(task)
        assert row == [3, "x", "Pay rent", "Home", "high", {f: getattr(task, f) for f in _TASK_DATES if getattr(task, f)}]
        assert task_from_row(json.loads(json.dumps(row))) == task
    warnings = (FileWarning("a.md", "bad_yaml", "line 2"), FileWarning("b/ü.md", "bad_utf8", ""))
    info = IndexInfo("v", "/vault", warnings=warnings)
    assert info.to_json()["warnings"] == [dataclasses.asdict(w) for w in warnings]
    assert IndexInfo.from_json(json.loads(json.dumps(info.to_json()))).warnings == warnings
