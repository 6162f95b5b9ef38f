"""From raw bytes to a `Document`: versions, warnings, title, tags and chunks together."""

from __future__ import annotations

import hashlib

from core.base.models import Document
from core.vault.chunker import ChunkLimits
from core.vault.notes import document_version, parse_note


def parse(raw: bytes, rel_path: str = "Notes/Example note.md", **kwargs: object) -> Document:
    return parse_note("vault", rel_path, raw, size=len(raw), mtime_ns=123, **kwargs)  # type: ignore[arg-type]


def test_document_carries_identity_and_properties() -> None:
    raw = b"---\ntitle: T\ntags: [x]\ndate: 2026-01-02\ndoc_type: howto\nproject: P\naliases: [a]\n---\n# H\n\nbody\n"
    doc = parse(raw)
    assert (doc.vault, doc.rel_path, doc.size, doc.mtime_ns) == ("vault", "Notes/Example note.md", len(raw), 123)
    assert (doc.title, doc.tags, doc.date, doc.doc_type, doc.project, doc.aliases) == (
        "T",
        ("x",),
        "2026-01-02",
        "howto",
        "P",
        ("a",),
    )
    assert doc.confidentiality == "internal"
    assert doc.folder == "Notes"
    assert doc.warnings == ()


def test_document_version_is_the_sha256_of_the_raw_bytes() -> None:
    raw = b"# one\n"
    assert parse(raw).document_version == hashlib.sha256(raw).hexdigest() == document_version(raw)
    assert parse(b"# one \n").document_version != parse(raw).document_version


def test_front_matter_tags_come_first_then_inline_tags_without_duplicates() -> None:
    doc = parse(b"---\ntags: [b, a]\n---\ntext #c and #A again #b\n")
    assert doc.tags == ("b", "a", "c")


def test_invalid_utf8_is_indexed_with_replacement_and_an_invalid_utf8_warning() -> None:
    doc = parse(b"# Title\n\nbad \xff\xfe byte\n")
    assert [w.code for w in doc.warnings] == ["invalid_utf8"]
    assert "byte 13" in doc.warnings[0].detail
    assert doc.warnings[0].rel_path == "Notes/Example note.md"
    assert "bad \ufffd\ufffd byte" in doc.chunks[0].text


def test_bom_and_crlf_note_keeps_front_matter_headings_and_exact_ranges() -> None:
    raw = b"\xef\xbb\xbf---\r\ntitle: Windows note\r\ntags: [win]\r\n---\r\n# Heading\r\n\r\nline\r\n\r\n## Sub\r\n\r\nmore\r\n"
    doc = parse(raw)
    assert doc.warnings == ()
    assert (doc.title, doc.tags) == ("Windows note", ("win",))
    assert [c.heading_path for c in doc.chunks] == ["Heading", "Heading > Sub"]
    for c in doc.chunks:
        assert raw[c.start_byte : c.end_byte].decode().replace("\r\n", "\n") == c.text
        assert "\ufeff" not in c.text


def test_bom_without_front_matter_still_finds_the_h1() -> None:
    raw = b"\xef\xbb\xbf# Title after BOM\n\ntext\n"
    doc = parse(raw)
    assert doc.title == "Title after BOM"
    assert doc.chunks[0].heading_path == "Title after BOM"
    assert doc.chunks[0].start_byte == 3


def test_empty_file_is_a_document_with_no_chunks_and_a_stem_title() -> None:
    doc = parse(b"", rel_path="Inbox/Empty.md")
    assert doc.chunks == () and doc.title == "Empty" and doc.warnings == ()


def test_front_matter_only_note_keeps_its_properties_and_one_chunk_of_its_title_line() -> None:
    raw = b"---\ntags: [todo]\ntitle: Stub\n---\n"
    doc = parse(raw)
    assert doc.title == "Stub" and doc.tags == ("todo",)
    assert [(c.text, raw[c.start_byte : c.end_byte]) for c in doc.chunks] == [("title: Stub", b"title: Stub")]


def test_several_problems_give_several_warnings() -> None:
    raw = b"---\ndate: [\n---\n" + b"\n\n".join(b"# H%d\n\nx\xff" % i for i in range(6))
    doc = parse(raw, limits=ChunkLimits(max_chunks=2))
    assert [w.code for w in doc.warnings] == ["invalid_utf8", "front_matter", "too_many_chunks"]
    assert len(doc.chunks) == 2


def test_parse_never_raises_on_odd_input() -> None:
    for raw in (b"---", b"---\n", b"\xef\xbb\xbf", b"\r\r\r", b"```", b"| a |\n|---|", b"#", b"\xff" * 10, b"---\n- a\n---\n"):
        doc = parse(raw)
        for c in doc.chunks:
            assert 0 <= c.start_byte < c.end_byte <= len(raw)
