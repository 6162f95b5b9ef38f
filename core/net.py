"""Small network helpers shared by the embedding and language-model clients."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def is_loopback(url: str) -> bool:
    """Whether `url` points at this machine, where an environment proxy must not intercept."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
