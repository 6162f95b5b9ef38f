"""The vector file's checksum, hashed again only when the file changed since it last matched.

Opening a vault's vectors checks `vectors.usearch` against the SHA-256 its record
(`vectors.json`) names, so a torn or damaged file is rebuilt from the embedding cache
instead of searched. At 10k notes the file is 27 MB and hashing it cost every cold
hybrid `cairn search` ~17 ms. Once it has matched, its size, mtime, ctime and inode
are written beside it with the digest (`vectors.verified.json`); an open that finds
the file with that same stamp, and a record naming that same digest, trusts the
earlier check. Anything that rewrites the file changes its ctime (which no tool can
set back) and mtime, and an atomic replace also changes its inode, so a changed
file is hashed again. Only a file settled for `SETTLE_NS` is stamped: a write
within the filesystem's timestamp granularity of the check could otherwise keep the
stamp (git's "racily clean" entries).
"""

from __future__ import annotations

import hashlib
import mmap
import os
import time
from pathlib import Path

from core.base.atomic import read_json, write_json_atomic

STAMP_NAME = "vectors.verified.json"
SETTLE_NS = 2_000_000_000


def file_sha256(path: Path) -> str:
    """The file's checksum, hashed from a map of it: reading a 27 MB file into 1 MB blocks
    cost a cold `cairn search` 21 ms against 15 (the pages are the ones usearch maps next)."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        try:
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                h.update(mapped)
            return h.digest().hex()
        except (OSError, ValueError):  # an empty file, or no map here: read it
            pass
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.digest().hex()


def checksum_matches(path: Path, digest: object) -> bool:
    """Whether `path` hashes to `digest`; hashed only when the file is not the one last found matching.

    Raises OSError when the file cannot be read (the caller treats it as torn).
    """
    if not isinstance(digest, str):
        return False
    st = os.stat(path)
    stamp = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, digest]
    stamp_path = path.with_name(STAMP_NAME)
    if _read_stamp(stamp_path) == stamp:
        return True
    if file_sha256(path) != digest:
        return False
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > SETTLE_NS:
        try:  # a cache of the check: a read-only home just hashes every time
            write_json_atomic(stamp_path, {"stamp": stamp}, compact=True)
        except OSError:
            pass
    return True


def _read_stamp(path: Path) -> object:
    try:
        data = read_json(path)
    except (OSError, ValueError):
        return None
    return data.get("stamp") if isinstance(data, dict) else None
