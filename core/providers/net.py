"""Small network helpers shared by the embedding and language-model clients."""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    import httpx  # ~250 ms to import: only a client that talks to a server loads it


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


def http_client(
    base_url: str, headers: dict[str, str], timeout: float, *, connect_timeout: float | None = None, transport: httpx.BaseTransport | None = None
) -> httpx.Client:
    """The client every server-backed provider uses (embeddings and language models alike).

    A proxy from the environment must not intercept a server on this machine (Ollama,
    llama.cpp); remote APIs may need it. A plain-http address never speaks TLS and
    redirects are not followed, so it skips loading the CA bundle (0.1-0.3 s a client).
    """
    import httpx

    return httpx.Client(
        headers=headers,
        timeout=httpx.Timeout(timeout, connect=timeout if connect_timeout is None else connect_timeout),
        trust_env=not is_loopback(base_url),
        verify=urlsplit(base_url).scheme == "https",
        follow_redirects=False,
        transport=transport,
    )
