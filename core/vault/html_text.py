"""Saved web pages (.html/.htm, MHTML) through readability-lxml: the article, not the page.

A page saved from a browser or a clipper carries navigation, cookie banners, share buttons
and footers around the article. readability-lxml (a port of Arc90's Readability, the
algorithm behind Firefox's reader view) scores the page's blocks and keeps the main one.
A page that marks its main content itself (`<main>`, `role="main"`, one `<article>`: what
documentation generators write) is taken as marked; readability judges the rest.
Readability was chosen over trafilatura, which extracts as well but pulls babel (36 MB of locale
data), dateparser and regex — more than the whole budget the double-click build has left;
readability-lxml needs only lxml (shared with the Word and e-book readers), cssselect and
chardet (docs/attachments.md has the sizes).

The page's title and the address it was saved from (a canonical link, `og:url`, or the
"saved from url=" comment browsers write) are kept: the title as the document's title, the
address as the first line of its text, so both are searchable and shown in the Preview.
MHTML (a page saved "as a single file") is a MIME message: the standard library's `email`
takes out its HTML part.
"""

from __future__ import annotations

import email
import email.policy
import re
from pathlib import Path
from typing import Any

from core.vault.html_blocks import html_into, parse_html
from core.vault.kinds import HEADING_JOIN, KindText, UnitBuilder
from core.vault.pdf import PdfProblem

_SAVED_FROM = re.compile(rb"<!--\s*saved from url=\(\d+\)(\S+?)\s*-->", re.IGNORECASE)
NEGATIVE = ("cookie", "consent", "gdpr", "banner", "newsletter", "subscribe", "share", "social")
_BANNERS = "//*[re:test(@id, 'cookie|consent|gdpr', 'i') or re:test(@class, 'cookie|consent|gdpr', 'i')]"
MIN_ARTICLE_CHARS = 200  # readability's pick shorter than this (a tiny page, a list): the whole body instead


def extract_html(path: Path) -> KindText:
    """Read a saved web page's main content. Raises `PdfProblem` for a page with no text."""
    raw = path.read_bytes()
    source: str | None = None
    if path.suffix.lower() in (".mhtml", ".mht"):
        raw, source = _mhtml_part(raw)
    return html_page(raw, source)


def html_page(raw: bytes, source: str | None = None) -> KindText:
    """The article of an HTML page (also used for an e-mail's HTML attachment)."""
    import lxml.html
    from readability import Document

    page = parse_html(raw)
    if page is None:
        raise PdfProblem("no_text", "the page holds no HTML")
    source = source or _source(raw, page)
    for banner in page.xpath(_BANNERS, namespaces={"re": "http://exslt.org/regular-expressions"}):
        banner.drop_tree()  # readability keeps a consent banner that sits beside the article in <body>
    for mark in page.xpath('//a[contains(@class, "headerlink")]'):
        mark.drop_tree()  # Sphinx's "¶" after every heading
    main = _declared_main(page)
    title = None
    if main is None:
        article = Document(lxml.html.tostring(page), negative_keywords=list(NEGATIVE))
        try:
            title = " ".join((article.short_title() or "").split()) or None
            main = parse_html(article.summary(html_partial=True))
        except Exception:  # noqa: BLE001 - readability gives up on odd pages; fall back to the whole body
            main = None
    out = UnitBuilder()
    if source:
        out.block(f"Source: {source}")
    if main is not None:
        html_into(main, out)
    if main is None or out.size < MIN_ARTICLE_CHARS:
        out = UnitBuilder()
        if source:
            out.block(f"Source: {source}")
        body = page.find("body")
        html_into(body if body is not None else page, out)
    if out.size <= len(f"Source: {source}") + 2:
        raise PdfProblem("no_text", "the page has no text")
    # The article's first heading, not the page title ("How herons fish | Bird Blog").
    heading = next((path.split(HEADING_JOIN)[0] for _, path in out.sections if path), None)
    return KindText(heading or title or _page_title(page), (out.page(1),))


def _declared_main(page: Any) -> Any:
    """The one element the page itself marks as its main content (`<main>`, `role="main"`, a
    single `<article>`), when it holds most of the page's text; None to let readability judge.

    Documentation generators (Sphinx, MkDocs, Hugo themes) mark it, and readability, built
    for news articles, keeps only one definition of a reference page (3.5 of 40 KB of
    Python's `json` page) where the marked element holds all of it.
    """
    for xpath in ('//*[@role="main"]', "//main", "//article"):
        found = page.xpath(xpath)
        if len(found) == 1:
            body = page.find("body")
            whole = len(body.text_content()) if body is not None else 0
            if len(found[0].text_content()) * 2 >= whole:
                return found[0]
    return None


def _source(raw: bytes, page: Any) -> str | None:
    for xpath in ('//link[@rel="canonical"]/@href', '//meta[@property="og:url"]/@content'):
        found = page.xpath(xpath)
        if found and str(found[0]).startswith(("http://", "https://")):
            return str(found[0]).strip()
    m = _SAVED_FROM.search(raw[:4096])
    return m.group(1).decode("ascii", "replace") if m else None


def _page_title(page: Any) -> str | None:
    found = page.xpath("//title/text()")
    return " ".join(str(found[0]).split()) or None if found else None


def _mhtml_part(raw: bytes) -> tuple[bytes, str | None]:
    message = email.message_from_bytes(raw, policy=email.policy.default)
    source = message.get("Snapshot-Content-Location")
    for part in message.walk():
        if part.get_content_type() == "text/html":
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                return payload, str(part.get("Content-Location") or source or "") or None
    raise PdfProblem("no_text", "the MHTML file has no HTML part")
