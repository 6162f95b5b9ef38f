"""`sha256_hex`: hashlib's digests, CPython's own SHA-256 for a process's first 512 KB, OpenSSL's after."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.base import digest

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("size", [0, 1, 55, 56, 63, 64, 65, 1000, 70_000])
def test_the_digest_is_hashlibs_on_either_side_of_the_budget(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    data = os.urandom(size)
    monkeypatch.setattr(digest, "_budget", 10**9)
    assert digest.sha256_hex(data) == hashlib.sha256(data).hexdigest()  # CPython's own
    monkeypatch.setattr(digest, "_budget", 0)
    assert digest.sha256_hex(data) == hashlib.sha256(data).hexdigest()  # OpenSSL's


SPENDING = """
import json, sys
from core.base import digest
seen = []
part = digest.BUILTIN_BUDGET * 3 // 10
for size in (part, part, part, part, 10):
    digest.sha256_hex(b"x" * size)
    seen.append("_hashlib" in sys.modules)
fresh = {}
for nbytes in (digest.BUILTIN_BUDGET // 2, digest.BUILTIN_BUDGET * 4):
    import subprocess
    code = f"import sys; from core.base import digest; digest.will_hash({nbytes}); print('_hashlib' in sys.modules)"
    fresh[nbytes] = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
print(json.dumps([seen, digest._budget, list(fresh.values())]))
"""


def test_a_process_loads_openssl_only_once_its_budget_is_hashed_or_more_is_announced() -> None:
    done = subprocess.run([sys.executable, "-c", SPENDING], capture_output=True, text=True, cwd=REPO, timeout=60, check=True)
    seen, left, announced = json.loads(done.stdout)
    assert seen == [False, False, False, True, True]  # 90 % of the budget within it; the fourth part past it, and from then on
    assert left == 0
    assert announced == ["False", "True"]  # half the budget announced: not loaded; four times it: loaded at once
