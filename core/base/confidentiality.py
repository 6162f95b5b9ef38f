"""How private a note is, and the one rule that follows from it.

A note says `confidentiality: public | internal | restricted` in its front matter (a
folder's `.cairn.yaml` says it for attachments). Restricted notes are left out of
searches unless the caller allows them, and never leave this process: no remote
embedder embeds them, no remote model reads them. Every place that asks either
question asks it here, so the rule cannot drift between Ask, rerank, embedding
and the views. The stored form (manifest, Whoosh field, JSON) is the plain string.
"""

from __future__ import annotations

from enum import StrEnum


class Confidentiality(StrEnum):
    """A note's level; a `StrEnum`, so it is stored and compared as its string."""

    PUBLIC = "public"
    INTERNAL = "internal"  # the default: no level given
    RESTRICTED = "restricted"

    @classmethod
    def parse(cls, value: object) -> Confidentiality:
        """A level as written by a person: case and spaces ignored, none means internal.

        Anything else is RESTRICTED: an unknown level fails closed (not shown, never sent).
        """
        if value is None or value == "":
            return cls.INTERNAL
        text = str(value).strip().lower()
        return cls(text) if text in cls._value2member_map_ else cls.RESTRICTED


def is_restricted(level: str | None) -> bool:
    """Whether a note of this level is hidden unless allowed and kept on this machine."""
    return level == Confidentiality.RESTRICTED


def sends_text_away(provider: object | None) -> bool:
    """Whether a provider (a model, an embedder, or its registry entry) takes note text out of this process.

    Providers say so with a `remote` flag; one that does not say is taken to (fails closed).
    No provider (None) sends nothing.
    """
    return provider is not None and bool(getattr(provider, "remote", True))


def may_send(level: str | None, provider: object | None) -> bool:
    """May a chunk of this level go to this provider? Restricted text never goes to a remote one."""
    return not (is_restricted(level) and sends_text_away(provider))
