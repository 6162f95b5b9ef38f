"""Bare URLs and e-mail addresses found as Cairn's markdown-it finds them, without importing it.

Cairn's parser reads bare `https://…`, `www.…`, `mailto:`/`xmpp:` links and e-mail addresses
with mdit-py-plugins' GFM autolink plugin (`core.vault.obsidian_md`). `core.vault.display_plain_inline`
reads snippets without markdown-it, so it needs the plugin's matchers without the plugin's
package, whose `__init__` imports markdown-it. The matchers (`gfm_autolink/_match.py`) import
nothing but `unicodedata`: this module loads that file of the installed release by its path
(the bytecode an install compiled is used as for any import), so the URL's extent and its
trailing-punctuation rule are the plugin's own code, not a copy. The inline rules around them
(which character may precede a link, the bare e-mail's domain) live in the plugin's `index.py`
next to markdown-it imports; they are restated here and held to the plugin by
`tests/core/vault/test_display_links.py`. When the matchers cannot be loaded, chunks with a
possible link are left to markdown-it.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType

from core.vault.display_tokens import Decline

#: The plugin's `_VALID_PREV_CHARS`: what may stand before an autolink (or the text's start).
VALID_PREV = frozenset(" \t\r\n*_~(")
#: What a bare e-mail's name is made of, as the plugin's `_email_rule` scans back through markdown-it's
#: pending text: its set has `_` too, but the emphasis rule takes every `_` out of that text first.
LOCAL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+-")
PROTOCOLS = ("https", "http", "mailto", "xmpp")  # longest first: "https" before "http"
_RECODE_HOSTNAME_FOR = ("http:", "https:", "mailto:")  # markdown-it's `normalize_url.RECODE_HOSTNAME_FOR`


def matchers() -> ModuleType:
    """The installed plugin's `_match` module, loaded by path (its package would import markdown-it).

    Raises Decline where there is no such file (a frozen build keeps the plugin in its archive):
    the snippet goes to markdown-it.
    """
    module = _loaded_matchers()
    if module is None:
        raise Decline
    return module


@cache
def _loaded_matchers() -> ModuleType | None:
    """The `_match` module, or None: looked for once a process, found or not (snippets ask per bare link)."""
    spec = importlib.util.find_spec("mdit_py_plugins")
    places = list(spec.submodule_search_locations or []) if spec is not None else []
    path = Path(places[0]) / "gfm_autolink" / "_match.py" if places else None
    file_spec = importlib.util.spec_from_file_location("core.vault._gfm_autolink_match", path) if path and path.is_file() else None
    if file_spec is None or file_spec.loader is None:
        return None
    module = importlib.util.module_from_spec(file_spec)
    file_spec.loader.exec_module(module)
    return module


def find_bare_link(src: str, pos: int, end: int, pending_from: int) -> tuple[int, int] | None:
    """Where the bare link the plugin's rule for `src[pos]` (`:`, `@` or `w`) finds there starts and stops, or None.

    `pending_from` is where markdown-it's pending text starts (the last token's end): the
    rules scan back into it for a scheme or an address's name. `end` is the span's end.
    """
    if src[pos] == ":":
        return _protocol(src, pos, end, pending_from)
    if src[pos] == "@":
        return _email(src, pos, end, pending_from)
    return _www(src, pos, end)


def _protocol(src: str, pos: int, end: int, pending_from: int) -> tuple[int, int] | None:
    """The plugin's `_protocol_rule`: a scheme just before the colon, then `https://…` or an address."""
    proto = next((p for p in PROTOCOLS if src.endswith(p, 0, pos)), None) if end - pos >= 4 else None
    if proto is None:
        return None
    start = pos - len(proto)
    if start < pending_from:
        raise Decline  # the scheme is not all in the pending text
    if start > 0 and src[start - 1] not in VALID_PREV:
        return None
    length = match_url(proto + src[pos:end], proto)
    return None if length is None else (start, start + length)


def _email(src: str, pos: int, end: int, pending_from: int) -> tuple[int, int] | None:
    """The plugin's `_email_rule`: a name back in the pending text, a domain after the `@`."""
    start = pos
    while start > pending_from and src[start - 1] in LOCAL_CHARS:
        start -= 1
    if start == pos or pos + 1 >= end or (start > 0 and src[start - 1] not in VALID_PREV):
        return None
    domain = email_domain_length(src[pos + 1 : end])
    return None if domain is None else (start, pos + 1 + domain)


def _www(src: str, pos: int, end: int) -> tuple[int, int] | None:
    """The plugin's `_www_inline_rule`: `www.` after a space, a bracket or a marker."""
    if pos + 4 > end or not src.startswith("www.", pos) or (pos > 0 and src[pos - 1] not in VALID_PREV):
        return None
    length = match_www(src[pos:end])
    return None if length is None else (pos, pos + length)


def match_url(text: str, proto: str) -> int | None:
    """How many characters of `text` (starting with `proto` and its colon) the plugin links, or None."""
    found = matchers().match_any_email(text, len(proto) + 1, proto) if proto in ("mailto", "xmpp") else matchers().match_http(text)
    return None if found is None else int(found[1])


def match_www(text: str) -> int | None:
    """How many characters of `text` (starting with `www.`) the plugin links, or None."""
    found = matchers().match_www(text)
    return None if found is None else int(found[1])


def email_domain_length(after_at: str) -> int | None:
    """The length of a bare e-mail's domain in the text after its `@` (the plugin's `_email_rule`), or None."""
    length = periods = 0
    for i, ch in enumerate(after_at):
        if ch.isascii() and ch.isalnum():
            pass
        elif ch == "@":
            return None
        elif ch == "." and i + 1 < len(after_at) and after_at[i + 1].isascii() and after_at[i + 1].isalnum():
            periods += 1
        elif ch not in "-_":
            break
        length += 1
    if length == 0 or periods == 0:
        return None
    last = after_at[length - 1]
    return length if (last.isascii() and last.isalnum()) or last == "." else None


def link_text(label: str) -> str:
    """markdown-it's `normalizeLinkText` for an autolink's label; a host it would punycode-decode declines."""
    import mdurl  # markdown-it's own URL library: ~1 ms, only for a chunk with a link

    parsed = mdurl.parse(label, slashes_denote_host=True)
    host = parsed.hostname
    if host and (not parsed.protocol or parsed.protocol in _RECODE_HOSTNAME_FOR) and (not host.isascii() or "xn--" in host.lower() or "@" in host):
        raise Decline  # markdown-it would map the host through punycode
    return str(mdurl.decode(mdurl.format(parsed), mdurl.DECODE_DEFAULT_CHARS + "%"))
