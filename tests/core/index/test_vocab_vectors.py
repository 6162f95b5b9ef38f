"""The vault's words in the embedding space: which words, stored without pickle, re-used, nearest first."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.index import vocab_vectors as vv
from core.search.expansion import vocabulary_expansion


def _embed(words: list[str]) -> np.ndarray:
    """A toy model: each word's vector is its letters' counts (similar spelling → near)."""
    out = np.zeros((len(words), 26), dtype=np.float32)
    for i, w in enumerate(words):
        for ch in w:
            if "a" <= ch <= "z":
                out[i, ord(ch) - 97] += 1
    return out


def test_distinctive_words_skip_rare_everyday_and_short_words() -> None:
    texts = ["the comment is here"] * 50 + ["a comment block", "comment again", "postpone it", "postpone later", "unique"]
    words = vv.distinctive_words(texts)
    assert "postpone" in words  # two chunks, not everywhere
    assert "unique" not in words  # one chunk only
    assert "the" not in words and "comment" not in words  # in most chunks: no help closing a gap
    assert "is" not in words and "it" not in words  # too short


def test_vectors_are_saved_without_pickle_and_new_words_only_are_embedded(tmp_path: Path) -> None:
    calls: list[list[str]] = []

    def counting(words: list[str]) -> np.ndarray:
        calls.append(list(words))
        return _embed(words)

    assert vv.refresh(tmp_path, ["postpone snooze", "postpone snooze comment", "comment"], counting, "toy")
    first = vv.load(tmp_path)
    assert first is not None and set(first.words) == {"postpone", "snooze", "comment"}
    assert not vv.refresh(tmp_path, ["postpone snooze", "postpone snooze comment", "comment"], counting, "toy")  # unchanged
    vv.refresh(tmp_path, ["postpone snooze remark", "postpone snooze comment remark", "comment"], counting, "toy")
    assert calls[-1] == ["remark"]  # only the new word
    assert vv.cached(tmp_path) is not None and "remark" in vv.cached(tmp_path).words  # type: ignore[union-attr]
    with np.load(tmp_path / vv.FILE_NAME, allow_pickle=False) as data:
        assert data["matrix"].dtype == np.float16


def test_the_nearest_vault_words_are_added_but_not_the_querys_own() -> None:
    vocab = vv.build(["comment", "comments", "remarks", "postpone"], _embed, "toy")
    assert vocab is not None
    query = _embed(["commentary"])[0]
    query = query / np.linalg.norm(query)
    exp = vocabulary_expansion(vocab, query, {"postpon"}, lambda w: [w.rstrip("s")], words=2, floor=0.1, weight=0.3)
    assert exp.words[0] == "comment"
    assert "comments" not in exp.words  # the same index term as "comment": searched already
    assert exp.terms["comment"] == 0.3
    assert all(0 < w <= 0.3 for w in exp.terms.values())
    assert "postpone" not in exp.words  # the query's own term
