"""Ask my notes end to end on the sample vault (keyword retrieval + scripted models)."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest

from core.answer import Answerer, AskRequest
from core.answer.context import auto_k, build_sources
from core.base.paths import AppPaths
from core.engine import Engine
from core.providers.llm import LLMError
from core.search.search import SearchRequest
from tests.helpers import ScriptedProvider

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    eng = Engine(AppPaths(tmp_path_factory.mktemp("answer-home")), embedder_factory=None)
    eng.add_vault(REPO / "resources" / "sample-vault")
    eng.sync()
    yield eng
    eng.close()


def test_unrelated_question_abstains_without_calling_the_model(engine: Engine) -> None:
    provider = ScriptedProvider(["should never be asked"])
    resp = Answerer(engine, provider).ask(AskRequest("What is the capital of Mongolia?"))
    assert resp.abstained and resp.abstain_reason == "no_relevant_context"
    assert provider.calls == [] and resp.context_sent == ()


def test_extractive_answer_cites_the_right_note(engine: Engine) -> None:
    resp = Answerer(engine).ask(AskRequest("Who owns the release checklist?"))
    assert not resp.abstained and resp.provider == "extractive"
    assert resp.answer.startswith("From your notes (extractive answer")
    assert "Priya Natarajan" in resp.answer
    assert resp.references and {q.number for q in resp.quotes} == {r.number for r in resp.references}
    assert all(f"[{r.number}]" in resp.answer for r in resp.references)


def test_model_answer_citations_resolve_to_retrieved_chunks(engine: Engine) -> None:
    provider = ScriptedProvider(["The owner is Priya ", "[1]", ". Not [9]."])
    resp = Answerer(engine, provider).ask(AskRequest("Who owns the release checklist?"))
    assert [r.number for r in resp.references] == [1]
    assert any("[9]" in w for w in resp.warnings) and "[9]" not in resp.answer
    ref = resp.references[0]
    retrieved = {(h.chunk.rel_path, h.chunk.ordinal) for s in resp.sources for h in s.hits}
    assert (ref.rel_path, ref.chunk_ordinal) in retrieved
    raw = (REPO / "resources" / "sample-vault" / ref.rel_path).read_bytes()
    assert raw[ref.start_byte : ref.end_byte].decode("utf-8")  # the byte range points into the note
    sent = resp.context_sent
    assert sent[0]["role"] == "system" and "[1]" in sent[1]["content"] and "Who owns" in sent[1]["content"]


def test_a_model_answer_citing_nothing_is_folded_away_and_the_notes_answer_instead(engine: Engine) -> None:
    resp = Answerer(engine, ScriptedProvider(["Jonah owns it."])).ask(AskRequest("Who owns the release checklist?"))
    assert resp.unverified == "Jonah owns it."
    assert resp.answer.startswith("From your notes") and "Priya Natarajan" in resp.answer
    assert resp.quotes and {r.number for r in resp.references} == {q.number for q in resp.quotes}
    assert any("cited none of the sources" in w for w in resp.warnings)


def test_a_citation_its_source_does_not_support_is_removed(engine: Engine) -> None:
    provider = ScriptedProvider(["Priya Natarajan owns the release checklist [1]. The moon is made of cheese [1]."])
    resp = Answerer(engine, provider).ask(AskRequest("Who owns the release checklist?"))
    assert "checklist [1]." in resp.answer and "cheese." in resp.answer and "cheese [1]" not in resp.answer
    assert resp.unverified == "" and [r.number for r in resp.references] == [1]


def test_provider_failure_keeps_partial_text_and_reports_the_error(engine: Engine) -> None:
    provider = ScriptedProvider(["Partial [1]"], fail_with=LLMError("bad_response", "stream was truncated"))
    resp = Answerer(engine, provider).ask(AskRequest("Who owns the release checklist?"))
    assert resp.incomplete and resp.error and "truncated" in resp.error
    assert resp.answer.startswith("Partial")


def test_restricted_notes_never_reach_a_remote_model(engine: Engine) -> None:
    provider = ScriptedProvider(["ok [1]"], remote=True)
    resp = Answerer(engine, provider).ask(AskRequest("salary review compensation merit pool", allow_restricted=True))
    sent = " ".join(m.content for call in provider.calls for m in call)  # type: ignore[attr-defined]
    assert "Salary review notes" not in sent
    assert all(s.rel_path != "People/Salary review notes.md" for s in resp.sources)


def test_secrets_in_notes_are_masked_in_what_is_sent(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "deploy.md").write_text("# Deploy keys\n\nThe deploy api_key = sk-abcdefghijklmnopqrstuvwx1234 lives here.\n")
    eng = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    eng.add_vault(vault)
    eng.sync()
    provider = ScriptedProvider(["It is in deploy [1]"])
    Answerer(eng, provider).ask(AskRequest("where is the deploy api key"))
    sent = " ".join(m.content for call in provider.calls for m in call)  # type: ignore[attr-defined]
    assert "sk-abcdefghijklmnopqrstuvwx1234" not in sent and "[REDACTED]" in sent
    hits = eng.search(SearchRequest("deploy api key", mode="keyword")).hits
    assert "sk-abcdefghijklmnopqrstuvwx1234" not in hits[0].snippet


def test_cancel_stops_the_stream(engine: Engine) -> None:
    cancel = threading.Event()
    provider = ScriptedProvider(["one ", "two ", "three"])
    seen: list[str] = []

    def on_delta(d: str) -> None:
        seen.append(d)
        cancel.set()

    resp = Answerer(engine, provider).ask(AskRequest("Who owns the release checklist?"), on_delta=on_delta, cancel=cancel)
    assert seen == ["one "] and resp.answer == "one "


def test_auto_k_follows_detail_and_breadth() -> None:
    assert auto_k("Who owns it?", "brief", None) == 3
    assert auto_k("Who owns it?", "normal", None) == 5
    assert auto_k("Compare the backup and release plans", "normal", None) == 7
    assert auto_k("anything", "detailed", None) == 8
    assert auto_k("anything", "normal", 2) == 2


def test_adjacent_chunks_merge_duplicates_drop_and_budget_holds(engine: Engine) -> None:
    hits = engine.search(SearchRequest("sourdough loaf method", mode="keyword", k=10, per_note_cap=10)).hits
    same_note = [h for h in hits if h.chunk.rel_path == "Recipes/Sourdough loaf.md"]
    built = build_sources(same_note, budget_tokens=100_000)
    for s in built.sources:
        assert list(s.chunk_ordinals) == sorted(s.chunk_ordinals)
        assert all(b - a == 1 for a, b in zip(s.chunk_ordinals, s.chunk_ordinals[1:]))
        # Only chunks of one section merge, so the source's heading is true of all its text.
        assert {h.chunk.heading_path for h in s.hits} == {s.heading_path}
    twins = [h for h in same_note[:1]] + [replace(same_note[0], chunk=replace(same_note[0].chunk, ordinal=same_note[0].chunk.ordinal + 1))]
    assert len(build_sources(twins, budget_tokens=100_000).sources[0].chunk_ordinals) == 2, "consecutive chunks of a section merge"
    small = build_sources(hits, budget_tokens=120)
    assert len(small.sources) >= 1 and small.dropped_for_budget >= 1
    assert [s.number for s in small.sources] == list(range(1, len(small.sources) + 1))


def test_every_quote_is_labelled_with_the_section_it_sits_in(engine: Engine) -> None:
    """The sample vault once had 'Bulk fermentation' as the label of a line from 'Shaping'."""
    from core.eval.ask_eval import quote_in_section

    root = REPO / "resources" / "sample-vault"
    for question in (
        "how long is the bench rest when shaping the sourdough",
        "how long does bulk fermentation take",
        "what temperature do I bake the sourdough at",
    ):
        resp = Answerer(engine).ask(AskRequest(question))
        assert resp.quotes, question
        for q in resp.quotes:
            assert quote_in_section(q, root) is None, (question, q)
    shaping = Answerer(engine).ask(AskRequest("how long is the bench rest when shaping the sourdough"))
    assert any(q.heading_path.endswith("Shaping") and "bench rest" in q.text for q in shaping.quotes)
