"""The OCR stage: after the notes' keyword index and embeddings, cancellable, resumed where it stopped,
a long scan read in portions; boxes kept in the index folder. Skipped without the `ocr` extra."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from core.base.models import SearchFilters
from core.base.paths import AppPaths
from core.engine import Engine
from core.index import ocr_pass
from core.index.ocr_store import OcrStore, matching_lines
from core.search.search import SearchRequest
from core.serialize import sync_json
from core.vault.ocr_text import ocr_installed
from tests.helpers import BagOfWordsEmbedder

pytestmark = [
    pytest.mark.skipif(not ocr_installed(), reason="the ocr extra (rapidocr-onnxruntime) is not installed"),
    pytest.mark.slow,  # OCR takes seconds an image on the loaded 2-core machine
]
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
WORDS = ("okapi", "pangolin", "axolotl")


def picture(text: str) -> object:
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (700, 130), "white")
    ImageDraw.Draw(image).text((20, 40), text, fill="black", font=ImageFont.truetype(FONT, 40))
    return image


def engine_for(vault: Path, embedder: bool = False) -> Engine:
    eng = Engine(AppPaths.from_env(), embedder_factory=(lambda vc: BagOfWordsEmbedder()) if embedder else None)
    eng.add_vault(vault, name="v")
    eng.update_config(replace(eng.config, kinds_off=()))  # OCR switched on
    return eng


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "Garden.md").write_text("# Garden\n\nPlant the zucchini in May.\n")
    for word in WORDS:
        picture(f"The {word} sleeps here").save(root / f"{word}.png")  # type: ignore[attr-defined]
    return root


@pytest.fixture
def engine(vault: Path) -> Iterator[Engine]:
    eng = engine_for(vault, embedder=True)
    yield eng
    eng.close()


def paths(engine: Engine, query: str) -> set[str]:
    return {h.chunk.rel_path for h in engine.search(SearchRequest(query, mode="keyword")).hits}


def test_ocr_runs_after_the_notes_are_keyword_indexed_and_embedded(engine: Engine) -> None:
    phases: list[str] = []
    searchable_before_ocr: list[set[str]] = []

    def progress(done: int, total: int, phase: str) -> None:
        if phase == "ocr" and not searchable_before_ocr:
            searchable_before_ocr.append(paths(engine, "zucchini"))
        if not phases or phases[-1] != phase:
            phases.append(phase)

    (report,) = engine.sync(["v"], progress=progress)
    assert phases == ["keyword", "embedding", "ocr", "embedding"]  # OCR last, then what it read is embedded
    assert searchable_before_ocr == [{"Garden.md"}]
    assert report.ocr is not None and sorted(report.ocr.read) == sorted(f"{w}.png" for w in WORDS)
    assert sync_json(report)["ocr"]["pages"] == 3  # `cairn index --json`
    assert paths(engine, "pangolin") == {"pangolin.png"}
    vv = engine.vectors_for("v")
    assert vv is not None and any(k for k in engine.index_for("v").files["okapi.png"].chunks)
    assert engine.search(SearchRequest("axolotl sleeps", mode="semantic")).hits  # embedded after OCR
    (again,) = engine.sync(["v"])
    assert again.ocr is not None and again.ocr.read == () and again.ocr.pages == 0  # nothing is read twice


def test_a_cancelled_ocr_stage_keeps_what_it_read_and_the_next_sync_reads_only_the_rest(vault: Path) -> None:
    eng = engine_for(vault)
    cancel = threading.Event()

    def progress(done: int, total: int, phase: str) -> None:
        if phase == "ocr" and done >= 1:
            cancel.set()  # after the first image

    (report,) = eng.sync(["v"], progress=progress, cancel=cancel)
    assert report.ocr is not None and report.ocr.cancelled and len(report.ocr.read) == 1 and report.ocr.remaining == 2
    first = report.ocr.read[0]
    assert paths(eng, "zucchini") == {"Garden.md"} and first in paths(eng, "sleeps")
    eng.close()
    again = engine_for(vault)  # a new process, as after quitting the app
    (report,) = again.sync(["v"])
    assert report.ocr is not None and not report.ocr.cancelled
    assert first not in report.ocr.read and len(report.ocr.read) == 2 and report.ocr.pages == 2
    assert paths(again, "sleeps") == {f"{w}.png" for w in WORDS}
    again.close()


def test_boxes_are_kept_in_the_index_folder_and_match_the_query(engine: Engine, vault: Path) -> None:
    engine.sync(["v"], embed=False)
    record = OcrStore(engine.index_for("v").dir).get("okapi.png")
    assert record is not None and record.complete and record.unit_count == 1
    (page,) = record.pages
    assert (page.width, page.height) == (700, 130)
    (line,) = matching_lines(page, "okapi")
    left, top, right, bottom = line.box
    assert 0 <= left < 60 and 20 < top < 60 and 300 < right <= 700 and 60 < bottom < 110  # where the words were drawn
    assert matching_lines(page, "zebra") == ()
    assert not any(p.suffix == ".json" for p in vault.rglob("*"))  # nothing written into the vault


def scanned_pdf(path: Path, pages: int) -> Path:
    images = [picture(f"Page {i} holds the word {w}").convert("RGB") for i, w in enumerate(["heron", "lynx", "otter", "walrus", "bison"][:pages], 1)]  # type: ignore[attr-defined]
    images[0].save(path, "PDF", resolution=72, save_all=True, append_images=images[1:])
    return path


def test_a_long_scan_is_read_in_portions_and_resumed_until_every_page_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr_pass, "PORTION_PAGES", 2)
    root = tmp_path / "vault"
    root.mkdir()
    scanned_pdf(root / "scan.pdf", 5)
    eng = engine_for(root)
    cancel = threading.Event()
    eng.sync(["v"], progress=lambda d, t, p: cancel.set() if p == "ocr" else None, cancel=cancel)  # stops after pages 1-2
    assert paths(eng, "heron lynx") == {"scan.pdf"} and paths(eng, "walrus") == set()
    (status,) = [w for w in eng.index_for("v").info.warnings if w.rel_path == "scan.pdf"]
    assert "pages 1–2 of 5" in status.detail
    assert eng.index_for("v").info.skipped == ()  # read in part: indexed, not skipped as `no_text`
    (report,) = eng.sync(["v"])
    assert report.ocr is not None and report.ocr.pages == 3  # pages 3-5 only
    assert paths(eng, "bison") == {"scan.pdf"} and paths(eng, "heron") == {"scan.pdf"}
    assert not [w for w in eng.index_for("v").info.warnings if w.rel_path == "scan.pdf"]
    hits = eng.search(SearchRequest("walrus", mode="keyword", filters=SearchFilters(doc_types=("pdf",)))).hits
    assert hits and hits[0].page == 4
    store = OcrStore(eng.index_for("v").dir)
    assert store.page_image("scan.pdf", 4) is not None  # the page's picture, for the Preview
    eng.close()


def test_a_live_edit_is_indexed_while_ocr_reads_the_next_image(vault: Path) -> None:
    eng = engine_for(vault)
    edited: list[float] = []

    def edit() -> None:
        (vault / "Garden.md").write_text("# Garden\n\nPlant the kohlrabi in June.\n")
        eng.update_notes("v", ["Garden.md"])
        edited.append(time.monotonic())

    editor = threading.Thread(target=edit)

    def progress(done: int, total: int, phase: str) -> None:
        if phase == "ocr" and not editor.is_alive() and not edited:
            editor.start()  # after the first image; two more are still to read

    eng.sync(["v"], progress=progress)
    ended = time.monotonic()
    editor.join(30)
    assert edited and edited[0] < ended  # not held up until the whole OCR stage ended
    assert paths(eng, "kohlrabi") == {"Garden.md"} and paths(eng, "sleeps") == {f"{w}.png" for w in WORDS}
    eng.close()


def test_an_image_saved_into_the_watched_vault_is_read_by_the_live_path(vault: Path) -> None:
    eng = engine_for(vault)
    eng.sync(["v"], embed=False)
    picture("The quokka smiles here").save(vault / "quokka.png")  # type: ignore[attr-defined]
    report = eng.update_notes("v", ["quokka.png"])  # what the watcher calls
    assert report.ocr is not None and report.ocr.read == ("quokka.png",)
    assert paths(eng, "quokka") == {"quokka.png"}
    (vault / "okapi.png").unlink()
    eng.update_notes("v", ["okapi.png"])
    assert paths(eng, "okapi") == set()
    eng.close()


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="no process priorities to read here")
def test_ocr_reads_in_a_child_at_the_lowest_priority(tmp_path: Path) -> None:
    from core.vault.extractor import PdfExtractor

    picture("The tapir naps").save(tmp_path / "tapir.png")  # type: ignore[attr-defined]
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    with PdfExtractor(300) as extractor:
        got = extractor.ocr(tmp_path / "tapir.png")
        assert not hasattr(got, "reason") and "tapir" in got.pages[0].text.lower()  # type: ignore[union-attr]
        child = extractor._proc.pid
        assert os.getpriority(os.PRIO_PROCESS, child) == 19
    assert os.getpriority(os.PRIO_PROCESS, 0) == mine  # this process keeps its own
