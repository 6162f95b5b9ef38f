"""What a search needs from a vault's vector record, in a copy that opens in a few milliseconds.

`vectors.json` names every vector's key, the hash of the text it embeds and the chunk it
belongs to: 4.2 MB of JSON at 10k notes (29k chunks). Parsing it and building the dicts cost
every cold hybrid `cairn search` 55-80 ms, for a search that needs only which chunk each hit
is and how many vectors there are. So once a record has been read whole, its view is kept
beside it (`vectors.view.json`): the model, the usearch file's digest, the counts, the keys
sorted (one base64 string of uint64), and each key's chunk as an index into the list of
paths and an ordinal (two more such strings). A search opened on the view looks a hit's
chunk up by bisection; anything else (a sync, note coverage, saving) reads the record itself.

The view belongs to one version of the record: it names the record's size, mtime, ctime and
inode, which any rewrite changes (the record is replaced atomically), and it is written only
for a record settled for `SETTLE_NS` (see `core.index.vector_checksum`), so a record written
again within the timestamps' granularity cannot keep an old view. A view that does not match,
or cannot be read, is ignored: the record is read as before.
"""

from __future__ import annotations

import binascii
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.base.atomic import write_json_atomic
from core.index.note_vectors import PROVISIONAL
from core.index.vector_checksum import SETTLE_NS

RECORD_NAME = "vectors.json"
VIEW_NAME = "vectors.view.json"
VIEW_FORMAT = 1

Stamp = list[int]


@dataclass(frozen=True, slots=True)
class RecordView:
    """A record's search view (see the module docstring); `paths` is empty for a record that names no chunks."""

    model_hash: str
    dims: int
    usearch_sha256: str
    count: int  # keys in the record
    provisional: int  # of which notes' stand-in vectors (see `core.index.note_vectors`)
    keys: np.ndarray  # uint64, ascending
    paths: list[str]
    row_path: np.ndarray  # int32 index into `paths`, one per key
    row_ordinal: np.ndarray  # int32, one per key
    desired: int | None
    chunks: int | None

    def chunk_of(self, key: int) -> tuple[str, int] | None:
        """The chunk (rel path, ordinal) vector `key` belongs to, or None if the record names none."""
        if not self.paths:
            return None
        i = int(np.searchsorted(self.keys, np.uint64(key)))
        if i >= len(self.keys) or int(self.keys[i]) != key:
            return None
        return self.paths[int(self.row_path[i])], int(self.row_ordinal[i])

    def rows(self) -> dict[int, tuple[str, int]]:
        """Every key's chunk, as `VaultVectors` keeps them once something needs them all."""
        if not self.paths:
            return {}
        paths = self.paths
        return {k: (paths[p], o) for k, p, o in zip(self.keys.tolist(), self.row_path.tolist(), self.row_ordinal.tolist())}


def read_record(directory: Path) -> tuple[dict[str, Any], Stamp]:
    """The record and the stamp of the very file read (raises OSError or ValueError)."""
    with (directory / RECORD_NAME).open("rb") as fh:
        stamp = _stamp(os.fstat(fh.fileno()))
        meta = json.loads(fh.read().decode("utf-8"))
    if not isinstance(meta, dict):
        raise ValueError("the vector record is not an object")
    return meta, stamp


def read_view(directory: Path) -> RecordView | None:
    """The view of the record as it is now, or None (no view, another record's, unreadable)."""
    try:
        stamp = _stamp(os.stat(directory / RECORD_NAME))
        with (directory / VIEW_NAME).open("rb") as fh:
            data = json.loads(fh.read().decode("utf-8"))
        if data.get("format") != VIEW_FORMAT or data.get("of") != stamp:
            return None
        return _decoded(data)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def keep_view(directory: Path, meta: dict[str, Any], stamp: Stamp) -> None:
    """Write the view of `meta` (read with `stamp`) if that record has settled; a failure only costs the next open."""
    if time.time_ns() - max(stamp[1], stamp[2]) <= SETTLE_NS:
        return
    try:
        payload = _encoded(meta, stamp)
        if payload is not None:
            write_json_atomic(directory / VIEW_NAME, payload, compact=True)
    except (OSError, ValueError, TypeError):
        pass


def _stamp(st: os.stat_result) -> Stamp:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _b64(array: np.ndarray) -> str:
    return binascii.b2a_base64(array.tobytes(), newline=False).decode("ascii")


def _array(text: str, dtype: type) -> np.ndarray:
    return np.frombuffer(binascii.a2b_base64(text), dtype=np.dtype(dtype).newbyteorder("<"))


def _encoded(meta: dict[str, Any], stamp: Stamp) -> dict[str, object] | None:
    key_hash = meta.get("keys")
    if not isinstance(key_hash, dict) or not isinstance(meta.get("usearch_sha256"), str):
        return None
    keys = np.asarray([int(k) for k in key_hash], dtype="<u8")
    order = np.argsort(keys, kind="stable")
    rows, chunks, desired = meta.get("rows"), meta.get("chunks"), meta.get("desired")
    paths: dict[str, int] = {}
    row_path = np.zeros(len(keys), dtype="<i4")
    row_ordinal = np.zeros(len(keys), dtype="<i4")
    named = isinstance(rows, list) and len(rows) == len(keys) and isinstance(chunks, int) and isinstance(desired, int)
    if named:
        for i, (rel, ordinal) in enumerate(rows):  # type: ignore[arg-type]
            row_path[i] = paths.setdefault(str(rel), len(paths))
            row_ordinal[i] = int(ordinal)
    return {
        "format": VIEW_FORMAT,
        "of": stamp,
        "model_hash": str(meta.get("model_hash")),
        "dims": int(meta.get("dims", -1)),
        "usearch_sha256": meta["usearch_sha256"],
        "count": len(keys),
        "provisional": sum(1 for h in key_hash.values() if str(h).startswith(PROVISIONAL)),
        "keys": _b64(keys[order]),
        "paths": list(paths),
        "row_path": _b64(row_path[order]) if named else "",
        "row_ordinal": _b64(row_ordinal[order]) if named else "",
        "desired": desired if named else None,
        "chunks": chunks if named else None,
    }


def _decoded(data: dict[str, Any]) -> RecordView | None:
    keys = _array(data["keys"], np.uint64)
    paths = [str(p) for p in data["paths"]]
    row_path = _array(data["row_path"], np.int32) if paths else np.zeros(0, dtype=np.int32)
    row_ordinal = _array(data["row_ordinal"], np.int32) if paths else np.zeros(0, dtype=np.int32)
    if len(keys) != int(data["count"]) or (paths and not len(row_path) == len(row_ordinal) == len(keys)):
        return None
    if paths and len(row_path) and (int(row_path.min()) < 0 or int(row_path.max()) >= len(paths)):
        return None
    return RecordView(
        model_hash=str(data["model_hash"]),
        dims=int(data["dims"]),
        usearch_sha256=str(data["usearch_sha256"]),
        count=len(keys),
        provisional=int(data["provisional"]),
        keys=keys,
        paths=paths,
        row_path=row_path,
        row_ordinal=row_ordinal,
        desired=data["desired"] if isinstance(data.get("desired"), int) else None,
        chunks=data["chunks"] if isinstance(data.get("chunks"), int) else None,
    )
