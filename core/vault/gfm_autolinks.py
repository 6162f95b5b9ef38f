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


@cache
def matchers() -> ModuleType:
    """The installed plugin's `_match` module, loaded by path (its package would import markdown-it)."""
    spec = importlib.util.find_spec("mdit_py_plugins")
    places = list(spec.submodule_search_locations or []) if spec is not None else []
    path = Path(places[0]) / "gfm_autolink" / "_match.py" if places else None
    file_spec = importlib.util.spec_from_file_location("core.vault._gfm_autolink_match", path) if path and path.is_file() else None
    if file_spec is None or file_spec.loader is None:
        raise Decline
    module = importlib.util.module_from_spec(file_spec)
    file_spec.loader.exec_module(module)
    return module


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
