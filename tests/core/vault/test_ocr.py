"""Text in images and scanned PDFs by OCR (the optional `ocr` extra; skipped where it is not installed)."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.base.models import SearchFilters
from core.base.paths import AppPaths
from core.engine import Engine
from core.search.search import SearchRequest
from core.vault.extractor import ExtractionFailure, PdfExtractor
from core.vault.ocr_text import ocr_installed
from core.vault.pdf import PdfProblem
from core.vault.readers import extract

pytestmark = pytest.mark.skipif(not ocr_installed(), reason="the ocr extra (rapidocr-onnxruntime) is not installed")
LATIN = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
CJK = "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf"


def render(path: Path, lines: list[tuple[str, str]]) -> Path:
    """An image of rendered text, one (font file, text) per line; skipped where a system font is missing
    (Debian's fonts-dejavu-core and fonts-droid-fallback), as the real-vault extras skip without the vaults."""
    from PIL import Image, ImageDraw, ImageFont

    missing = sorted({font for font, _ in lines if not Path(font).is_file()})
    if missing:
        pytest.skip(f"fonts to render the test's text are not installed: {', '.join(missing)}")

    image = Image.new("RGB", (900, 90 * len(lines) + 40), "white")
    draw = ImageDraw.Draw(image)
    for i, (font, text) in enumerate(lines):
        draw.text((20, 30 + 90 * i), text, fill="black", font=ImageFont.truetype(font, 38))
    image.save(path)
    return path


def huge_png_header(path: Path, side: int = 30_000) -> Path:
    """A few bytes claiming a 30,000 × 30,000 image: a decompression bomb's header."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + header + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))
    return path


@pytest.fixture(scope="module")
def shot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ocr")
    return render(folder / "screenshot.png", [(LATIN, "The okapi lives in the Ituri forest."), (CJK, "霍加狓生活在伊图里森林。")])


def test_english_and_chinese_text_in_a_screenshot(shot: Path) -> None:
    text = extract("image", shot).pages[0].text
    assert "okapi lives" in text and "Ituri" in text
    assert "生活在伊图里森林" in text


def test_a_30000_pixel_header_is_refused_before_decoding(tmp_path: Path) -> None:
    with pytest.raises(PdfProblem) as info:
        extract("image", huge_png_header(tmp_path / "bomb.png"))
    assert info.value.reason == "too_large" and "900000000 pixels" in str(info.value)


def test_a_scanned_pdf_is_read_by_ocr_only_when_it_is_on(tmp_path: Path, shot: Path) -> None:
    from PIL import Image

    scan = tmp_path / "scan.pdf"
    Image.open(shot).convert("RGB").save(scan, "PDF", resolution=72)  # an image-only page: no text layer
    with PdfExtractor(120) as off:
        got = off.extract(scan)
        assert isinstance(got, ExtractionFailure) and got.reason == "no_text"
    with PdfExtractor(300, ocr=True) as on:  # in the child, with its memory limit
        text = on.extract(scan)
        assert not isinstance(text, ExtractionFailure) and "okapi" in text.pages[0].text


@pytest.fixture
def engine(tmp_path: Path, shot: Path) -> Iterator[Engine]:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Garden.md").write_text("# Garden\n\nPlant the zucchini in May.\n")
    (vault / "screenshot.png").write_bytes(shot.read_bytes())
    eng = Engine(AppPaths.from_env(), embedder_factory=None)
    eng.add_vault(vault, name="v")
    yield eng
    eng.close()


def test_images_are_indexed_only_once_switched_on_and_cited_by_file(engine: Engine) -> None:
    from dataclasses import replace

    engine.sync(["v"], embed=False)
    assert engine.search(SearchRequest("okapi", mode="keyword")).hits == ()  # OCR is opt-in
    engine.update_config(replace(engine.config, kinds_off=()))
    (report,) = engine.sync(["v"], embed=False)
    assert report.keyword.skipped == {}
    (hit,) = engine.search(SearchRequest("okapi", mode="keyword", filters=SearchFilters(doc_types=("image",)))).hits
    assert hit.chunk.rel_path == "screenshot.png" and hit.doc_type == "image"
