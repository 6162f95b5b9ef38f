"""Run evaluations through the normal engine: golden files over a vault, BEIR corpora.

BEIR documents become notes (title as H1 + text) in a cache folder keyed by
the corpus hash and the engine's chunking config, and are indexed by the same
pipeline a user's vault goes through; a second run re-uses that index.
"""

from __future__ import annotations

import hashlib
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from core.base.config import EngineConfig
from core.base.models import SearchFilters, SearchMode
from core.base.paths import AppPaths
from core.engine import Engine
from core.eval.beir import BeirDataset, corpus_hash, load_beir, write_corpus_as_notes
from core.eval.golden import GoldenCase, GoldenSet
from core.eval.metrics import mrr_at_k, ndcg_at_k, precision_at_k, recall_at_k
from core.eval.report import CaseResult, EvalReport, build_report
from core.index.indexer import chunking_hash
from core.search.search import SearchRequest
from core.semantic import EmbedderFactory, default_embedder_factory
from core.vault.chunker import ChunkLimits

Progress = Callable[[int, int, str], None]
RECALL_CUTS = (1, 3, 10)  # note-level recall reported for every golden run, whatever k is
GOLDEN_VAULT = "golden"


def _ranked_notes(engine: Engine, query: str, mode: str, depth: int, filters: SearchFilters) -> tuple[list[str], float]:
    """Notes in rank order (one entry per note) and the query's latency in ms."""
    t0 = time.perf_counter()
    # One passage per note: the golden sets grade notes. Everything else is the user's settings.
    resp = engine.search(SearchRequest(query, mode=mode, k=depth, filters=filters, per_note_cap=1))
    ms = (time.perf_counter() - t0) * 1000
    return [h.chunk.rel_path for h in resp.hits], ms


def run_golden(engine: Engine, golden: GoldenSet, *, mode: str, k: int, vault: str | None = None) -> EvalReport:
    """Score every golden case: recall@k, precision@k, MRR@10, nDCG@10 and a pass/fail."""
    filters = SearchFilters(vaults=(vault,) if vault else ())
    results: list[CaseResult] = []
    latencies: list[float] = []
    for case in golden.cases:
        ranked, ms = _ranked_notes(engine, case.query, mode, max(k, 10), replace(filters, where=case.where))
        latencies.append(ms)
        results.append(_score_case(case, ranked, k))
    timings = _latency_summary(latencies)
    return build_report(mode, k, results, timings, source=golden.source)


def _score_case(case: GoldenCase, ranked: list[str], k: int) -> CaseResult:
    graded = case.graded_relevance()
    relevant = set(graded)
    must = list(case.must_include_source_paths)
    # Note-level recall counts the notes a case must find; acceptable ones count in MRR and nDCG,
    # so "R@3" reads as "the note that answers is in the top 3".
    essential = set(must) or relevant
    metrics: dict[str, float | None] = {
        f"recall@{k}": recall_at_k(ranked, relevant, k),
        f"precision@{k}": precision_at_k(ranked, relevant, k),
        "mrr@10": mrr_at_k(ranked, relevant, 10),
        "ndcg@10": ndcg_at_k(ranked, graded, 10),
    }
    metrics |= {f"recall@{n}": recall_at_k(ranked, essential, n) for n in RECALL_CUTS}
    problems = [f"expected {p} in the top {k}" for p in must if p not in ranked[:k]]
    return CaseResult(case.id, case.query, tuple(ranked[:k]), metrics, not problems, tuple(problems))


def _latency_summary(latencies: Sequence[float]) -> dict[str, float]:
    if not latencies:
        return {}
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"query_p50_ms": round(statistics.median(ordered), 3), "query_p95_ms": round(p95, 3)}


@dataclass(frozen=True, slots=True)
class BeirModeResult:
    mode: str
    ndcg_at_10: float
    recall_at_100: float
    mrr_at_10: float
    query_p50_ms: float
    query_p95_ms: float
    effective_mode: str


@dataclass(frozen=True, slots=True)
class BeirRun:
    dataset: str
    split: str
    queries: int
    documents: int
    chunks: int
    index_seconds: float
    embed_seconds: float
    reused_index: bool
    modes: tuple[BeirModeResult, ...]
    warnings: tuple[str, ...]


def beir_home(paths: AppPaths, directory: Path, config: EngineConfig) -> Path:
    key = f"{corpus_hash(directory)[:16]}-{chunking_hash(ChunkLimits(config.soft_chars, config.hard_chars))}"
    return paths.cache_dir / "beir" / key


