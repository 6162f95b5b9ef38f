"""Save PNGs of Cairn's main views, offscreen: `python tools/screenshots.py OUT_DIR [--semantic] [--dark]`.

Uses a private CAIRN_HOME (a temporary folder unless --home is given), so it
never reads or writes the user's own vaults, settings or keys. With
--semantic the sample vault is embedded by the built-in model first (~20 s)
so the Why tab shows both lists; without it search is keyword only.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

QUERY = "how long does the dough rest"
ASK_QUESTION = "Who owns the release checklist?"


def _wait(app: object, predicate: Callable[[], bool], timeout_s: float) -> bool:
    from PySide6.QtCore import QCoreApplication, QEventLoop

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def _settle(app: object, ms: int = 150) -> None:
    _wait(app, lambda: False, ms / 1000)


def _problem_vault(root: Path) -> Path:
    """A tiny vault with a note of each kind the health dialog reports: fine, bad YAML, binary."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "Fine note.md").write_text("# Fine note\n\nNothing wrong here.\n", encoding="utf-8")
    (root / "Bad front matter.md").write_text("---\ntitle: [unclosed\n---\n# Bad front matter\n\nBody.\n", encoding="utf-8")
    (root / "Pasted image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    return root


def _dark_palette() -> Any:
    from PySide6.QtGui import QColor, QPalette

    roles = QPalette.ColorRole
    pal = QPalette()
    for role, colour in (
        (roles.Window, "#2d2d2d"), (roles.WindowText, "#e8e8e8"), (roles.Base, "#1e1e1e"), (roles.AlternateBase, "#262626"),
        (roles.Text, "#e8e8e8"), (roles.Button, "#353535"), (roles.ButtonText, "#e8e8e8"), (roles.Highlight, "#2f65ca"),
        (roles.HighlightedText, "#ffffff"), (roles.PlaceholderText, "#9a9a9a"), (roles.ToolTipBase, "#353535"),
        (roles.ToolTipText, "#e8e8e8"), (roles.Mid, "#4a4a4a"), (roles.Link, "#8ab4f8"),
    ):
        pal.setColor(role, QColor(colour))
    for role in (roles.WindowText, roles.Text, roles.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor("#7a7a7a"))
    return pal


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path, help="folder for the PNG files")
    parser.add_argument("--semantic", action="store_true", help="embed the sample vault with the built-in model first")
    parser.add_argument("--home", type=Path, help="CAIRN_HOME to use (default: a new temporary folder)")
    parser.add_argument("--dark", action="store_true", help="a dark palette, as macOS and Windows dark mode give Qt")
    parser.add_argument("--vault", type=Path, help="a vault to show instead of the sample (read only, as always)")
    parser.add_argument("--query", default=QUERY, help="the search to show")
    parser.add_argument("--question", default=ASK_QUESTION, help="the Ask question to show")
    parser.add_argument("--folder", default="Recipes", help="the folder to scope a search to (folder-scope shot)")
    parser.add_argument(
        "--llm-url", help="an OpenAI-compatible server (e.g. llama.cpp) that answers, with folder routing on: adds the Debug tab after the question"
    )
    parser.add_argument("--llm-model", default="smollm2", help="the model name of --llm-url")
    return parser


def _search_and_ask_shots(app: Any, window: Any, controller: Any, args: argparse.Namespace, sample: Path, shot: Callable[[object, str], None]) -> bool:
    """Index the vault, then the results, Why, Debug, Ask and folder-scope shots; False if indexing timed out."""
    finished: list[object] = []
    controller.indexFinished.connect(finished.append)
    phases: list[str] = []
    controller.indexProgress.connect(lambda _v, _d, _t, phase: phases.append(phase))
    window.add_vault(sample)
    if args.semantic and _wait(app, lambda: phases.count("embedding") >= 2, 60):
        shot(window, "01b-indexing")
    if not _wait(app, lambda: bool(finished), 600):
        print("indexing did not finish in time", file=sys.stderr)
        return False
    _wait(app, lambda: bool(controller.snapshot), 10)
    window.search_bar.query.setText(args.query)
    window.search_bar.search_now()
    _wait(app, lambda: controller.response is not None and controller.response.query == args.query, 20)
    window.splitter.setSizes([230, 560, 650])
    window.tabs.setCurrentWidget(window.preview)
    shot(window, "02-results-preview")
    if controller.response is not None and len(controller.response.hits) > 1:
        window.results.view.setCurrentIndex(window.results.model.index(1))
    window.tabs.setCurrentWidget(window.why)
    shot(window, "03-results-why")
    window.tabs.setCurrentWidget(window.debug)
    shot(window, "04-debug")
    window.tabs.setCurrentWidget(window.ask)
    window.ask.ask(args.question)
    # A small local model on a busy machine is slow: routing alone took 72 s once.
    _wait(app, lambda: window.ask.response is not None or window.ask.error is not None, 600 if args.llm_url else 30)
    window.ask.sources.list.setCurrentRow(0)  # the first source's score breakdown
    shot(window, "04b-ask-llm" if args.llm_url else "04b-ask-extractive")
    if window.ask.response is not None and window.ask.response.references:
        window.ask.open_citation(window.ask.response.references[0].number)  # the passage, beside the answer
        shot(window, "04c-ask-passage")
    window.tabs.setCurrentWidget(window.debug)  # the question's details (folder routing) on top
    shot(window, "04d-ask-debug")
    window.tree.select(sample.name, args.folder)
    _wait(app, lambda: controller.response is not None and bool(controller.response.parsed and controller.response.parsed.filters.folders), 10)
    window.tabs.setCurrentWidget(window.why)
    shot(window, "05-folder-scope")
    return True


