"""Write real files of each kind at test time with the writing side of each library.

python-docx writes Word documents (headings, tables, a comment; a tracked deletion and
insertion are added as the WordprocessingML Word itself writes), EbookLib writes e-books
with nested chapters, the standard library's `mailbox` writes mailboxes with attachments,
and chat exports are the JSON shapes ChatGPT and Claude export.
"""

from __future__ import annotations

import json
import mailbox
import zipfile
from email.message import EmailMessage
from pathlib import Path


def write_docx(path: Path, *, comment: str = "REVIEWER COMMENT zebra", deleted: str = "DELETED WORDS walrus") -> Path:
    import docx
    from docx.oxml import parse_xml

    doc = docx.Document()
    doc.core_properties.title = "Quarterly Report"
    doc.add_heading("Quarterly Report", level=0)
    doc.add_heading("Budget", level=1)
    para = doc.add_paragraph("The heron survey cost 4,200 euros this quarter.")
    doc.add_comment(para.runs, text=comment, author="Reviewer")
    table = doc.add_table(rows=3, cols=3)
    for r, row in enumerate([("Item", "Cost", "Owner"), ("Binoculars", "300", "Ana"), ("Boat hire", "900", "Ben")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    doc.add_heading("Field methods", level=2)
    tracked = doc.add_paragraph("Counts were made at dawn ")
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    tracked._p.append(parse_xml(f'<w:del {w} w:id="91" w:author="A"><w:r><w:delText>{deleted}</w:delText></w:r></w:del>'))
    tracked._p.append(parse_xml(f'<w:ins {w} w:id="92" w:author="A"><w:r><w:t>from the northern hide.</w:t></w:r></w:ins>'))
    doc.add_heading("Staffing", level=1)
    doc.add_paragraph("Two volunteers joined the egret count in March.")
    doc.save(str(path))
    return path


def write_epub(path: Path, chapters: int = 3, *, title: str = "Marsh Birds of Europe") -> Path:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("cairn-test-book")
    book.set_title(title)
    book.set_language("en")
    items = []
    for n in range(1, chapters + 1):
        ch = epub.EpubHtml(title=f"Chapter {n}", file_name=f"ch{n}.xhtml", lang="en")
        ch.content = (
            f"<h1>Chapter {n}</h1><p>Chapter {n} opens on the wetlands of region {n}.</p>"
            f"<h2>Nesting</h2><p>In region {n} the bittern nests in reed bed number {n * 7}.</p>"
            f"<h2>Feeding</h2><p>Region {n} birds feed on {('eels', 'frogs', 'beetles', 'snails')[n % 4]} at dusk.</p>"
        )
        book.add_item(ch)
        items.append(ch)
    book.toc = [(epub.Section("Part One", href="ch1.xhtml"), items[:2]), *items[2:]]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *items]
    epub.write_epub(str(path), book)
    return path


def with_zip_member(path: Path, name: str, data: bytes) -> Path:
    """Add a member to a zip-based file (a DRM marker, a bomb)."""
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, data)
    return path


def message(n: int, *, attachment: tuple[str, bytes] | None = None, body: str | None = None) -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"] = f"Survey {n}: sighting of species {n}"
    msg["From"] = f"Observer {n} <obs{n}@example.org>"
    msg["To"] = "team@example.org"
    msg["Date"] = f"Mon, {1 + n % 28:02d} Jan 2024 08:{n % 60:02d}:00 +0000"
    msg.set_content(
        body
        or f"Observer {n} counted {n * 3} avocets at pond {n}.\n\nOn Sun, someone wrote:\n> QUOTED OLD TEXT lemur\n\n-- \nSIGNATURE LINE okapi\n"
    )
    if attachment:
        msg.add_attachment(attachment[1], maintype="application", subtype="octet-stream", filename=attachment[0])
    return msg


def write_mbox(path: Path, count: int, *, attachments: dict[int, tuple[str, bytes]] | None = None) -> Path:
    box = mailbox.mbox(str(path), create=True)
    box.lock()
    try:
        for n in range(1, count + 1):
            box.add(message(n, attachment=(attachments or {}).get(n)))
        box.flush()
    finally:
        box.unlock()
        box.close()
    return path


def chatgpt_export(count: int) -> list[dict[str, object]]:
    out = []
    for n in range(1, count + 1):
        mapping: dict[str, object] = {"root": {"id": "root", "message": None, "parent": None, "children": ["s"]}}
        turns = [
            ("system", "You are a helpful assistant."),
            ("user", f"How do I repot cactus number {n}?"),
            ("assistant", f"Repot cactus {n} in gritty soil with {n % 5 + 1} parts pumice."),
            ("user", "And watering?"),
            ("assistant", f"Water cactus {n} every {n % 3 + 2} weeks in summer."),
        ]
        parent = "root"
        for i, (role, text) in enumerate(turns):
            node = f"n{i}"
            content = {"content_type": "text", "parts": [text]}
            mapping[node] = {"id": node, "message": {"author": {"role": role}, "content": content}, "parent": parent, "children": []}
            parent = node
        out.append({"title": f"Cactus care {n}", "create_time": 1_700_000_000 + n * 86400, "mapping": mapping, "current_node": parent})
    return out


def claude_export(count: int) -> list[dict[str, object]]:
    return [
        {
            "uuid": f"c{n}",
            "name": f"Sourdough question {n}",
            "created_at": "2024-05-01T10:00:00.000000Z",
            "chat_messages": [
                {"sender": "human", "text": f"Why is loaf {n} so dense?"},
                {"sender": "assistant", "text": "", "content": [{"type": "text", "text": f"Loaf {n} was underproofed by {n % 4 + 1} hours."}]},
            ],
        }
        for n in range(1, count + 1)
    ]


def write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), "utf-8")
    return path
