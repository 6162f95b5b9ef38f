"""Ask my notes: retrieve, gate, build context, ask a model (or extract), check citations."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

from core.answer.citations import check_citations
from core.answer.context import auto_k, build_sources, messages_for, question_stems, relevance
from core.answer.extractive import NOT_SAID, Extracted, extract, term_weights
from core.answer.followup import rewrite
from core.answer.grounding import check_support
from core.answer.models import AskRequest, AskResponse, Quote, Reference, Source
from core.answer.routing import PER_FOLDER_K, Routing, folders_of, merge, select_folders, weigh
from core.answer.task_answer import answer_tasks
from core.base.confidentiality import may_send, sends_text_away
from core.base.models import Hit, SearchFilters
from core.engine import Engine
from core.search.search import SearchRequest
from core.vault.attachments import attachment_kind

Delta = Callable[[str], None]
EXTRACTIVE = "extractive"


class Answerer:
    """Answers from one engine's vaults; `provider` None means the offline extractive answer."""

    def __init__(self, engine: Engine, provider: Any | None = None, *, temperature: float = 0.2, route_folders: bool = False) -> None:
        self.engine = engine
        self.provider = provider
        self.temperature = temperature
        self.route_folders = route_folders  # opt-in: the model picks the folders to search first

    @property
    def provider_id(self) -> str:
        return EXTRACTIVE if self.provider is None else str(getattr(self.provider, "id", "llm"))

    def ask(self, req: AskRequest, *, on_delta: Delta | None = None, cancel: threading.Event | None = None) -> AskResponse:
        """An answer with its references: from the open task lines for "what is open for X?"
        (`core.answer.task_answer`), otherwise from the passages a search finds."""
        tasks = answer_tasks(self.engine, req, self.provider_id, getattr(self.provider, "model", None))
        if tasks is not None and on_delta is not None:
            on_delta(tasks.answer)
        return tasks if tasks is not None else self._ask(req, on_delta=on_delta, cancel=cancel)

    def _ask(self, req: AskRequest, *, on_delta: Delta | None = None, cancel: threading.Event | None = None) -> AskResponse:
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        # Every turn retrieves afresh: a follow-up is first rewritten to stand on its own.
        question = rewrite(req.question, req.history, self.provider, cancel) if req.history else req.question
        if question != req.question:
            timings["rewrite"] = _ms(t0)
        k = auto_k(question, req.detail, req.k)
        filters = SearchFilters(vaults=req.vaults, folders=req.folders, path_prefixes=req.path_prefixes, allow_restricted=req.allow_restricted)
        resp = self.engine.search(SearchRequest(question, mode=req.mode, k=k * 3, filters=filters))
        # A note's row carries its other matching passages folded (`Hit.more`): an answer may need them.
        hits = answerable([x for h in resp.hits for x in (h, *h.more)], chats=self.engine.config.ask_chats)
        warnings = list(resp.warnings)
        routing = None
        if self.route_folders and self.provider is not None:
            t_route = time.perf_counter()
            routing = self._route(question, req, filters, k, cancel)
            timings["route"] = _ms(t_route)
        if routing is not None and routing[0].folders:
            hits = routing[1]
        elif routing is not None:
            warnings.append(f"folder routing not used: {routing[0].fallback}")
        timings["retrieve"] = _ms(t0)
        wanted = question_stems(question)
        gated: list[tuple[Hit, bool, str]] = [(h, *relevance(h, wanted)) for h in hits]
        passing = [h for h, ok, _ in gated if ok and not unsafe_for(h, self.provider)]
        if any(ok and unsafe_for(h, self.provider) for h, ok, _ in gated):
            warnings.append("restricted notes were left out: they are never sent to a remote model")
        debug = {
            "k": k,
            "search_mode": resp.mode,
            "search_settings": asdict(resp.settings),
            "candidates": [
                {"rel_path": h.chunk.rel_path, "ordinal": h.chunk.ordinal, "score": h.score, "passes": ok, "why": why, "flags": list(h.flags)}
                for h, ok, why in gated
            ],
            "search_timings_ms": resp.timings_ms,
        }
        if routing is not None:
            debug["folder_routing"] = routing[0].as_debug()
        # What every outcome shares; each path below fills in the rest with `replace`.
        base = AskResponse(
            question=req.question,
            standalone_question=question if question != req.question else "",
            answer="",
            references=(),
            abstained=False,
            abstain_reason=None,
            context_sent=(),
            provider=self.provider_id,
            model=getattr(self.provider, "model", None),
            debug=debug,
        )
        if not passing:
            timings["total"] = _ms(t0)
            related = tuple({h.chunk.rel_path: _hit_reference(n, h) for n, h in enumerate(hits, 1)}.values())[:3]
            return replace(
                base,
                answer=_not_said_text(NOT_SAID, related),
                related=related,
                abstained=True,
                abstain_reason="no_relevant_context",
                warnings=tuple(warnings),
                timings_ms=timings,
            )
        built = build_sources(passing[:k], req.context_budget_tokens)
        if built.dropped_for_budget:
            warnings.append(f"{built.dropped_for_budget} source(s) left out to stay within the context budget")
        sources = built.sources
        messages = messages_for(question, sources)
        # The answerability check runs before any model is asked: a near-miss is "your notes don't say",
        # not an invitation to a model to fill the gap. Its passages are also the fallback answer.
        got = self.extract(question, sources)
        debug["extractive"] = _extract_debug(got)
        if got.abstained:
            timings["total"] = _ms(t0)
            return self._not_said(got, sources, warnings, timings, base)
        if self.provider is None:
            timings["total"] = _ms(t0)
            if on_delta is not None:
                on_delta(got.answer)
            return self._finish(got.answer, sources, (), warnings, timings, base, first_token_ms=timings["total"], quotes=got.quotes)
        return self._generate(messages, sources, warnings, timings, base, t0, on_delta, cancel, got)

    def _route(
        self, question: str, req: AskRequest, filters: SearchFilters, k: int, cancel: threading.Event | None
    ) -> tuple[Routing, list[Hit]]:
        """Search the folders the model ranks first, each weighed by its position (seed 001)."""
        names = req.vaults or tuple(v.name for v in self.engine.vaults)
        available = folders_of(rel for name in names for rel in self.engine.index_for(name).files)
        routing = select_folders(question, available, req.folders, self.provider, cancel)
        groups = []
        for folder, weight in zip(routing.folders, routing.weights):
            scoped = replace(filters, folders=(folder,))
            found = self.engine.search(SearchRequest(question, mode=req.mode, k=PER_FOLDER_K, filters=scoped))
            groups.append(weigh(found.hits, folder, weight))
        return routing, merge(groups, k * 3)

    def extract(self, question: str, sources: tuple[Source, ...]) -> Extracted:
        """The offline answer over these sources, key words weighed by their rarity in the vault."""
        return extract(question, sources, self._sentence_embedder(sources), self._weights(question, sources))

    def _weights(self, question: str, sources: tuple[Source, ...]) -> dict[str, float] | None:
        if not sources:
            return None
        terms = question_stems(question)
        try:
            keyword = self.engine.index_for(sources[0].vault).keyword
            return term_weights(terms, keyword.doc_frequencies(terms), keyword.doc_count())
        except Exception:  # an index being rebuilt: weigh every word the same
            return None

    def _not_said(
        self, got: Extracted, sources: tuple[Source, ...], warnings: list[str], timings: dict[str, float], base: AskResponse
    ) -> AskResponse:
        related = tuple({s.rel_path: _reference(s) for s in sources}.values())[:5]
        return replace(
            base,
            answer=_not_said_text(got.answer, related),
            abstained=True,
            abstain_reason="notes_do_not_say",
            sources=sources,
            warnings=tuple(warnings),
            timings_ms=timings,
            related=related,
        )

    def _sentence_embedder(self, sources: tuple[Source, ...]) -> Callable[[list[str]], Any] | None:
        from core.providers.embedding.registry import default_registry

        vc = self.engine.config.vault_named(sources[0].vault) if sources else None
        emb = self.engine.embedder_for(vc) if vc is not None else None
        if emb is None or vc is None or vc.embedder != "builtin" or sends_text_away(default_registry().get(vc.embedder)):
            return None  # only the built-in local model: sentences of notes are not sent anywhere for this
        return lambda texts: emb.embed_documents(texts)

    def _generate(
        self,
        messages: list[dict[str, str]],
        sources: tuple[Source, ...],
        warnings: list[str],
        timings: dict[str, float],
        base: AskResponse,
        t0: float,
        on_delta: Delta | None,
        cancel: threading.Event | None,
        fallback: Extracted | None = None,
    ) -> AskResponse:
        from core.providers.llm import ChatMessage, LLMError

        parts: list[str] = []
        first: float | None = None
        error: str | None = None
        incomplete = False
        try:
            chat = [ChatMessage(m["role"], m["content"]) for m in messages]
            for delta in self.provider.stream(chat, temperature=self.temperature, cancel=cancel):  # type: ignore[union-attr]
                if first is None:
                    first = _ms(t0)
                parts.append(delta)
                if on_delta is not None:
                    on_delta(delta)
        except LLMError as exc:
            error = str(exc)
            incomplete = bool(parts)
            if exc.code == "cancelled":
                warnings.append("stopped before the answer was complete")
        if cancel is not None and cancel.is_set() and not incomplete:
            incomplete = True  # stopped by the user: what arrived is kept as it is
            warnings.append("stopped before the answer was complete")
        timings["total"] = _ms(t0)
        return self._finish("".join(parts), sources, tuple(messages), warnings, timings, base, first, error, incomplete, fallback=fallback)

    def _finish(
        self,
        text: str,
        sources: tuple[Source, ...],
        messages: tuple[dict[str, str], ...],
        warnings: list[str],
        timings: dict[str, float],
        base: AskResponse,
        first_token_ms: float | None = None,
        error: str | None = None,
        incomplete: bool = False,
        quotes: tuple[Quote, ...] = (),
        fallback: Extracted | None = None,
    ) -> AskResponse:
        check = check_citations(text, len(sources))
        for n in check.invalid:
            warnings.append(f"removed citation [{n}]: there is no source {n}")
        answer, cited, unverified = check.text, check.cited, ""
        if messages:  # a model wrote it: each citation must be backed by its source
            grounded = check_support(check.text, sources)
            for n in grounded.unsupported:
                warnings.append(f"removed citation [{n}]: source {n} does not support the claim it was attached to")
            answer, cited = grounded.text, grounded.supported
            if answer.strip() and not cited and not incomplete:
                got = fallback or self.extract(base.standalone_question or base.question, sources)
                warnings.append(
                    "the model's answer cited none of the sources, so it is not shown as the answer: "
                    + ("your notes' own passages are shown instead" if not got.abstained else "your notes don't say")
                )
                unverified, answer, quotes = answer, got.answer, got.quotes
                cited = tuple(dict.fromkeys(q.number for q in quotes))
        elif text.strip() and not cited:
            warnings.append("the answer cites none of the sources; treat it with care")
        by_number = {s.number: s for s in sources}
        refs = tuple(_reference(by_number[n]) for n in cited)
        return replace(
            base,
            answer=answer,
            unverified=unverified,
            references=refs,
            context_sent=messages,
            sources=sources,
            warnings=tuple(dict.fromkeys(warnings)),
            incomplete=incomplete,
            error=error,
            first_token_ms=first_token_ms,
            timings_ms=timings,
            quotes=quotes,
        )


