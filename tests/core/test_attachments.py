"""PDFs and text files in a real vault: indexed, page-cited, skipped with reasons, kept in step."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import core.index.indexer
import core.vault.attachments
from core.answer.fetch import StaleReferenceError, fetch_chunk
from core.base.models import SearchFilters
from core.base.paths import AppPaths
from core.engine import Engine
from core.index.indexer import SyncStats
from core.index.pages import page_text
from core.search.search import SearchRequest
from core.serialize import hit_json, status_json
from tests.pdf_writer import write_pdf

MARSH = [
    ["Marsh Field Guide", "Chapter 1 Birds", "The grey heron waits motionless in the shallows.", "1"],
    ["Marsh Field Guide", "Bitterns boom at night from the reed beds.", "2"],
    ["Marsh Field Guide", "Chapter 2 Fish", "Tench feed on the muddy bottom in summer.", "3"],
]
OUTLINE = [(0, "Chapter 1 Birds", 0), (0, "Chapter 2 Fish", 2)]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "Garden.md").write_text("# Garden\n\nPlant the zucchini in May.\n")
    write_pdf(root / "papers" / "marsh.pdf", MARSH, title="Marsh Field Guide", outline=OUTLINE)
    (root / "papers" / "todo.txt").write_text("Renew the fishing licence before June.\n")
    return root


@pytest.fixture
def engine(vault: Path) -> Iterator[Engine]:
    eng = Engine(AppPaths.from_env(), embedder_factory=None)
    eng.add_vault(vault, name="v")
    yield eng
    eng.close()


def sync(engine: Engine) -> SyncStats:
    (report,) = engine.sync(["v"], embed=False)
    return report.keyword


def search(engine: Engine, query: str, restricted: bool = True):  # type: ignore[no-untyped-def]
    return engine.search(SearchRequest(query, mode="keyword", filters=SearchFilters(allow_restricted=restricted))).hits


def test_pdf_and_text_are_searchable_and_pdf_hits_know_their_page(engine: Engine) -> None:
    stats = sync(engine)
    assert (stats.documents, stats.skipped) == (3, {})
    (hit,) = search(engine, "bitterns boom")
    assert (hit.chunk.rel_path, hit.page, hit.title) == ("papers/marsh.pdf", 2, "Marsh Field Guide")
    assert hit.chunk.heading_path == "Chapter 1 Birds"
    assert hit.doc_type == "pdf"
    assert hit_json(1, hit)["page"] == 2
    (tench,) = search(engine, "tench")
    assert (tench.page, tench.chunk.heading_path) == (3, "Chapter 2 Fish")
    (txt,) = search(engine, "licence")
    assert (txt.chunk.rel_path, txt.page) == ("papers/todo.txt", None)
    (note,) = search(engine, "zucchini")
    assert note.page is None and hit_json(1, note)["page"] is None


def test_type_filter_finds_only_pdfs(engine: Engine) -> None:
    sync(engine)
    resp = engine.search(SearchRequest("type:pdf heron", mode="keyword"))
    assert [h.chunk.rel_path for h in resp.hits] == ["papers/marsh.pdf"]


def test_status_counts_attachments_apart_with_skip_reasons(engine: Engine, vault: Path) -> None:
    write_pdf(vault / "locked.pdf", [["secret"]], encrypted=True)
    write_pdf(vault / "scan.pdf", [[], []], image_only=True)
    (vault / "broken.pdf").write_bytes(b"%PDF-1.7\ngarbage")
    stats = sync(engine)
    assert stats.skipped == {"encrypted": 1, "malformed": 1, "no_text": 1}
    (st,) = engine.status()
    by_kind = {c.kind: c for c in st.attachments}
    assert by_kind["pdf"].indexed == 1 and dict(by_kind["pdf"].skipped) == {"encrypted": 1, "malformed": 1, "no_text": 1}
    assert by_kind["txt"].indexed == 1 and by_kind["txt"].skipped == ()
    assert status_json(st)["attachments"]["pdf"] == {"indexed": 1, "skipped": {"encrypted": 1, "malformed": 1, "no_text": 1}}
    reasons = {s.rel_path: s.detail for s in st.info.skipped}
    assert "password" in reasons["locked.pdf"] and "OCR" in reasons["scan.pdf"]
    assert search(engine, "zucchini")  # the rest of the vault is indexed as ever


def test_unchanged_pdf_is_not_extracted_again_and_a_changed_one_is(engine: Engine, vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sync(engine)
    calls: list[str] = []
    real = core.vault.attachments.parse_attachment

    def counting(src, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(src.rel_path)
        return real(src, *args, **kwargs)

    monkeypatch.setattr(core.vault.attachments, "parse_attachment", counting)
    path = vault / "papers" / "marsh.pdf"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))  # touched, same bytes
    stats = sync(engine)
    assert calls == [] and (stats.added, stats.changed) == (0, 0)
    write_pdf(path, [["Otters", "Otters returned to the marsh in spring."]], title="Marsh Field Guide")
    stats = sync(engine)
    assert calls == ["papers/marsh.pdf"] and stats.changed == 1
    assert search(engine, "otters") and not search(engine, "bitterns")


def test_a_pdf_with_one_page_changed_embeds_only_that_page(vault: Path) -> None:
    from tests.helpers import BagOfWordsEmbedder

    embedder = BagOfWordsEmbedder()
    eng = Engine(AppPaths.from_env(), embedder_factory=lambda vc: embedder)
    eng.add_vault(vault, name="v")
    try:
        eng.sync(["v"])
        first = embedder.texts_embedded
        pdf_chunks = len(eng.index_for("v").files["papers/marsh.pdf"].chunks)
        assert first >= pdf_chunks >= 3
        changed = [list(page) for page in MARSH]
        changed[2][2] = "Carp feed on the muddy bottom in summer."  # page 3 only
        write_pdf(vault / "papers" / "marsh.pdf", changed, title="Marsh Field Guide", outline=OUTLINE)
        (report,) = eng.sync(["v"])
        assert report.keyword.changed == 1
        assert report.embedding is not None and report.embedding.embedded == 1  # the other pages' chunks come from the cache
        assert embedder.texts_embedded - first == 1
        hits = eng.search(SearchRequest("carp", mode="semantic")).hits
        assert hits[0].chunk.rel_path == "papers/marsh.pdf" and hits[0].page == 3
    finally:
        eng.close()


def test_folder_setting_makes_a_pdf_restricted_and_lifting_it_takes_effect(engine: Engine, vault: Path) -> None:
    (vault / "papers" / ".cairn.yaml").write_text("confidentiality: restricted\n")
    sync(engine)
    assert search(engine, "bitterns", restricted=False) == ()
    assert search(engine, "bitterns", restricted=True)[0].confidentiality == "restricted"
    assert search(engine, "zucchini", restricted=False)  # notes keep their own front matter
    (vault / "papers" / ".cairn.yaml").write_text("confidentiality: internal\n")
    stats = sync(engine)  # the PDF itself did not change; its folder's setting did
    assert stats.changed == 2
    assert search(engine, "bitterns", restricted=False)[0].confidentiality == "internal"


def test_page_text_for_the_preview_marks_the_chunk(engine: Engine) -> None:
    sync(engine)
    (hit,) = search(engine, "bitterns")
    page = page_text(engine.index_for("v"), hit.chunk.rel_path, 2, hit.chunk.ordinal)
    assert page is not None and page.pages == 3
    assert page.text[page.start : page.end] == hit.text
    assert page_text(engine.index_for("v"), hit.chunk.rel_path, 9, 0) is None


def test_fetch_names_the_page_and_notices_a_changed_pdf(engine: Engine, vault: Path) -> None:
    sync(engine)
    (hit,) = search(engine, "tench")
    got = fetch_chunk(engine, f"v/papers/marsh.pdf#{hit.chunk.ordinal}")
    assert got.page == 3 and got.to_json()["page"] == 3
    assert "papers/marsh.pdf, p. 3" in got.to_text()
    write_pdf(vault / "papers" / "marsh.pdf", [["Something else entirely."]])
    with pytest.raises(StaleReferenceError):
        fetch_chunk(engine, f"v/papers/marsh.pdf#{hit.chunk.ordinal}")


def test_pdf_over_its_own_size_limit_is_skipped(vault: Path) -> None:
    from dataclasses import replace

    eng = Engine(AppPaths.from_env(), embedder_factory=None)
    try:
        eng.add_vault(vault, name="v")
        eng.registry.config = replace(eng.config, max_attachment_bytes=100)
        eng.registry.close()  # indexes open again with the new limit
        (report,) = eng.sync(["v"], embed=False)
        assert report.keyword.skipped == {"too_large": 1}
        assert search(eng, "zucchini") and not search(eng, "heron")
    finally:
        eng.close()


def test_cli_chunk_shows_a_pdfs_pages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from core.cli.main import main

    path = write_pdf(tmp_path / "m.pdf", MARSH, title="Marsh Field Guide", outline=OUTLINE)
    assert main(["chunk", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Marsh Field Guide  (3 chunks")
    assert "--- #1 [p. 2] Chapter 1 Birds" in out and "Bitterns boom" in out


def test_cli_search_cites_the_page(engine: Engine, capsys: pytest.CaptureFixture[str]) -> None:
    from core.cli.main import main

    sync(engine)
    engine.close()
    assert main(["search", "bitterns", "--mode", "keyword"]) == 0
    assert "[v/papers/marsh.pdf, p. 2 · #1]" in capsys.readouterr().out


def test_after_a_crash_the_pdf_is_recovered_from_the_keyword_index_without_extracting_again(
    engine: Engine, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sync(engine)
    write_pdf(vault / "late.pdf", [["Intro"], ["Kingfishers dive for minnows."]])
    vi = engine.index_for("v")
    vi.update_paths(["late.pdf"], persist=False)  # the watcher's fast path: manifest not saved yet
    assert vi.is_dirty
    engine.close()  # ... and the process dies here: no flush
    calls: list[str] = []
    real = core.vault.attachments.parse_attachment
    monkeypatch.setattr(core.vault.attachments, "parse_attachment", lambda src, *a, **k: calls.append(src.rel_path) or real(src, *a, **k))
    again = Engine(AppPaths.from_env(), embedder_factory=None)
    try:
        rec = again.index_for("v").files["late.pdf"]
        assert [c.page for c in rec.chunks] == [1, 2]  # pages come back from the stored fields
        stats = again.sync(["v"], embed=False)[0].keyword
        assert calls == [] and stats.changed == 0  # the hash matched: nothing re-extracted
        (hit,) = search(again, "kingfishers")
        assert hit.page == 2
    finally:
        again.close()


def test_a_chinese_pdf_is_indexed_and_cited_by_page(engine: Engine, vault: Path) -> None:
    from tests.pdf_writer import make_cid_pdf

    (vault / "cjk.pdf").write_bytes(make_cid_pdf([["東京都の天気は晴れです。"], ["北京今天下雨。"]]))
    sync(engine)
    (hit,) = search(engine, "北京今天下雨")
    assert (hit.chunk.rel_path, hit.page, hit.title) == ("cjk.pdf", 2, "東京都の天気は晴れです。")


CJK_MANUAL = Path(__file__).resolve().parents[1] / "fixtures" / "pdf" / "cjk-manual.pdf"  # tools/make_cjk_pdf.py


@pytest.mark.parametrize(
    ("word", "page"),
    [
        ("再起動", 1),  # "restart", inside a Japanese sentence, split by the line end after 再
        ("ローテーション", 1),  # katakana inside a sentence
        ("压缩", 2),  # "compress", inside a Chinese sentence, split by the line end after 压
        ("归档", 2),
    ],
)
def test_a_word_inside_a_japanese_or_chinese_sentence_is_found_with_its_page(
    engine: Engine, vault: Path, word: str, page: int
) -> None:
    # Made by ReportLab: Adobe's CJK fonts through predefined CMaps, no ToUnicode map, lines
    # wrapped in the middle of words, as many real Japanese and Chinese PDFs are.
    (vault / "manual.pdf").write_bytes(CJK_MANUAL.read_bytes())
    assert sync(engine).skipped == {}
    hits = [h for h in search(engine, word) if h.chunk.rel_path == "manual.pdf"]
    assert hits and hits[0].page == page, [(h.chunk.rel_path, h.page) for h in hits]
    assert word in hits[0].text
    assert hits[0].title == "サーバー管理の手引き"
