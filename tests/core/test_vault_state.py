"""One source of truth for a vault's phase and percentage (issue 15 item 3)."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

from core.base.paths import AppPaths
from core.base.vault_state import Phase, SemanticState, VaultProgress, short_state, summarise
from core.engine import Engine
from core.search.search import SearchRequest
from tests.helpers import BagOfWordsEmbedder


def vault_of(tmp_path: Path, n: int) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    for i in range(n):
        (root / f"n{i}.md").write_text(f"# Note {i}\n\nfiller words number {i}\n", encoding="utf-8")
    return root


def test_a_half_embedded_vault_is_partial_with_the_same_percentage_everywhere(tmp_path: Path) -> None:
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=lambda vc: BagOfWordsEmbedder())
    name = engine.add_vault(vault_of(tmp_path, 100)).name
    engine.sync([name], embed=False)
    cancel = threading.Event()
    seen: list[tuple[int, int]] = []

    def stop_at_a_third(done: int, total: int, phase: str) -> None:
        if phase != "embedding":  # the note pass first: stand-ins, no chunk embedded yet
            return
        seen.append((done, total))
        if done * 3 >= total:
            cancel.set()

    engine.embed_vault(name, progress=stop_at_a_third, cancel=cancel, persist=False)  # nothing saved yet
    st = engine.vault_status(name)
    assert st.semantic is SemanticState.PARTIAL  # was "missing (healthy)" for a vault a third embedded
    assert "embedded" in st.semantic_reason
    p = st.progress()
    assert p.phase is Phase.READY and p.percent == int(st.semantic_fraction * 100) > 0
    resp = engine.search(SearchRequest("filler words", mode="hybrid"))
    # Names the vault, same number; one passage per note, so a third of the notes have a vector.
    assert f"{name}: semantic: {p.cover.with_vector} of 100 notes have a vector; passages {p.percent}% embedded" in resp.warnings
    # A resumed run counts over the whole vault: it starts where the last one stopped.
    seen.clear()
    engine.embed_vault(name, progress=lambda d, t, ph: seen.append((d, t)))
    assert seen[0][0] > p.done - 1 and seen[0][1] == p.total
    assert seen[-1] == (p.total, p.total)
    assert engine.vault_status(name).semantic is SemanticState.OK


def test_semantic_turned_off_is_a_state_not_an_error_message(tmp_path: Path) -> None:
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    name = engine.add_vault(vault_of(tmp_path, 3)).name
    engine.sync()
    st = engine.vault_status(name)
    assert st.semantic is SemanticState.OFF and not st.semantic.degraded
    assert st.progress().semantic_text() == "keyword only"
    assert st.semantic == "off"  # a StrEnum: JSON and older callers still read a string


def test_vault_progress_sentences_name_the_vault() -> None:
    assert VaultProgress("work", Phase.KEYWORD, 50, 200).sentence() == "work: reading notes 25%"
    assert VaultProgress("work", Phase.EMBEDDING, 3, 4, SemanticState.PARTIAL).sentence() == "work: keyword ready · embedding 3/4 (75%)"
    assert VaultProgress("work", Phase.READY, 4, 4, SemanticState.OK).sentence() == "work: semantic ready"
    assert VaultProgress("work", Phase.NOT_BUILT).sentence() == "work: not indexed yet"
    unavailable = VaultProgress("work", Phase.READY, semantic=SemanticState.UNAVAILABLE, reason="model file missing")
    assert unavailable.sentence() == "work: keyword only (model file missing)" and unavailable.semantic.degraded


def test_embedding_in_progress_is_never_reported_as_unavailable() -> None:
    # The stored state may still say "missing" or "unavailable" (no vector file yet): the running phase wins.
    for stored in (SemanticState.MISSING, SemanticState.UNAVAILABLE, SemanticState.PARTIAL):
        p = VaultProgress("work", Phase.EMBEDDING, 43, 100, stored, reason="vector index missing", eta="about 2 min left")
        assert "unavailable" not in p.sentence() and "missing" not in p.sentence()
        assert p.sentence() == "work: keyword ready · embedding 43/100 (43%), about 2 min left"
        assert short_state(p) == "embedding 43%"


def test_paused_and_failed_say_what_to_do_and_why() -> None:
    paused = VaultProgress("work", Phase.PAUSED, 40, 100, SemanticState.PARTIAL)
    assert paused.sentence() == "work: embedding paused at 40%" and short_state(paused) == "paused at 40%"
    failed = VaultProgress("work", Phase.FAILED, reason="Indexing work failed: disk full")
    assert failed.sentence() == "work: indexing failed (Indexing work failed: disk full)"


def test_several_vaults_are_summarised_in_one_short_line() -> None:
    ready = VaultProgress("a", Phase.READY, 10, 10, SemanticState.OK)
    embedding = VaultProgress("b", Phase.EMBEDDING, 43, 100, SemanticState.PARTIAL)
    assert summarise([ready, embedding, replace(ready, vault="c")]) == "3 vaults · 1 embedding 43%"
    assert summarise([ready, replace(ready, vault="c")]) == "2 vaults · all ready"
    assert summarise([ready, replace(embedding, phase=Phase.PAUSED)]) == "2 vaults · 1 paused"
    assert summarise([embedding]) == embedding.sentence()


def test_the_ocr_stage_says_the_notes_are_ready_and_counts_images() -> None:
    from core.base.vault_state import Phase, VaultProgress, short_state, summarise

    p = VaultProgress("zoo", Phase.OCR, done=2, total=5)
    assert p.phase.busy
    assert p.sentence() == "zoo: notes ready · reading images by OCR 2/5"
    assert short_state(p) == "OCR 2/5"
    assert "1 reading images" in summarise([p, VaultProgress("b", Phase.READY)])


def test_a_cancelled_ocr_stage_is_paused_not_busy_and_says_where_it_stopped() -> None:
    p = VaultProgress("zoo", Phase.OCR_PAUSED, 1, 3, SemanticState.OK)
    assert not p.phase.busy  # Resume is offered only when nothing runs
    assert p.sentence() == "zoo: notes ready · reading images paused at 1/3"
    assert short_state(p) == "OCR paused 1/3"
    assert summarise([p, VaultProgress("b", Phase.READY, semantic=SemanticState.OK)]) == "2 vaults · 1 OCR paused"
