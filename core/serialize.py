"""JSON shapes of engine results: the contract of `cairn ... --json` and its consumers."""

from __future__ import annotations

from typing import Any

from core.engine import SyncReport, VaultStatus
from core.base.models import Hit, RankedScore, SearchResponse


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
        "bm25": ranked(hit.bm25),
        "vector": ranked(hit.vector),
        "contributions": [{"name": t.name, "value": round(t.value, 9)} for t in hit.contributions],
        "tags": list(hit.tags),
        "date": hit.date,
        "doc_type": hit.doc_type,
        "flags": list(hit.flags),
        "more_passages": [
            {"chunk_ordinal": m.chunk.ordinal, "heading_path": m.chunk.heading_path, "snippet": m.snippet, "score": round(m.score, 9)}
            for m in hit.more
        ],
    }


def search_json(resp: SearchResponse) -> dict[str, Any]:
    return {
        "query": resp.query,
        "mode": resp.mode,
        "requested_mode": resp.requested_mode,
        "profile": resp.profile,
        "warnings": list(resp.warnings),
        "exact_matches": resp.exact_matches,
        "timings_ms": resp.timings_ms,
        "hits": [hit_json(i, h) for i, h in enumerate(resp.hits, 1)],
    }


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
            "removed": e.removed,
            "seconds": round(e.seconds, 3),
            "cancelled": e.cancelled,
        }
    if report.semantic_problem:
        out["semantic_problem"] = report.semantic_problem
    return out


def status_json(st: VaultStatus) -> dict[str, Any]:
    d = st.info.to_json()
    d["built"] = st.built
    d["semantic"] = {"state": st.semantic, "complete": round(st.semantic_fraction, 4)}
    return d


