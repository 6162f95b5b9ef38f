"""What every agent asked and was given: one JSON line per call, in a rotated log in the data folder.

A line names the time, the client, the tool, the query (or reference) and what
came back — note references (`vault/path#3`), never note text — and how the
call ended (ok, not found, refused, busy, error). Rotation is the standard
library's `RotatingFileHandler` (several files of a bounded size), so the log
cannot grow without end; reading walks the current file and the rotated ones
newest first.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.base.atomic import make_private
from core.base.paths import AppPaths

MAX_BYTES = 5 * 1024 * 1024
BACKUPS = 4


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One call. `refs` are `vault/path` or `vault/path#chunk` addresses of what the agent got."""

    client: str
    tool: str
    outcome: str  # ok | not found | refused | rate limited | busy | timeout | error
    query: str = ""
    refs: tuple[str, ...] = ()
    ms: float = 0.0
    detail: str = ""
    time: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="milliseconds"))

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["refs"] = list(self.refs)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AuditEntry:
        return cls(
            client=str(data.get("client", "")),
            tool=str(data.get("tool", "")),
            outcome=str(data.get("outcome", "")),
            query=str(data.get("query", "")),
            refs=tuple(str(r) for r in data.get("refs", ())),
            ms=float(data.get("ms", 0.0)),
            detail=str(data.get("detail", "")),
            time=str(data.get("time", "")),
        )

    def mentions(self, note: str) -> bool:
        """Whether this call returned (or asked for) a note whose address contains `note`."""
        needle = note.lower()
        return any(needle in r.lower() for r in self.refs) or needle in self.query.lower()


def audit_file(paths: AppPaths) -> Path:
    return paths.data_dir / "agents" / "audit.jsonl"


class AuditLog:
    """Appends from any thread; reads newest first across the rotated files."""

    def __init__(self, paths: AppPaths, *, max_bytes: int = MAX_BYTES, backups: int = BACKUPS) -> None:
        self.file = audit_file(paths)
        self._max_bytes, self._backups = max_bytes, backups
        self._handler: logging.handlers.RotatingFileHandler | None = None
        self._lock = threading.Lock()

    def append(self, entry: AuditEntry) -> None:
        record = logging.LogRecord("cairn.audit", logging.INFO, "", 0, json.dumps(entry.to_json(), ensure_ascii=False), None, None)
        self._open().handle(record)

    def close(self) -> None:
        with self._lock:
            if self._handler is not None:
                self._handler.close()
                self._handler = None

    def _open(self) -> logging.handlers.RotatingFileHandler:
        with self._lock:
            if self._handler is None:
                self.file.parent.mkdir(parents=True, exist_ok=True)
                make_private(self.file.parent)
                handler = logging.handlers.RotatingFileHandler(
                    self.file, maxBytes=self._max_bytes, backupCount=self._backups, encoding="utf-8", delay=False
                )
                handler.setFormatter(logging.Formatter("%(message)s"))
                make_private(self.file)
                self._handler = handler
            return self._handler

    def entries(self, *, client: str | None = None, note: str | None = None, limit: int = 200) -> list[AuditEntry]:
        """Newest first; only `client`'s calls, only calls that touched `note`, at most `limit`."""
        out: list[AuditEntry] = []
        for entry in self._newest_first():
            if client and entry.client != client:
                continue
            if note and not entry.mentions(note):
                continue
            out.append(entry)
            if len(out) >= limit:
                break
        return out

    def _newest_first(self) -> Iterator[AuditEntry]:
        files = [self.file] + [self.file.with_name(f"{self.file.name}.{i}") for i in range(1, self._backups + 1)]
        for path in files:
            try:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            for line in reversed(lines):
                try:
                    data = json.loads(line)
                except ValueError:
                    continue  # a line cut by a crash: skip it, keep the rest
                if isinstance(data, dict):
                    yield AuditEntry.from_json(data)
