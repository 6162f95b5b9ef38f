"""Small network helpers shared by the embedding and language-model clients."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit, urlunsplit


def is_loopback(url: str) -> bool:
    """Whether `url` points at this machine, where an environment proxy must not intercept."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def safe_url(url: str) -> str:
    """The URL without user:password and query, which may carry secrets."""
    try:
        parts = urlsplit(url.strip())
        netloc = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    except ValueError:
        return "the configured server address"
