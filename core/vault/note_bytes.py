"""A note's bytes as the index reads them: UTF-8 (UTF-16/32 with a BOM transcoded), size-limited,
never from a FIFO or a device (re-exported by `core.vault.scanner`, which finds the notes)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Protocol

from core.base.models import SkippedFile, SkipReason

DEFAULT_MAX_BYTES = 10 * 1024 * 1024


class NoteFile(Protocol):
    """What is read of a note file (`core.vault.scanner.ScanEntry`)."""

    @property
    def rel_path(self) -> str: ...
    @property
    def path(self) -> Path: ...

_UTF16_32_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def read_note_bytes(entry: NoteFile, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes | SkippedFile:
    """Read a note's bytes as UTF-8 (UTF-16/32 notes with a BOM are transcoded), or say why
    it cannot be indexed. Everything that reads a note for indexing or quoting goes through
    here, so byte offsets of chunks always refer to the same bytes."""
    try:
        # Non-blocking: a file swapped for a FIFO after the walk must not hang the indexer.
        fd = os.open(entry.path, _READ_FLAGS)
    except FileNotFoundError:
        return SkippedFile(entry.rel_path, SkipReason.UNREADABLE, "file vanished while it was being read")
    except OSError as exc:
        return SkippedFile(entry.rel_path, SkipReason.UNREADABLE, f"cannot read file: {exc.strerror or exc}")
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):  # opened on POSIX: what Python's file object refuses, and how
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if not stat.S_ISREG(st.st_mode):
            return SkippedFile(entry.rel_path, SkipReason.NOT_A_FILE, "not a regular file (a pipe, socket or device); never read")
        raw = _read_fd(fd, max_bytes + 1, st.st_size + 1)
    except OSError as exc:
        return SkippedFile(entry.rel_path, SkipReason.UNREADABLE, f"cannot read file: {exc.strerror or exc}")
    finally:
        os.close(fd)
    if len(raw) > max_bytes:
        return SkippedFile(entry.rel_path, SkipReason.TOO_LARGE, f"over the {max_bytes:,}-byte limit")
    raw = as_utf8(raw)
    if b"\x00" in raw:
        return SkippedFile(entry.rel_path, SkipReason.BINARY, "file contains NUL bytes; it is not a text note")
    return raw


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
_READ_ON = 1 << 16


def _read_fd(fd: int, limit: int, expected: int) -> bytes:
    """Up to `limit` bytes of `fd`, to its end; the first read asks for `expected` (the size
    `fstat` gave, and one more byte), the next ones for no more than what was read so far (or
    64 KiB). One read of `limit` bytes (the 10 MB note limit) made Python allocate, map and
    shrink a 10 MB buffer for every note: ~25 µs a note, most of the reading of a vault of
    short notes. A file that grew since `fstat` is read on, up to `limit`."""
    parts = [os.read(fd, min(expected, limit))]
    got = len(parts[0])
    while got < limit:
        more = os.read(fd, min(limit - got, max(got, _READ_ON)))
        if not more:
            break
        parts.append(more)
        got += len(more)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def as_utf8(raw: bytes) -> bytes:
    """A note's bytes as UTF-8: Windows editors save "Unicode" notes as UTF-16 with a BOM,
    which is text, not binary. Other bytes are returned as they are."""
    for bom, codec in _UTF16_32_BOMS:
        if raw.startswith(bom):
            return raw[len(bom) :].decode(codec, "replace").encode("utf-8")
    return raw
