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

from PySide6.QtCore import QProcess, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication

from core.base.models import Hit
from desktop.note_links import editor_argv


def note_path(root: str, rel_path: str) -> Path:
    return Path(root) / PurePosixPath(rel_path)


def obsidian_url(root: str, rel_path: str, heading: str = "") -> str:
    """`obsidian://open?vault=NAME&file=PATH`: Obsidian names a vault after its folder, and drops `.md`.

    A heading goes into `file` as `PATH#Heading`, the form Obsidian's own links use.
    """
    vault = Path(root).name
    file = rel_path[:-3] if rel_path.lower().endswith(".md") else rel_path
    if heading:
        file += "#" + heading
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
        on_failure: Told, in a sentence naming what was tried, when any open or reveal failed
            (the controller shows it in the window; before, it went to stderr only).
    """

    def __init__(
        self,
        open_url: Callable[[QUrl], object] | None = None,
        run: Callable[[list[str]], object] | None = None,
        set_clipboard: Callable[[str], object] | None = None,
        start_detached: Callable[[list[str]], bool] | None = None,
        on_failure: Callable[[str], object] | None = None,
        on_editor_failure: Callable[[str, Callable[[str], bool]], object] | None = None,
    ) -> None:
        self._open_url = open_url or QDesktopServices.openUrl
        self._run = run or (lambda argv: subprocess.Popen(argv))  # noqa: S603 - fixed helper programs
        self._set_clipboard = set_clipboard or (lambda text: QGuiApplication.clipboard().setText(text))
        self._start_detached = start_detached or _start_detached
        self.on_failure = on_failure
        # An editor that did not open the note: told with a retry (a new editor command → open again),
        # so the window can offer to choose an editor. Without it, `on_failure` is told.
        self.on_editor_failure = on_editor_failure

    def open_in_editor(self, root: str, rel_path: str, line: int = 1, command: str = "") -> bool:
        """Open the note in the user's editor at `line` (with `command`), else with the system default.

        A failure is said through `on_failure` (the window's status line) with what was tried.
        """
        path = note_path(root, rel_path)
        if not path.exists():
            return self._fail(f"Could not open {path}: it no longer exists (moved or deleted since it was indexed)")
        if not command.strip():
            return self._open(QUrl.fromLocalFile(str(path)), "with the system's default application", editor=(root, rel_path, line))
        try:
            argv = editor_argv(command, path, line)
        except ValueError as exc:
            return self._editor_failed(f"The editor command is not valid ({exc}).", root, rel_path, line)
        if not self._start_detached(argv):
            return self._editor_failed(f"Could not start the editor {argv[0]!r}: is it installed?", root, rel_path, line)
        return True

    def _editor_failed(self, message: str, root: str, rel_path: str, line: int) -> bool:
        if self.on_editor_failure is None:
            return self._fail(f"{message} (Settings › General › Editor command)")
        self.on_editor_failure(message, lambda command: self.open_in_editor(root, rel_path, line, command))
        return False

    def open_at_page(self, root: str, rel_path: str, page: int) -> bool:
        """Open a PDF in the system viewer at `page`: the `#page=N` fragment (RFC 8118) is honoured by
        browsers' PDF viewers and some desktop ones; others open the first page."""
        path = note_path(root, rel_path)
        if not path.exists():
            return self._fail(f"Could not open {path}: it no longer exists (moved or deleted since it was indexed)")
        url = QUrl.fromLocalFile(str(path))
        url.setFragment(f"page={page}")
        return self._open(url, "with the system's PDF viewer")

    def open_in_obsidian(self, root: str, rel_path: str, heading: str = "") -> bool:
        return self._open(QUrl(obsidian_url(root, rel_path, heading)), "in Obsidian (is Obsidian installed?)")

    def open_url(self, url: QUrl) -> bool:
        return self._open(url, "with the system")

    def open_path(self, path: Path) -> bool:
        if not path.exists():
            return self._fail(f"Could not open {path}: it no longer exists (moved or deleted since it was indexed)")
        return self._open(QUrl.fromLocalFile(str(path)), "with the system's default application")

    def reveal(self, root: str, rel_path: str) -> bool:
        """Select the file in Finder or Explorer; elsewhere open its folder (no portable 'select')."""
        path = note_path(root, rel_path)
        if sys.platform == "darwin":
            return self._start(["open", "-R", str(path)])
        if sys.platform == "win32":
            return self._start(["explorer", f"/select,{path}"])
        if not path.parent.is_dir():
            return self._fail(f"Could not show the folder {path.parent}: it no longer exists")
        return self._open(QUrl.fromLocalFile(str(path.parent)), "with the system's file manager")

    def _open(self, url: QUrl, how: str, editor: tuple[str, str, int] | None = None) -> bool:
        """Open with the system; `editor` (root, rel_path, line) when this was "Open in editor"."""
        try:
            ok = self._open_url(url)
        except Exception as exc:  # an opener that raises instead of returning False
            problem = f"Could not open {url.toDisplayString()} {how}: {exc}"
        else:
            if ok is not False:
                return True
            # QDesktopServices says False when no application took it
            problem = f"Could not open {url.toDisplayString()} {how}: the system found no application for it"
        return self._fail(problem) if editor is None else self._editor_failed(problem, *editor)

    def _start(self, argv: list[str]) -> bool:
        try:
            self._run(argv)
        except OSError as exc:
            return self._fail(f"Could not run {' '.join(argv)}: {exc}")
        return True

    def _fail(self, message: str) -> bool:
        if self.on_failure is not None:
            self.on_failure(message)
        return False

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


def _start_detached(argv: list[str]) -> bool:
    ok, _pid = QProcess.startDetached(argv[0], argv[1:])
    return bool(ok)
