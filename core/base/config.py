"""The engine's own configuration: which vaults exist and how they are indexed.

Stored as JSON in the data dir (never in a vault), versioned so later
releases can migrate it with small numbered functions.

Several processes write it (the app, a second app window, `cairn index`,
`cairn watch`, the MCP server), so every change is a read-modify-write of what
is on disk, under a cross-process file lock, written atomically: no writer
ever saves a stale copy it held in memory over another writer's vault. A file
that cannot be read is renamed aside with a timestamp and reported, never
silently overwritten.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.base.atomic import read_json, write_json_atomic
from core.base.errors import ConfigError
from core.base.logs import logger
from core.base.models import Fusion, Vault
from core.base.paths import AppPaths

if TYPE_CHECKING:
    from filelock import FileLock  # imported by the writers only: reading the config (every search) never locks

    from core.base.search_models import SearchSettings

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class VaultConfig:
    """One vault as config.json records it: its name, its folder, its ignore rules and its embedder."""

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
    """The whole of config.json: the vaults and the settings every part of the engine reads."""

    schema_version: int = SCHEMA_VERSION
    vaults: tuple[VaultConfig, ...] = ()
    soft_chars: int = 1000
    hard_chars: int = 2000
    max_file_bytes: int = 10 * 1024 * 1024
    max_attachment_bytes: int = 200 * 1024 * 1024  # PDFs: read page by page, so far larger than a note may be
    attachment_seconds: float = 120.0  # time limit to take one PDF's text out (a hung parser is stopped)
    kinds_off: tuple[str, ...] = ("image",)  # kinds not indexed (`core.vault.kinds` names); images (OCR) are opt-in
    ask_chats: bool = True  # AI chat exports may be quoted in Ask answers (they are not the user's own notes)
    per_note_cap: int = 1  # one row per note; its further passages come folded in Hit.more
    rrf_k: int = 60
    top_n: int = 100
    profile: str = "default"
    title_boost: float = 0.005  # boost for a note the query names (title/alias), RRF units (core.search.title_boost); 0 = off
    fusion: str = "blend"  # hybrid fusion: "blend" (normalised scores) or "rrf" (reciprocal rank, uses rrf_k)
    keyword_share: float | None = None  # blend: keyword list's share of the score, 0–1; None = the profile's
    extra: dict[str, Any] = field(default_factory=dict)

    def search_settings(self) -> SearchSettings:
        """The user's ranking settings, as every search applies them (see `Engine.search`)."""
        from core.base.search_models import SearchSettings  # a search's: not made by `cairn index`

        return SearchSettings(
            self.profile, self.per_note_cap, self.top_n, self.rrf_k, self.title_boost, Fusion.parse(self.fusion), self.keyword_share
        )

    def vault_named(self, name: str) -> VaultConfig | None:
        for v in self.vaults:
            if v.name == name:
                return v
        return None


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


#: How long a writer waits for another process's config change before giving up.
LOCK_TIMEOUT_S = 30.0


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """The configuration read from disk, and why it is not what was there (None when it is)."""

    config: EngineConfig
    problem: str | None = None


def config_lock(paths: AppPaths) -> FileLock:
    """The cross-process lock every config writer holds around its read-modify-write."""
    from filelock import FileLock

    paths.data_dir.mkdir(parents=True, exist_ok=True)
    return FileLock(str(paths.config_file.with_name(paths.config_file.name + ".lock")), timeout=LOCK_TIMEOUT_S)


def load_config(paths: AppPaths) -> EngineConfig:
    """The configuration on disk; a damaged file is set aside (see `read_config`) and logged."""
    loaded = read_config(paths)
    if loaded.problem is not None:
        logger(__name__).warning("%s", loaded.problem)
    return loaded.config


