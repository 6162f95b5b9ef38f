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


def make_cid_pdf(pages: Sequence[Sequence[str]]) -> bytes:
    """A PDF whose text is in a composite (Type0, Identity-H) font with a ToUnicode map, as
    Japanese and Chinese PDFs are made; any character works. The font program is not embedded:
    text extraction reads the ToUnicode map, not the glyphs."""
    chars = sorted({ch for lines in pages for line in lines for ch in line})
    code = {ch: i + 1 for i, ch in enumerate(chars)}
    bfchar = "\n".join(f"<{code[ch]:04X}> <{''.join(f'{u:04X}' for u in _utf16(ch))}>" for ch in chars)
    cmap = (
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Adobe-Identity-UCS def /CMapType 2 def\n"
        "1 begincodespacerange <0000> <FFFF> endcodespacerange\n"
        f"{len(chars)} beginbfchar\n{bfchar}\nendbfchar\n"
        "endcmap CMapName currentdict /CMap defineresource pop end end"
    ).encode()
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")
    pages_obj = add(b"")
    tounicode = add(b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"\nendstream")
    descriptor = add(
        b"<< /Type /FontDescriptor /FontName /CairnTestCJK /Flags 4 /FontBBox [0 -120 1000 880] /ItalicAngle 0"
        b" /Ascent 880 /Descent -120 /CapHeight 700 /StemV 80 >>"
    )
    cid_font = add(
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /CairnTestCJK /CIDToGIDMap /Identity /DW 1000"
        b" /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor %d 0 R >>" % descriptor
    )
    font = add(
        b"<< /Type /Font /Subtype /Type0 /BaseFont /CairnTestCJK /Encoding /Identity-H"
        b" /DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>" % (cid_font, tounicode)
    )
    page_ids = []
    for lines in pages:
        ops = [b"BT /F1 11 Tf 14 TL 72 760 Td"]
        for line in lines:
            ops.append(b"<" + "".join(f"{code[ch]:04X}" for ch in line).encode() + b"> Tj T*")
        ops.append(b"ET")
        stream = b"\n".join(ops)
        content = add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        page_ids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>"
                % (pages_obj, font, content)
            )
        )
    objects[pages_obj - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % p for p in page_ids), len(page_ids))
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_obj
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, catalog, xref)
    return bytes(out)


def _utf16(ch: str) -> list[int]:
    data = ch.encode("utf-16-be")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]
