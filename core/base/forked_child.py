"""A child forked with `os.fork` and two pipes: what the CLI's forked worker uses of multiprocessing.

`cairn index` forks the parallel build's worker on Linux (`core.base.spare_core.fork`). Through
multiprocessing that meant importing it with `socket`, `selectors`, `subprocess` and its own
`connection`, `reduction`, `util` and `popen_fork` (~5 ms of CPU, run by the prestart thread under
the main thread's GIL while the command imports) for three things: a fork, a pickled message
channel and a process to kill and reap. Here they are `os.fork`, length-framed pickles over two
`os.pipe`s and `os.kill`/`os.waitpid`; the spawn path (Windows, macOS, the app) keeps
multiprocessing, and `ForkedProcess` and `Channel` answer the calls `Started` and
`core.index.worker_process` make of multiprocessing's `Process` and `Connection`.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

_HEADER = struct.Struct("!Q")  # a message's length, before its pickle
_PIPE_BYTES = 1 << 20  # a claim's answer in one or two reads, not one per 64 KiB (each a wait for the GIL)


class Channel:
    """One process's end of a two-way channel: pickles framed by their length, over a pipe each way.

    `send` and `recv` may run in two threads at once (each has its own pipe); each of them in one
    thread at a time, as with multiprocessing's `Connection`.
    """

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._first: list[Any] = []  # messages the forked child holds before anything is read

    def prime(self, message: Any) -> None:
        """Queue `message` for `recv` before what comes through the pipe (the child inherits it at the
        fork: nothing is pickled or sent)."""
        self._first.append(message)

    def send(self, obj: Any) -> None:
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        header = _HEADER.pack(len(data))
        if len(data) < 16384:
            self._write(header + data)
        else:  # a big pickle is not copied once more behind its header
            self._write(header)
            self._write(data)

    def recv(self) -> Any:
        """The next message; EOFError once the other end is closed (the other process is gone)."""
        if self._first:
            return self._first.pop(0)
        (size,) = _HEADER.unpack(self._read(_HEADER.size))
        return pickle.loads(self._read(size))

    def poll(self, timeout: float = 0.0) -> bool:
        """Whether a message (or the end) is there to read within `timeout` seconds."""
        import select  # a C module: what multiprocessing's `wait` uses too

        return bool(self._first) or bool(select.select([self._fd(self._read_fd)], [], [], timeout)[0])

    def close(self) -> None:
        for fd in (self._read_fd, self._write_fd):
            if fd >= 0:
                os.close(fd)
        self._read_fd = self._write_fd = -1

    @staticmethod
    def _fd(fd: int) -> int:
        if fd < 0:
            raise OSError("the channel is closed")
        return fd

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd(self._write_fd), view) :]

    def _read(self, size: int) -> bytearray:
        buf = bytearray(size)
        view = memoryview(buf)
        got = 0
        while got < size:
            n = os.readv(self._fd(self._read_fd), [view[got:]])
            if n == 0:
                raise EOFError
            got += n
        return buf


class ForkedProcess:
    """The forked child as its parent sees it: its pid, `kill`, `join`, `is_alive` and `exitcode`."""

    def __init__(self, pid: int, name: str) -> None:
        self.pid = pid
        self.name = name
        self.exitcode: int | None = None
        # The build's reader, its closer and `join` may ask at once; a pid is killed only while not reaped
        # (never one the system has given to another process since).
        self._reaping = threading.Lock()

    def kill(self) -> None:
        with self._reaping:
            if self.exitcode is None:
                try:
                    os.kill(self.pid, signal.SIGKILL)  # a zombie until reaped: the pid is still the child's
                except ProcessLookupError:
                    pass

    def join(self, timeout: float | None = None) -> None:
        """Wait for the child to end (`timeout`: at most that long, polling as multiprocessing does)."""
        if timeout is None:
            if self.exitcode is None:
                try:  # waits without reaping (WNOWAIT): `kill` and `is_alive` are not held up meanwhile
                    os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
                except ChildProcessError:  # reaped by another thread meanwhile
                    pass
            self._reap()
            return
        deadline = time.monotonic() + timeout
        while not self._reap() and time.monotonic() < deadline:
            time.sleep(0.005)

    def is_alive(self) -> bool:
        return not self._reap()

    def _reap(self) -> bool:
        """Whether the child has ended (reaped here if so, its exit code kept); never waits."""
        with self._reaping:
            if self.exitcode is None:
                try:
                    pid, status = os.waitpid(self.pid, os.WNOHANG)
                except ChildProcessError:  # reaped by something else: gone all the same
                    pid, status = self.pid, 0
                if pid == self.pid:
                    self.exitcode = os.waitstatus_to_exitcode(status)
            return self.exitcode is not None


def fork_child(name: str, entry: Callable[[Channel], None], first: Any = None) -> tuple[ForkedProcess, Channel]:
    """Fork a child that runs `entry` with its end of a channel, then ends with `os._exit` (no atexit
    handler, no finaliser of the parent's runs there); `first`, where not None, is the first message
    its channel gives, inherited rather than sent. The caller flushes its standard streams first."""
    down_r, down_w = _pipe()  # this process -> the child
    up_r, up_w = _pipe()  # the child -> this process
    try:
        pid = os.fork()
    except BaseException:
        for fd in (down_r, down_w, up_r, up_w):
            os.close(fd)
        raise
    if pid == 0:  # pragma: no cover - the child's side, seen by the tests through what it answers
        code = 1
        try:
            os.close(down_w)  # or the child would never see the end of what the parent sends
            os.close(up_r)
            mine = Channel(down_r, up_w)
            if first is not None:
                mine.prime(first)
            entry(mine)
            code = 0
        except BaseException:  # noqa: BLE001 - the child's last word, as multiprocessing's would be
            import traceback  # only here: a cold index imports no traceback

            traceback.print_exc()
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (AttributeError, OSError, ValueError):
                    pass
            os._exit(code)
    os.close(down_r)
    os.close(up_w)
    return ForkedProcess(pid, name), Channel(up_r, down_w)


def _pipe() -> tuple[int, int]:
    """A pipe (read end, write end) of 1 MiB where the system allows (Linux's default is 64 KiB)."""
    read_fd, write_fd = os.pipe()
    try:
        import fcntl

        fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    except (ImportError, AttributeError, OSError):  # a smaller pipe only costs more reads
        pass
    return read_fd, write_fd
