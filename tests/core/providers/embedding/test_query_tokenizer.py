"""A query's own tokenizer gives it exactly the ids the full MiniLM tokenizer gives it."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.providers.embedding import minilm_files
from core.providers.embedding.minilm_session import load_query_tokenizer, load_tokenizer
from core.providers.embedding.query_tokenizer import query_tokenizer

TOKENIZER = minilm_files.default_tokenizer_path()
REPO = Path(__file__).resolve().parents[4]
VAULTS = next((p for d in (REPO.parent, REPO.parent.parent) if (p := d / "shared" / "data" / "vaults").is_dir()), REPO / "missing")

# Words the vocabulary splits into pieces, accents (stripped), CJK (one token per character), combining
# marks, control and zero-width characters, full-width letters, a word over WordPiece's 100-character
# limit ([UNK]), literal `##`, emoji ([UNK]), punctuation inside words, and a text longer than 256 tokens.
TEXTS = [
    "how do I rotate ssh keys",
    "Café naïve résumé Ångström",
    "東京 タワー 北京大学 한국어",
    "e\u0301cole \u0301x ab\u0308\u0323c \u0300\u0301abc",
    "a\x00b\tc\u200bd\ue000e",
    "ＦＵＬＬＷＩＤＴＨ İstanbul ǅ ß ﬁ",
    "x" * 150 + " supercalifragilisticexpialidocious",
    "##hello ## ###",
    "🙂 emoji 👍🏽 test",
    "don't-stop re-enter e-mail foo_bar.baz/qux?x=1",
    "[cls] in lower case is plain text",
    "",
    "   ",
    "unbelievably antidisestablishmentarianism " * 40,
]


def _ids(tokenizer: object, text: str) -> tuple[list[int], list[int], list[int]]:
    (enc,) = tokenizer.encode_batch([text])  # type: ignore[attr-defined]
    return enc.ids, enc.attention_mask, enc.type_ids


@pytest.fixture(scope="module")
def full() -> object:
    return load_tokenizer(TOKENIZER)


@pytest.mark.parametrize("text", TEXTS)
def test_a_query_gets_the_ids_the_full_tokenizer_gives_it(full: object, text: str) -> None:
    made = load_query_tokenizer(TOKENIZER, text)
    assert made is not None
    assert _ids(made, text) == _ids(full, text)


def test_its_vocabulary_is_a_few_entries_not_thirty_thousand() -> None:
    made = query_tokenizer(TOKENIZER, "how do I rotate ssh keys")
    assert made is not None
    assert 5 < made.get_vocab_size() < 200


def test_a_query_holding_a_special_tokens_text_gets_the_full_tokenizer() -> None:
    assert query_tokenizer(TOKENIZER, "what does [MASK] mean") is None
    assert query_tokenizer(TOKENIZER, "[CLS]") is None


@pytest.mark.skipif(not VAULTS.is_dir(), reason="the shared vaults are not here")
def test_passages_of_real_notes_get_the_same_ids(full: object) -> None:
    """Slices of every real note (openings, middles, long and short), as a query might quote them."""
    checked = 0
    for path in sorted(VAULTS.rglob("*.md"))[:250]:
        text = path.read_text(encoding="utf-8", errors="replace")
        for start, size in ((0, 40), (len(text) // 2, 120)):
            piece = text[start : start + size]
            made = load_query_tokenizer(TOKENIZER, piece)
            if made is None:
                continue
            assert _ids(made, piece) == _ids(full, piece), piece
            checked += 1
    assert checked > 200