def _extract_debug(got: Extracted) -> dict[str, Any]:
    b = got.best
    best = None if b is None else {
        "rel_path": b.source.rel_path,
        "kind": b.unit.kind,
        "similarity": round(b.similarity, 4),
        "coverage": round(b.coverage, 4),
        "text_coverage": round(b.text_coverage, 4),
        "score": round(b.score, 4),
        "text": b.unit.text[:200],
    }
    return {"abstained": got.abstained, "why": got.reason, "best": best}


def _not_said_text(said: str, related: tuple[Reference, ...]) -> str:
    names = "\n".join(f"- {r.title or r.rel_path} ({r.rel_path})" for r in related)
    return said + ("\n\nThe closest notes:\n" + names if names else "")


def _hit_reference(number: int, h: Hit) -> Reference:
    c = h.chunk
    return Reference(number, c.vault, c.rel_path, c.heading_path, c.ordinal, h.start_byte, h.end_byte, h.title)


def _reference(s: Source) -> Reference:
    return Reference(s.number, s.vault, s.rel_path, s.heading_path, s.chunk_ordinals[0], s.start_byte, s.end_byte, s.title, s.page, s.last_page)


def unsafe_for(hit: Hit, provider: Any | None) -> bool:
    """Whether `hit` must not be sent to `provider`: a restricted note never goes to a remote model.

    Shared by Ask and the LLM rerank (`core.answer.rerank`), so both keep the same rule.
    """
    return not may_send(hit.confidentiality, provider)


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)


def answerable(hits: list[Hit], *, chats: bool) -> list[Hit]:
    """The hits an answer may quote: an AI chat export's only when the user allows it (`ask_chats`),
    since an assistant's words are not the user's own notes."""
    return hits if chats else [h for h in hits if attachment_kind(h.chunk.rel_path) != "chat"]
