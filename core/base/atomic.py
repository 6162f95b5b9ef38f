"""Crash-safe writes: a reader sees either the old file or the new one, never half."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_bytes_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, payload: Any, *, compact: bool = False) -> None:
    if compact:
        data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    else:
        data = json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False).encode("utf-8")
    write_bytes_atomic(path, data + b"\n")


def read_json(path: Path) -> Any:
    with path.open("rb") as fh:
        return json.loads(fh.read().decode("utf-8"))