def _settings_and_health_shots(app: Any, window: Any, controller: Any, home: Path, shot: Callable[[object, str], None]) -> None:
    """Every settings page, a vault's own model, and Index health with a vault of problem files."""
    from desktop.dialogs.health_dialog import IndexHealthDialog
    from desktop.dialogs.keys_page import ApiKeysSettingsPanel
    from desktop.dialogs.service_pages import EmbeddingSettingsPanel, LanguageModelSettingsPanel
    from desktop.dialogs.settings_dialog import SettingsDialog
    from desktop.dialogs.settings_pages import GeneralSettingsPanel, SearchSettingsPanel

    dialog = SettingsDialog(controller, window)
    dialog.show()
    for kind, name in (
        (GeneralSettingsPanel, "06-settings-general"),
        (SearchSettingsPanel, "07-settings-search"),
        (EmbeddingSettingsPanel, "08-settings-embeddings"),
        (LanguageModelSettingsPanel, "08b-settings-language-model"),
        (ApiKeysSettingsPanel, "09-settings-keys"),
    ):
        dialog.show_page(kind)
        shot(dialog, name)
    general = dialog.page(GeneralSettingsPanel)
    own = general.vault_model.findData("multilingual")
    if own >= 0:  # a vault's own model (the dialog is cancelled: nothing is saved)
        dialog.show_page(GeneralSettingsPanel)
        general.vault_model.setCurrentIndex(own)
        shot(dialog, "06b-settings-vault-model")
    dialog.reject()
    finished: list[object] = []
    controller.indexFinished.connect(finished.append)
    controller.add_vault(_problem_vault(home / "problem-vault"))
    _wait(app, lambda: bool(finished), 60)
    _wait(app, lambda: len(controller.snapshot) == 2, 10)
    health = IndexHealthDialog(controller, window)
    health.show()
    shot(health, "10-index-health")
    health.close()


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    home = args.home or Path(tempfile.mkdtemp(prefix="cairn-shots-"))
    os.environ["CAIRN_HOME"] = str(home)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

    from PySide6.QtWidgets import QApplication

    from core.base.paths import AppPaths
    from desktop.app import sample_vault_path
    from desktop.controller import AppController
    from desktop.main_window import MainWindow
    from desktop.settings import Settings, SettingsStore

    app = QApplication.instance() or QApplication(["cairn-screenshots"])
    if args.dark:
        app.setStyle("Fusion")
        app.setPalette(_dark_palette())
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    paths = AppPaths.from_env()
    store = SettingsStore.at(paths.data_dir / "desktop-settings.ini")
    if args.llm_url:  # a private CAIRN_HOME: these settings are the screenshot run's own
        store.save(Settings(llm_provider="openai", llm_model=args.llm_model, llm_base_url=args.llm_url, allow_remote_llm=True, route_folders=True))
    options = {} if args.semantic else {"embedder_factory": None}
    controller = AppController(paths, store, **options)  # type: ignore[arg-type]
    sample = args.vault.resolve() if args.vault else sample_vault_path()
    if sample is None:
        print("the sample vault was not found", file=sys.stderr)
        return 1
    window = MainWindow(controller, sample)
    window.resize(1440, 860)
    window.show()
    saved: list[Path] = []

    def shot(widget: object, name: str) -> None:
        _settle(app)
        path = out / f"{name}.png"
        widget.grab().save(str(path))  # type: ignore[attr-defined]
        saved.append(path)

    try:
        shot(window, "01-welcome")
        if not _search_and_ask_shots(app, window, controller, args, sample, shot):
            return 1
        _settings_and_health_shots(app, window, controller, home, shot)
    finally:
        window.close()
        controller.shutdown()
    for path in saved:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
