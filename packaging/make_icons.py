"""Render Cairn's icon from its hand-drawn SVGs: PNGs 16-512 px, a Windows .ico and a macOS .icns.

    .venv/bin/python packaging/make_icons.py          # rewrites resources/icons/*.png|ico|icns

Qt's QSvgRenderer does the drawing, so nothing beyond PySide6 is needed. The
.ico and .icns containers are written here by hand (both formats accept PNG
payloads: Windows Vista and later, macOS 10.7 and later), which keeps Pillow
out of the build. Sizes of 32 px and below come from `cairn-small.svg`, a
simplified drawing that stays legible when tiny.

The outputs are committed; run this again only after editing an SVG.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgRenderer  # noqa: E402

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
FULL_SVG = ICONS / "cairn.svg"
SMALL_SVG = ICONS / "cairn-small.svg"
SMALL_MAX = 32
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# (type code, pixel size): PNG-carrying ICNS entries, including the @2x ("retina") ones.
ICNS_ENTRIES = (
    (b"icp4", 16),
    (b"icp5", 32),
    (b"ic11", 32),  # 16@2x
    (b"icp6", 64),
    (b"ic12", 64),  # 32@2x
    (b"ic07", 128),
    (b"ic08", 256),
    (b"ic13", 256),  # 128@2x
    (b"ic09", 512),
    (b"ic14", 512),  # 256@2x
    (b"ic10", 1024),  # 512@2x
)


def render_png(size: int) -> bytes:
    """The icon at `size` x `size` pixels as PNG bytes (transparent outside the tile)."""
    svg = SMALL_SVG if size <= SMALL_MAX else FULL_SVG
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"make_icons: {svg} is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise SystemExit(f"make_icons: could not encode the {size} px PNG")
    buffer.close()
    return bytes(data.data())


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """A Windows .ico holding one PNG per size (ICONDIR, ICONDIRENTRY table, then the images)."""
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries, blobs = [], []
    for size in sizes:
        blob = pngs[size]
        dim = 0 if size >= 256 else size  # 0 means 256 in an ICONDIRENTRY
        entries.append(struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(blob), offset))
        blobs.append(blob)
        offset += len(blob)
    return header + b"".join(entries) + b"".join(blobs)


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    """A macOS .icns: the 'icns' header, then (type, length, PNG) records; lengths are big-endian."""
    body = b"".join(kind + struct.pack(">I", 8 + len(pngs[size])) + pngs[size] for kind, size in ICNS_ENTRIES)
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> int:
    app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])
    needed = sorted(set(PNG_SIZES) | set(ICO_SIZES) | {size for _, size in ICNS_ENTRIES})
    pngs = {size: render_png(size) for size in needed}
    for size in PNG_SIZES:
        (ICONS / f"cairn-{size}.png").write_bytes(pngs[size])
    (ICONS / "cairn.ico").write_bytes(ico_bytes({s: pngs[s] for s in ICO_SIZES}))
    (ICONS / "cairn.icns").write_bytes(icns_bytes(pngs))
    written = [f"cairn-{s}.png" for s in PNG_SIZES] + ["cairn.ico", "cairn.icns"]
    print(f"make_icons: wrote {', '.join(written)} to {ICONS}")
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
