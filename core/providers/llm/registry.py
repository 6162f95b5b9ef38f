"""Language-model providers by id, so settings and the CLI can list and build them.

The settings dialog draws one entry per provider (label, whether to ask for a
key, which environment variable can supply it, whether note text leaves the
machine) and calls `create_chat_provider` with what the user chose; its "Test
connection" button calls `list_models`. Tests pass their own registry with a
local provider. The registry is built by a function, not held in a module
global, so nothing leaks between tests or between two apps in one process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from core.providers.info import ProviderInfo, lookup
from core.providers.llm.anthropic import ANTHROPIC_DEFAULT_MODEL, ANTHROPIC_DEFAULT_URL, AnthropicChat
from core.providers.llm.base import ChatProvider, LLMError
from core.providers.llm.ollama import OLLAMA_DEFAULT_MODEL, OLLAMA_DEFAULT_URL, OllamaChat
from core.providers.llm.openai import OPENAI_DEFAULT_MODEL, OPENAI_DEFAULT_URL, OpenAIChat

#: Builds a provider from (model=..., base_url=..., api_key=..., **options); None means "use the default".
ChatProviderFactory = Callable[..., ChatProvider]

#: Connect timeout for "Test connection": a wrong address should fail in seconds.
LIST_CONNECT_TIMEOUT_S = 5.0


#: A language-model provider: the shared provider type, building chat providers.
LLMProviderInfo = ProviderInfo[ChatProvider]


def default_llm_registry() -> dict[str, LLMProviderInfo]:
    """The providers Cairn ships with: Ollama, any OpenAI-compatible API, and Anthropic."""
    providers = [
        LLMProviderInfo(
            id="ollama",
            label="Ollama",
            needs_key=False,
            key_env_var=None,
            # A separate server, even on this machine: treated as remote so
            # restricted notes never leave the app's process.
            remote=True,
            default_model=OLLAMA_DEFAULT_MODEL,
            default_base_url=OLLAMA_DEFAULT_URL,
            factory=_ollama_factory,
        ),
        LLMProviderInfo(
            id="openai",
            label="OpenAI-compatible API (OpenAI, llama.cpp, vLLM, LM Studio)",
            needs_key=True,
            key_env_var="OPENAI_API_KEY",
            remote=True,
            default_model=OPENAI_DEFAULT_MODEL,
            default_base_url=OPENAI_DEFAULT_URL,
            factory=_openai_factory,
        ),
        LLMProviderInfo(
            id="anthropic",
            label="Anthropic",
            needs_key=True,
            key_env_var="ANTHROPIC_API_KEY",
            remote=True,
            default_model=ANTHROPIC_DEFAULT_MODEL,
            default_base_url=ANTHROPIC_DEFAULT_URL,
            factory=_anthropic_factory,
        ),
    ]
    return {info.id: info for info in providers}


def create_chat_provider(
    provider_id: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    registry: Mapping[str, LLMProviderInfo] | None = None,
    **options: Any,
) -> ChatProvider:
    """Build the chat provider the user configured.

    Args:
        provider_id: A key of the registry.
        model: Model name; the provider's default when None or empty.
        base_url: Server address; the provider's default when None or empty.
        api_key: Key resolved by the caller (keyring, then environment).
        registry: Providers to choose from; `default_llm_registry()` when None.
        **options: Passed to the factory, e.g. `timeout` or `max_retries`.

    Returns:
        A provider; nothing is contacted yet.

    Raises:
        ValueError: Unknown provider id.
        LLMError: "connection_refused" when the address is not an http(s) URL.
    """
    return _lookup(provider_id, registry).build(model, base_url, api_key, **options)


def list_models(
    provider_id: str,
    base_url: str | None,
    api_key: str | None,
    timeout: float = 5,
    *,
    registry: Mapping[str, LLMProviderInfo] | None = None,
) -> list[str]:
    """The model names a server offers, for the settings dialog's "Test connection".

    One attempt with a short timeout, so a wrong address or key is reported in
    seconds rather than after the answering retries.

    Args:
        provider_id: A key of the registry.
        base_url: Server address; the provider's default when None or empty.
        api_key: Key to try; never included in any error message.
        timeout: Seconds to wait for the connection and for the answer.
        registry: Providers to choose from; `default_llm_registry()` when None.

    Returns:
        Model names in the server's order.

    Raises:
        ValueError: Unknown provider id.
        LLMError: The server cannot be reached, refuses the key or does not
            answer like this kind of server.
    """
    info = _lookup(provider_id, registry)
    provider = create_chat_provider(
        provider_id,
        base_url=base_url,
        api_key=api_key,
        registry=registry,
        timeout=timeout,
        connect_timeout=min(timeout, LIST_CONNECT_TIMEOUT_S),
        max_retries=0,
    )
    lister = getattr(provider, "list_models", None)
    try:
        if not callable(lister):
            raise LLMError("bad_response", f"{info.label} cannot list its models; type the model name instead.")
        return list(lister())
    finally:
        close = getattr(provider, "close", None)
        if callable(close):
            close()


def _lookup(provider_id: str, registry: Mapping[str, LLMProviderInfo] | None) -> LLMProviderInfo:
    return lookup(default_llm_registry() if registry is None else registry, provider_id, "language-model")


def _ollama_factory(*, model: str | None, base_url: str | None, api_key: str | None, **options: Any) -> ChatProvider:
    return OllamaChat(base_url or OLLAMA_DEFAULT_URL, model or OLLAMA_DEFAULT_MODEL, api_key, **options)


def _openai_factory(*, model: str | None, base_url: str | None, api_key: str | None, **options: Any) -> ChatProvider:
    return OpenAIChat(base_url or OPENAI_DEFAULT_URL, model or OPENAI_DEFAULT_MODEL, api_key, **options)


def _anthropic_factory(
    *, model: str | None, base_url: str | None, api_key: str | None, **options: Any
) -> ChatProvider:
    return AnthropicChat(base_url or ANTHROPIC_DEFAULT_URL, model or ANTHROPIC_DEFAULT_MODEL, api_key, **options)
