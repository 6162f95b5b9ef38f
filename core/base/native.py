"""Load order of the native libraries, which matters.

Measured here (usearch 2.26.6, onnxruntime 1.31.1, Linux): importing usearch
first and onnxruntime second crashes the process with a segmentation fault
inside onnxruntime's module initialisation; the other order is fine. Every
module that needs usearch imports it through `load_usearch()`, which brings
onnxruntime in first (with telemetry off, as it otherwise writes a device id
under ~/.cache/Microsoft on import).
"""

from __future__ import annotations

import os
from types import ModuleType


def load_onnxruntime() -> ModuleType:
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnxruntime

    return onnxruntime


def load_usearch() -> ModuleType:
    load_onnxruntime()
    import usearch.index

    return usearch.index
