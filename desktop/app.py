"""`cairn-desktop`: build the controller and the main window, then run Qt's event loop.

Nothing is created at import time: `main()` makes the one application, store,
controller and window, so tests build their own with private paths.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from core.base.gc_pause import freeze_slow_survivors

SETTINGS_FILE = "desktop-settings.ini"


def resource_path(*parts: str) -> Path | None:
    """A file under resources/: next to a frozen app (PyInstaller's `_MEIPASS`), or in the source tree."""
    candidates = []
    frozen_root = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and frozen_root:
        candidates.append(Path(frozen_root, "resources", *parts))
    candidates.append(Path(__file__).resolve().parent.parent.joinpath("resources", *parts))
    candidates.append(Path(sys.prefix, "share", "cairn", *parts))
    return next((c for c in candidates if c.exists()), None)


def tune_interpreter() -> None:
    """Let the UI thread get the GIL back sooner.

    A worker running Python (parsing a 10k-note manifest, keying 30k chunks) keeps
    the GIL for the 5 ms switch interval each time the UI thread asks for it, and a
    timer tick asks several times: measured 50-100 ms window stalls. At 1 ms they
    stay under the frame budget; the cost to worker throughput is small.
    """
    sys.setswitchinterval(0.001)


def freeze_startup_heap() -> None:
    """Keep the objects that live as long as the app out of every later full GC pass.

    A full (generation 2) collection walks every tracked object and holds the GIL
    throughout; after Qt, onnxruntime and the window are loaded that is ~45 ms, and
    it fires when indexing allocates a vault's records: a visible stall. Objects
    made so far (modules, classes, widgets) are never garbage, so they are moved to
    the permanent generation once; later passes walk only what came after.
    """
    gc.collect()
    gc.freeze()
    freeze_slow_survivors()  # and what loads later (a vault's index, Ask's parts, the agents server) after its first full pass


def sample_vault_path() -> Path | None:
    path = resource_path("sample-vault")
    return path if path is not None and path.is_dir() else None


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="cairn-desktop", description="Search your markdown notes, offline.")
    parser.add_argument(
        "--sample-if-empty",
        action="store_true",
        help="with no vault configured, open the bundled sample vault (indexed in the background)",
    )
    parser.add_argument("--no-semantic", action="store_true", help="keyword search only: do not load an embedding model")
    return parser.parse_args(list(argv) if argv is not None else None)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(argv) if argv is not None else sys.argv[1:]
    args = parse_args(argv)
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")  # before anything imports onnxruntime

    from PySide6.QtWidgets import QApplication, QMessageBox

    from core.base.errors import CairnError
    from core.base.paths import AppPaths
    from desktop.controller import AppController
    from desktop.main_window import MainWindow
    from desktop.settings import SettingsStore

    tune_interpreter()
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([sys.argv[0]])
    app.setApplicationName("Cairn")
    app.setOrganizationName("Cairn")
    app.setApplicationDisplayName("Cairn")
    icon = resource_path("icons", "cairn-256.png")
    if icon is not None:
        from PySide6.QtGui import QIcon

        app.setWindowIcon(QIcon(str(icon)))
    paths = AppPaths.from_env()
    paths.ensure()
    store = SettingsStore.at(paths.data_dir / SETTINGS_FILE)
    options = {"embedder_factory": None} if args.no_semantic else {}
    try:
        controller = AppController(paths, store, **options)
    except CairnError as exc:  # e.g. an unreadable config.json: say which file, do not dump a trace
        QMessageBox.critical(None, "Cairn cannot start", str(exc))
        return int(getattr(exc, "exit_code", 1))
    from desktop.error_log import ErrorLog

    errors = ErrorLog(paths, controller.message.emit)  # tracebacks to cairn.log, one line to the status bar
    sample = sample_vault_path()
    window = MainWindow(controller, sample)
    freeze_startup_heap()
    window.show()
    if args.sample_if_empty and not controller.vaults and sample is not None:
        window.add_vault(sample)
    elif args.sample_if_empty and not controller.vaults:
        print("cairn-desktop: the sample vault is not installed with this copy; showing the welcome view", file=sys.stderr)
    else:
        controller.refresh()
        controller.index()  # an unchanged vault costs one scan; changed notes are picked up
        if window.search_bar.query.text():
            window.search_bar.search_now()
    try:
        return int(app.exec())
    finally:
        controller.shutdown()
        errors.close()


if __name__ == "__main__":
    sys.exit(main())
