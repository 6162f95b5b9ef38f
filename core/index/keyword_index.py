"""The per-vault Whoosh BM25F index: one Whoosh document per chunk.

Whoosh keeps the chunk text and metadata as stored fields too, so a hit can be
shown (title, heading path, snippet, byte range) without re-reading the note.
The schema, a note's rows, `StoredChunk` and the filter query are in
`core.index.keyword_schema`; this module opens, writes and searches the index.
"""

from __future__ import annotations

import threading
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.base.confidentiality import Confidentiality
from core.base.gc_pause import gc_paused
from core.base.models import Document
from core.index.analysis import Stemmer, analysed_terms, cjk_runs, is_cjk, stem_language
from core.index.bulk_writer import BulkWriter
from core.index.keyword_schema import INDEX_NAME, StoredChunk, build_schema, filter_query
from core.index.keyword_store import KeywordStore
from core.index.merge_policy import LIVE_MERGE_DOCS, MAX_SEGMENTS, settling, tiered
from core.index.searchers import Searchers
from core.index.whoosh_pin import lean_query
from core.index.whoosh_storage import MappedStorage

if TYPE_CHECKING:  # the search side (queries, scorers, phrases) is imported by the first search, not by `cairn index`
    from whoosh import query as wq

    from core.base.models import ParsedQuery, SearchFilters  # a search's (core.base.search_models)
    from core.index.bm25_fast import FastBM25F
    from core.index.segment_worker import BuiltSegment  # the worker imports the markdown parser: not for a search

SEARCH_FIELDS = ("title", "aliases", "names", "heading_path", "body", "tags")
# Per-field weights on top of BM25. A chunk's body already holds its heading line (and the
# first chunk the note's H1), so the title and heading fields only add a little; tuned on
# SciFact train (nDCG@10 0.579 with all fields at full weight, 0.683 with these).
FIELD_WEIGHTS = {"title": 0.25, "aliases": 0.5, "names": 0.25, "heading_path": 0.1, "body": 1.0, "tags": 0.5}
# Words that make a question a question but say nothing about its subject. Whoosh's stop list
# keeps them, and in a small vault "how" or "does" is rare enough to outrank the subject.
QUESTION_WORDS = frozenset("how what when where who whom whose which why does do did should could would can".split())
# Bigrams score like separate words; a chunk holding the query's CJK characters in the
# query's order (its adjacent bigrams adjacent) gains up to this share of the top score.
PHRASE_WEIGHT = 0.15
BULK_NOTES = 100  # a batch this large is written with the garbage collector paused (see core.base.gc_pause)
SINGLE_CHAR_BIGRAMS = 30  # a one-character CJK query word searches this many bigrams holding it
DEFAULT_B = 0.4  # Anserini's BM25 defaults; Whoosh's (0.75, 1.2) did no better here
DEFAULT_K1 = 0.9


# A language holding fewer chunks than this share of the vault does not get its own query
# analysis: one misdetected chunk must not change how every query is stemmed.
QUERY_LANGUAGE_SHARE = 0.02


@dataclass(frozen=True, slots=True)
class KeywordHit:
    """One chunk the keyword index found, with its BM25F score."""

    chunk_id: str
    score: float
    stored: StoredChunk | None  # None: not fetched yet (see KeywordIndex.stored)


def _hit(fields: Mapping[str, Any], score: float) -> KeywordHit:
    chunk = StoredChunk.from_fields(fields)
    return KeywordHit(chunk.chunk_id, score, chunk)


