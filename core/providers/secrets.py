"""API keys: only ever in the OS keyring (or the environment, or this session's memory).

There is deliberately no file fallback. On a machine without a secure
keyring backend (headless Linux gets keyring's `fail` backend) the caller can
keep a key for the session only, or the user sets an environment variable.
"""

from __future__ import annotations

import os

import keyring
import keyring.backend
import keyring.errors

SERVICE = "cairn"
_INSECURE_BACKENDS = ("keyring.backends.fail", "keyrings.alt", "keyring.backends.null")


class KeyStore:
    """Look-up order: session key, then keyring, then environment variable."""

    def __init__(self, backend: keyring.backend.KeyringBackend | None = None) -> None:
        self._backend = backend
        self._session: dict[str, str] = {}

    @property
    def backend(self) -> keyring.backend.KeyringBackend:
        return self._backend or keyring.get_keyring()

    def backend_name(self) -> str:
        b = self.backend
        return f"{type(b).__module__}.{type(b).__name__}"

    def is_secure(self) -> bool:
        name = self.backend_name()
        return not any(name.startswith(prefix) for prefix in _INSECURE_BACKENDS) and getattr(self.backend, "priority", 1) > 0

    def get(self, provider_id: str, env_var: str | None = None) -> str | None:
        if provider_id in self._session:
            return self._session[provider_id]
        if self.is_secure():
            try:
                value = self.backend.get_password(SERVICE, provider_id)
            except keyring.errors.KeyringError:
                value = None
            if value:
                return value
        if env_var:
            return os.environ.get(env_var) or None
        return None

    def set(self, provider_id: str, key: str) -> None:
        """Store in the keyring; raises `keyring.errors.KeyringError` when no secure backend exists."""
        if not self.is_secure():
            raise keyring.errors.NoKeyringError(
                f"No secure keyring is available ({self.backend_name()}); keep the key for this session "
                "or set it in an environment variable"
            )
        self.backend.set_password(SERVICE, provider_id, key)

    def set_session(self, provider_id: str, key: str) -> None:
        self._session[provider_id] = key

    def delete(self, provider_id: str) -> None:
        self._session.pop(provider_id, None)
        if self.is_secure():
            try:
                self.backend.delete_password(SERVICE, provider_id)
            except keyring.errors.PasswordDeleteError:
                pass

    def has_stored(self, provider_id: str) -> bool:
        if not self.is_secure():
            return False
        try:
            return bool(self.backend.get_password(SERVICE, provider_id))
        except keyring.errors.KeyringError:
            return False

