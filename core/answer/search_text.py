"""The text a search tool returns (the MCP server's and the agents' server's search_notes).

It is the compact evidence pack (core.answer.evidence), whose notes carry the search's
warnings. One of them is the spelling correction (core.search.spelling): "showing
results for 'recurring tasks', search instead for 'reccuring tasks'". In the app
"search instead" is a link and the CLI names `--as-typed`; a tool caller can do
neither, so here the line names the tool argument that searches the words as typed,
and comes first, before any other note: it says what was searched.
"""

from __future__ import annotations

from dataclasses import replace

from core.answer.evidence import build_llm_pack
from core.base.models import SearchResponse

AS_TYPED_HINT = "(search_notes with as_typed=true)"


def search_text(resp: SearchResponse, max_chars: int) -> str:
    """The evidence pack as text, within `max_chars`, the correction (if any) first with how to undo it."""
    pack = build_llm_pack(resp)
    if resp.correction is not None:
        said = resp.correction.message
        others = tuple(note for note in pack.notes if note != said)
        pack = replace(pack, notes=(f"{said} {AS_TYPED_HINT}", *others))
    return pack.render(max_chars)
