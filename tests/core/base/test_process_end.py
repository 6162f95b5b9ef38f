"""What a process that ends with `os._exit` leaves for its end (`core.base.process_end`).

A cold `cairn index --no-embed` freed its segment writer's posting pool term by term just before
`os._exit` (~1 ms on the demo, ~2.4 ms on rust-book's half); the CLI now declares such a process,
the writer leaves the pool, and everything else (the app, tests, a forked worker) keeps freeing.
Real Whoosh indexes, a real fork and the real CLI in a fresh interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from whoosh import index as windex
from whoosh.codec.whoosh3 import W3Codec

from core.base import process_end
from core.index.fast_writer import FastSegmentWriter
from core.index.keyword_schema import INDEX_NAME, build_schema, document_fields
from core.index.term_pool import TermPool
from core.vault.chunker import ChunkLimits, new_parser
from core.vault.links import new_link_parser
from core.vault.notes import parse_note
from tests.fixture_notes import note_texts
from tests.index_dump import index_dump

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def undeclared(monkeypatch: pytest.MonkeyPatch) -> None:
    """This test process as it is: never declared, nothing left (restored after the test)."""
    monkeypatch.setattr(process_end, "_declared_by", None)
    monkeypatch.setattr(process_end, "_left", ())


def _write_index(directory: Path) -> TermPool:
    parser, links = new_parser(), new_link_parser()
    ix = windex.create_in(str(directory), build_schema(), indexname=INDEX_NAME)
    writer = FastSegmentWriter(ix, codec=W3Codec(compression=0))
    for rel, text in note_texts(12).items():
        doc = parse_note("v", rel, text.encode(), size=len(text), mtime_ns=0, limits=ChunkLimits(300, 600), parser=parser, link_parser=links)
        rows = document_fields(doc)
        writer.add_note(rows, [fields["lang"] for fields in rows])
    pool = writer.pool
    assert isinstance(pool, TermPool) and pool.count
    writer.commit(merge=False)
    return pool


def test_only_the_declaring_process_ends_at_once_and_keeps_only_the_last_thing_left(undeclared: None) -> None:
    assert not process_end.exits_at_once() and not process_end.leave(object())
    assert process_end._left == ()
    process_end.declare_exit_at_once()
    first, last = object(), object()
    assert process_end.exits_at_once() and process_end.leave(first) and process_end.leave(last)
    assert process_end._left == (last,)  # memory stays bounded by the last thing left
    pid = os.fork()
    if pid == 0:  # a forked child (the build's worker) frees as usual
        os._exit(0 if not process_end.exits_at_once() and not process_end.leave(first) else 1)
    assert os.waitpid(pid, 0)[1] == 0


def test_a_writer_of_a_process_that_ends_at_once_leaves_its_pool_and_writes_the_same_index(tmp_path: Path, undeclared: None) -> None:
    (tmp_path / "freed").mkdir()
    (tmp_path / "left").mkdir()
    freed = _write_index(tmp_path / "freed")
    assert freed.postings == {} and process_end._left == ()  # a process that lives on frees the pool at the flush
    process_end.declare_exit_at_once()
    left = _write_index(tmp_path / "left")
    kept_writer, kept_pool = process_end._left
    assert isinstance(kept_writer, FastSegmentWriter) and kept_writer.is_closed
    assert kept_pool is left and left.count and left.postings  # left whole for the exit
    freed_ix, left_ix = (windex.open_dir(str(tmp_path / name), indexname=INDEX_NAME) for name in ("freed", "left"))
    assert index_dump(freed_ix) == index_dump(left_ix)


_PROBE = (
    "import io, contextlib, sys; from core.cli.main import main; from core.base import process_end\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    code = main(sys.argv[2:], own_process=sys.argv[1] == 'own')\n"
    "left = [getattr(x, 'count', 0) for x in process_end._left]\n"
    "print(code, process_end.exits_at_once(), bool(left) and max(left) > 0)"
)


@pytest.mark.parametrize(
    ("how", "args", "expected"),
    [
        ("own", ["--no-embed"], "0 True True"),  # `cairn index --no-embed`: declared, the last pool left
        ("called", ["--no-embed"], "0 False False"),  # a script or test calling `main`: frees as before
    ],
)
def test_cairns_own_keyword_index_process_declares_it(tmp_path: Path, how: str, args: list[str], expected: str) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for rel, text in note_texts(8).items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    env = {**os.environ, "CAIRN_HOME": str(tmp_path / "home")}
    run = [sys.executable, "-c", _PROBE, how, "index", "--vault", str(vault), "--quiet", *args]
    done = subprocess.run(run, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.stdout.split() == expected.split(), done.stderr
