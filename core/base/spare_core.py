"""Whether a second process would get a core of its own, and such a process started early.

A spawned Python child costs ~0.3 s before it does any work: a fresh interpreter imports
what it needs (for the parallel build's worker, Whoosh, the markdown parser, the index
path). Started when its work is known, that start is a wait at the front of every build:
on simonw-til (578 notes) the worker was ready ~0.7 s into a 2 s `cairn index`. Started
first thing by the CLI, beside the parent's own imports (~0.2 s), it is ready when the
jobs are. `prestart` does that from a thread: it looks for a spare core over the next
`WINDOW_S` (this process's own CPU taken out: it is importing meanwhile), and spawns the
child only when there is one; `take` hands the child (or the verdict "no spare core") to
whoever does the work.

Only the standard library here: the CLI calls this before importing anything heavy.
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from core.base import dataclass_code, regex_code
from core.base.forked_child import Channel, ForkedProcess, fork_child
from core.base.lean_import import imports_no_stand_in

if TYPE_CHECKING:  # multiprocessing (~15 ms) is imported by a process that spawns a child, not by `cairn index`
    from collections.abc import Callable
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

WINDOW_S = 0.05  # how long the machine is watched for a spare core
MIN_WINDOW_S = 0.03  # ... at least, where the verdict is asked for sooner (`take`): 3 ticks of /proc/stat a core
# What indexing notes costs on one core (a 2-core AMD EPYC VM, bytecode cached), from cold indexes
# of obsidian-tasks-docs (118 notes, 0.7 MiB: 0.75 CPU-s), simonw-til (578, 2.3 MiB) and tldr
# (6,413, 3.6 MiB: 4.5 CPU-s): per note and per MiB of markdown.
NOTE_COST_S = 0.00013
MIB_COST_S = 1.0
# Less work than this is indexed in one process: the worker's start, hand-over and last job cost
# as much as the second core gives. Best of 5 interleaved cold indexes, one process vs a worker:
# obsidian-tasks-docs (~0.73 s of work) 1.16 vs 1.14 s, rust-book (112 notes, 1.2 MiB: ~1.2 s)
# 1.69 vs 1.26 s (docs/benchmarks.md, "Round 4, fourth session").
PARALLEL_MIN_WORK_S = 0.9
# The same for a worker forked once the imports are done (`fork`): it is ready in milliseconds, and what
# is left to pay is the copy-on-write of the shared heap (the demo: ~5.5k more minor faults, +0.04 s of
# system time), the hand-over and a commit per job. At load 5-8 (session 7) it looked as if 0.5 s were needed; on a quieter machine
# (load 0.7-2, medians of 15 interleaved cold indexes, one process vs a forked worker) a fork pays from
# ~0.15 s of estimated work: 12 TIL notes (~0.13 s by `work_s`) 0.322 vs 0.343 s, 20 (~0.19) 0.378 vs
# 0.359, obsidian-tasks-demo (~0.19: short notes full of Tasks lines, ~0.3 s of real work) 0.606 vs
# 0.531, 40 TIL notes (~0.28) 0.483 vs 0.438; the demo at load 4-5 (20 pairs): 0.454 vs 0.442, 0.485 vs
# 0.499 (neutral), for +0.12-0.17 CPU-s (docs/benchmarks.md, "Round 4, eighth session").
FORK_MIN_WORK_S = 0.15


def work_s(notes: int, note_bytes: int) -> float:
    """About how many CPU seconds indexing `notes` notes of `note_bytes` bytes in all takes on one core."""
    return notes * NOTE_COST_S + note_bytes / (1 << 20) * MIB_COST_S


def busy_cores(
    window_s: float = WINDOW_S,
    stat: Path = Path("/proc/stat"),
    *,
    own: bool = False,
    meanwhile: Callable[[], object] | None = None,
    asked: threading.Event | None = None,
) -> float | None:
    """Cores busy (not idle, not waiting for a disk) over `window_s`; None where unknown.

    Time spent in niced processes (backups, indexers, builds run with `nice`) counts as idle
    when this process runs at normal priority: the scheduler gives a normal-priority process
    ~97 % of a core shared with a nice-15 one, so such a core is as good as spare. With `own`,
    this process's CPU time over the window (all its threads) is left out: what the rest of
    the machine keeps busy. `meanwhile` runs once, inside the window (its CPU is this process's:
    with `own`, left out), rather than before it: the prestart thread's imports of multiprocessing
    (~10-20 ms beside the caller's imports) no longer push the window's end, which the fork
    waits for, that much later. `asked`, once set, ends the window early, though not before
    `MIN_WINDOW_S`: whoever waits for the verdict (the fork) is not held back for the window's rest.
    """

    yielding = niced_yield()

    def sample() -> tuple[int, int] | None:
        try:
            with stat.open("rb") as f:
                fields = [int(x) for x in f.readline().split()[1:9]]  # user .. steal (guest is within user)
        except (OSError, ValueError):
            return None
        if len(fields) < 5:
            return None
        return sum(fields), fields[3] + fields[4] + (fields[1] if yielding else 0)  # total, idle + iowait (+ nice)

    cpu0, t0 = time.process_time(), time.monotonic()
    first = sample()
    if meanwhile is not None:
        meanwhile()
    if first is None:
        return None
    if asked is not None and asked.wait(max(0.0, window_s - (time.monotonic() - t0))):
        time.sleep(max(0.0, MIN_WINDOW_S - (time.monotonic() - t0)))
    elif asked is None:
        time.sleep(max(0.0, window_s - (time.monotonic() - t0)))
    second = sample()
    cpu1, t1 = time.process_time(), time.monotonic()
    if second is None or second[0] <= first[0]:
        return None
    cores = os.cpu_count() or 1
    total, idle = second[0] - first[0], second[1] - first[1]
    busy = (total - idle) / total * cores
    if own and t1 > t0:
        busy = max(0.0, busy - (cpu1 - cpu0) / (t1 - t0))
    return busy


def niced_yield() -> bool:
    """Whether work of niced processes yields to this one: it runs at normal priority (or above)."""
    try:
        return os.nice(0) <= 0
    except (AttributeError, OSError):  # no nice (Windows)
        return False


def spare_core(*, own: bool = False, meanwhile: Callable[[], object] | None = None, asked: threading.Event | None = None) -> bool:
    """Whether a second process would get a core of its own.

    On a busy machine a worker only adds its start-up and the wait for its last job: tldr
    at load ~3.9 on 2 cores took 8.3-10.1 s wall with it against 6.7-6.9 s without. How busy
    is read over the last 50 ms where the system says (Linux's /proc/stat): the load average
    lags a minute behind, so the burst of a previous index (or of anything else the user just
    ran) would keep the worker off on an idle machine. Elsewhere the 1-minute load average
    decides; where no load is known (Windows), the worker is used.
    """
    cores = os.cpu_count() or 1
    if cores < 2:
        return False
    busy = busy_cores(own=own, meanwhile=meanwhile, asked=asked)
    if busy is None:
        getloadavg = getattr(os, "getloadavg", None)
        busy = getloadavg()[0] if getloadavg is not None else None
    return busy is None or busy < cores - 1


def daemon_child() -> bool:
    """Whether this process is a daemonic multiprocessing child (which may start none of its own).

    Asked without importing multiprocessing: a process that never loaded it is no such child.
    """
    process = sys.modules.get("multiprocessing.process")
    return process is not None and bool(process.current_process().daemon)


@dataclass(frozen=True, slots=True)
class Started:
    """A child running `target` and this process's end of its pipe; `primed`: the child was forked
    holding its first message (`fork`'s `first`), which is therefore not to be sent."""

    process: BaseProcess | ForkedProcess
    conn: Connection | Channel
    primed: bool = False

    def stop(self) -> None:
        """End the child now, also mid-way, and wait for it to be gone."""
        self.process.kill()
        self.process.join()
        self.conn.close()


def spawn(target: str, name: str) -> Started:
    """Start a daemonic spawned child that calls `target` ("module:function") with its end of a pipe.

    Spawn, not fork: fork is unsafe beside Qt's and the watcher's threads. Raises what
    starting a process raises (no memory, too many processes).
    """
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    conn, child = ctx.Pipe()
    process = ctx.Process(target=run_target, args=(child, target), daemon=True, name=name)
    try:
        process.start()
    finally:
        child.close()
    return Started(process, conn)


def run_target(conn: Connection, target: str) -> None:
    """The child's entry: import `target`'s module (the child's own start) and hand it the pipe.

    The imports run with the cyclic collector paused (~150k objects and no garbage: its passes
    cost the parallel build's worker ~10 ms of its start), and what they made is frozen out of
    later full passes. Their regular expressions and dataclasses are made from what earlier runs
    compiled (`core.base.regex_code`, `core.base.dataclass_code`), as the `cairn` command's are.
    """
    module, _, function = target.partition(":")
    gc.disable()
    try:
        regex_code.install(role="worker")
        dataclass_code.install(role="worker")
        entry = getattr(importlib.import_module(module), function)
    finally:
        gc.enable()
    gc.freeze()
    dataclass_code.save()
    regex_code.save()
    entry(conn)


@dataclass(frozen=True, slots=True)
class ForkLater:
    """`prestart`'s verdict where the child is to be forked when its work is known: a core is spare."""

    target: str
    name: str


def fork_safe() -> bool:
    """Whether a child may be forked from this process now: Linux, and no other thread alive.

    A forked child inherits every imported module (it is ready in milliseconds, where a spawned
    one imports for ~0.3 s) but only the forking thread: a lock another thread held (an import's,
    logging's, a C library's) stays held in the child forever. macOS forbids fork beside its
    frameworks, Windows has none; the app, the MCP server and the watcher run threads.
    """
    return sys.platform.startswith("linux") and threading.active_count() == 1 and not daemon_child() and hasattr(os, "fork")


def fork(target: str, name: str, first: Any = None) -> Started:
    """Start a forked child that calls `target` ("module:function") with its end of a pipe, whose first
    message is `first` where that is not None (inherited at the fork: not pickled, not sent).

    Only where `fork_safe()` says so. `os.fork` and two pipes (`core.base.forked_child`), not
    multiprocessing, whose imports were most of what a fork cost. What the child must not share is
    handled in the child (`run_forked`); what it would repeat is emptied here: text this process
    buffered for its standard streams, which the child's exit would write a second time.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # closed or gone: nothing the child could repeat either
            pass
    process, conn = fork_child(name, lambda mine: run_forked(mine, target), first)
    return Started(process, conn, primed=first is not None)


def start_child(target: str, name: str, *, forked: bool, first: Any = None) -> Started:
    """`fork` (handing it `first`) when asked for and safe now (no thread has started since it was asked
    for), else `spawn`."""
    return fork(target, name, first) if forked and fork_safe() else spawn(target, name)


def run_forked(conn: Channel, target: str) -> None:
    """The forked child's entry: let go of what was the parent's, then hand `target` the pipe.

    - The parent's ends of the pipes are closed (`fork_child`), or the child would never see them end
      (EOF) when the parent is gone.
    - Ctrl-C reaches the whole process group: the parent's handler (`cancel_on_sigint`) would
      run here too; the parent decides (it stops this child when it cancels), so the child ignores
      it, and any other handler the parent set is reset to the default.
    - Everything inherited is frozen out of the cyclic collector (`gc.freeze`): it is never walked
      (each page it would touch is a copy) nor collected here (a finaliser of the parent's, such as
      a temporary folder's, never runs in the child); the parent's gc callbacks are dropped.
    - Files and locks the parent holds (the vault lock, Whoosh's write lock, open index files)
      stay open here untouched: the child never writes the parent's index, manifest or config,
      and `fork_child` ends it with `os._exit` (no atexit handler, no finaliser runs).
    """
    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        if callable(signal.getsignal(number)):
            signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.callbacks.clear()
    gc.freeze()
    gc.enable()
    module, _, function = target.partition(":")
    getattr(importlib.import_module(module), function)(conn)


@dataclass(slots=True)
class _Pending:
    """A `prestart` under way: the thread looking for a spare core, and what it found."""

    thread: threading.Thread
    started: Started | ForkLater | None = None
    asked: threading.Event = field(default_factory=threading.Event)  # set by `take`: the window may end


_PENDING: dict[str, _Pending] = {}
_LOCK = threading.Lock()


def prestart(target: str, name: str, *, fork_later: bool = False) -> None:
    """Spawn `target`'s child now, from a thread, if a core is spare; `take(target)` gets it.

    With `fork_later` the thread only looks for a spare core and `take` gives `ForkLater`: the
    caller forks the child itself once its imports are done (`start_child`).
    """
    if (os.cpu_count() or 1) < 2 or daemon_child():
        return
    with _LOCK:
        if target in _PENDING:
            return

        def start() -> None:
            spare = spare_core(own=True, meanwhile=None if fork_later else _import_start, asked=pending.asked)
            if fork_later:
                pending.started = ForkLater(target, name) if spare else None
                return
            if not spare:
                return
            try:
                pending.started = spawn(target, name)
            except Exception:  # noqa: BLE001 - no early child: the work is done without it
                return

        # It imports only multiprocessing's own modules: a library the caller imports meanwhile stays lean.
        thread = imports_no_stand_in(threading.Thread(target=start, daemon=True, name=f"{name}-prestart"))
        pending = _PENDING[target] = _Pending(thread)
        pending.thread.start()


def _import_start() -> None:
    """What spawning the child imports, multiprocessing, inside the window (beside the caller's imports
    rather than after them); a fork imports nothing of it (`core.base.forked_child`)."""
    import multiprocessing  # noqa: F401


def take(target: str) -> Started | ForkLater | None | Literal[False]:
    """The child `prestart` started for `target` (or the word to fork it); False when none was asked
    for (start one yourself if you want one), None when it was asked for but no core was spare.
    Its thread is over when this returns: a fork may follow. Asking ends the thread's window early
    (`busy_cores`' `asked`)."""
    with _LOCK:
        pending = _PENDING.pop(target, None)
    if pending is None:
        return False
    pending.asked.set()
    pending.thread.join()
    return pending.started


def discard(target: str) -> None:
    """Stop `target`'s early child if nobody took it (the work needed none, or failed first)."""
    got = take(target)
    if isinstance(got, Started):
        got.stop()
