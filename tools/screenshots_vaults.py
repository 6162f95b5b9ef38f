"""Screenshots of every view on real Obsidian vaults, at 1280×800 and 1024×640, light and dark.

One command (it starts Xvfb itself when there is no display)::

    python tools/screenshots_vaults.py            # → docs/screenshots/*.png

The vaults (obsidian-tasks-docs and simonw-til from the shared data folder) are
indexed, keyword and embeddings, into a private CAIRN_HOME (a temporary folder,
or --home to reuse one between runs: a first run embeds ~4,700 chunks, 10–30 min
on a busy 2-core machine). They are only read. For each size and theme the real
main window searches, selects a result and shows Preview, Why and Debug, asks a
question, then Settings and Index health are shown; each view is saved as a
small 256-colour PNG (ImageMagick's `convert`, when installed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SIZES = ((1280, 800), (1024, 640))
THEMES = ("light", "dark")


@dataclass(frozen=True)
class Scene:
    """What is shown of one vault: a search (optionally scoped to a folder) and a question."""

    vault: str
    query: str
    question: str
    folder: str = ""


SCENES = (
    Scene("obsidian-tasks-docs", "template", "How do I make a task recur every week?", folder="Scripting"),
    Scene("simonw-til", "sqlite json", "How do I query JSON in SQLite?"),
)


def vaults_dir() -> Path:
    """The shared data folder's vaults (beside the checkout, or the usual place on this machine)."""
    for base in (ROOT.parent / "shared", ROOT.parent.parent / "shared", Path("/work/shared")):
        if (base / "data" / "vaults").is_dir():
            return base / "data" / "vaults"
    raise SystemExit("no shared/data/vaults folder found; pass --vaults DIR")


def _wait(predicate: Callable[[], bool], timeout_s: float) -> bool:
    from PySide6.QtCore import QCoreApplication, QEventLoop

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def _settle(ms: int = 300) -> None:
    _wait(lambda: False, ms / 1000)


def _shrink(path: Path) -> None:
    """256 colours, no metadata: a window shot drops from ~150 kB to ~40 kB and still reads well."""
    if shutil.which("convert"):
        subprocess.run(["convert", str(path), "-strip", "-colors", "256", f"PNG8:{path}"], check=False)  # noqa: S603, S607


def _palette(theme: str) -> Any:
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QApplication

    style = QApplication.style()
    if theme == "light":
        return style.standardPalette()
    roles = QPalette.ColorRole
    pal = QPalette()
    for role, colour in (
        (roles.Window, "#2d2d2d"), (roles.WindowText, "#e8e8e8"), (roles.Base, "#1e1e1e"), (roles.AlternateBase, "#262626"),
        (roles.Text, "#e8e8e8"), (roles.Button, "#353535"), (roles.ButtonText, "#e8e8e8"), (roles.Highlight, "#2f65ca"),
        (roles.HighlightedText, "#ffffff"), (roles.PlaceholderText, "#9a9a9a"), (roles.ToolTipBase, "#353535"),
        (roles.ToolTipText, "#e8e8e8"), (roles.Mid, "#4a4a4a"), (roles.Link, "#8ab4f8"), (roles.Light, "#4a4a4a"),
        (roles.Dark, "#1a1a1a"), (roles.Midlight, "#3a3a3a"), (roles.Shadow, "#101010"), (roles.BrightText, "#ffffff"),
    ):
        pal.setColor(role, QColor(colour))
    for role in (roles.WindowText, roles.Text, roles.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor("#7a7a7a"))
    return pal


