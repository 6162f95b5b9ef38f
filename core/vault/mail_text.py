"""E-mail (.eml, .mbox) through the standard library's `email`: one unit per message.

A mailbox is streamed: the file is read in pieces of at most `LINE_PIECE` bytes (so a
2 GB line never sits in memory), split at the mbox `From ` separator lines the way
`mailbox.mbox` splits them, and each message is fed to `email`'s incremental
`BytesFeedParser`; a message is fed at most `MAX_MESSAGE_BYTES` (the rest is usually
attachments), and the text kept for a whole mailbox stops at `MAX_TEXT_CHARS`, with a
note saying so. Memory is therefore bounded by one message, not by the mailbox.

Each message becomes a unit whose heading is "Subject (date)", so a hit is cited
"mail.mbox › Subject (2024-03-01)"; its first lines are From, To, Cc and Date (searchable,
shown in the Preview). Quoted replies (lines starting with `>`, an "On … wrote:" line,
everything after "-----Original Message-----") and the signature (after a `-- ` line) are
folded away: they repeat other messages or say nothing. Attachments of kinds Cairn reads
(PDF, Word, e-book, web page, text) become units of their own under the message's heading.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from email import policy
from email.header import decode_header, make_header
from email.message import Message
from email.parser import BytesFeedParser
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import IO

from core.vault.kinds import HEADING_JOIN, KindText, UnitBuilder, kind_of
from core.vault.pdf import PdfPage, PdfProblem

LINE_PIECE = 1 << 20  # bytes read at a time: a longer line comes in pieces
MAX_MESSAGE_BYTES = 32 * 1024 * 1024  # a message is fed this far (text comes first, attachments after)
MAX_TEXT_CHARS = 40_000_000  # text kept from one mailbox (~20,000 chunks, the per-file cap)
MAX_PART_BYTES = 20 * 1024 * 1024  # an attachment larger than this is not read
ATTACHMENT_KINDS = ("pdf", "docx", "epub", "html", "txt")
_REPLY_HEAD = re.compile(r"^(?:on\b.{4,300}\bwrote:|am\b.{4,300}\bschrieb.{0,40}:|le\b.{4,300}\ba écrit\s*:)$", re.IGNORECASE)
_ORIGINAL = re.compile(r"^-{2,}\s*(?:original message|forwarded message|ursprüngliche nachricht)\s*-{2,}$", re.IGNORECASE)


def extract_mail(path: Path) -> KindText:
    """Read every message of a mailbox (or the one of an .eml). Raises `PdfProblem` when none has text."""
    pages: list[PdfPage] = []
    notes: list[str] = []
    first: Message | None = None
    chars = 0
    with path.open("rb") as fh, tempfile.TemporaryDirectory(prefix="cairn-mail-") as scratch:
        for number, (message, cut) in enumerate(iter_messages(fh, mbox=path.suffix.lower() == ".mbox"), 1):
            if chars > MAX_TEXT_CHARS:
                notes.append(f"only the first {number - 1:,} messages are indexed (the mailbox's text is over {MAX_TEXT_CHARS:,} characters)")
                break
            first = first or message
            if cut:
                notes.append(f"message {number} is over {MAX_MESSAGE_BYTES:,} bytes; only its beginning was read")
            for page in message_units(message, len(pages) + 1, Path(scratch)):
                pages.append(page)
                chars += len(page.text)
    if not pages:
        raise PdfProblem("no_text", "no message with text in this file")
    single = path.suffix.lower() == ".eml" and first is not None
    title = _header(first, "subject") if single else None
    return KindText(title or None, tuple(pages), date=_date(first) if single else None, notes=tuple(notes))


def iter_messages(fh: IO[bytes], *, mbox: bool) -> Iterator[tuple[Message, bool]]:
    """Each message of the stream with whether it was cut at `MAX_MESSAGE_BYTES`."""
    parser = _parser()
    size, cut, began, at_line_start = 0, False, False, True
    while piece := fh.readline(LINE_PIECE):
        if mbox and at_line_start and piece.startswith(b"From "):
            if began:
                yield parser.close(), cut
            parser, size, cut, began = _parser(), 0, False, True
            at_line_start = piece.endswith(b"\n")
            continue
        at_line_start = piece.endswith(b"\n")
        began = began or bool(piece.strip())
        if size + len(piece) <= MAX_MESSAGE_BYTES:
            parser.feed(piece)
            size += len(piece)
        else:
            cut = True
    if began:
        yield parser.close(), cut


def _parser() -> BytesFeedParser:
    # compat32 keeps headers as strings, decoded only when asked: the default policy's header
    # objects parse every header on access and cost ~16 ms a message (60 messages/s).
    return BytesFeedParser(policy=policy.compat32)


def message_units(message: Message, number: int, scratch: Path) -> list[PdfPage]:
    """The message's own unit, then one per readable attachment."""
    subject = _header(message, "subject") or "(no subject)"
    date = _date(message)
    top = f"{subject} ({date})" if date else subject
    out = UnitBuilder(top=top)
    out.block("\n".join(f"{name}: {value}" for name in ("From", "To", "Cc", "Date") if (value := _header(message, name))))
    _body_into(message, out)
    pages = [out.page(number)]
    for part in _attachments(message):
        pages.extend(_attachment_units(part, top, number + len(pages), scratch))
    return pages


