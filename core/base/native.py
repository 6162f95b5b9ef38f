"""Load order of the native libraries, which matters.

Measured here (usearch 2.26.6, onnxruntime 1.31.1, Linux): importing usearch
first and onnxruntime second crashes the process with a segmentation fault
inside onnxruntime's module initialisation; the other order is fine. Every
module that needs usearch imports it through `load_usearch()`, which brings
onnxruntime in first (with telemetry off, as it otherwise writes a device id
under ~/.cache/Microsoft on import).

Why (gdb): usearch carries its own copy of the C++ runtime, whose locale ids are
"unique" symbols that the dynamic linker binds process-wide to the first definition
loaded; onnxruntime then initialises its locale facets against usearch's copy and
crashes. With the system's C++ runtime loaded first (`libstdc++.so.6`, globally),
both bind to it, as they do when onnxruntime comes first, and onnxruntime may be
imported at any time after usearch. `cairn search` with a query asked before needs
no model at all, so it loads only that (`onnxruntime_first=False`, Linux only):
importing onnxruntime cost it 20-50 ms.

usearch itself is imported lean (`core.base.lean_import`): its package imports
`urllib.request` for a helper that downloads its SQLite extension, and its index
module imports `tqdm` for progress bars shown only when asked (`log=True`, which
Cairn never passes): ~55 ms of the ~66 ms usearch import on the 2-core VM. The
stand-ins load the real modules if ever called.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from types import ModuleType
from typing import Any

from core.base.lean_import import import_lean


def load_onnxruntime() -> ModuleType:
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnxruntime

    return onnxruntime


def _urlretrieve(*args: Any, **kwargs: Any) -> Any:
    from urllib.request import urlretrieve

    return urlretrieve(*args, **kwargs)


def _tqdm(*args: Any, **kwargs: Any) -> Any:
    from tqdm import tqdm

    return tqdm(*args, **kwargs)


@functools.cache
def _cxx_runtime_first() -> bool:
    """Load the system's C++ runtime globally (see the module docstring); False where that cannot be done."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        ctypes.CDLL("libstdc++.so.6", mode=os.RTLD_GLOBAL)
    except OSError:
        return False
    return True


def load_usearch(*, onnxruntime_first: bool = True) -> ModuleType:
    """usearch's index module, loaded safely; `onnxruntime_first=False` for a process that may never need the model.

    The first load decides the order; once usearch is loaded, later calls just return it.
    """
    loaded = sys.modules.get("usearch.index")
    if loaded is not None:
        return loaded
    if onnxruntime_first or not _cxx_runtime_first():
        load_onnxruntime()
    import_lean({"urllib.request": {"urlretrieve": _urlretrieve}, "tqdm": {"tqdm": _tqdm}}, "usearch.index")
    import usearch.index

    return usearch.index