def run_beir(
    paths: AppPaths,
    directory: Path,
    *,
    split: str,
    modes: Sequence[str],
    limit_queries: int | None = None,
    config: EngineConfig | None = None,
    embedder_factory: EmbedderFactory | None = default_embedder_factory,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> BeirRun:
    ds: BeirDataset = load_beir(directory, split)
    base = config or EngineConfig()
    home = beir_home(paths, directory, base)
    notes_dir = home / "notes"
    notes_dir.mkdir(parents=True, exist_ok=True)
    doc_to_rel = write_corpus_as_notes(ds, notes_dir)
    rel_to_doc = {rel: doc for doc, rel in doc_to_rel.items()}
    sub_paths = AppPaths(home / "engine", shared_cache=paths.cache_dir)
    engine = Engine(sub_paths, replace_vaults(base), embedder_factory=embedder_factory)
    if engine.config.vault_named("beir") is None:
        engine.add_vault(notes_dir, name="beir")
    needs_semantic = any(m in (SearchMode.SEMANTIC, SearchMode.HYBRID) for m in modes)
    reports = engine.sync(["beir"], progress=progress, cancel=cancel, embed=needs_semantic)
    kw = reports[0].keyword
    emb = reports[0].embedding
    warnings = [reports[0].semantic_problem] if reports[0].semantic_problem else []
    queries = list(ds.queries)[: limit_queries or None]
    results = []
    for mode in modes:
        ndcgs, recalls, mrrs, lat = [], [], [], []
        effective = mode
        for i, q in enumerate(queries):
            if cancel is not None and cancel.is_set():
                break
            resp_rels, ms = _ranked_notes(engine, q.text, mode, 100, SearchFilters())
            if i == 0:
                effective = engine.search(SearchRequest(q.text, mode=mode, k=1)).mode
            ranked = [rel_to_doc.get(r, r) for r in resp_rels]
            graded = ds.qrels.get(q.query_id, {})
            ndcgs.append(ndcg_at_k(ranked, graded, 10))
            recalls.append(recall_at_k(ranked, {d for d, g in graded.items() if g > 0}, 100))
            mrrs.append(mrr_at_k(ranked, {d for d, g in graded.items() if g > 0}, 10))
            lat.append(ms)
            if progress is not None and (i % 50 == 0 or i == len(queries) - 1):
                progress(i + 1, len(queries), f"queries ({mode})")
        summary = _latency_summary(lat)
        results.append(
            BeirModeResult(
                mode,
                _avg(ndcgs),
                _avg(recalls),
                _avg(mrrs),
                summary.get("query_p50_ms", 0.0),
                summary.get("query_p95_ms", 0.0),
                effective,
            )
        )
    engine.close()
    return BeirRun(
        dataset=directory.name,
        split=split,
        queries=len(queries),
        documents=kw.documents,
        chunks=kw.chunks,
        index_seconds=round(kw.seconds, 3),
        embed_seconds=round(emb.seconds, 3) if emb else 0.0,
        reused_index=kw.added == 0 and kw.changed == 0,
        modes=tuple(results),
        warnings=tuple(warnings),
    )


def golden_engine(
    paths: AppPaths,
    vault_dir: Path,
    *,
    embed: bool,
    config: EngineConfig | None = None,
    embedder_factory: EmbedderFactory | None = default_embedder_factory,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Engine:
    """An engine over one golden file's vault, indexed in a cache folder (never in the vault).

    The index lives under the cache keyed by the vault's absolute path and the
    chunking config, so a second run only re-reads what changed; the embedding
    cache is shared with the user's engine, so vectors are computed once.
    The vault is registered as :data:`GOLDEN_VAULT`.
    """
    base = config or EngineConfig()
    chunking = chunking_hash(ChunkLimits(base.soft_chars, base.hard_chars))
    key = hashlib.sha256(str(vault_dir.resolve()).encode("utf-8")).hexdigest()[:16]
    home = paths.cache_dir / "golden" / f"{vault_dir.name}-{key}-{chunking}"
    home.mkdir(parents=True, exist_ok=True)
    engine = Engine(AppPaths(home / "engine", shared_cache=paths.cache_dir), replace_vaults(base), embedder_factory=embedder_factory)
    if engine.config.vault_named(GOLDEN_VAULT) is None:
        engine.add_vault(vault_dir, name=GOLDEN_VAULT)
    engine.sync([GOLDEN_VAULT], progress=progress, cancel=cancel, embed=embed)
    return engine


def replace_vaults(config: EngineConfig) -> EngineConfig:
    """The BEIR engine keeps the user's tuning knobs but none of the user's vaults."""
    return replace(config, vaults=())


def _avg(values: Sequence[float | None]) -> float:
    vals = [v for v in values if v is not None]
    return round(sum(vals) / len(vals), 4) if vals else 0.0