def _body_into(message: Message, out: UnitBuilder) -> None:
    part = _body_part(message)
    if part is None:
        return
    text = _part_text(part)
    if part.get_content_subtype() == "html":
        from core.vault.html_blocks import html_into, parse_html

        root = parse_html(text) if text.strip() else None
        if root is not None:
            for quoted in root.xpath('//blockquote | //div[contains(@class, "gmail_quote")] | //div[@id="divRplyFwdMsg"]'):
                quoted.drop_tree()
            html_into(root, out)
        return
    out.block(fold_reply(text))


def fold_reply(text: str) -> str:
    """The message's own words: quoted lines, the reply header and the signature left out."""
    kept: list[str] = []
    for line in text.splitlines():
        bare = line.strip()
        if line.rstrip("\r") == "-- " or _ORIGINAL.match(bare):
            break
        if bare.startswith(">") or _REPLY_HEAD.match(bare):
            continue
        kept.append(line)
    return "\n".join(kept)


def _body_part(message: Message) -> Message | None:
    """The message's text: its first inline text/plain part, else its first text/html one."""
    html = None
    for part in message.walk():
        if part.is_multipart() or part.get_content_disposition() == "attachment":
            continue
        kind = part.get_content_type()
        if kind == "text/plain":
            return part
        if kind == "text/html" and html is None:
            html = part
    return html


def _part_text(part: Message) -> str:
    raw = part.get_payload(decode=True)
    if not isinstance(raw, bytes):
        return str(raw or "")
    try:
        return raw.decode(part.get_content_charset() or "utf-8", "replace")
    except LookupError:  # a charset Python does not know
        return raw.decode("utf-8", "replace")


def _attachments(message: Message) -> Iterator[Message]:
    for part in message.walk():
        if part.is_multipart():
            continue
        name = _decoded(part.get_filename() or "")
        kind = kind_of(name)
        if kind is not None and kind.name in ATTACHMENT_KINDS:
            yield part


def _attachment_units(part: Message, top: str, number: int, scratch: Path) -> list[PdfPage]:
    name = Path(_decoded(str(part.get_filename()))).name or "attachment"
    raw = part.get_payload(decode=True)
    if not isinstance(raw, bytes) or not raw or len(raw) > MAX_PART_BYTES:
        return []
    prefix = f"{top}{HEADING_JOIN}{name}"
    kind = kind_of(name)
    if kind is None or kind.name == "txt":
        out = UnitBuilder(top=prefix)
        out.block(raw.decode("utf-8", "replace"))
        return [] if out.empty else [out.page(number)]
    target = scratch / f"{number}{Path(name).suffix.lower()}"
    target.write_bytes(raw)
    try:
        got = _read_attachment(kind.name, target)
    except Exception:  # noqa: BLE001 - an unreadable attachment leaves the message indexed
        return []
    finally:
        target.unlink(missing_ok=True)
    return [
        PdfPage(number + i, p.text, tuple((at, HEADING_JOIN.join(x for x in (prefix, h) if x)) for at, h in p.sections))
        for i, p in enumerate(got.pages)
    ]


def _read_attachment(kind: str, path: Path) -> KindText:
    """An attachment's text by the reader of its kind (not mail: a mail inside a mail is not read)."""
    from core.vault import docx_text, epub_text, html_text
    from core.vault.pdf import extract_pdf

    if kind == "pdf":
        got = extract_pdf(path)
        return KindText(got.title, got.pages, got.dropped_lines)
    return {"docx": docx_text.extract_docx, "epub": epub_text.extract_epub, "html": html_text.extract_html}[kind](path)


def _header(message: Message | None, name: str) -> str:
    if message is None:
        return ""
    return " ".join(_decoded(str(message.get(name) or "")).split())


def _decoded(value: str) -> str:
    """A header with its RFC 2047 encoded words ("=?utf-8?q?Caf=C3=A9?=") decoded."""
    if "=?" not in value:
        return value
    try:
        return str(make_header(decode_header(value)))
    except (ValueError, LookupError, UnicodeDecodeError, TypeError):
        return value


def _date(message: Message | None) -> str | None:
    raw = _header(message, "date")
    if not raw:
        return None
    try:
        return parsedate_to_datetime(raw).date().isoformat()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
