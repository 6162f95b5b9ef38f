"""Where Cairn keeps its own data. Never inside a vault."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from core.base.atomic import make_private

APP_NAME = "Cairn"


@dataclass(frozen=True, slots=True)
class AppPaths:
    """Every on-disk location Cairn writes to, derived from one data dir.

    `CAIRN_HOME` overrides the platform's user data dir, so tests and the
    frozen smoke test write only below a temporary folder.
    """

    data_dir: Path
    shared_cache: Path | None = None  # lets a sub-engine (BEIR eval) share the embedding cache

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> AppPaths:
        env = os.environ if environ is None else environ
        home = env.get("CAIRN_HOME")
        if home:
            return cls(Path(home).expanduser().resolve())
        import platformdirs  # only where no CAIRN_HOME says it (~3 ms of every `cairn` start)

        return cls(Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)))

    @property
    def config_file(self) -> Path:
        return self.data_dir / "config.json"

    @property
    def indexes_dir(self) -> Path:
        return self.data_dir / "indexes"

    @property
    def cache_dir(self) -> Path:
        return self.shared_cache or self.data_dir / "cache"

    @property
    def log_file(self) -> Path:
        return self.data_dir / "cairn.log"

    def vault_dir(self, vault_name: str) -> Path:
        return self.indexes_dir / _safe_name(vault_name)

    def ensure(self) -> None:
        """The data and index folders. The cache's folders are made by whatever first writes there
        (models, embeddings, query vectors): a keyword-only index never does, and every folder
        made before the build's fork is a wait of its own (0.02-0.3 ms each, as the disk is shared)."""
        self.indexes_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        make_private(self.indexes_dir)  # the indexes hold the full text of every note (made 0o700 above unless it was there)


def _safe_name(name: str) -> str:
    """A folder name for a vault: readable, and safe on every file system."""
    keep = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return keep.strip(".") or "vault"
