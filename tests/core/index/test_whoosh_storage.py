"""The map-backed stream that compound segment parts are read through."""

from __future__ import annotations

import io
import pickle

from core.index.whoosh_storage import _ViewStream


def test_view_stream_reads_like_bytesio() -> None:
    data = b"first line\nsecond\n" + pickle.dumps({"k": [1, 2, 3]}) + b"tail"
    ours, theirs = _ViewStream(memoryview(data)), io.BytesIO(data)
    for op in (lambda f: f.read(5), lambda f: f.readline(), lambda f: f.tell(), lambda f: f.readline(3), lambda f: f.read(0)):
        assert op(ours) == op(theirs)
    assert ours.seek(-4, 2) == theirs.seek(-4, 2)
    assert ours.read() == theirs.read() == b"tail"
    assert ours.read(10) == b""  # at the end
    ours.seek(len(b"first line\nsecond\n"))
    assert pickle.load(ours) == {"k": [1, 2, 3]}  # what Whoosh's read_pickle does


def test_view_stream_copies_only_what_is_read() -> None:
    big = bytearray(1_000_000)
    stream = _ViewStream(memoryview(big))
    stream.seek(999_990)
    assert stream.read(100) == bytes(10)
    buf = bytearray(4)
    stream.seek(0)
    assert stream.readinto(buf) == 4 and stream.tell() == 4


def test_created_files_count_their_position_like_the_os(tmp_path) -> None:
    """Whoosh asks `tell()` per term and block; the counted position must be the file's."""
    from array import array

    from core.index.whoosh_storage import MappedStorage

    storage = MappedStorage(str(tmp_path))
    f = storage.create_file("part.pst")
    assert type(f.file).__name__ == "_CountingWriter"  # not an lseek per call
    positions = []
    f.write(b"head")
    f.write_varint(300)
    f.write_int(-7)
    f.write_array(array("I", [1, 2, 3]))
    f.write_pickle({"term": b"x" * 50})
    positions.append(f.tell())
    f.seek(2)
    positions.append(f.tell())
    f.seek(0, 2)
    positions.append(f.tell())
    f.write(b"end")
    positions.append(f.tell())
    f.flush()
    assert positions == [positions[0], 2, positions[0], positions[0] + 3]
    assert positions[0] == 4 + 2 + 4 + 12 + len(pickle.dumps({"term": b"x" * 50}, -1))
    f.close()
    assert (tmp_path / "part.pst").stat().st_size == positions[-1]
