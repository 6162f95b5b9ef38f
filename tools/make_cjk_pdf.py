"""Write tests/fixtures/pdf/cjk-manual.pdf: a Japanese and Chinese PDF as real producers make them.

    pip install --target /tmp/rl reportlab==5.1.0 && PYTHONPATH=/tmp/rl python tools/make_cjk_pdf.py

ReportLab sets the text in Adobe's standard CJK fonts (HeiseiMin-W3, STSong-Light) with the
predefined CMaps UniJIS-UCS2-H and UniGB-UCS2-H and no ToUnicode map and no embedded font:
the reader must turn codes into characters from its own CMap tables, as for the many Japanese
and Chinese PDFs made that way. (tests/pdf_writer.py's composite font covers the other common
way, Identity-H with a ToUnicode map.) Lines wrap inside words, as typesetting CJK does, so the
extraction must join a line end between two CJK characters. ReportLab is needed only to make
the file again; the file (a few KB) is committed, and Cairn does not depend on ReportLab.
"""

from __future__ import annotations

import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "pdf" / "cjk-manual.pdf"

# (font, lines) per page. A line break falls inside 再起動 (p. 1) and inside 压缩 (p. 2).
PAGES = [
    (
        "HeiseiMin-W3",
        [
            "サーバー管理の手引き",
            "",
            "設定ファイルを編集したあとは、変更を反映するためにサーバーを再",
            "起動してください。ログは毎日ローテーションされます。",
            "バックアップは夜間に自動で作成されます。",
        ],
    ),
    (
        "STSong-Light",
        [
            "图片处理指南",
            "",
            "使用这个命令可以把文件夹中的所有图片压",
            "缩成一个归档文件，然后上传到服务器。",
            "默认情况下，原始文件会被保留。",
        ],
    ),
]


def main() -> int:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    for font, _ in PAGES:
        pdfmetrics.registerFont(UnicodeCIDFont(font))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    c = canvas.Canvas(str(OUT), pagesize=A4, invariant=True)  # invariant: no dates, same bytes each run
    c.setTitle("サーバー管理の手引き")
    for font, lines in PAGES:
        y = 780.0
        for line in lines:
            c.setFont(font, 12)
            c.drawString(72, y, line)
            y -= 18
        c.showPage()
    c.save()
    print(f"{OUT} ({OUT.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
