"""One odd file never stops indexing: it is indexed, or skipped with a reason in Index health.

Each case here made `cairn index` end in a traceback with nothing indexed (issue #22) before
the scanner and the indexer got a per-file error boundary.
"""

from __future__ import annotations

import os
import stat
import sys
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from core.base.models import SearchFilters, SkipReason
from core.base.paths import AppPaths
from core.engine import Engine
from core.search.search import SearchRequest
from core.vault.scanner import Scanner, read_note_bytes

POSIX = sys.platform != "win32"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "good.md").write_text("# Good\n\nThe lighthouse keeper logs the tide.\n", encoding="utf-8")
    return root


@pytest.fixture
def engine(vault: Path) -> Iterator[Engine]:
    eng = Engine(AppPaths.from_env(), embedder_factory=None)
    eng.add_vault(vault, name="v")
    yield eng
    eng.close()


def found(engine: Engine, query: str) -> list[str]:
    resp = engine.search(SearchRequest(query, mode="keyword", filters=SearchFilters(allow_restricted=True)))
    return [h.chunk.rel_path for h in resp.hits]


def write(name: str, text: str) -> Callable[[Path], None]:
    return lambda root: (root / name).write_text(text, encoding="utf-8")


def non_utf8_name(root: Path) -> None:
    fd = os.open(os.path.join(os.fsencode(root), b"caf\xe9 latin1.md"), os.O_CREAT | os.O_WRONLY)
    os.write(fd, b"# Latin-1 name\n")
    os.close(fd)


BAD_FRONT_MATTER = {
    "impossible_date": "---\ndate: 2023-02-30\n---\nbody\n",
    "year_zero": "---\ndate: 0000-01-01\n---\nbody\n",
    "month_13": "---\ndate: 2023-13-45\n---\nbody\n",
    "impossible_time": "---\ndate: 2023-01-01 25:61:00\n---\nbody\n",
    "nested_5000": "---\ntitle: " + "[" * 5000 + "]" * 5000 + "\n---\nbody\n",
    "nested_maps": "---\na: " + "{b: " * 3000 + "1" + "}" * 3000 + "\n---\nbody\n",
    "lone_surrogate_title": '---\ntitle: "\\ud800 x"\n---\nbody\n',
    "surrogate_tags": '---\ntags: ["\\udfff", ok]\naliases: ["\\ud83d"]\n---\nbody\n',
}


@pytest.mark.parametrize("case", sorted(BAD_FRONT_MATTER))
def test_bad_front_matter_is_a_warning_and_the_note_is_still_indexed(case: str, engine: Engine, vault: Path) -> None:
    (vault / f"{case}.md").write_text(BAD_FRONT_MATTER[case], encoding="utf-8")
    (report,) = engine.sync(["v"], embed=False)
    assert report.keyword.documents == 2, report.keyword
    assert found(engine, "lighthouse") == ["good.md"]
    info = engine.index_for("v").info
    assert all(s.rel_path != f"{case}.md" for s in info.skipped)


def test_an_impossible_date_is_reported_by_value(engine: Engine, vault: Path) -> None:
    (vault / "d.md").write_text(BAD_FRONT_MATTER["impossible_date"], encoding="utf-8")
    engine.sync(["v"], embed=False)
    (warning,) = [w for w in engine.index_for("v").info.warnings if w.rel_path == "d.md"]
    assert "2023-02-30" in warning.detail


@pytest.mark.skipif(not POSIX, reason="FIFOs and non-UTF-8 names are POSIX")
@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda root: os.mkfifo(root / "x.md"), SkipReason.NOT_A_FILE),
        (non_utf8_name, SkipReason.BAD_NAME),
        (lambda root: (root / "a\\b.md").write_text("# Backslash\n"), SkipReason.BAD_NAME),  # found by hypothesis: became "a/b.md"
    ],
    ids=["fifo", "non_utf8_name", "backslash_name"],
)
def test_files_that_cannot_be_notes_are_skipped_with_a_reason(make: Callable[[Path], None], reason: SkipReason, engine: Engine, vault: Path) -> None:
    make(vault)
    (report,) = engine.sync(["v"], embed=False)
    assert report.keyword.skipped == {reason.value: 1}
    assert found(engine, "lighthouse") == ["good.md"]
    (skip,) = engine.index_for("v").info.skipped
    assert skip.reason is reason and skip.rel_path.encode("utf-8")


