"""Where a click on a link goes, from a previewed note or from an answer.

Split from the Preview panel because choosing a link's target is a question of links, not of
showing notes: a `[[wikilink]]` or a path to a local note resolves to a note (at the heading or
block it names), `#Heading` to a place in the same note, an attachment to the file in the vault,
a web address to the browser after asking, anything else to a sentence in the status line. The
panel asks `LinkFollower` and is told, through `open_note`, which note to show.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QUrl

from core.base.models import LinkKind
from core.vault.links import is_attachment
from desktop.controller import AppController
from desktop.note_links import parse_note_url
from desktop.note_locator import NoteLocator

WEB_SCHEMES = ("http", "https", "mailto", "ftp")


class LinkFollower:
    """Resolves a clicked link against the vaults and opens what it names.

    Args:
        controller: Its engine's vaults, its `actions` (open a file or address) and `message`.
        locator: The current link resolver; a callable because the engine is replaced when settings change.
        open_note: Shows (vault, rel_path, anchor); False when that note is not indexed.
        confirm_external: Asks before a web address leaves the app.
    """

    def __init__(
        self,
        controller: AppController,
        locator: Callable[[], NoteLocator],
        open_note: Callable[[str, str, str], bool],
        confirm_external: Callable[[str], bool],
    ) -> None:
        self._controller = controller
        self._locator = locator
        self._open_note = open_note
        self._confirm_external = confirm_external

    def follow(self, url: QUrl, vault: str, source: str) -> None:
        """A link in note `source` of `vault`: another note, a web page (after asking) or a file."""
        text = url.toString()
        wiki = parse_note_url(text)
        if wiki is not None:
            target, anchor = wiki
            rel = self._locator().resolve(vault, source, target, anchor) if target else source
            if rel is None:
                self._controller.message.emit(f"No note named “{target}” in {vault} yet")
            else:
                self._open_note(vault, rel, anchor)
            return
        if url.scheme().lower() in WEB_SCHEMES:
            self._open_web(url)
            return
        if url.isLocalFile() or not url.scheme():
            self._follow_local(vault, source, url)
            return
        self._controller.message.emit(f"Cairn does not open {url.scheme()}: links")

    def follow_anywhere(self, url: QUrl) -> bool:
        """A link with no note around it (in an answer): look in every vault. True if a note opened."""
        if url.scheme().lower() in WEB_SCHEMES:
            self._open_web(url)
            return False
        wiki = parse_note_url(url.toString())
        target, anchor = wiki if wiki is not None else (url.path(), url.fragment())
        kind = LinkKind.WIKI if wiki is not None else LinkKind.MARKDOWN
        for vc in self._controller.engine.config.vaults:
            rel = self._locator().resolve(vc.name, "", target, anchor, kind)
            if rel is not None:
                return self._open_note(vc.name, rel, anchor)
        self._controller.message.emit(f"No note named “{target}” in any vault")
        return False

    def _open_web(self, url: QUrl) -> None:
        if self._confirm_external(url.toDisplayString()):
            self._controller.actions.open_url(url)  # a failure is said in the status line

    def _follow_local(self, vault: str, source: str, url: QUrl) -> None:
        anchor = url.fragment()
        if url.isLocalFile():
            vc = self._controller.engine.config.vault_named(vault)
            path = Path(url.toLocalFile())
            try:
                href = path.resolve().relative_to(Path(vc.root).resolve()).as_posix() if vc else ""
            except ValueError:
                href = ""
            if not href:
                self._open_file(path)
                return
            href = "/" + href
        else:
            href = url.path()
            if not href:  # `#Heading`: a place in this note
                self._open_note(vault, source, anchor)
                return
        if is_attachment(href):
            found = self._locator().attachment(vault, source, href.lstrip("/") if href.startswith("/") else href)
            if found is not None:
                self._open_file(found)
            else:
                self._controller.message.emit(f"{href} is not in the vault")
            return
        rel = self._locator().resolve(vault, source, href, anchor, LinkKind.MARKDOWN)
        if rel is None:
            self._controller.message.emit(f"No note at {href} in {vault}")
        else:
            self._open_note(vault, rel, anchor)

    def _open_file(self, path: Path) -> None:
        self._controller.actions.open_url(QUrl.fromLocalFile(str(path)))  # a failure is said in the status line
