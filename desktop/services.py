"""Plain-Python helpers the workers run: the app's embedder factory and connection tests.

Nothing here imports Qt, so each piece can be tested without a display and
run on any thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from core.config import VaultConfig
from core.embedding import Embedder, EmbedderUnavailable, create_embedder, default_registry
from core.secrets import KeyStore

TEST_TIMEOUT_S = 5.0


@dataclass(frozen=True, slots=True)
class LlmProviderInfo:
    """A language-model provider as the settings dialog lists it (the Ask pane comes later)."""

    id: str
    label: str
    needs_key: bool
    key_env_var: str | None
    default_model: str
    default_base_url: str


def llm_providers() -> dict[str, LlmProviderInfo]:
    """Language-model services the settings dialog offers; built per call, never a global."""
    items = [
        LlmProviderInfo("none", "None (answers come later)", False, None, "", ""),
        LlmProviderInfo("ollama", "Ollama", False, None, "llama3.2", "http://127.0.0.1:11434"),
        LlmProviderInfo("openai", "OpenAI-compatible API", True, "OPENAI_API_KEY", "gpt-4o-mini", "https://api.openai.com/v1"),
    ]
    return {p.id: p for p in items}


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
        key = keys.get(info.id, info.key_env_var) if info is not None and info.needs_key else None
        return create_embedder(vault.embedder, model=vault.embed_model, base_url=vault.embed_base_url, api_key=key)

    return factory


def check_embedder(provider_id: str, model: str | None, base_url: str | None, api_key: str | None) -> str:
    """Embed the word "test" once and describe the result; raises `EmbedderUnavailable` on failure.

    Remote services get a short timeout and a single attempt, so a wrong
    address fails in seconds rather than after the indexing retries.
    """
    info = default_registry().get(provider_id)
    if info is None:
        raise EmbedderUnavailable("unknown_model", f"unknown embedding provider {provider_id!r}")
    options = {"timeout": TEST_TIMEOUT_S, "max_attempts": 1} if info.remote else {}
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

    The key is sent as a header and never appears in the message, even when
    the server echoes the request.
    """
    info = llm_providers().get(provider_id)
    if info is None or info.id == "none":
        raise ConnectionError("Choose a language-model provider first")
    root = (base_url or info.default_base_url).rstrip("/")
    url = f"{root}/api/tags" if provider_id == "ollama" else f"{root}/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        response = httpx.get(url, headers=headers, timeout=TEST_TIMEOUT_S)
    except httpx.TimeoutException:
        raise ConnectionError(f"{root} did not answer within {TEST_TIMEOUT_S:g} s") from None
    except httpx.HTTPError as exc:
        raise ConnectionError(f"Cannot reach {root}: {type(exc).__name__}") from None
    if response.status_code in (401, 403):
        raise ConnectionError(f"{root} refused the API key (HTTP {response.status_code})")
    if response.status_code >= 400:
        raise ConnectionError(f"{root} answered HTTP {response.status_code}")
    try:
        body = response.json()
        names = [m.get("name") or m.get("id") for m in body.get("models", body.get("data", []))]
    except (ValueError, AttributeError, TypeError):
        names = []
    listed = ", ".join(str(n) for n in names[:5] if n) or "no models listed"
    return f"Connected to {root}: {listed}"
