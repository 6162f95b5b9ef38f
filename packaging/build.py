"""Build the one-folder app `dist/Cairn/` with PyInstaller (what `make package` runs).

    .venv/bin/python packaging/build.py [--clean]

Needs the `package` extra (`pip install -e '.[package]'`, which pins
PyInstaller). Prints the folder's size and the build time; exits non-zero if
PyInstaller fails or an expected executable is missing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "packaging" / "cairn.spec"
DIST = ROOT / "dist"
WORK = ROOT / "build" / "pyinstaller"
APP = DIST / "Cairn"
PYINSTALLER_SERIES = "6.22."


def folder_size(path: Path) -> int:
    """Bytes on disk under `path`, counting each hard-linked file once (as `du` does)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            st = os.lstat(os.path.join(dirpath, name))
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            total += getattr(st, "st_blocks", 0) * 512 or st.st_size
    return total


def strip_debug_info(app: Path) -> int:
    """Drop debug sections and static symbol tables from the bundled shared libraries (Linux); returns the bytes saved.

    Some wheels ship unstripped libraries (usearch's numkong: 45 MB, 4 MB without
    debug info; tokenizers and cryptography carry 3 MB of symbol tables each). PyInstaller's `strip=True` cannot be used: it also strips the
    libraries auditwheel patched with patchelf, which then fail to load. Here each
    file is stripped to a copy that replaces it only if its loadable segments are
    still aligned as the dynamic loader requires; the frozen smoke test checks the rest.
    """
    if not sys.platform.startswith("linux") or shutil.which("strip") is None:
        return 0
    saved = 0
    for path in sorted(app.rglob("*.so*")):
        if not path.is_file() or path.is_symlink() or path.stat().st_size < 1_000_000:
            continue
        stripped = path.with_name(path.name + ".stripped")
        # --strip-unneeded: debug info and the static symbol table (.symtab), which only debuggers read;
        # the dynamic symbols that loading and linking use stay. 18 MiB beyond --strip-debug here.
        subprocess.run(["strip", "--strip-unneeded", "-o", str(stripped), str(path)], capture_output=True, check=False)
        before = path.stat().st_size
        if stripped.exists() and stripped.stat().st_size < before - 100_000 and loadable_layout(stripped):
            shutil.copymode(path, stripped)
            saved += before - stripped.stat().st_size
            os.replace(stripped, path)
        else:
            stripped.unlink(missing_ok=True)
    return saved


def loadable_layout(path: Path) -> bool:
    """True if every PT_LOAD segment of this ELF file satisfies the loader's alignment rules."""
    with path.open("rb") as fh:
        head = fh.read(64)
        if head[:4] != b"\x7fELF" or head[5] != 1:  # little-endian ELF only
            return False
        is64 = head[4] == 2
        (phoff,) = struct.unpack_from("<Q" if is64 else "<I", head, 32 if is64 else 28)
        phentsize, phnum = struct.unpack_from("<HH", head, 54 if is64 else 42)
        for i in range(phnum):
            fh.seek(phoff + i * phentsize)
            entry = fh.read(phentsize)
            if is64:
                p_type, _flags, offset, vaddr, _paddr, _filesz, _memsz, align = struct.unpack_from("<IIQQQQQQ", entry)
            else:
                p_type, offset, vaddr, _paddr, _filesz, _memsz, _flags, align = struct.unpack_from("<IIIIIIII", entry)
            if p_type != 1:  # PT_LOAD
                continue
            if (vaddr - offset) % 4096 or (align > 1 and (vaddr - offset) % align):
                return False
    return True


def link_cli() -> None:
    """Linux: `cairn` is a relative symbolic link to `Cairn`, which runs the command line by that name (entry_app.py)."""
    link = APP / "cairn"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to("Cairn")


def drop_dangling_links(app: Path) -> int:
    """Remove links whose library the spec dropped (PyInstaller still links e.g. libQt6Network.so.6 beside the others)."""
    dangling = [p for p in app.rglob("*") if p.is_symlink() and not p.exists()]
    for link in dangling:
        link.unlink()
    return len(dangling)


def executables() -> list[Path]:
    suffix = ".exe" if sys.platform == "win32" else ""
    cli = "cairn" if sys.platform.startswith("linux") else "cairn-cli"
    return [APP / f"Cairn{suffix}", APP / f"{cli}{suffix}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clean", action="store_true", help="drop PyInstaller's cache first (slower, for release builds)")
    args = parser.parse_args(argv)
    try:
        import PyInstaller
    except ImportError:
        print("build: PyInstaller is not installed; run: .venv/bin/pip install -e '.[package]'", file=sys.stderr)
        return 2
    if not PyInstaller.__version__.startswith(PYINSTALLER_SERIES):
        print(f"build: PyInstaller {PyInstaller.__version__} found, the spec is tested with {PYINSTALLER_SERIES}*", file=sys.stderr)
        return 2
    if sys.platform.startswith("linux") and shutil.which("strip") is None:
        print("build: warning: `strip` (binutils) is missing; the folder will be ~70 MB larger", file=sys.stderr)
    command = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN"]
    command += ["--distpath", str(DIST), "--workpath", str(WORK), str(SPEC)]
    if args.clean:
        command.append("--clean")
    # ORT_DISABLE_TELEMETRY: PyInstaller imports onnxruntime while analysing it.
    env = dict(os.environ, ORT_DISABLE_TELEMETRY="1", QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    t0 = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, env=env, check=False)
    seconds = time.perf_counter() - t0
    if result.returncode != 0:
        print(f"build: PyInstaller failed (exit {result.returncode}) after {seconds:.0f} s", file=sys.stderr)
        return result.returncode
    if sys.platform.startswith("linux"):
        link_cli()
    missing = [str(p) for p in executables() if not p.exists()]
    if missing:
        print(f"build: expected executables are missing: {', '.join(missing)}", file=sys.stderr)
        return 1
    drop_dangling_links(APP)
    saved_mb = strip_debug_info(APP) / 1024**2
    seconds = time.perf_counter() - t0
    size_mb = folder_size(APP) / 1024**2
    stripped = f", {saved_mb:.0f} MiB of debug info stripped" if saved_mb else ""
    print(f"build: {APP.relative_to(ROOT)} ready in {seconds:.0f} s, {size_mb:.0f} MiB{stripped} "
          f"({', '.join(p.name for p in executables())})")
    if sys.platform == "darwin":
        print(f"build: macOS bundle at {(DIST / 'Cairn.app').relative_to(ROOT)} (unsigned; see packaging/README.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
