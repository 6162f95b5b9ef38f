"""Write small real PDFs at test time (no binaries in the repository).

Text is set in the standard Helvetica font, one `Tj` per line, so any PDF reader
(PDFium included) extracts it. Optional: an information-dictionary title, an
outline (bookmarks, nested by level), an /Encrypt dictionary whose password check
nothing passes (the reader must ask for a password), and pages without text (a scan).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def _escape(text: str) -> bytes:
    data = text.encode("cp1252", "replace")
    return data.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def make_pdf(
    pages: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    outline: Sequence[tuple[int, str, int]] = (),  # (level from 0, title, page index)
    encrypted: bool = False,
    image_only: bool = False,
) -> bytes:
    """A PDF whose page i shows the lines pages[i] from the top down."""
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in at the end
    pages_obj = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    page_ids: list[int] = []
    for lines in pages:
        if image_only:
            stream = b"q 0.5 g 72 72 400 600 re f Q"  # a grey box: a page with ink but no text
        else:
            ops = [b"BT /F1 11 Tf 14 TL 72 760 Td"]
            for line in lines:
                ops.append(b"(" + _escape(line) + b") Tj T*")
            ops.append(b"ET")
            stream = b"\n".join(ops)
        content = add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        page_ids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>"
                % (pages_obj, font, content)
            )
        )
    kids = b" ".join(b"%d 0 R" % p for p in page_ids)
    objects[pages_obj - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(page_ids))
    outlines_ref = b""
    if outline:
        outlines_ref = b" /Outlines %d 0 R" % _add_outline(add, objects, outline, page_ids)
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R%s >>" % (pages_obj, outlines_ref)
    trailer_extra = b""
    if title is not None:
        trailer_extra += b" /Info %d 0 R" % add(b"<< /Title (" + _escape(title) + b") >>")
    if encrypted:
        # Standard handler, 40-bit RC4. /U matches no password, the empty one included.
        enc = add(b"<< /Filter /Standard /V 1 /R 2 /O <" + b"ab" * 32 + b"> /U <" + b"cd" * 32 + b"> /P -44 >>")
        trailer_extra += b" /Encrypt %d 0 R /ID [<0123456789abcdef0123456789abcdef> <0123456789abcdef0123456789abcdef>]" % enc
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root %d 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, catalog, trailer_extra, xref)
    return bytes(out)


def _add_outline(add, objects: list[bytes], outline: Sequence[tuple[int, str, int]], page_ids: list[int]) -> int:  # type: ignore[no-untyped-def]
    root = add(b"")
    ids = [add(b"") for _ in outline]
    parents: list[int] = []  # outline index of the parent of each item, -1 for top level
    stack: list[tuple[int, int]] = []  # (level, index)
    for i, (level, _, _) in enumerate(outline):
        while stack and stack[-1][0] >= level:
            stack.pop()
        parents.append(stack[-1][1] if stack else -1)
        stack.append((level, i))
    children: dict[int, list[int]] = {}
    for i, p in enumerate(parents):
        children.setdefault(p, []).append(i)
    for i, (_, text, page) in enumerate(outline):
        siblings = children[parents[i]]
        k = siblings.index(i)
        parent_id = root if parents[i] == -1 else ids[parents[i]]
        parts = [b"/Title (" + _escape(text) + b")", b"/Parent %d 0 R" % parent_id, b"/Dest [%d 0 R /XYZ 0 792 0]" % page_ids[page]]
        if k > 0:
            parts.append(b"/Prev %d 0 R" % ids[siblings[k - 1]])
        if k + 1 < len(siblings):
            parts.append(b"/Next %d 0 R" % ids[siblings[k + 1]])
        kids = children.get(i, [])
        if kids:
            parts.append(b"/First %d 0 R /Last %d 0 R /Count %d" % (ids[kids[0]], ids[kids[-1]], len(kids)))
        objects[ids[i] - 1] = b"<< " + b" ".join(parts) + b" >>"
    top = children[-1]
    objects[root - 1] = b"<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count %d >>" % (ids[top[0]], ids[top[-1]], len(top))
    return root


def write_pdf(path: Path, pages: Sequence[Sequence[str]], **kwargs: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(make_pdf(pages, **kwargs))  # type: ignore[arg-type]
    return path
