"""The vector file is hashed again only when it changed since it last matched (core.index.vector_checksum)."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from core.base.paths import AppPaths
from core.engine import Engine
from core.index import vector_checksum
from core.index.vector_checksum import STAMP_NAME, checksum_matches
from tests.helpers import BagOfWordsEmbedder


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every file hashed, with files counted as settled at once (the tests cannot wait 2 s)."""
    seen: list[Path] = []
    real = vector_checksum.file_sha256

    def counting(path: Path) -> str:
        seen.append(path)
        return real(path)

    monkeypatch.setattr(vector_checksum, "file_sha256", counting)
    monkeypatch.setattr(vector_checksum, "SETTLE_NS", -1)
    return seen


def _file(tmp_path: Path, data: bytes) -> tuple[Path, str]:
    path = tmp_path / "vectors.usearch"
    path.write_bytes(data)
    return path, hashlib.sha256(data).hexdigest()


def test_a_matching_file_is_hashed_once_then_trusted_by_its_stamp(tmp_path: Path, hashes: list[Path]) -> None:
    path, digest = _file(tmp_path, b"vectors" * 1000)
    assert checksum_matches(path, digest) and checksum_matches(path, digest)
    assert len(hashes) == 1 and (tmp_path / STAMP_NAME).is_file()


def test_a_file_changed_in_place_is_hashed_again_and_caught(tmp_path: Path, hashes: list[Path]) -> None:
    path, digest = _file(tmp_path, b"vectors" * 1000)
    assert checksum_matches(path, digest)
    st = path.stat()
    time.sleep(0.05)  # past the kernel's coarse timestamp tick (the real check waits SETTLE_NS)
    with path.open("r+b") as fh:  # same size, same inode, the mtime set back: only the ctime tells
        fh.seek(100)
        fh.write(b"XX")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert not checksum_matches(path, digest)
    assert len(hashes) == 2


def test_a_replaced_file_or_another_digest_is_hashed_again(tmp_path: Path, hashes: list[Path]) -> None:
    path, digest = _file(tmp_path, b"vectors" * 1000)
    assert checksum_matches(path, digest)
    assert not checksum_matches(path, "0" * 64)  # the record names another file now
    (tmp_path / "new").mkdir()
    other, other_digest = _file(tmp_path / "new", b"other" * 1000)
    other.replace(path)
    assert checksum_matches(path, other_digest)
    assert len(hashes) == 3


def test_a_file_written_just_now_is_not_stamped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Within the timestamps' granularity a later write could keep the stamp: such a file is hashed every time."""
    path, digest = _file(tmp_path, b"fresh")
    assert checksum_matches(path, digest)
    assert not (tmp_path / STAMP_NAME).exists()


def test_a_damaged_vector_file_is_still_rebuilt_after_a_trusted_open(tmp_path: Path, hashes: list[Path]) -> None:
    """The engine's path: opened (hashed, stamped), opened again (trusted), then damaged: rebuilt from the cache."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "bread.md").write_text("# Bread\n\nSourdough loaf rests overnight in the fridge.\n")
    (vault / "soup.md").write_text("# Soup\n\nRoast tomatoes at 220 C, then blend.\n")
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=lambda vc: BagOfWordsEmbedder())
    name = engine.add_vault(vault).name
    engine.sync([name])
    engine.close()

    def opened() -> str:
        again = Engine(AppPaths(tmp_path / "home"), embedder_factory=lambda vc: BagOfWordsEmbedder())
        vv = again.vectors_for(name)
        assert vv is not None
        again.close()
        return str(vv.status)

    assert opened() == "ok"
    hashed = len(hashes)
    assert opened() == "ok" and len(hashes) == hashed  # trusted by its stamp
    path = engine.index_for(name).dir / "vectors.usearch"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    time.sleep(0.05)
    path.write_bytes(bytes(data))
    assert opened() == "rebuilt"
