"""usearch is loaded after onnxruntime and without the download and progress-bar modules it never needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

PROBE = """
import json, sys
import numpy as np
from core.base.native import load_usearch
index_module = load_usearch()
left_out = [m for m in ("urllib.request", "http.client", "tqdm") if m in sys.modules]
index = index_module.Index(ndim=4, metric="cos")
index.add(np.arange(3), np.eye(3, 4, dtype=np.float32), log=True)  # log=True: usearch's tqdm bar, loaded now
found = index.search(np.eye(3, 4, dtype=np.float32)[1], 1).keys.tolist()
import urllib.request
print(json.dumps({"left_out": left_out, "onnxruntime_first": "onnxruntime" in sys.modules, "found": found,
                  "tqdm_now": "tqdm" in sys.modules, "real_urllib": urllib.request.urlopen.__module__}))
"""


def test_usearch_is_imported_lean_and_still_works() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=REPO, timeout=120, check=True
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["left_out"] == []  # neither imported by loading usearch
    assert report["onnxruntime_first"]  # the load order that does not crash
    assert report["found"] == [1]
    assert report["tqdm_now"]  # the stand-in loads the real progress bar when one is asked for
    assert report["real_urllib"] == "urllib.request"  # later imports get the real module


WITHOUT_MODEL = """
import json, sys
import numpy as np
from core.base.native import load_usearch
index_module = load_usearch(onnxruntime_first=False)
without = "onnxruntime" not in sys.modules
again = load_usearch() is index_module and ("onnxruntime" not in sys.modules) == without  # the first load decided
index = index_module.Index(ndim=4, metric="cos")
index.add(np.arange(3), np.eye(3, 4, dtype=np.float32))
from core.providers.embedding import MiniLMEmbedder  # onnxruntime after usearch: crashed without the C++ runtime first
vector = MiniLMEmbedder().embed_query("sourdough starter")
print(json.dumps({"without": without, "again": again, "dims": len(vector), "found": index.search(np.eye(3, 4, dtype=np.float32)[2], 1).keys.tolist()}))
"""


def test_usearch_can_come_first_and_the_model_still_loads_after_it() -> None:
    done = subprocess.run([sys.executable, "-c", WITHOUT_MODEL], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]  # a crash is -11 (SIGSEGV)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["without"] == sys.platform.startswith("linux")  # elsewhere onnxruntime still comes first
    assert report["again"] and report["dims"] == 384 and report["found"] == [2]
