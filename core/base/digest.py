"""SHA-256 of the small inputs a short run hashes, without loading OpenSSL for them.

`hashlib` loads OpenSSL's libcrypto on import (~2.5-3.8 ms of every cold `cairn index`,
a few percent of a small vault's whole run), while CPython's own `_sha256` gives the same
digests with no library to load but ~5x slower a byte (344 against 1,850 MB/s on the
2-core VM). So a process hashes its first `BUILTIN_BUDGET` bytes with CPython's own and
the rest with OpenSSL's: a small vault never loads libcrypto, and a big one pays at most
half the import on top of it (like renting skis until part of their price is spent).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Bytes hashed with CPython's own SHA-256 before OpenSSL's is loaded: ~1.2 ms of its extra
#: per-byte cost at most, under half of what loading OpenSSL costs (a vault of 0.75 MB of notes
#: measured even either way, so the line is kept below it).
BUILTIN_BUDGET = 1 << 19


def _builtin() -> Callable[[bytes], Any] | None:
    try:
        from _sha256 import sha256
    except ImportError:  # a build without CPython's own hashes
        return None
    return sha256


_BUILTIN = _builtin()
_budget = BUILTIN_BUDGET if _BUILTIN is not None else 0


def sha256_hex(data: bytes) -> str:
    """`hashlib.sha256(data).hexdigest()`, by whichever implementation costs this process less."""
    global _budget
    if _BUILTIN is not None and len(data) <= _budget:
        _budget -= len(data)
        return str(_BUILTIN(data).hexdigest())
    _budget = 0
    import hashlib

    return hashlib.sha256(data).hexdigest()


def will_hash(nbytes: int) -> None:
    """This process (and each it forks next) is about to hash some `nbytes`: where that is past the
    budget, OpenSSL's is loaded now, once before a fork, instead of in every process after its
    budget is hashed at CPython's pace."""
    global _budget
    if nbytes > _budget:
        _budget = 0
        import hashlib  # noqa: F401 - loaded here, used by `sha256_hex`
