"""What the user can do with a hit: open it, open it in Obsidian, reveal it, copy a link.

The URL and text builders are pure functions (tested directly); `HitActions`
performs them through injectable openers so tests never launch an editor.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication

from core.base.models import Hit


def note_path(root: str, rel_path: str) -> Path:
    return Path(root) / PurePosixPath(rel_path)


def obsidian_url(root: str, rel_path: str) -> str:
    """`obsidian://open?vault=NAME&file=PATH`: Obsidian names a vault after its folder, and drops `.md`."""
    vault = Path(root).name
    file = rel_path[:-3] if rel_path.lower().endswith(".md") else rel_path
    return f"obsidian://open?vault={quote(vault, safe='')}&file={quote(file, safe='')}"


def is_obsidian_vault(root: str) -> bool:
    return (Path(root) / ".obsidian").is_dir()


def wikilink(hit: Hit) -> str:
    """`[[Note#Heading]]` for a chunk under a heading, `[[Note]]` for the top of a note,
    `[[file.pdf#page=12]]` for a PDF (Obsidian opens its PDF viewer at that page)."""
    if hit.page is not None:
        return f"[[{PurePosixPath(hit.chunk.rel_path).name}#page={hit.page}]]"
    stem = PurePosixPath(hit.chunk.rel_path).stem
    parts = [p.strip() for p in hit.chunk.heading_path.split(">") if p.strip()]
    if len(parts) > 1:
        return f"[[{stem}#{parts[-1]}]]"
    return f"[[{stem}]]"


class HitActions:
    """Performs hit actions through the desktop; every side effect can be replaced in tests.

    Args:
        open_url: Opens a URL with the system (default `QDesktopServices.openUrl`).
        run: Starts a detached helper program (used to reveal a file on macOS and Windows).
        set_clipboard: Puts text on the clipboard.
    """

    def __init__(
        self,
        open_url: Callable[[QUrl], object] | None = None,
        run: Callable[[list[str]], object] | None = None,
        set_clipboard: Callable[[str], object] | None = None,
    ) -> None:
        self._open_url = open_url or QDesktopServices.openUrl
        self._run = run or (lambda argv: subprocess.Popen(argv))  # noqa: S603 - fixed helper programs
        self._set_clipboard = set_clipboard or (lambda text: QGuiApplication.clipboard().setText(text))

    def open_in_editor(self, root: str, rel_path: str) -> None:
        self._open_url(QUrl.fromLocalFile(str(note_path(root, rel_path))))

    def open_at_page(self, root: str, rel_path: str, page: int) -> None:
        """Open a PDF in the system viewer at `page`: the `#page=N` fragment (RFC 8118) is honoured by
        browsers' PDF viewers and some desktop ones; others open the first page."""
        url = QUrl.fromLocalFile(str(note_path(root, rel_path)))
        url.setFragment(f"page={page}")
        self._open_url(url)

    def open_in_obsidian(self, root: str, rel_path: str) -> None:
        self._open_url(QUrl(obsidian_url(root, rel_path)))

    def open_path(self, path: Path) -> None:
        self._open_url(QUrl.fromLocalFile(str(path)))

    def reveal(self, root: str, rel_path: str) -> None:
        """Select the file in Finder or Explorer; elsewhere open its folder (no portable 'select')."""
        path = note_path(root, rel_path)
        if sys.platform == "darwin":
            self._run(["open", "-R", str(path)])
        elif sys.platform == "win32":
            self._run(["explorer", f"/select,{path}"])
        else:
            self._open_url(QUrl.fromLocalFile(str(path.parent)))

    def copy_wikilink(self, hit: Hit) -> str:
        text = wikilink(hit)
        self._set_clipboard(text)
        return text

    def copy_path(self, root: str, rel_path: str) -> str:
        text = str(note_path(root, rel_path))
        self._set_clipboard(text)
        return text

    def copy_text(self, text: str) -> str:
        """Any text, e.g. an answer with its sources as markdown."""
        self._set_clipboard(text)
        return text
