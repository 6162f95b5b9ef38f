"""Runs before any Cairn code in both frozen executables.

onnxruntime writes ~/.cache/Microsoft/DeveloperTools/.onnxruntime/ and queues
telemetry when it is imported unless ORT_DISABLE_TELEMETRY is set first. The
code sets it too (core/base/native.py, core/providers/embedding/minilm_session.py, desktop/app.py);
this makes it true for every frozen entry point, before the first import.
"""

import os

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
