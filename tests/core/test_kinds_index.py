"""Every kind in a real vault: indexed in the extraction child, cited by heading, skipped with reasons."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from core.answer import Answerer, AskRequest
from core.base.config import load_config
from core.base.models import SearchFilters, cited_path
from core.base.paths import AppPaths
from core.engine import Engine
from core.index.pages import page_text
from core.search.search import SearchRequest
from core.serialize import status_json
from tests.core.vault.test_kinds import ARTICLE
from tests.kinds_writer import claude_export, with_zip_member, write_docx, write_epub, write_json, write_mbox


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "mail").mkdir(parents=True)
    (root / "export").mkdir()
    (root / "Garden.md").write_text("# Garden\n\nPlant the zucchini in May.\n")
    write_docx(root / "report.docx")
    write_epub(root / "book.epub", chapters=3)
    (root / "herons.html").write_text(ARTICLE, "utf-8")
    write_mbox(root / "mail" / "team.mbox", 30, attachments={12: ("minutes.docx", (root / "report.docx").read_bytes())})
    write_json(root / "export" / "conversations.json", claude_export(20))
    return root


@pytest.fixture
def engine(vault: Path) -> Iterator[Engine]:
    eng = Engine(AppPaths.from_env(), embedder_factory=None)
    eng.add_vault(vault, name="v")
    yield eng
    eng.close()


def search(engine: Engine, query: str, restricted: bool = True):  # type: ignore[no-untyped-def]
    return engine.search(SearchRequest(query, mode="keyword", filters=SearchFilters(allow_restricted=restricted))).hits


def only(hits, rel_path: str):  # type: ignore[no-untyped-def]
    (hit,) = [h for h in hits if h.chunk.rel_path == rel_path]
    return hit


def test_each_kind_is_found_and_cited_by_its_heading(engine: Engine) -> None:
    (report,) = engine.sync(["v"], embed=False)
    assert report.keyword.skipped == {} and report.keyword.documents == 6
    doc = only(search(engine, "binoculars"), "report.docx")  # also in a mail's attached copy
    assert (doc.chunk.rel_path, doc.doc_type, doc.title) == ("report.docx", "docx", "Quarterly Report")
    assert "Budget" in doc.chunk.heading_path and cited_path(doc.chunk.rel_path, doc.page) == "report.docx"
    (book,) = search(engine, '"reed bed number 14"')
    assert (book.chunk.rel_path, book.page, book.chunk.heading_path) == ("book.epub", 2, "Part One > Chapter 2 > Nesting")
    (page,) = search(engine, "dagger-like")
    assert page.title == "How herons fish" and page.chunk.heading_path == "How herons fish"
    mail = search(engine, '"Observer 17 counted"')[0]
    assert mail.chunk.rel_path == "mail/team.mbox" and mail.chunk.heading_path == "Survey 17: sighting of species 17 (2024-01-18)"
    attached = only(search(engine, "egret volunteers"), "mail/team.mbox")
    assert attached.chunk.heading_path.startswith("Survey 12: sighting of species 12 (2024-01-13) > minutes.docx")
    (chat,) = search(engine, '"Loaf 5 was underproofed"')
    assert chat.chunk.rel_path == "export/conversations.json" and chat.chunk.heading_path == "Sourdough question 5 (2024-05-01) > 2. Claude"


def test_the_preview_shows_the_one_message(engine: Engine) -> None:
    engine.sync(["v"], embed=False)
    hit = search(engine, '"Observer 17 counted"')[0]
    unit = page_text(engine.index_for("v"), hit.chunk.rel_path, hit.page or 0, hit.chunk.ordinal)
    assert unit is not None and unit.text.startswith("From: Observer 17")
    assert "Observer 18" not in unit.text and unit.text[unit.start : unit.end] == hit.text


def test_hostile_files_are_skipped_with_reasons_and_the_rest_indexes(engine: Engine, vault: Path) -> None:
    good = (vault / "report.docx").read_bytes()
    (vault / "cut.docx").write_bytes(good[:900])
    with_zip_member(write_docx(vault / "bomb.docx"), "word/media/big.bin", b"\0" * (60 * 1024 * 1024))
    with_zip_member(write_epub(vault / "drm.epub"), "META-INF/rights.xml", b"<rights/>")
    with (vault / "huge.html").open("wb") as fh:  # 50 MB: over the limit for files read whole
        fh.write(b"<html><body>" + b"<p>filler text</p>" * (50 * 1024 * 1024 // 18) + b"</body></html>")
    (vault / "chat").mkdir()
    (vault / "chat" / "conversations.json").write_text("[{", "utf-8")
    (report,) = engine.sync(["v"], embed=False)
    assert report.keyword.skipped == {"malformed": 2, "too_large": 2, "encrypted": 1}
    (st,) = engine.status()
    by_kind = {c.kind: c for c in st.attachments}
    assert by_kind["docx"].indexed == 1 and dict(by_kind["docx"].skipped) == {"malformed": 1, "too_large": 1}
    assert dict(by_kind["epub"].skipped) == {"encrypted": 1} and dict(by_kind["html"].skipped) == {"too_large": 1}
    assert status_json(st)["attachments"]["email"] == {"indexed": 1, "skipped": {}}
    reasons = {s.rel_path: s.detail for s in st.info.skipped}
    assert "zip bomb" in reasons["bomb.docx"] and "DRM" in reasons["drm.epub"]
    assert search(engine, "zucchini") and search(engine, "binoculars")  # the rest of the vault is indexed


def test_a_restricted_folder_hides_its_mail(engine: Engine, vault: Path) -> None:
    (vault / "mail" / ".cairn.yaml").write_text("confidentiality: restricted\n")
    engine.sync(["v"], embed=False)
    assert search(engine, '"Observer 17 counted"', restricted=False) == ()
    assert search(engine, '"Observer 17 counted"')[0].confidentiality == "restricted"


def test_a_kind_switched_off_leaves_the_index_and_is_not_read(engine: Engine, vault: Path) -> None:
    engine.sync(["v"], embed=False)
    engine.update_config(replace(engine.config, kinds_off=("email", "chat")))
    assert load_config(AppPaths.from_env()).kinds_off == ("email", "chat")
    (report,) = engine.sync(["v"], embed=False)
    assert report.keyword.removed == 2
    assert search(engine, '"Observer 17 counted"') == () and search(engine, "binoculars")
    (st,) = engine.status()
    assert {c.kind for c in st.attachments} == {"docx", "epub", "html"}


def test_chat_exports_can_be_left_out_of_answers(engine: Engine) -> None:
    engine.sync(["v"], embed=False)
    question = AskRequest("Why was loaf 5 so dense?", mode="keyword")
    used = Answerer(engine).ask(question)
    assert "export/conversations.json" in {s.rel_path for s in used.sources}
    engine.update_config(replace(engine.config, ask_chats=False))
    left_out = Answerer(engine).ask(question)
    assert "export/conversations.json" not in {s.rel_path for s in left_out.sources}
    assert search(engine, '"Loaf 5 was underproofed"')  # still found by a search