def test_a_note_deleted_between_the_walk_and_the_read_is_not_an_error(vault: Path) -> None:
    (vault / "gone.md").write_text("# Gone\n")
    scan = Scanner(vault).scan()
    (vault / "gone.md").unlink()
    (gone,) = [e for e in scan.entries if e.rel_path == "gone.md"]
    skipped = read_note_bytes(gone)
    assert not isinstance(skipped, bytes) and skipped.reason is SkipReason.UNREADABLE


def test_a_file_vanishing_mid_walk_is_left_out(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (vault / "gone.md").write_text("# Gone\n")
    real_stat = Path.stat

    def vanishing(self: Path, *a: object, **k: object) -> os.stat_result:
        if self.name == "gone.md":
            raise FileNotFoundError(2, "No such file", str(self))
        return real_stat(self, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "stat", vanishing)
    scan = Scanner(vault).scan()
    assert [e.rel_path for e in scan.entries] == ["good.md"] and scan.skipped == ()


def test_any_exception_in_the_parser_becomes_a_skip_with_its_reason(engine: Engine, vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a list of caught types: whatever a parser bug raises stays inside its note."""
    import core.index.intake as indexer  # where notes are parsed in-process

    real = indexer.parse_note

    def explode(vault_name: str, rel_path: str, raw: bytes, **kw: object):  # type: ignore[no-untyped-def]
        if rel_path == "bomb.md":
            raise ZeroDivisionError("a parser bug")
        return real(vault_name, rel_path, raw, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(indexer, "parse_note", explode)
    (vault / "bomb.md").write_text("# Bomb\n")
    (report,) = engine.sync(["v"], embed=False)
    assert report.keyword.skipped == {"parse_error": 1} and report.keyword.documents == 1
    (skip,) = engine.index_for("v").info.skipped
    assert skip.rel_path == "bomb.md" and "ZeroDivisionError: a parser bug" in skip.detail


def test_a_note_the_index_refuses_is_skipped_and_the_rest_of_its_batch_goes_in(engine: Engine, vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import core.index.keyword_store as kw  # where a note's rows are made for the index

    real = kw.document_fields

    def refuse(doc):  # type: ignore[no-untyped-def]
        if doc.rel_path == "refused.md":
            raise ValueError("the index refused this note")
        return real(doc)

    monkeypatch.setattr(kw, "document_fields", refuse)
    (vault / "refused.md").write_text("# Refused\n\nlighthouse too\n")
    (vault / "other.md").write_text("# Other\n\nlighthouse as well\n")
    (report,) = engine.sync(["v"], embed=False)
    assert sorted(found(engine, "lighthouse")) == ["good.md", "other.md"]
    assert report.keyword.skipped == {"parse_error": 1}
    assert set(engine.index_for("v").files) == {"good.md", "other.md"}


@pytest.mark.parametrize("bad", ["foo\\", "!", "[z-a]"])
def test_a_bad_ignore_line_is_skipped_with_a_warning_and_the_other_lines_still_apply(bad: str, engine: Engine, vault: Path) -> None:
    (vault / ".cairnignore").write_text(f"{bad}\nprivate/\n", encoding="utf-8")
    (vault / "private").mkdir()
    (vault / "private" / "diary.md").write_text("# Diary\n\nlighthouse secrets\n")
    engine.sync(["v"], embed=False)
    assert found(engine, "lighthouse") == ["good.md"]  # `private/` still ignored
    (warning,) = [w for w in engine.index_for("v").info.warnings if w.code == "ignore_pattern"]
    assert warning.rel_path == ".cairnignore" and bad in warning.detail and "line 1" in warning.detail
    (vault / ".cairnignore").write_text("private/\n", encoding="utf-8")
    engine.sync(["v"], embed=False)
    assert [w for w in engine.index_for("v").info.warnings if w.code == "ignore_pattern"] == []


@pytest.mark.skipif(sys.platform == "darwin", reason="APFS/HFS+ cannot hold both names")
def test_nfc_and_nfd_names_in_one_folder_are_reported_never_merged(engine: Engine, vault: Path) -> None:
    nfc, nfd = unicodedata.normalize("NFC", "café.md"), unicodedata.normalize("NFD", "café.md")
    (vault / nfc).write_text("# One\n\nespresso\n", encoding="utf-8")
    try:
        (vault / nfd).write_text("# Two\n\nristretto\n", encoding="utf-8")
    except OSError:
        pytest.skip("the file system normalises names")
    if len(list(vault.iterdir())) < 3:
        pytest.skip("the file system normalises names")
    (report,) = engine.sync(["v"], embed=False)
    stats = report.keyword
    assert (stats.added, stats.unchanged, stats.documents) == (2, 0, 2)
    assert stats.skipped == {"duplicate_name": 1}
    assert found(engine, "espresso") == [nfc] and found(engine, "ristretto") == []  # the NFC-named file is kept
    (skip,) = engine.index_for("v").info.skipped
    assert skip.reason is SkipReason.DUPLICATE_NAME and "rename one" in skip.detail
    (again,) = engine.sync(["v"], embed=False)
    assert (again.keyword.added, again.keyword.changed, again.keyword.unchanged) == (0, 0, 2)


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_notes_with_a_bom_are_text(codec: str, engine: Engine, vault: Path) -> None:
    text = "# Windows note\n\nThe harbourmaster's ledger, ünïcödé.\n"
    data = text.encode(codec)
    if codec == "utf-16-be":
        data = b"\xfe\xff" + data
    (vault / "win.md").write_bytes(data)
    (report,) = engine.sync(["v"], embed=False)
    assert report.keyword.skipped == {}
    assert found(engine, "harbourmaster") == ["win.md"]
    from core.answer.fetch import fetch_chunk

    chunk = fetch_chunk(engine, "v/win.md#0")
    assert "ledger, ünïcödé" in chunk.text and chunk.warnings == ()  # the bytes on disk still match


def test_a_note_with_only_front_matter_is_found_by_its_title(engine: Engine, vault: Path) -> None:
    (vault / "stub.md").write_text("---\ntags: [todo]\ntitle: Zanzibar expedition\n---\n", encoding="utf-8")
    engine.sync(["v"], embed=False)
    assert found(engine, "zanzibar") == ["stub.md"]


def test_50000_inline_tags_index_in_seconds(engine: Engine, vault: Path) -> None:
    """Was over 300 s: the tag list was deduplicated with `in list`, and every chunk carried every tag."""
    import time

    words = " ".join(f"#t{i:05d}x" for i in range(50_000))  # ~400 KB
    (vault / "tags.md").write_text(f"# Tagged\n\n{words}\n", encoding="utf-8")
    t0 = time.perf_counter()
    (report,) = engine.sync(["v"], embed=False)
    elapsed = time.perf_counter() - t0
    assert elapsed < 20, elapsed
    assert report.keyword.documents == 2
    assert any(w.code == "too_many_tags" for w in engine.index_for("v").info.warnings)


# -- the data folder -------------------------------------------------------------------------


def test_a_left_over_whoosh_temp_folder_from_a_killed_first_build_is_cleared(engine: Engine, vault: Path) -> None:
    folder = engine.paths.vault_dir("v") / "whoosh"
    engine.close()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "chunks.tmp").mkdir()
    (folder / "chunks.tmp" / "0.pst").write_bytes(b"half a posting pool")
    (folder / "_chunks_1.toc").write_bytes(b"\x00torn")
    eng = Engine(AppPaths.from_env(), embedder_factory=None)
    try:
        eng.status()
        (report,) = eng.sync(["v"], embed=False)
        assert report.keyword.documents == 1
        assert found(eng, "lighthouse") == ["good.md"]
        assert not (folder / "chunks.tmp").exists()
    finally:
        eng.close()


@pytest.mark.skipif(not POSIX, reason="POSIX permission bits")
def test_index_files_are_owner_only(engine: Engine, vault: Path) -> None:
    engine.sync(["v"], embed=False)
    folder = engine.paths.vault_dir("v")
    loose = []
    for p in [folder, *folder.rglob("*")]:
        mode = stat.S_IMODE(p.stat().st_mode)
        if mode & 0o077:
            loose.append((str(p.relative_to(folder.parent)), oct(mode)))
    assert loose == []
    assert stat.S_IMODE(engine.paths.indexes_dir.stat().st_mode) == 0o700


def test_the_live_path_has_the_same_boundary(engine: Engine, vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The watcher's `update_paths`: one note whose check raises is skipped, the others go in."""
    engine.sync(["v"], embed=False)
    real = Scanner.classify

    def classify(self: Scanner, rel: str):  # type: ignore[no-untyped-def]
        if rel == "odd.md":
            raise RuntimeError("the file system said something strange")
        return real(self, rel)

    monkeypatch.setattr(Scanner, "classify", classify)
    (vault / "odd.md").write_text("# Odd\n")
    (vault / "fine.md").write_text("# Fine\n\nlighthouse lamp\n")
    stats = engine.index_for("v").update_paths(["odd.md", "fine.md"])
    assert stats.skipped == {"parse_error": 1} and "fine.md" in stats.changed_paths
    assert sorted(found(engine, "lighthouse")) == ["fine.md", "good.md"]