class Shooter:
    """Drives one controller's windows through the views and saves each as a PNG."""

    def __init__(self, controller: Any, out: Path) -> None:
        self.controller = controller
        self.out = out
        self.saved: list[Path] = []

    def shot(self, widget: Any, name: str) -> None:
        _settle()
        path = self.out / f"{name}.png"
        widget.grab().save(str(path))
        _shrink(path)
        self.saved.append(path)

    def views(self, size: tuple[int, int], theme: str) -> None:
        from PySide6.QtWidgets import QApplication

        from desktop.dialogs.health_dialog import IndexHealthDialog
        from desktop.dialogs.settings_dialog import SettingsDialog
        from desktop.dialogs.settings_pages import GeneralSettingsPanel, SearchSettingsPanel
        from desktop.main_window import MainWindow

        app = QApplication.instance()
        app.setPalette(_palette(theme))  # type: ignore[union-attr]
        window = MainWindow(self.controller, None)
        window.resize(*size)
        window.show()
        fresh: list[object] = []
        self.controller.snapshotChanged.connect(fresh.append)
        self.controller.refresh()  # the tree, the status bar and the scope come from a snapshot
        _wait(lambda: bool(fresh) and window.isVisible(), 60)
        self.controller.snapshotChanged.disconnect(fresh.append)
        tag = f"{size[0]}x{size[1]}-{theme}"
        try:
            for scene in SCENES:
                self.scene(window, scene, tag)
            dialog = SettingsDialog(self.controller, window)
            dialog.show()
            for page, name in ((GeneralSettingsPanel, "settings-general"), (SearchSettingsPanel, "settings-search")):
                dialog.show_page(page)
                self.shot(dialog, f"{tag}-{name}")
            dialog.reject()
            health = IndexHealthDialog(self.controller, window)
            health.resize(min(1000, size[0] - 80), min(600, size[1] - 80))
            health.show()
            self.shot(health, f"{tag}-index-health")
            health.close()
        finally:
            window.close()
            window.deleteLater()
            _settle(100)

    def scene(self, window: Any, scene: Scene, tag: str) -> None:
        c = self.controller
        window.tree.select(scene.vault, scene.folder)
        window.search_bar.query.setText(scene.query)
        window.search_bar.search_now()
        _wait(lambda: c.response is not None and c.response.query == scene.query and c.response.parsed is not None
              and scene.vault in (c.response.parsed.filters.vaults or (scene.vault,)), 30)  # fmt: skip
        if c.response is not None and len(c.response.hits) > 1:
            window.results.view.setCurrentIndex(window.results.model.index(0))
        name = f"{tag}-{scene.vault}"
        window.tabs.setCurrentWidget(window.preview)
        self.shot(window, f"{name}-search")
        window.tabs.setCurrentWidget(window.why)
        self.shot(window, f"{name}-why")
        window.tabs.setCurrentWidget(window.debug)
        self.shot(window, f"{name}-debug")
        window.tree.select(scene.vault)  # the question is asked of the whole vault
        window.tabs.setCurrentWidget(window.ask)
        window.ask.new_conversation()
        window.ask.ask(scene.question)
        _wait(lambda: window.ask.response is not None or window.ask.error is not None, 120)
        self.shot(window, f"{name}-ask")


def index_vaults(controller: Any, roots: list[Path]) -> None:
    """Add the vaults not yet registered and wait until every index job (embeddings too) has finished."""
    known = {Path(v.root).resolve() for v in controller.vaults}
    for root in roots:
        if root.resolve() not in known:
            controller.add_vault(root)
    _wait(lambda: not controller.is_indexing(), 4 * 3600)
    controller.refresh()
    _wait(lambda: len(controller.snapshot) >= len(roots), 60)


def _under_xvfb(argv: list[str]) -> int | None:
    """Run this script again under xvfb-run when there is no display; None when one is there."""
    if os.environ.get("DISPLAY") or os.environ.get("QT_QPA_PLATFORM") or os.environ.get("CAIRN_SHOTS_XVFB"):
        return None
    if not shutil.which("xvfb-run"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # no Xvfb: Qt's offscreen platform draws the same widgets
        return None
    env = dict(os.environ, CAIRN_SHOTS_XVFB="1")
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 1440x900x24", sys.executable, str(Path(__file__).resolve()), *argv]
    return subprocess.run(cmd, env=env, check=False).returncode  # noqa: S603


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots", help="folder for the PNGs")
    parser.add_argument("--home", type=Path, help="CAIRN_HOME to index into and reuse (default: a new temporary folder)")
    parser.add_argument("--vaults", type=Path, help="folder holding obsidian-tasks-docs and simonw-til")
    args = parser.parse_args(argv)
    code = _under_xvfb(argv)
    if code is not None:
        return code
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    home = args.home or Path(tempfile.mkdtemp(prefix="cairn-shots-"))
    os.environ["CAIRN_HOME"] = str(home)
    sys.path.insert(0, str(ROOT))

    from PySide6.QtWidgets import QApplication

    from core.base.paths import AppPaths
    from desktop.controller import AppController
    from desktop.settings import SettingsStore

    app = QApplication.instance() or QApplication(["cairn-screenshots"])
    QApplication.setStyle("Fusion")  # the same look on every machine the shots are re-made on
    roots = [(args.vaults or vaults_dir()) / s.vault for s in SCENES]
    args.out.mkdir(parents=True, exist_ok=True)
    paths = AppPaths.from_env()
    controller = AppController(paths, SettingsStore.at(paths.data_dir / "screenshots-settings.ini"))
    shooter = Shooter(controller, args.out)
    try:
        index_vaults(controller, roots)
        for size in SIZES:
            for theme in THEMES:
                shooter.views(size, theme)
    finally:
        controller.shutdown()
        app.processEvents()  # the app object lives to here: Qt needs it while any window exists
    total = sum(p.stat().st_size for p in shooter.saved)
    for path in shooter.saved:
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    print(f"{len(shooter.saved)} PNGs, {total / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
