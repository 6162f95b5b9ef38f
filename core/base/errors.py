"""Errors a user can act on. Each carries the CLI exit code it maps to."""

from __future__ import annotations


class CairnError(Exception):
    exit_code = 1


class UsageError(CairnError):
    exit_code = 2


class ConfigError(CairnError):
    exit_code = 2


class IndexNotBuiltError(CairnError):
    exit_code = 4


class BusyError(CairnError):
    """Too many searches at once; the caller may retry after `retry_after_seconds`."""

    exit_code = 1

    def __init__(self, message: str, retry_after_seconds: float) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


class RestrictedNoteError(CairnError):
    """The note is marked `confidentiality: restricted` and showing it (or using it as a
    query) was not allowed."""

    exit_code = 1


class IndexBusyError(CairnError):
    """Another Cairn process (the app, `cairn index`, `cairn watch`, `cairn mcp`) is writing this
    vault's index; the caller shows that and tries again later instead of waiting or resetting it."""

    exit_code = 1


class SemanticUnavailableError(CairnError):
    """What was asked needs the vault's embedding model, and it cannot be used now (a server down,
    a model missing); the message says why. Searches do not raise it: they fall back to keywords."""

    exit_code = 1
