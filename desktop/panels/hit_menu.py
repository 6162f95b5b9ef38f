"""The actions offered on a hit, shared by the results list and the preview toolbar."""

from __future__ import annotations

from PySide6.QtWidgets import QMenu, QWidget

from core.base.models import Hit
from desktop.actions import is_obsidian_vault, note_path
from desktop.controller import AppController
from desktop.note_links import line_of


def hit_menu(controller: AppController, hit: Hit, parent: QWidget) -> QMenu:
    """Open in editor / Obsidian, reveal, copy wikilink / path — for the vault the hit comes from."""
    menu = QMenu(parent)
    menu.setAccessibleName("Actions on this note")
    vault = controller.engine.config.vault_named(hit.chunk.vault)
    if vault is None:
        menu.addAction("Vault no longer configured").setEnabled(False)
        return menu
    root, rel = vault.root, hit.chunk.rel_path
    actions = controller.actions
    command = controller.settings.editor_command
    if hit.page is not None:
        page = hit.page
        menu.addAction(f"Open PDF at page {page}", lambda: actions.open_at_page(root, rel, page))
    else:
        line = hit_line(root, rel, hit.start_byte)
        where = f" at line {line}" if command.strip() and line > 1 else ""
        menu.addAction(f"Open in editor{where}", lambda: actions.open_in_editor(root, rel, line, command))
    heading = [p.strip() for p in hit.chunk.heading_path.split(">") if p.strip()]
    obsidian = menu.addAction(
        "Open in Obsidian", lambda: actions.open_in_obsidian(root, rel, heading[-1] if len(heading) > 1 else "")
    )
    obsidian.setEnabled(is_obsidian_vault(root))
    if not obsidian.isEnabled():
        obsidian.setToolTip("This vault has no .obsidian folder")
    menu.addAction("Reveal in file manager", lambda: actions.reveal(root, rel))
    menu.addSeparator()
    menu.addAction("Copy [[wikilink]]", lambda: controller.message.emit(f"Copied {actions.copy_wikilink(hit)}"))
    menu.addAction("Copy path", lambda: controller.message.emit(f"Copied {actions.copy_path(root, rel)}"))
    return menu


def hit_line(root: str, rel_path: str, start_byte: int) -> int:
    """The line the hit starts on, read from the note now (1 when it cannot be read)."""
    try:
        with note_path(root, rel_path).open("rb") as fh:
            return line_of(fh.read(start_byte), start_byte)
    except OSError:
        return 1
