"""Load order of the native libraries, which matters.

Measured here (usearch 2.26.6, onnxruntime 1.31.1, Linux): importing usearch
first and onnxruntime second crashes the process with a segmentation fault
inside onnxruntime's module initialisation; the other order is fine. Every
module that needs usearch imports it through `load_usearch()`, which brings
onnxruntime in first (with telemetry off, as it otherwise writes a device id
under ~/.cache/Microsoft on import).

usearch itself is imported lean (`core.base.lean_import`): its package imports
`urllib.request` for a helper that downloads its SQLite extension, and its index
module imports `tqdm` for progress bars shown only when asked (`log=True`, which
Cairn never passes): ~55 ms of the ~66 ms usearch import on the 2-core VM. The
stand-ins load the real modules if ever called.
"""

from __future__ import annotations

import os
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


def load_usearch() -> ModuleType:
    load_onnxruntime()
    import_lean({"urllib.request": {"urlretrieve": _urlretrieve}, "tqdm": {"tqdm": _tqdm}}, "usearch.index")
    import usearch.index

    return usearch.index
