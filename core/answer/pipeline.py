"""Ask my notes: retrieve, gate, build context, ask a model (or extract), check citations."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

from core.answer.citations import check_citations
from core.answer.context import auto_k, build_sources, messages_for, question_stems, relevance
from core.answer.extractive import extract_answer
from core.answer.models import AskRequest, AskResponse, Reference, Source
from core.base.models import Hit, SearchFilters
from core.engine import Engine
from core.search.search import SearchRequest

Delta = Callable[[str], None]
EXTRACTIVE = "extractive"


class Answerer:
    """Answers from one engine's vaults; `provider` None means the offline extractive answer."""

    def __init__(self, engine: Engine, provider: Any | None = None, *, temperature: float = 0.2) -> None:
        self.engine = engine
        self.provider = provider
        self.temperature = temperature

    @property
    def provider_id(self) -> str:
        return EXTRACTIVE if self.provider is None else str(getattr(self.provider, "id", "llm"))

    def ask(self, req: AskRequest, *, on_delta: Delta | None = None, cancel: threading.Event | None = None) -> AskResponse:
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        k = auto_k(req.question, req.detail, req.k)
        filters = SearchFilters(vaults=req.vaults, folders=req.folders, allow_restricted=req.allow_restricted)
        resp = self.engine.search(SearchRequest(req.question, mode=req.mode, k=k * 3, filters=filters))
        timings["retrieve"] = _ms(t0)
        warnings = list(resp.warnings)
        wanted = question_stems(req.question)
        gated: list[tuple[Hit, bool, str]] = [(h, *relevance(h, wanted)) for h in resp.hits]
        passing = [h for h, ok, _ in gated if ok and not _unsafe_for(h, self.provider)]
        if any(ok and _unsafe_for(h, self.provider) for h, ok, _ in gated):
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
        # What every outcome shares; each path below fills in the rest with `replace`.
        base = AskResponse(
            question=req.question,
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
            return replace(
                base,
                answer="I could not find anything in your notes about that.",
                abstained=True,
                abstain_reason="no_relevant_context",
                warnings=tuple(warnings),
                timings_ms=timings,
            )
        built = build_sources(passing[:k], req.context_budget_tokens)
        if built.dropped_for_budget:
            warnings.append(f"{built.dropped_for_budget} source(s) left out to stay within the context budget")
        sources = built.sources
        messages = messages_for(req.question, sources)
        if self.provider is None:
            text = extract_answer(req.question, sources, embed=self._sentence_embedder(sources))
            if on_delta is not None:
                on_delta(text)
            timings["total"] = _ms(t0)
            return self._finish(text, sources, (), warnings, timings, base, first_token_ms=timings["total"])
        return self._generate(messages, sources, warnings, timings, base, t0, on_delta, cancel)

    def _sentence_embedder(self, sources: tuple[Source, ...]) -> Callable[[list[str]], Any] | None:
        vc = self.engine.config.vault_named(sources[0].vault) if sources else None
        emb = self.engine.embedder_for(vc) if vc is not None else None
        if emb is None or getattr(emb, "remote", False) or vc is None or vc.embedder != "builtin":
            return None  # only the local model: sentences of notes are not sent anywhere for this
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
        timings["total"] = _ms(t0)
        return self._finish("".join(parts), sources, tuple(messages), warnings, timings, base, first, error, incomplete)

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
    ) -> AskResponse:
        check = check_citations(text, len(sources))
        for n in check.invalid:
            warnings.append(f"removed citation [{n}]: there is no source {n}")
        if text.strip() and not check.cited:
            warnings.append("the answer cites none of the sources; treat it with care")
        by_number = {s.number: s for s in sources}
        refs = tuple(_reference(by_number[n]) for n in check.cited)
        return replace(
            base,
            answer=check.text,
            references=refs,
            context_sent=messages,
            sources=sources,
            warnings=tuple(dict.fromkeys(warnings)),
            incomplete=incomplete,
            error=error,
            first_token_ms=first_token_ms,
            timings_ms=timings,
        )


def _reference(s: Source) -> Reference:
    return Reference(s.number, s.vault, s.rel_path, s.heading_path, s.chunk_ordinals[0], s.start_byte, s.end_byte, s.title)


def _unsafe_for(hit: Hit, provider: Any | None) -> bool:
    return provider is not None and bool(getattr(provider, "remote", True)) and hit.confidentiality == "restricted"


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)



