"""Whoosh storage that reads compound segments through a memory map, without copies.

Whoosh's own mmap path wraps every part of a compound segment in a `BytesIO`, a
full copy: ~135 MB held at 10k notes, and most of a cold `cairn search` spent
making them. Without mmap it reads each part through a Python file wrapper with a
seek and a read per lookup, which made warm hybrid queries ~10 % slower. Here each
part is a zero-copy view of one map, read in place (a read copies only the bytes it
returns). Only the pages actually read are resident, and they are the OS's file
cache, reclaimable, not the process's heap.

Sequential reads share a stream position, so a searcher must not be shared between
threads (see `KeywordIndex`); position reads (`get`) are safe anyway.
"""

from __future__ import annotations

import mmap
from typing import Any

from core.index.whoosh_pin import BufferFile, FileStorage, StructFile

COMPOUND_EXT = ".seg"  # whoosh.codec.base.Segment.COMPOUND_EXT


class MappedStorage(FileStorage):
    """A FileStorage whose compound segment files hand out views of a map instead of copies."""

    def __init__(self, path: str) -> None:
        # supports_mmap=False keeps Whoosh's CompoundStorage off its copying path; it then
        # asks the file for `subset`s, which `_MappedFile` serves from its own map.
        super().__init__(path, supports_mmap=False)

    def create_file(self, name: str, excl: bool = False, mode: str = "wb", **kwargs: Any) -> Any:
        f = super().create_file(name, excl=excl, mode=mode, **kwargs)
        if mode == "wb":
            f.file = _CountingWriter(f.file)
        return f

    def open_file(self, name: str, **kwargs: Any) -> Any:
        f = super().open_file(name, **kwargs)
        if name.endswith(COMPOUND_EXT) and getattr(f, "is_real", False):
            return _MappedFile(f.file, name=name, onclose=f.onclose)
        return f


class _CountingWriter:
    """A write-only file that counts its position instead of asking the OS.

    Whoosh calls `tell()` for every term and block it writes; a buffered file answers
    with an `lseek` system call each time: 349k calls, ~15 % of a cold index of tldr.
    """

    __slots__ = ("_file", "_pos")

    def __init__(self, fileobj: Any) -> None:
        self._file = fileobj
        self._pos = fileobj.tell()

    def write(self, data: Any) -> int:
        n: int = self._file.write(data)
        self._pos += n
        return n

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self._pos = self._file.seek(offset, whence)
        return self._pos

    def __enter__(self) -> _CountingWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()

    def __getattr__(self, name: str) -> Any:  # flush, close, fileno, truncate, name...
        return getattr(self._file, name)


class _MappedFile(StructFile):
    """A compound segment file: its header read as a file, its parts as views of one map."""

    def __init__(self, fileobj: Any, name: str | None = None, onclose: Any = None) -> None:
        super().__init__(fileobj, name=name, onclose=onclose)
        self._map: mmap.mmap | None = None

    def subset(self, offset: int, length: int, name: str | None = None) -> StructFile:
        if self._map is None:
            try:
                self._map = mmap.mmap(self.file.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):  # no mmap here (an odd file system): Whoosh's own way
                return super().subset(offset, length, name=name)
        return _MappedPart(memoryview(self._map)[offset : offset + length], name=name or self._name)


class _ViewStream:
    """A read-only stream over a memoryview, copying only what is read (BytesIO copies it all)."""

    __slots__ = ("_view", "_pos")

    def __init__(self, view: memoryview) -> None:
        self._view = view
        self._pos = 0

    def read(self, size: int | None = -1) -> bytes:
        start = self._pos
        end = len(self._view) if size is None or size < 0 else min(start + size, len(self._view))
        self._pos = max(start, end)
        return bytes(self._view[start:end])

    def readline(self, size: int | None = -1) -> bytes:  # pickle.load asks for it
        end = len(self._view)
        if size is not None and size >= 0:
            end = min(end, self._pos + size)
        chunk = bytes(self._view[self._pos : end])
        cut = chunk.find(b"\n")
        line = chunk if cut < 0 else chunk[: cut + 1]
        self._pos += len(line)
        return line

    def readinto(self, buffer: memoryview | bytearray) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        base = (0, self._pos, len(self._view))[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def close(self) -> None:
        pass


class _MappedPart(BufferFile):
    """One part of a compound segment: a view of the map, read in place."""

    def __init__(self, buf: memoryview, name: str | None = None) -> None:  # noqa: D107 - BufferFile's __init__ copies
        self._buf = buf
        self._name = name
        self.onclose = None
        self.is_real = False
        self.is_closed = False
        self.file = _ViewStream(buf)

    def subset(self, position: int, length: int, name: str | None = None) -> StructFile:
        return _MappedPart(self._buf[position : position + length], name=name or self._name)

    def close(self) -> None:
        self.is_closed = True
