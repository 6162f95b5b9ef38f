"""E-books (.epub) through EbookLib: one unit per chapter, the table of contents as headings.

EbookLib reads the container, the package (OPF: metadata, manifest, spine) and the table
of contents (EPUB 3 nav or EPUB 2 NCX) with entity resolution off. A chapter is a spine
document with text; its heading path starts with the trail the table of contents gives it
("Part II > Chapter 3") and goes on with the chapter's own h1–h6, so a hit is cited
"book.epub › Chapter 3 › Section".

A book with DRM (`META-INF/rights.xml`, or an `encryption.xml` that encrypts more than
fonts — publishers obfuscate embedded fonts in DRM-free books too) is skipped as
`encrypted`: its chapters are ciphertext.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any

from core.vault.html_blocks import html_into, parse_html
from core.vault.kinds import HEADING_JOIN, KindText, UnitBuilder, check_zip
from core.vault.pdf import PdfPage, PdfProblem

FONT_OBFUSCATION = ("http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC")


def extract_epub(path: Path) -> KindText:
    """Read an e-book's chapters in reading order. Raises `PdfProblem` for DRM or damage."""
    from ebooklib import ITEM_DOCUMENT, epub

    with check_zip(path, "e-book") as archive:
        _refuse_drm(archive)
    try:
        book = epub.read_epub(str(path), options={"ignore_ncx": False})
    except (epub.EpubException, KeyError, AttributeError, IndexError, ValueError) as exc:
        raise PdfProblem("malformed", f"not an e-book EbookLib can open ({exc})") from None
    trails = toc_trails(book.toc)
    pages: list[PdfPage] = []
    for idref, _linear in book.spine:
        item = book.get_item_with_id(idref)
        if item is None or item.get_type() != ITEM_DOCUMENT:
            continue
        root = parse_html(item.get_content())
        if root is None:
            continue
        out = UnitBuilder(top=trails.get(posixpath.normpath(item.get_name()), ""))
        body = root.find("body")
        html_into(body if body is not None else root, out, top_level=_depth(out.top))
        if not out.empty:
            pages.append(out.page(len(pages) + 1))
    if not pages:
        raise PdfProblem("no_text", "the e-book has no text in its chapters")
    titles = book.get_metadata("DC", "title")
    title = " ".join(str(titles[0][0]).split()) if titles and titles[0][0] else None
    return KindText(title, tuple(pages))


def _refuse_drm(archive: Any) -> None:
    names = set(archive.namelist())
    if "META-INF/rights.xml" in names:
        raise PdfProblem("encrypted", "the e-book is protected by DRM (META-INF/rights.xml)")
    if "META-INF/encryption.xml" in names:
        import lxml.etree

        parser = lxml.etree.XMLParser(resolve_entities=False, no_network=True)
        try:
            root = lxml.etree.fromstring(archive.read("META-INF/encryption.xml"), parser)
        except lxml.etree.XMLSyntaxError:
            raise PdfProblem("encrypted", "the e-book is protected by DRM (unreadable encryption.xml)") from None
        methods = {el.get("Algorithm", "") for el in root.iter() if isinstance(el.tag, str) and el.tag.endswith("EncryptionMethod")}
        if methods - set(FONT_OBFUSCATION):
            raise PdfProblem("encrypted", "the e-book is protected by DRM (META-INF/encryption.xml)")


def toc_trails(toc: Any, parents: tuple[str, ...] = ()) -> dict[str, str]:
    """File name -> the table of contents' trail to the first entry pointing into that file."""
    trails: dict[str, str] = {}
    for entry in toc or ():
        node, children = (entry[0], entry[1]) if isinstance(entry, tuple | list) else (entry, ())
        title = " ".join(str(getattr(node, "title", "") or "").split())
        here = (*parents, title) if title else parents
        href = str(getattr(node, "href", "") or "").partition("#")[0]
        if href:
            trails.setdefault(posixpath.normpath(href), HEADING_JOIN.join(here))
        for name, trail in toc_trails(children, here).items():
            trails.setdefault(name, trail)
    return trails


def _depth(trail: str) -> int:
    return len(trail.split(HEADING_JOIN)) if trail else 0
