"""The engine's own configuration: which vaults exist and how they are indexed.

Stored as JSON in the data dir (never in a vault), versioned so later
releases can migrate it with small numbered functions.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from core.base.atomic import read_json, write_json_atomic
from core.base.errors import ConfigError
from core.base.models import Vault
from core.base.paths import AppPaths

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class VaultConfig:
    name: str
    root: str
    ignore: tuple[str, ...] = ()
    embedder: str = "builtin"  # provider id from the embedding registry
    embed_model: str | None = None
    embed_base_url: str | None = None

    def vault(self) -> Vault:
        return Vault(self.name, self.root)


@dataclass(frozen=True, slots=True)
class EngineConfig:
    schema_version: int = SCHEMA_VERSION
    vaults: tuple[VaultConfig, ...] = ()
    soft_chars: int = 1000
    hard_chars: int = 2000
    max_file_bytes: int = 10 * 1024 * 1024
    per_note_cap: int = 1  # one row per note; its further passages come folded in Hit.more
    rrf_k: int = 60
    top_n: int = 100
    profile: str = "default"
    extra: dict[str, Any] = field(default_factory=dict)

    def vault_named(self, name: str) -> VaultConfig | None:
        for v in self.vaults:
            if v.name == name:
                return v
        return None


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


def load_config(paths: AppPaths) -> EngineConfig:
    if not paths.config_file.exists():
        return EngineConfig()
    try:
        data = read_json(paths.config_file)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"Cannot read {paths.config_file}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{paths.config_file} is not a JSON object")
    version = int(data.get("schema_version", 1))
    while version < SCHEMA_VERSION:
        data = MIGRATIONS[version](data)
        version += 1
    try:
        vaults = tuple(
            VaultConfig(**{**v, "ignore": tuple(v.get("ignore", ()))}) for v in data.get("vaults", [])
        )
        known = {k for k in EngineConfig.__dataclass_fields__ if k not in ("vaults", "schema_version")}
        rest = {k: v for k, v in data.items() if k in known}
    except TypeError as exc:
        raise ConfigError(f"{paths.config_file}: {exc}") from exc
    return EngineConfig(schema_version=SCHEMA_VERSION, vaults=vaults, **rest)


def save_config(paths: AppPaths, config: EngineConfig) -> None:
    data = asdict(config)
    data["vaults"] = [{**asdict(v), "ignore": list(v.ignore)} for v in config.vaults]
    write_json_atomic(paths.config_file, data)


def add_vault(config: EngineConfig, root: Path, name: str | None = None) -> tuple[EngineConfig, VaultConfig]:
    """Register `root` (if new) under a unique name derived from its folder."""
    resolved = str(Path(os.path.abspath(root)))
    for v in config.vaults:
        if os.path.normcase(v.root) == os.path.normcase(resolved):
            return config, v
    base = name or Path(resolved).name or "vault"
    taken = {v.name for v in config.vaults}
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    vc = VaultConfig(candidate, resolved)
    return replace(config, vaults=config.vaults + (vc,)), vc


def placement_problem(config: EngineConfig, root: Path, data_dir: Path) -> str | None:
    """Why `root` cannot become a vault, or None.

    A folder inside another vault (or holding one) would index its notes twice and
    show every hit twice; a folder holding Cairn's own data folder would have Cairn
    writing inside a vault, which it never does.
    """
    here = _comparable(root)
    for v in config.vaults:
        there = _comparable(Path(v.root))
        if here == there:
            continue  # the same folder again: add_vault returns the existing vault
        if _within(here, there):
            return (
                f"{root} is inside the vault “{v.name}” ({v.root}), whose notes are searched already — "
                "select the folder in the tree to search only it"
            )
        if _within(there, here):
            return f"{root} contains the vault “{v.name}” ({v.root}) — remove that vault first to index the whole folder"
    data = _comparable(data_dir)
    if data == here or _within(data, here) or _within(here, data):
        return f"{root} holds Cairn's own index folder ({data_dir}) — choose a folder of notes"
    return None


def _comparable(path: Path) -> Path:
    """Absolute, symlinks resolved, case-folded where the file system ignores case (Windows)."""
    return Path(os.path.normcase(str(Path(path).resolve())))


def _within(inner: Path, outer: Path) -> bool:
    return inner != outer and inner.is_relative_to(outer)


def remove_vault(config: EngineConfig, name: str) -> EngineConfig:
    return replace(config, vaults=tuple(v for v in config.vaults if v.name != name))
