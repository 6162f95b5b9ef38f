"""Everything about one note's place among the others: links out, backlinks, unlinked
mentions and related notes, each with the reason a person would want to see.

Related notes are the nearest notes by meaning (mean of chunk vectors), nudged up by
link proximity and shared tags; every nudge is a named reason ("links here",
"shares tags x, y", "similar: 0.83") so the panel can say why a note is there.
Without embeddings, links and tags alone still give a useful list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from core.base.confidentiality import is_restricted
from core.base.errors import UsageError
from core.base.models import ParsedQuery, SearchFilters, chunk_id
from core.index.link_graph import ResolvedLink
from core.index.phrase_match import phrase_checks
from core.index.vector_index import key_for
from core.vault.display_text import one_line
from core.vault.links import key
from core.vault.scanner import normalise_rel_path

if TYPE_CHECKING:
    from core.index.indexer import VaultIndex
    from core.index.manifest import FileRecord
    from core.index.vector_store import VaultVectors

LINK_BOOST = 0.10  # a direct link either way: about the gap between a good and a so-so neighbour
TWO_HOP_BOOST = 0.03
TAG_BOOST = 0.02  # per shared tag, at most three
MAX_MENTIONS = 20
MAX_CANDIDATES = 60


@dataclass(frozen=True, slots=True)
class OutLink:
    target: str  # as written
    anchor: str
    label: str
    kind: str  # wiki | embed | markdown
    line: int
    rel_path: str | None  # the note reached; None when unresolved or an attachment
    title: str | None
    attachment: bool


@dataclass(frozen=True, slots=True)
class Backlink:
    rel_path: str  # the note that links (or mentions)
    title: str
    line: int
    context: str  # the linking line as read (`core.vault.display_text`: no link or callout syntax)
    kind: str  # wiki | embed | markdown | mention


@dataclass(frozen=True, slots=True)
class RelatedNote:
    rel_path: str
    title: str
    score: float
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NoteLinks:
    vault: str
    rel_path: str
    title: str
    aliases: tuple[str, ...]
    outgoing: tuple[OutLink, ...]
    backlinks: tuple[Backlink, ...]
    mentions: tuple[Backlink, ...]  # unlinked mentions of the title or an alias
    related: tuple[RelatedNote, ...]
    semantic_note: str | None = None  # why related notes use links and tags only


def note_links(
    vi: VaultIndex, vv: VaultVectors | None, name: str, rel_path: str, k: int = 10, *, allow_restricted: bool = True
) -> NoteLinks:
    """The note's links, backlinks, unlinked mentions and related notes.

    Without `allow_restricted`, restricted notes are neither answered about nor named
    (the same rule as search: they stay out of what an MCP client sees by default).
    """
    rel = resolve_note(vi, rel_path)
    rec = vi.files[rel]

    def shown(other: str | None) -> bool:
        if other is None or allow_restricted:
            return True
        o = vi.files.get(other)
        return o is not None and not is_restricted(o.confidentiality)

    if not shown(rel):
        raise UsageError(f"{rel_path} is restricted; allow restricted notes to see its links")
    graph = vi.links
    outgoing = tuple(_out(r, vi) for r in graph.outgoing(rel) if shown(r.target))
    lines = {(r.source, r.link.line): r for r in reversed(graph.backlinks(rel)) if shown(r.source)}  # one row a line
    backlinks = tuple(
        Backlink(r.source, _title(vi, r.source), r.link.line, _line(r.link.context), r.link.kind.value)
        for r in sorted(lines.values(), key=lambda r: (key(r.source), r.link.line))
    )
    aliases = graph.aliases(rel)
    mentions = tuple(m for m in unlinked_mentions(vi, rel, (rec.title, *aliases)) if shown(m.rel_path))
    related, note = related_notes(vi, vv, name, rel, k * 2)
    kept = tuple(r for r in related if shown(r.rel_path))[:k]
    return NoteLinks(name, rel, rec.title, aliases, outgoing, backlinks, mentions, kept, note)


def resolve_note(vi: VaultIndex, rel_path: str) -> str:
    """An indexed note by path, or by name the way a link would reach it (`cairn links "My Note"`)."""
    rel = normalise_rel_path(rel_path)
    if rel in vi.files:
        return rel
    found = vi.links.resolver().resolve_name(rel_path)
    if found is not None and found in vi.files:
        return found
    raise UsageError(f"{rel_path} is not an indexed note of vault {vi.vault.name!r}")


def _title(vi: VaultIndex, rel: str) -> str:
    rec = vi.files.get(rel)
    return rec.title if rec is not None else rel


def _out(r: ResolvedLink, vi: VaultIndex) -> OutLink:
    lk = r.link
    return OutLink(lk.target, lk.anchor, lk.label, lk.kind.value, lk.line, r.target, _title(vi, r.target) if r.target else None, r.attachment)


# -- unlinked mentions ---------------------------------------------------------------------


def unlinked_mentions(vi: VaultIndex, rel: str, names: tuple[str, ...]) -> list[Backlink]:
    """Notes that name this note (title or alias, whole words, any case) without linking to it.

    A name made only of stop words ("That an", "Of the") is left out: ordinary prose holds it
    everywhere, so what it finds are not mentions, and no index term leads to it, so finding
    them means reading every chunk's stored text (1-2.5 s of Python at 10k notes, holding up
    the agents server's other calls and the app's UI thread).
    """
    linking = {r.source for r in vi.links.backlinks(rel)} | {rel}
    langs = vi.keyword.languages()
    wanted = [n for n in dict.fromkeys(n.strip() for n in names) if len(n) >= 3 and _has_indexed_word(n, langs)]
    if not wanted:
        return []
    pattern = re.compile("|".join(rf"(?<!\w){re.escape(n)}(?!\w)" for n in sorted(wanted, key=len, reverse=True)), re.IGNORECASE)
    seen: set[str] = set()
    out: list[Backlink] = []
    for n in wanted:
        parsed = ParsedQuery(text=n, terms=(), phrases=(n,), filters=SearchFilters())
        for hit in vi.keyword.search(parsed, SearchFilters(allow_restricted=True), MAX_CANDIDATES):
            src = hit.stored.rel_path if hit.stored is not None else ""
            if not src or src in linking or src in seen or src not in vi.files:
                continue
            found = _mention_line(hit.stored.body if hit.stored is not None else "", pattern)
            if found is None:
                continue
            offset, line = found
            seen.add(src)
            out.append(Backlink(src, _title(vi, src), _file_line(vi, src, (hit.stored.start_byte if hit.stored is not None else 0)) + offset, line, "mention"))
            if len(out) >= MAX_MENTIONS:
                return sorted(out, key=lambda b: b.rel_path)
    return sorted(out, key=lambda b: b.rel_path)


def _has_indexed_word(name: str, langs: tuple[str, ...]) -> bool:
    return any(not check.literal_only for check in phrase_checks([name], langs))


_WIKI = re.compile(r"!?\[\[[^\]\n]*\]\]|\]\([^)\n]*\)")


def _mention_line(body: str, pattern: re.Pattern[str]) -> tuple[int, str] | None:
    for i, line in enumerate(body.split("\n")):
        if pattern.search(_WIKI.sub(" ", line)):
            text = _line(line)
            return i, text if len(text) <= 240 else text[:239] + "…"
    return None


def _line(markdown: str) -> str:
    """A linking line as read, without the bullet of the list item it may be.

    A long line was cut at `MAX_CONTEXT` when its links were read; a link the cut went
    through is dropped, not shown as half its syntax.
    """
    if markdown.endswith("…"):
        markdown = _CUT_LINK.sub("…", markdown)
    return one_line(markdown).removeprefix("• ")


_CUT_LINK = re.compile(r"!?\[\[?[^\]\n]*(?:\]\([^)\n]*|\])?…$")


def _file_line(vi: VaultIndex, rel: str, start_byte: int) -> int:
    """1-based line of a byte offset, read from the note itself (the index keeps bytes, not lines)."""
    try:
        with (Path(vi.vault.root) / rel).open("rb") as fh:
            head = fh.read(start_byte)
    except OSError:
        return 1
    return head.count(b"\n") + 1


# -- related notes -------------------------------------------------------------------------


def related_notes(vi: VaultIndex, vv: VaultVectors | None, name: str, rel: str, k: int) -> tuple[list[RelatedNote], str | None]:
    graph = vi.links
    outgoing = {r.target for r in graph.outgoing(rel) if r.target and r.target != rel}
    incoming = {r.source for r in graph.backlinks(rel)}
    direct = outgoing | incoming
    two_hop = {n for d in direct for n in graph.neighbours(d)} - direct - {rel}
    sims: dict[str, float] = {}
    note: str | None = None
    centre = _centre(vi, vv, name, rel)
    words: dict[str, float] = {}
    if centre is None:
        note = "no embeddings for this note: related notes come from links, tags and shared words"
        words = _keyword_neighbours(vi, rel)
    else:
        assert vv is not None
        for cid, score in vv.search(centre, SearchFilters(), MAX_CANDIDATES, vi.files):
            other = cid.split("\x1f")[1]
            if other != rel and score > sims.get(other, -2.0):
                sims[other] = score
        for other in direct - set(sims):
            c = _centre(vi, vv, name, other)
            if c is not None:
                sims[other] = float(np.dot(centre, c))
    tags = set(vi.files[rel].tags)
    pool = set(sims) | set(words) | direct | (two_hop if centre is None else set())
    if centre is None and tags:
        pool |= {r for r, rec in vi.files.items() if r != rel and tags & set(rec.tags)}
    links = _Links(incoming, outgoing, direct, two_hop)
    out = [_related(other, rec, sims, words, links, tags) for other in pool if (rec := vi.files.get(other)) is not None]
    out.sort(key=lambda r: (-r.score, key(r.rel_path)))
    return out[:k], note


@dataclass(frozen=True, slots=True)
class _Links:
    """How other notes stand to this one in the link graph."""

    incoming: set[str]
    outgoing: set[str]
    direct: set[str]
    two_hop: set[str]


def _related(
    other: str, rec: FileRecord, sims: dict[str, float], words: dict[str, float], links: _Links, tags: set[str]
) -> RelatedNote:
    """One candidate's score (similarity or shared words, plus link and tag boosts) and its reasons."""
    reasons: list[str] = []
    score = sims.get(other, words.get(other, 0.0))
    if other in links.incoming:
        reasons.append("links here")
    if other in links.outgoing:
        reasons.append("linked from here")
    if other in links.direct:
        score += LINK_BOOST
    elif other in links.two_hop:
        score += TWO_HOP_BOOST
        reasons.append("two links away")
    shared = [t for t in rec.tags if t in tags]
    if shared:
        score += TAG_BOOST * min(3, len(shared))
        reasons.append("shares tags " + ", ".join(shared[:3]))
    if other in sims:
        reasons.append(f"similar: {sims[other]:.2f}")
    elif other in words:
        reasons.append("shares words of its title and headings")
    return RelatedNote(other, rec.title, round(score, 4), tuple(reasons))


