"""One description type for every provider registry (embeddings and language models).

The settings dialog, the keys page, the CLI and the engine all ask the same
questions of a provider — its label, whether it needs a key and where that key
may come from, whether note text leaves the machine — so both registries use
this one type, and the key look-up lives here once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

T_co = TypeVar("T_co", covariant=True)


class KeySource(Protocol):
    """Where keys come from: `core.providers.secrets.KeyStore`, or the app's own store with session keys."""

    def get(self, provider_id: str, env_var: str | None = None) -> str | None: ...


@dataclass(frozen=True)  # no slots: calling the alias `ProviderInfo[Embedder](...)` sets __orig_class__
class ProviderInfo(Generic[T_co]):
    """One provider as the settings dialog shows it and the factories build it.

    Attributes:
        id: Stable key stored in settings ("builtin", "ollama", "openai", "anthropic").
        label: Name shown to the user.
        needs_key: Whether to ask for an API key. Not enforced: an OpenAI-compatible
            server on this machine may need none, and a missing key surfaces as an
            "unauthorized" error anyway.
        key_env_var: Environment variable that may hold the key.
        remote: Whether note text leaves this process; restricted notes never go to
            a remote provider, and the UI asks before sending any.
        factory: Called as `factory(model=..., base_url=..., api_key=..., **options)`.
        default_model: Pre-filled model name.
        default_base_url: Pre-filled server address.
        installed: Whether the provider can run here. An optional engine without a
            wheel for this platform (the multilingual model on Windows) stays in the
            registry, so a vault configured for it elsewhere gets a clear "not
            installed" reason, but the settings do not offer it.
    """

    id: str
    label: str
    needs_key: bool
    key_env_var: str | None
    remote: bool
    factory: Callable[..., T_co]
    default_model: str | None = None
    default_base_url: str | None = None
    installed: Callable[[], bool] = field(default=lambda: True, compare=False)

    def build(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None, **options: Any) -> T_co:
        """The provider, with this entry's default model and server where none is given; nothing is contacted."""
        return self.factory(model=model or self.default_model, base_url=base_url or self.default_base_url, api_key=api_key or None, **options)

    def api_key(self, keys: KeySource | None = None) -> str | None:
        """The key to use with this provider: looked up (session, keyring, environment) only if it needs one."""
        if not self.needs_key:
            return None
        if keys is None:
            from core.providers.secrets import KeyStore  # keyring loads its backends on import: only when needed

            keys = KeyStore()
        return keys.get(self.id, self.key_env_var)


def lookup(providers: Mapping[str, ProviderInfo[T_co]], provider_id: str, kind: str) -> ProviderInfo[T_co]:
    """The registry's entry for `provider_id`.

    Raises:
        ValueError: Unknown id; the message lists the known ones.
    """
    info = providers.get(provider_id)
    if info is None:
        known = ", ".join(sorted(providers))
        raise ValueError(f"Unknown {kind} provider {provider_id!r}; choose one of: {known}")
    return info