def read_config(paths: AppPaths) -> LoadedConfig:
    """Read the configuration; a file that cannot be parsed is renamed aside, never overwritten.

    Writers replace the file atomically, so a parse failure is real damage, not a
    half-written file. The damaged copy keeps its content under a timestamped name
    and the problem says where, so the user can recover vaults from it by hand.
    """
    try:
        return LoadedConfig(_parse(paths))
    except _Damaged as first:
        from filelock import Timeout

        try:
            with config_lock(paths):
                try:
                    return LoadedConfig(_parse(paths))  # another writer fixed it meanwhile
                except _Damaged:
                    pass
                aside = _set_aside(paths)
        except Timeout as exc:
            raise ConfigError(f"{paths.config_file} is damaged ({first}) and locked by another process") from exc
        return LoadedConfig(EngineConfig(), f"{paths.config_file} could not be read ({first}); it was kept as {aside.name} and Cairn started with no vaults")


def modify_config(paths: AppPaths, change: Callable[[EngineConfig], EngineConfig]) -> EngineConfig:
    """Apply `change` to the configuration on disk under the cross-process lock; returns the result.

    Raises:
        ConfigError: Another process held the lock for `LOCK_TIMEOUT_S`.
    """
    from filelock import Timeout

    try:
        with config_lock(paths):
            current = read_config(paths)
            if current.problem is not None:
                logger(__name__).warning("%s", current.problem)
            new = change(current.config)
            if new != current.config or not paths.config_file.exists():
                save_config(paths, new)
            return new
    except Timeout as exc:
        raise ConfigError(f"{paths.config_file} is locked by another Cairn process; try again") from exc


def merge_settings(disk: EngineConfig, before: EngineConfig, wanted: EngineConfig) -> EngineConfig:
    """`wanted`'s settings over what is on disk, without dropping a vault another process registered.

    `before` is the copy `wanted` was edited from, so the user's own changes can be told
    apart from other writers': a vault in `before` but not in `wanted` was removed by the
    user; one in `wanted` only was added by the user; one on disk only was registered by
    another process meanwhile and stays; a vault in both takes `wanted`'s version.
    """
    removed = {v.name for v in before.vaults} - {v.name for v in wanted.vaults}
    mine = {v.name: v for v in wanted.vaults}
    on_disk = {v.name for v in disk.vaults}
    kept = tuple(mine.get(v.name, v) for v in disk.vaults if v.name not in removed)
    new = tuple(v for v in wanted.vaults if v.name not in on_disk and v.name not in {b.name for b in before.vaults})
    return replace(wanted, vaults=kept + new)


class _Damaged(ConfigError):
    """The file is there and readable but is not a configuration Cairn can use."""


def _set_aside(paths: AppPaths) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime())
    aside = paths.config_file.with_name(f"{paths.config_file.stem}.damaged-{stamp}{paths.config_file.suffix}")
    n = 2
    while aside.exists():
        aside = aside.with_name(f"{paths.config_file.stem}.damaged-{stamp}-{n}{paths.config_file.suffix}")
        n += 1
    os.replace(paths.config_file, aside)
    return aside


def _parse(paths: AppPaths) -> EngineConfig:
    if not paths.config_file.exists():
        return EngineConfig()
    try:
        data = read_json(paths.config_file)
    except FileNotFoundError:
        return EngineConfig()
    except OSError as exc:  # unreadable, not damaged: nothing is set aside
        raise ConfigError(f"Cannot read {paths.config_file}: {exc}") from exc
    except ValueError as exc:
        raise _Damaged(f"not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise _Damaged("not a JSON object")
    try:
        version = int(data.get("schema_version", 1))
        while version < SCHEMA_VERSION:
            data = MIGRATIONS[version](data)
            version += 1
        vaults = tuple(
            VaultConfig(**{**v, "ignore": tuple(v.get("ignore", ()))}) for v in data.get("vaults", [])
        )
        known = {k for k in EngineConfig.__dataclass_fields__ if k not in ("vaults", "schema_version")}
        rest = {k: v for k, v in data.items() if k in known}
        if "kinds_off" in rest:  # a JSON list
            rest["kinds_off"] = tuple(str(k) for k in rest["kinds_off"])
    except (TypeError, AttributeError, ValueError, KeyError) as exc:
        raise _Damaged(str(exc)) from exc
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