def _keyword_neighbours(vi: VaultIndex, rel: str) -> dict[str, float]:
    """Without vectors: notes whose text matches this note's title and headings (BM25, scaled to 0..0.5)."""
    rec = vi.files[rel]
    text = " ".join([rec.title, *(c.heading_path for c in rec.chunks)])
    terms = tuple(dict.fromkeys(w.lower() for w in re.findall(r"\w{3,}", text)))[:16]
    if not terms:
        return {}
    parsed = ParsedQuery(text=" ".join(terms), terms=terms, phrases=(), filters=SearchFilters())
    best: dict[str, float] = {}
    for hit in vi.keyword.search(parsed, SearchFilters(allow_restricted=True), MAX_CANDIDATES):
        other = hit.chunk_id.split("\x1f")[1]
        if other != rel and hit.score > best.get(other, 0.0):
            best[other] = hit.score
    top = max(best.values(), default=0.0) or 1.0
    return {r: round(0.5 * s / top, 4) for r, s in best.items()}


def _centre(vi: VaultIndex, vv: VaultVectors | None, name: str, rel: str) -> np.ndarray | None:
    rec = vi.files.get(rel)
    if vv is None or rec is None or len(vv.index) == 0:
        return None
    vecs = [v for c in rec.chunks if (v := vv.index.vector(key_for(chunk_id(name, rel, c.ordinal)))) is not None]
    if not vecs:
        return None
    centre = np.mean(vecs, axis=0).astype(np.float32)
    norm = float(np.linalg.norm(centre))
    return centre / norm if norm else centre
