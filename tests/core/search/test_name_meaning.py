"""A note whose name means what was asked is lifted among the notes in contention, with a named term."""

from __future__ import annotations

from core.base.models import chunk_id
from core.search.evidence import KeywordEvidence
from core.search.fusion import Fused
from core.search.name_meaning import WEIGHT, name_terms, name_weight


def _fused(*rows: tuple[str, float]) -> list[Fused]:
    return [Fused(chunk_id("v", rel, 0), score, ()) for rel, score in rows]


def _order(fused: list[Fused]) -> list[str]:
    return [f.chunk_id.split("\x1f")[1] for f in fused]


def test_the_note_named_for_the_question_moves_up_and_says_why() -> None:
    fused = _fused(("Properties.md", 0.82), ("Explaining.md", 0.78), ("Comments.md", 0.65))
    sims = {"Properties.md": 0.20, "Explaining.md": 0.25, "Comments.md": 0.39}
    out = name_terms(fused, lambda vault, notes: sims, weight=0.25)
    assert _order(out)[0] == "Comments.md"
    term = out[0].terms[-1]
    assert term.name == "name's meaning (0.39) 1.00 × 0.25" and term.value == 0.25
    assert out[0].score == 0.65 + 0.25
    assert [t.value for f in out for t in f.terms if f.chunk_id.endswith("Properties.md\x1f0")] == [0.0]  # the least: 0


def test_the_name_stays_out_when_both_lists_agree_on_the_keyword_sides_first_notes() -> None:
    # tldr-en, "run a command for each line of piped input, in parallel": xargs answers, and both lists
    # rank it, parallel and xe first; the page named "parallel" (a word of the question) overtook it.
    fused = _fused(("xargs.md", 1.118), ("parallel.md", 1.027), ("xe.md", 0.858))
    sims = {"xargs.md": 0.24, "parallel.md": 0.47, "xe.md": 0.07}
    agreed = KeywordEvidence(rarity=0.76, peak=0.49, agreement=1.0)
    assert name_weight(agreed) == 0
    kept = name_terms(fused, lambda vault, notes: sims, weight=name_weight(agreed))
    assert _order(kept) == ["xargs.md", "parallel.md", "xe.md"]
    assert not any(t.name.startswith("name's meaning") for f in kept for t in f.terms)
    # One of the keyword side's first notes is one meaning ranks low: the question is open, the name speaks.
    open_question = KeywordEvidence(rarity=0.76, peak=0.49, agreement=2 / 3)
    assert name_weight(open_question) == WEIGHT
    assert _order(name_terms(fused, lambda vault, notes: sims, weight=name_weight(open_question)))[0] == "parallel.md"


def test_only_the_pool_is_compared_and_no_note_is_brought_in() -> None:
    fused = _fused(("a.md", 0.9), ("b.md", 0.8), ("c.md", 0.7))
    sims = {"a.md": 0.1, "b.md": 0.2, "c.md": 0.9, "elsewhere.md": 1.0}
    out = name_terms(fused, lambda vault, notes: sims, weight=0.25, pool=2)
    assert _order(out) == ["b.md", "a.md", "c.md"]  # c.md is outside the pool of 2: untouched
    assert len(out) == 3


def test_without_name_vectors_or_a_spread_nothing_changes() -> None:
    fused = _fused(("a.md", 0.9), ("b.md", 0.8))
    assert name_terms(fused, lambda vault, notes: None) == fused
    assert name_terms(fused, lambda vault, notes: {"a.md": 0.3, "b.md": 0.3}) == fused  # every name as near: no signal
    assert name_terms(fused, lambda vault, notes: {"b.md": 0.9}) == fused  # one note with a name: nothing to compare
    assert name_terms(fused, lambda vault, notes: {"a.md": 0.1, "b.md": 0.9}, weight=0) == fused


def test_each_vault_is_compared_with_its_own_models_query_vector() -> None:
    import numpy as np

    from core.index.name_vectors import NameVectors
    from core.search.name_meaning import side_similarities
    from core.search.sides import VaultSearchSide

    embedder = object()
    names = NameVectors("toy", ("Q/a.md", "Q/b.md"), ("Q a", "Q b"), np.eye(2, dtype=np.float32))
    with_names = VaultSearchSide("v", keyword=None, embedder=embedder, names=names)  # type: ignore[arg-type]
    without = VaultSearchSide("w", keyword=None, embedder=embedder)  # type: ignore[arg-type]
    sims = side_similarities([with_names, without], {id(embedder): np.array([1.0, 0.0], dtype=np.float32)})
    assert sims("v", ["Q/a.md", "Q/b.md", "Q/c.md"]) == {"Q/a.md": 1.0, "Q/b.md": 0.0}
    assert sims("w", ["x.md"]) is None  # no name vectors in that vault
    assert sims("elsewhere", ["x.md"]) is None
    assert side_similarities([with_names], {})("v", ["Q/a.md"]) is None  # no query vector for its model
