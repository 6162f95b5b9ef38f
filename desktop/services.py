"""Plain-Python helpers the workers run: the embedder factory, the chat model for Ask, connection tests.

Nothing here imports Qt, so each piece can be tested without a display and
run on any thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from core.base.config import VaultConfig
from core.base.errors import ConfigError
from core.providers.embedding import Embedder, EmbedderUnavailable, create_embedder, default_registry
from core.providers.info import ProviderInfo
from core.providers.llm import ChatProvider, LLMProviderInfo, create_chat_provider, default_llm_registry
from core.providers.secrets import KeyStore

if TYPE_CHECKING:  # the settings module imports Qt; this one stays Qt-free
    from desktop.settings import Settings

TEST_TIMEOUT_S = 5.0


def _no_model(**_: object) -> ChatProvider:
    raise ConfigError("No language model is chosen: answers are extracted from the notes offline")


#: The settings dialog's first choice: no model, offline extractive answers.
NO_LLM: LLMProviderInfo = ProviderInfo("none", "None — offline extractive answers", False, None, False, _no_model, "", "")


def llm_providers() -> dict[str, LLMProviderInfo]:
    """Language-model services the settings dialog offers: "none" plus core's registry."""
    return {NO_LLM.id: NO_LLM, **default_llm_registry()}


def make_embedder_factory(keys: KeyStore, remote_allowed: Callable[[], bool]) -> Callable[[VaultConfig], Embedder]:
    """The engine's embedder factory for the app.

    Unlike the CLI's, it reads keys from the app's `KeyStore` (so a session-only
    key works) and refuses a remote service until the user has allowed sending
    note text to it: a refusal makes semantic search unavailable with a reason
    the status bar shows, and nothing leaves the machine.
    """

    def factory(vault: VaultConfig) -> Embedder:
        info = default_registry().get(vault.embedder)
        if info is not None and info.remote and not remote_allowed():
            raise EmbedderUnavailable(
                "unauthorized",
                f"sending note text to {info.label} is not allowed yet — tick 'Allow sending note text' in Settings › Embeddings",
            )
        key = info.api_key(keys) if info is not None else None
        return create_embedder(vault.embedder, model=vault.embed_model, base_url=vault.embed_base_url, api_key=key)

    return factory


def chat_provider_for(settings: Settings, keys: KeyStore) -> ChatProvider | None:
    """The chat model the Language model page names, or None for the offline extractive answer.

    Runs on the ask worker (the keyring may be slow). Refuses a service that
    receives note text until the user has allowed it, as embeddings do.

    Raises:
        ConfigError: Unknown provider, or sending note text is not allowed yet.
        LLMError: The server address is not an http(s) URL.
    """
    provider_id = settings.llm_provider or "none"
    if provider_id == "none":
        return None
    info = default_llm_registry().get(provider_id)
    if info is None:
        raise ConfigError(f"Unknown language-model provider {provider_id!r} — choose another in Settings › Language model")
    if info.remote and not settings.allow_remote_llm:
        raise ConfigError(
            f"Sending note text to {info.label} is not allowed yet — tick 'Allow sending note text' in "
            "Settings › Language model, or choose 'None' for offline extractive answers"
        )
    key = info.api_key(keys)
    return create_chat_provider(info.id, model=settings.llm_model or None, base_url=settings.llm_base_url or None, api_key=key)


def check_embedder(provider_id: str, model: str | None, base_url: str | None, api_key: str | None) -> str:
    """Embed the word "test" once and describe the result; raises `EmbedderUnavailable` on failure.

    Remote services get a short timeout and a single attempt, so a wrong
    address fails in seconds rather than after the indexing retries.
    """
    info = default_registry().get(provider_id)
    if info is None:
        raise EmbedderUnavailable("unknown_model", f"unknown embedding provider {provider_id!r}")
    options: dict[str, Any] = {"timeout": TEST_TIMEOUT_S, "max_attempts": 1} if info.remote else {}
    t0 = time.perf_counter()
    try:
        embedder = create_embedder(provider_id, model=model or None, base_url=base_url or None, api_key=api_key, **options)
    except ValueError as exc:
        raise EmbedderUnavailable("unknown_model", str(exc)) from exc
    try:
        vector = embedder.embed_query("test")
    finally:
        close = getattr(embedder, "close", None)
        if callable(close):
            close()
    ms = (time.perf_counter() - t0) * 1000
    return f"Connected: {embedder.model_id} returned a {len(vector)}-dimensional vector in {ms:.0f} ms"


def check_llm(provider_id: str, base_url: str | None, api_key: str | None) -> str:
    """Ask a language-model server which models it has; raises `ConnectionError` with advice on failure.

    Uses core's own client for each provider (so Anthropic gets its own headers);
    the key never appears in the message, even when the server echoes the request.
    """
    from core.providers.llm import LLMError, list_models

    info = llm_providers().get(provider_id)
    if info is None or info.id == "none":
        raise ConnectionError("Choose a language-model provider first")
    root = (base_url or info.default_base_url or "").rstrip("/")
    try:
        names = list_models(provider_id, root, api_key, timeout=TEST_TIMEOUT_S)
    except LLMError as exc:
        raise ConnectionError(str(exc)) from None
    listed = ", ".join(names[:5]) or "no models listed"
    return f"Connected to {root}: {listed}"