class KeywordIndex:
    """One vault's Whoosh index. Writes go through one lock; searches may run beside them.

    Each thread searches through a searcher of its own, borrowed for one read at a time
    (`core.index.searchers`), so `close()` may be called from any thread, any number of times.
    """

    def __init__(self, directory: Path, *, b: float = DEFAULT_B, k1: float = DEFAULT_K1) -> None:
        self.directory = directory
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # private as made (`make_private` would chmod it)
        # Compound segments read as views of a map, not as Whoosh's BytesIO copies of it
        # (~135 MB held at 10k notes, and most of a cold `cairn search`): see whoosh_storage.
        storage = MappedStorage(str(directory))
        if storage.index_exists(INDEX_NAME):
            self._ix = storage.open_index(INDEX_NAME)
        else:
            self._ix = storage.create_index(build_schema(), indexname=INDEX_NAME)
        self._store = KeywordStore(self._ix)
        self._b, self._k1 = b, k1  # for the scorers, made by the first search (`_weighting`, `_fast`)
        self._schema = self._ix.schema
        self.stemmer = Stemmer()  # the analyzer's terms for scanned text (snippets)
        self._languages: tuple[Any, tuple[str, ...]] = (None, ())
        self._bigram_cache: tuple[Any, dict[str, list[str]]] = (None, {})
        self._cid_cache: tuple[Any, dict[int, str]] = (None, {})
        self._write_lock = threading.Lock()
        self._searchers = Searchers(self._open_searcher)
        self.reading = self._searchers.reading  # `with index.reading() as searcher:` this thread's, kept open
        self.open_searchers = self._searchers.open_searchers

    @cached_property
    def _weighting(self) -> Any:
        """Whoosh's BM25F, imported by the first search: writing the index opens no searcher."""
        lean_query()
        from whoosh.scoring import BM25F

        return BM25F(B=self._b, K1=self._k1)

    @cached_property
    def _fast(self) -> FastBM25F:
        """Cairn's BM25F over Whoosh's postings, made at the first search that scores."""
        from core.index.bm25_fast import FastBM25F

        return FastBM25F(b=self._b, k1=self._k1)

    def _open_searcher(self) -> Any:
        """A new Whoosh searcher, scoring with BM25F."""
        return self._ix.searcher(weighting=self._weighting)

    def close(self) -> None:
        """Release the index's files; a search running meanwhile finishes, and the next one reopens."""
        self._searchers.close()

    def doc_count(self) -> int:
        with self.reading() as searcher:
            return int(searcher.doc_count())

    def doc_frequencies(self, terms: Iterable[str], field: str = "body") -> dict[str, int]:
        """How many chunks hold each (analysed) term: what the answerer weighs key words by."""
        with self.reading() as searcher:
            return {t: int(searcher.doc_frequency(field, t)) for t in terms}

    def apply(self, removed: Iterable[str], added: Sequence[Document], held: Container[str] | None = None) -> None:
        """Delete every chunk of the `removed` notes, then add the chunks of `added`.

        `held` names the notes the index holds (the caller's manifest): an added note outside it has
        no chunks to delete, and a batch of only such notes opens no searcher to look (a parallel
        build's later commits: the first look imports Whoosh's searching side, ~10 ms). None: any may.
        """
        removed = list(removed)
        if not removed and not added:
            return
        bulk = len(added) >= BULK_NOTES
        with self._write_lock, gc_paused(bulk):
            with self._store.writing() as writer:
                stale = [*removed, *(doc.rel_path for doc in added if held is None or doc.rel_path in held)]
                if writer.segments and stale:  # an index without segments (a first index) has nothing to delete
                    self._store.delete_notes(writer, stale)
                self._store.add(writer, added)
            # Size tiers (core.index.merge_policy): small segments only, a bulk batch too; see settle().
            writer.commit(mergetype=tiered(LIVE_MERGE_DOCS))
        self._searchers.forget_mine()  # reopened on this thread's next search; the others see up_to_date() fail

    def bulk(self) -> BulkWriter:
        """A writer kept open across a pass (`core.index.bulk_writer`), holding the write lock till it ends."""
        return BulkWriter(self._store, self._write_lock, self.directory, self._searchers.forget_mine)

    def add_built(self, built: BuiltSegment, replaced: Iterable[str]) -> None:
        """List a segment another process built; the chunks of the `replaced` notes go first."""
        self.bulk().commit(list(replaced), [built])

    def segment_count(self) -> int:
        """Live segments in the index now (each costs a search a term lookup per query term)."""
        return sum(1 for s in self._ix._segments() if s.doc_count())

    def settle(self, max_segments: int | None = None) -> bool:
        """At a sync's end: merge the smallest segments into one when more than `max_segments` are live.

        Bulk commits merge no more than a live edit's do (`core.index.merge_policy`), so this is
        where a vault's segment count is bounded; the merge happens inside the sync, never on an edit.
        Returns whether it merged.
        """
        bound = MAX_SEGMENTS if max_segments is None else max_segments
        with self._write_lock, gc_paused():
            if self.segment_count() <= bound:
                return False
            with self._store.writing() as writer:
                pass  # nothing added: the commit only merges
            writer.commit(mergetype=settling(bound))
        self._searchers.forget_mine()
        return True

    def search(
        self, parsed: ParsedQuery, filters: SearchFilters, limit: int, expansion: Mapping[str, float] | None = None
    ) -> list[KeywordHit]:
        """The top `limit` chunks for `parsed`; `expansion` adds body terms at their own (small) weights.

        Expansion terms apply to plain word queries only: a quoted phrase must match as typed.
        """
        with self.reading() as searcher:
            return self._search(searcher, parsed, filters, limit, expansion)

    def _search(
        self, searcher: Any, parsed: ParsedQuery, filters: SearchFilters, limit: int, expansion: Mapping[str, float] | None
    ) -> list[KeywordHit]:
        lean_query()
        from whoosh import query as wq

        flt = filter_query(filters)
        mask = None if filters.allow_restricted else wq.Term("confidentiality", Confidentiality.RESTRICTED.value)
        if parsed.phrases:
            return self._phrase_search(searcher, parsed, flt, mask, limit)
        q = self.build_query(parsed)
        if q is None:
            if not parsed.text.strip() and flt is not None:
                q = wq.Every()
            else:
                return []
        clauses = self._clauses(parsed) if not isinstance(q, wq.Every) else None
        if clauses:
            include = set(searcher.docs_for_query(flt)) if flt is not None else None
            exclude = set(searcher.docs_for_query(mask)) if mask is not None else set()
            weights = None
            if expansion:
                extra = [("body", term) for term in expansion if ("body", term) not in clauses]
                weights = [1.0] * len(clauses) + [expansion[t] for _, t in extra]
                clauses = clauses + extra
            top = self._fast.top(
                searcher, clauses, limit, field_weights=FIELD_WEIGHTS, exclude=exclude, include=include, clause_weights=weights
            )
            grams = _trigrams(parsed)
            if grams and top and PHRASE_WEIGHT:
                return _phrase_rerank(searcher, top, grams)
            return [KeywordHit(self._chunk_id(searcher, docnum), score, None) for docnum, score in top]
        results = searcher.search(q, limit=limit, filter=flt, mask=mask)
        return [_hit(dict(hit.fields()), float(hit.score or 0.0)) for hit in results]

    def _phrase_search(self, searcher: Any, parsed: ParsedQuery, flt: wq.Query | None, mask: wq.Query | None, limit: int) -> list[KeywordHit]:
        """Chunks holding every quoted phrase word for word (see `core.index.phrase_match`)."""
        from core.index.phrase_match import phrase_checks, scan, verified

        checks = phrase_checks(parsed.phrases, self.languages())
        if not checks:
            return []
        indexed = replace(parsed, phrases=tuple(c.phrase for c in checks if not c.literal_only))
        if indexed.phrases:  # an indexed phrase is required: its matches are the candidates
            q = self.build_query(indexed)
            found = verified(searcher.search(q, limit=None, filter=flt, mask=mask), checks, limit) if q is not None else []
        else:  # only stop-word phrases: scan the stored text, scored with the query's other words
            rest = self.build_query(replace(parsed, phrases=()))
            scores = {h.docnum: float(h.score or 0.0) for h in searcher.search(rest, limit=None, filter=flt, mask=mask)} if rest is not None else {}
            include = set(searcher.docs_for_query(flt)) if flt is not None else None
            exclude = set(searcher.docs_for_query(mask)) if mask is not None else set()
            found = scan(searcher, checks, limit, include=include, exclude=exclude, term_scores=scores)
        return [_hit(fields, score) for fields, score in found]

    def _chunk_id(self, searcher: Any, docnum: int) -> str:
        """Chunk ids by document number, remembered for the life of one searcher."""
        cache = self._cid_cache
        if cache[0] is not searcher:
            cache = self._cid_cache = (searcher, {})
        cid = cache[1].get(docnum)
        if cid is None:
            cid = cache[1][docnum] = searcher.stored_fields(docnum)["chunk_id"]
        return cid

    def languages(self) -> tuple[str, ...]:
        """The stemming languages a query is analysed in: those of the vault's chunks.

        English always comes first (code, names and English words turn up in every vault);
        a language counts only with at least `QUERY_LANGUAGE_SHARE` of the chunks.
        """
        with self.reading() as searcher:
            cached = self._languages
            if cached[0] is searcher:
                return cached[1]
            found = {stem_language(lang) for lang, share in self.language_shares().items() if share >= QUERY_LANGUAGE_SHARE}
            langs = ("en", *sorted(found - {"en"}))
            self._languages = (searcher, langs)
            return langs

    def language_shares(self) -> dict[str, float]:
        """Each detected chunk language's share of the vault's chunks, largest first."""
        counts: dict[str, float] = {}
        with self.reading() as searcher:
            total = searcher.doc_count()
            for raw in searcher.lexicon("lang") if total else ():
                lang = raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
                counts[lang] = searcher.doc_frequency("lang", lang) / total
        return dict(sorted(counts.items(), key=lambda kv: -kv[1]))

    def query_terms(self, text: str) -> list[str]:
        """The index terms `text` can match, analysed in every language of the vault."""
        return analysed_terms(self._schema, "body", text, self.languages())

    def _clauses(self, parsed: ParsedQuery) -> list[tuple[str, str]]:
        schema = self._schema
        words = [w for w in parsed.terms if w.lower() not in QUESTION_WORDS]
        text = " ".join(words or parsed.terms)  # "how long does the dough rest" → "long dough rest"
        langs = self.languages()
        out = [(field, token) for field in SEARCH_FIELDS for token in analysed_terms(schema, field, text, langs)]
        body = [t for f, t in out if f == "body" and is_cjk(t)]
        if body and all(len(t) == 1 for t in body):
            # A query whose only CJK is lone characters (猫): those are indexed inside bigrams
            # (我的猫 → 我的, 的猫). Beside real bigrams a lone 用 or 把 is only noise.
            out += [("body", gram) for char in body for gram in self._bigrams_with(char)]
        return out

    def _bigrams_with(self, char: str) -> list[str]:
        """The most frequent indexed body bigrams holding `char`, read once per searcher."""
        with self.reading() as searcher:
            cache = self._bigram_cache
            if cache[0] is not searcher:
                cache = self._bigram_cache = (searcher, {})
            found = cache[1].get(char)
            if found is None:
                reader = searcher.reader()
                grams = []
                for raw in reader.lexicon("body"):
                    term = raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
                    if len(term) == 2 and char in term:
                        grams.append((reader.doc_frequency("body", term), term))
                found = cache[1][char] = [t for _, t in sorted(grams, reverse=True)[:SINGLE_CHAR_BIGRAMS]]
            return found

    def build_query(self, parsed: ParsedQuery) -> wq.Query | None:
        lean_query()
        from whoosh import query as wq

        schema = self._schema
        clauses: list[wq.Query] = [wq.Term(f, t, boost=FIELD_WEIGHTS.get(f, 1.0)) for f, t in self._clauses(parsed)]
        required: list[wq.Query] = []
        for phrase in parsed.phrases:
            options = []
            for lang in self.languages():  # a phrase in each language's stems; any may match
                tokens = analysed_terms(schema, "body", phrase, (lang,))
                if len(tokens) == 1:
                    options += [wq.Term(f, tokens[0]) for f in ("title", "heading_path", "body")]
                elif tokens:
                    options += [wq.Phrase(f, tokens) for f in ("title", "heading_path", "body")]
            if options:
                required.append(wq.Or(options))
        if not clauses and not required:
            return None
        if required:
            base = wq.And(required)
            return wq.AndMaybe(base, wq.Or(clauses)) if clauses else base
        return wq.Or(clauses)

    def restricted_chunk_ids(self) -> list[str]:
        """Chunks of notes marked confidentiality: restricted (usually none), for the vector side's mask."""
        with self.reading() as searcher:  # the searcher imported Whoosh's query package
            from whoosh import query as wq

            return [self._chunk_id(searcher, d) for d in searcher.docs_for_query(wq.Term("confidentiality", Confidentiality.RESTRICTED.value))]

    def stored(self, chunk_ids: Iterable[str]) -> dict[str, StoredChunk]:
        """The stored chunks of these ids (used to show vector-only hits); unknown ids are left out."""
        out: dict[str, StoredChunk] = {}
        with self.reading() as searcher:
            for cid in chunk_ids:
                docnum = searcher.document_number(chunk_id=cid)
                if docnum is not None:
                    out[cid] = StoredChunk.from_fields(searcher.stored_fields(docnum))
        return out

    def all_stored(self) -> list[StoredChunk]:
        with self.reading() as searcher:
            return [StoredChunk.from_fields(f) for f in searcher.documents()]

    def stored_for_note(self, rel_path: str) -> list[StoredChunk]:
        with self.reading() as searcher:
            docs = [StoredChunk.from_fields(f) for f in searcher.documents(rel_path=rel_path)]
        return sorted(docs, key=lambda d: d.ordinal)

    def optimize(self) -> None:
        with self._write_lock:
            self._ix.optimize()


def _trigrams(parsed: ParsedQuery) -> frozenset[str]:
    """Every three-character window of the query's CJK runs: two adjacent bigrams."""
    text = " ".join(parsed.terms)
    return frozenset(run[i : i + 3] for run in cjk_runs(text) for i in range(len(run) - 2))


def _phrase_rerank(searcher: Any, top: list[tuple[int, float]], grams: frozenset[str]) -> list[KeywordHit]:
    """Phrase-like scoring for CJK: the share of the query's trigrams a chunk holds adds to its score.

    Bigram postings carry no order, so "压缩包" and a chunk with 压缩 here and 缩包 there
    would score alike; the stored text tells which chunk has the words as the query wrote them.
    """
    best = top[0][1]
    hits = []
    for docnum, score in top:
        fields = searcher.stored_fields(docnum)
        text = f"{fields.get('title', '')}\n{fields.get('body', '')}"
        found = sum(1 for g in grams if g in text)
        hits.append(KeywordHit(fields["chunk_id"], score + PHRASE_WEIGHT * best * found / len(grams), StoredChunk.from_fields(fields)))
    hits.sort(key=lambda h: -h.score)
    return hits
