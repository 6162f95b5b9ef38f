"""The committed app icons (rendered by packaging/make_icons.py): every size, and containers that hold them."""

from __future__ import annotations

import struct
from pathlib import Path

ICONS = Path(__file__).resolve().parents[2] / "resources" / "icons"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC
    return struct.unpack(">II", data[16:24])  # IHDR width, height


def test_png_icons_exist_from_16_to_512_at_their_size() -> None:
    for size in (16, 24, 32, 48, 64, 128, 256, 512):
        assert png_size((ICONS / f"cairn-{size}.png").read_bytes()) == (size, size)


def test_windows_ico_holds_one_png_per_size_up_to_256() -> None:
    data = (ICONS / "cairn.ico").read_bytes()
    reserved, kind, count = struct.unpack_from("<HHH", data)
    assert (reserved, kind) == (0, 1)
    sizes = []
    for i in range(count):
        width, height, _, _, _, _, length, offset = struct.unpack_from("<BBBBHHII", data, 6 + 16 * i)
        w, h = png_size(data[offset : offset + length])
        assert (w, h) == (width or 256, height or 256)
        sizes.append(w)
    assert sizes == [16, 24, 32, 48, 64, 128, 256]


def test_macos_icns_holds_png_entries_up_to_1024() -> None:
    data = (ICONS / "cairn.icns").read_bytes()
    assert data[:4] == b"icns" and struct.unpack_from(">I", data, 4)[0] == len(data)
    entries, pos = {}, 8
    while pos < len(data):
        kind, length = data[pos : pos + 4].decode(), struct.unpack_from(">I", data, pos + 4)[0]
        entries[kind] = png_size(data[pos + 8 : pos + length])[0]
        pos += length
    assert entries["icp4"] == 16 and entries["ic07"] == 128 and entries["ic09"] == 512 and entries["ic10"] == 1024
