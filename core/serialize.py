"""JSON shapes of engine results: the contract of `cairn ... --json` and its consumers."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.base.models import Hit, RankedScore, SearchResponse  # a search's: not made by `cairn index`
    from core.engine import SyncReport
    from core.search.related import NoteLinks  # numpy and the vector index: not for `cairn search --json`
    from core.status import VaultStatus  # a status's, not a search's


def ranked(rs: RankedScore | None) -> dict[str, Any] | None:
    return None if rs is None else {"rank": rs.rank, "score": round(rs.score, 9)}


def hit_json(rank: int, hit: Hit) -> dict[str, Any]:
    return {
        "rank": rank,
        "vault": hit.chunk.vault,
        "rel_path": hit.chunk.rel_path,
        "chunk_ordinal": hit.chunk.ordinal,
        "heading_path": hit.chunk.heading_path,
        "title": hit.title,
        "snippet": hit.snippet,
        "score": round(hit.score, 9),
        "start_byte": hit.start_byte,
        "end_byte": hit.end_byte,
        "page": hit.page,  # 1-based PDF page; null for a note
        "bm25": ranked(hit.bm25),
        "vector": ranked(hit.vector),
        "contributions": [{"name": t.name, "value": round(t.value, 9)} for t in hit.contributions],
        "tags": list(hit.tags),
        "date": hit.date,
        "doc_type": hit.doc_type,
        "flags": list(hit.flags),
        "lang": hit.lang,
        "kind": str(hit.kind),  # "match": holds the query's words; "related": found by meaning only
        "more_passages": [
            {"chunk_ordinal": m.chunk.ordinal, "heading_path": m.chunk.heading_path, "snippet": m.snippet, "score": round(m.score, 9)}
            for m in hit.more
        ],
    }


def search_json(resp: SearchResponse) -> dict[str, Any]:
    from core.search.profiles import fusion_text  # a search's module: `cairn index` and `status` print no search

    return {
        "query": resp.query,
        "mode": resp.mode,
        "requested_mode": resp.requested_mode,
        "profile": resp.profile,
        "settings": asdict(resp.settings),
        "fusion": fusion_text(resp.settings, resp.mode),
        "warnings": list(resp.warnings),
        "exact_matches": resp.exact_matches,
        "correction": _correction_json(resp),
        "matches": resp.match_count,
        "related": len(resp.hits) - resp.match_count,
        "timings_ms": resp.timings_ms,
        "hits": [hit_json(i, h) for i, h in enumerate(resp.hits, 1)],
    }


def _correction_json(resp: SearchResponse) -> dict[str, Any] | None:
    """The typos corrected before searching ("showing results for …, search instead for …"), if any."""
    c = resp.correction
    if c is None:
        return None
    return {"original": c.original, "corrected": c.corrected, "words": [list(w) for w in c.words], "message": c.message}


def sync_json(report: SyncReport) -> dict[str, Any]:
    kw = report.keyword
    out: dict[str, Any] = {
        "vault": kw.vault,
        "documents": kw.documents,
        "chunks": kw.chunks,
        "added": kw.added,
        "changed": kw.changed,
        "removed": kw.removed,
        "unchanged": kw.unchanged,
        "skipped": kw.skipped,
        "warnings": kw.warnings,
        "cancelled": kw.cancelled,
        "seconds": round(kw.seconds, 3),
        "embedding": None,
    }
    if report.embedding is not None:
        e = report.embedding
        out["embedding"] = {
            "chunks": e.desired,
            "embedded": e.embedded,
            "from_cache": e.from_cache,
            "no_vector": e.skipped,  # keyword-only chunks: link lists, number tables, base64, minified code
            "removed": e.removed,
            "seconds": round(e.seconds, 3),
            "cancelled": e.cancelled,
        }
    if report.ocr is not None and (report.ocr.read or report.ocr.skipped or report.ocr.remaining):
        o = report.ocr
        out["ocr"] = {
            "read": list(o.read),  # images and scans whose text (or a further portion) went in
            "pages": o.pages,
            "skipped": o.skipped,
            "remaining": o.remaining,  # files with pages left for the next sync (a cancel)
            "cancelled": o.cancelled,
            "seconds": round(o.seconds, 3),
        }
    if report.semantic_problem:
        out["semantic_problem"] = report.semantic_problem
    return out


def status_json(st: VaultStatus) -> dict[str, Any]:
    d = st.info.to_json()
    d["built"] = st.built
    d["semantic"] = {"state": st.semantic.value, "complete": round(st.semantic_fraction, 4), "reason": st.semantic_reason}
    c = st.cover  # counted only while the passages are not all embedded (then 0s)
    d["semantic"]["notes"] = {"total": c.notes, "with_vector": c.with_vector, "summary_only": c.summaries}
    d["attachments"] = {c.kind: {"indexed": c.indexed, "skipped": dict(c.skipped)} for c in st.attachments}
    d["languages"] = {lang: round(share, 4) for lang, share in st.languages}
    d["advice"] = st.advice
    d["indexing_elsewhere"] = st.elsewhere  # another Cairn process builds it; "state" says so in words
    return d




def links_json(nl: NoteLinks) -> dict[str, Any]:
    """`cairn links --json` and the MCP tool `note_links` return this same shape."""
    return {
        "vault": nl.vault,
        "rel_path": nl.rel_path,
        "title": nl.title,
        "aliases": list(nl.aliases),
        "outgoing": [
            {
                "target": o.target,
                "anchor": o.anchor,
                "label": o.label,
                "kind": o.kind,
                "line": o.line,
                "rel_path": o.rel_path,
                "title": o.title,
                "resolved": o.rel_path is not None or o.attachment,
                "attachment": o.attachment,
            }
            for o in nl.outgoing
        ],
        "backlinks": [_backlink(b) for b in nl.backlinks],
        "unlinked_mentions": [_backlink(b) for b in nl.mentions],
        "related": [{"rel_path": r.rel_path, "title": r.title, "score": r.score, "reasons": list(r.reasons)} for r in nl.related],
        "related_note": nl.semantic_note,
    }


def _backlink(b: Any) -> dict[str, Any]:
    return {"rel_path": b.rel_path, "title": b.title, "line": b.line, "context": b.context, "kind": b.kind}
