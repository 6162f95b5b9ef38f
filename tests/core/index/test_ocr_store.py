"""What OCR read, kept in the index folder: a record survives a round trip, a damaged or foreign
record is ignored (read again), and the query's words find their lines (no OCR needed)."""

from __future__ import annotations

from pathlib import Path

from core.index.ocr_store import OcrRecord, OcrStore, matching_lines, query_words
from core.vault.kinds import OcrLine, OcrPage

PAGE = OcrPage(
    3,
    1200,
    800,
    (
        OcrLine("Herons wait in the shallows", (10.0, 20.0, 500.0, 60.0)),
        OcrLine("霍加狓生活在伊图里森林。", (10.0, 100.0, 600.0, 140.0)),
        OcrLine("Okapis eat leaves", (10.0, 180.0, 400.0, 220.0)),
    ),
)


def test_a_record_round_trips_and_says_how_far_ocr_got(tmp_path: Path) -> None:
    store = OcrStore(tmp_path)
    record = OcrRecord("scans/a.pdf", "v1", 0, 0, ()).with_portion((PAGE,), 212, 30)
    store.put(record)
    got = store.get("scans/a.pdf", "v1")
    assert got == record and not got.complete and got.read_to == 30 and got.unit_count == 212
    assert store.get("scans/a.pdf", "v2") is None  # the file changed: read again
    more = got.with_portion((), 212, 212)
    assert more.complete and more.pages == (PAGE,)
    assert OcrRecord("x.png", "v", 1, 1, (), ("no_text", "none")).complete  # a reason ends it too


def test_a_damaged_record_is_ignored_and_dropping_removes_the_page_pictures(tmp_path: Path) -> None:
    store = OcrStore(tmp_path)
    store.put(OcrRecord("a.png", "v1", 1, 1, (PAGE,)))
    path = next(store.folder.glob("*.json"))
    path.write_text('{"rel_path": "a.png", "pages": [[1, "x"]]')
    assert store.get("a.png") is None
    store.put(OcrRecord("b.pdf", "v1", 5, 2, (PAGE,)))
    store.pages_dir("b.pdf").mkdir(parents=True)
    (store.pages_dir("b.pdf") / "p3.jpg").write_bytes(b"\xff\xd8")
    assert store.page_image("b.pdf", 3) is not None and store.page_image("b.pdf", 4) is None
    store.drop("b.pdf")
    assert store.get("b.pdf") is None and not store.pages_dir("b.pdf").exists()


def test_the_query_words_find_their_lines() -> None:
    assert query_words('okapi tag:zoo -heron "eat leaves" a') == ("okapi", "eat", "leaves")
    assert [line.text for line in matching_lines(PAGE, "okapi")] == ["Okapis eat leaves"]  # a word's start
    assert [line.text for line in matching_lines(PAGE, "伊图里")] == ["霍加狓生活在伊图里森林。"]  # CJK anywhere
    assert [line.text for line in matching_lines(PAGE, "HERONS shallow")] == ["Herons wait in the shallows"]
    assert matching_lines(PAGE, "zebra") == () and matching_lines(PAGE, "tag:okapi") == ()
    assert matching_lines(PAGE, "pis") == ()  # inside a word is not a match
