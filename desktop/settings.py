"""The desktop app's own preferences: one versioned dataclass, loaded and saved here only.

What the engine needs to index and search (vaults, ignore patterns, chunk sizes,
RRF k, per-note cap, profile) lives in the engine's `config.json`, so the CLI
sees it too; this module keeps what only the app cares about: the default mode,
which embedding service the user chose and whether note text may be sent to it,
the language-model choice, the last query and the window layout.

API keys are never stored here: they go through `core.providers.secrets.KeyStore`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings

from core.base.models import SearchMode

SCHEMA_VERSION = 2
GROUP = "settings"
WINDOW_GROUP = "window"
MODES = tuple(SearchMode)


@dataclass(frozen=True, slots=True)
class Settings:
    """Every persisted preference of the app, with safe defaults.

    Attributes:
        schema_version: Bumped when a field is renamed or changes meaning;
            `MIGRATIONS` upgrade older stores step by step.
        default_mode: Search mode selected at start.
        results_k: How many hits one search shows.
        debounce_ms: Quiet time after a keystroke before searching.
        live_debounce_ms: Quiet time after a note changes on disk before it is
            re-indexed (editors save in bursts).
        embedder: Embedding provider id from `core.providers.embedding.default_registry()`.
        embed_model: Model name; empty means the provider's default.
        embed_base_url: Server address; empty means the provider's default.
        allow_remote_embedding: The user's consent to send note text to a
            service that is not the built-in model. Off by default: without it
            the app refuses to build a remote embedder.
        llm_provider: Language-model provider id ("none" until the Ask pane lands).
        llm_model: Model name for the language model.
        llm_base_url: Server address for the language model.
        llm_temperature: Sampling temperature for answers.
        llm_context_chars: How much note text one question may send.
        allow_remote_llm: Consent to send note text to the language model service.
        llm_rerank: Re-rank the top 10 search results with the language model (off by default).
        route_folders: Let the language model pick the folders a question is
            searched in first (folder routing). Off by default: measured on the
            golden questions it did not help with a small local model.
        last_query: Restored into the query box at start.
        editor_command: How "Open in editor" starts the user's editor, with
            `{path}` and `{line}` filled in (no shell); empty means the system's
            default app for the file, which cannot go to a line.
        agents_server: Serve MCP over HTTP on 127.0.0.1 to the agents set up on the
            Agents page (off by default: nothing listens until the user asks).
        agents_port: The port it listens on (`core.agents.runner.DEFAULT_PORT`).
    """

    schema_version: int = SCHEMA_VERSION
    default_mode: str = "hybrid"
    results_k: int = 20
    debounce_ms: int = 150
    live_debounce_ms: int = 1000
    embedder: str = "builtin"
    embed_model: str = ""
    embed_base_url: str = ""
    allow_remote_embedding: bool = False
    llm_provider: str = "none"
    llm_model: str = ""
    llm_base_url: str = ""
    llm_temperature: float = 0.2
    llm_context_chars: int = 12000
    allow_remote_llm: bool = False
    llm_rerank: bool = False  # re-rank the top 10 results with the language model (opt-in)
    route_folders: bool = False
    last_query: str = ""
    editor_command: str = ""
    dotted_hierarchy: bool = True  # the tree shows `a.b.c.md` names as a hierarchy where most names are dotted
    agents_server: bool = False
    agents_port: int = 8765


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 called the default search mode `mode`; version 2 says `default_mode`."""
    out = dict(data)
    if "mode" in out:
        out.setdefault("default_mode", out.pop("mode"))
    return out


#: Upgrade functions keyed by the version they upgrade *from* (llm's style).
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2}


class SettingsStore:
    """Reads and writes `Settings` and the window layout in one QSettings object.

    The QSettings object is passed in so tests (and `CAIRN_HOME`) point it at a
    private file; the app never writes the user's global Qt settings.
    """

    def __init__(self, qsettings: QSettings) -> None:
        self._qs = qsettings

    @classmethod
    def at(cls, path: Path) -> SettingsStore:
        """A store backed by an INI file at `path` (created on first save)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        return cls(QSettings(str(path), QSettings.Format.IniFormat))

    @property
    def file_name(self) -> str:
        return self._qs.fileName()

    def load(self) -> Settings:
        """The stored settings, migrated to the current schema; defaults for anything missing or bad."""
        self._qs.beginGroup(GROUP)
        try:
            raw = {key: self._qs.value(key) for key in self._qs.childKeys()}
        finally:
            self._qs.endGroup()
        version = _to_int(raw.get("schema_version"), 1) if raw else SCHEMA_VERSION
        while version < SCHEMA_VERSION:
            raw = MIGRATIONS[version](raw)
            version += 1
        defaults = Settings()
        values: dict[str, Any] = {}
        for f in fields(Settings):
            if f.name == "schema_version" or f.name not in raw:
                continue
            converted = _convert(raw[f.name], getattr(defaults, f.name))
            if converted is not None:
                values[f.name] = converted
        settings = replace(defaults, **values)
        if settings.default_mode not in MODES:
            settings = replace(settings, default_mode="hybrid")
        return settings

    def save(self, settings: Settings) -> None:
        self._qs.beginGroup(GROUP)
        try:
            for f in fields(Settings):
                value = getattr(settings, f.name)
                self._qs.setValue(f.name, "true" if value is True else "false" if value is False else value)
            self._qs.setValue("schema_version", SCHEMA_VERSION)
        finally:
            self._qs.endGroup()
        self._qs.sync()

    def save_last_query(self, query: str) -> None:
        self._qs.setValue(f"{GROUP}/last_query", query)

    def window_state(self, key: str) -> QByteArray | None:
        value = self._qs.value(f"{WINDOW_GROUP}/{key}")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_window_state(self, key: str, value: QByteArray) -> None:
        self._qs.setValue(f"{WINDOW_GROUP}/{key}", value)

    def sync(self) -> None:
        self._qs.sync()


def _to_int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _convert(value: Any, default: Any) -> Any:
    """INI files hand every value back as a string: convert to the default's type, or None if bad."""
    if value is None:
        return None
    try:
        if isinstance(default, bool):
            return value if isinstance(value, bool) else str(value).strip().lower() in ("true", "1", "yes")
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
        return str(value)
    except (TypeError, ValueError):
        return None
