"""Cheap language detection, on real tldr pages in four languages."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from core.vault.language import detect_language, prose

TLDR = next((p / "shared/data/vaults/tldr" for p in Path(__file__).resolve().parents if (p / "shared/data/vaults/tldr").is_dir()), Path("/nonexistent"))


@pytest.mark.skipif(not TLDR.is_dir(), reason="needs the tldr vault")
@pytest.mark.parametrize(("folder", "lang"), [("pages", "en"), ("pages.de", "de"), ("pages.zh", "zh"), ("pages.ja", "ja")])
def test_tldr_pages_are_detected_in_their_language(folder: str, lang: str) -> None:
    pages = sorted((TLDR / folder / "common").glob("*.md"))[:150]
    right = sum(detect_language(p.read_text(encoding="utf-8")) == lang for p in pages)
    assert right >= 0.97 * len(pages)


def test_code_does_not_make_a_chinese_note_english() -> None:
    text = "- 创建存档并将其写入文件：\n\n`tar cf target.tar file1 file2 file3 --verbose --directory path`\n\n```\nls -la /usr/local/bin\n```\n"
    assert detect_language(text) == "zh"
    assert "tar cf" not in prose(text)


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Le chat est sur la table et il dort dans le jardin.", "fr"),
        ("El perro come en la cocina y los niños juegan con la pelota.", "es"),
        ("Это простой текст на русском языке для проверки.", "ru"),
        ("한국어 텍스트를 검색할 수 있어야 합니다.", "ko"),
        ("The cat sat on the mat and it was happy.", "en"),
    ],
)
def test_other_languages(text: str, lang: str) -> None:
    assert detect_language(text) == lang


@pytest.mark.parametrize(
    "text",
    [
        # obsidian-tasks-demo: "non-task" made this Italian, "no_yaml" that one Portuguese
        "- [ ] #task task parent\n    - [ ] #task task child\n    - [ ] non-task child\n    - [x] non-task child status x\n",
        "# no_yaml\n\n- [ ] #task Task in 'no_yaml'\n",
        # simonw-til: SQL's NO and Spanish-looking names, one word many times
        "Use PRAGMA table_info with no rowid: no columns, no types, no defaults on the view.",
        "Fetch el.value for each el in the list: el is the element, el.id its id, el.name its name.",
        "Convert to em units: 2em, 1.5em and 0.5em of the em box; em is relative.",
    ],
)
def test_one_function_word_said_again_and_again_is_not_a_language(text: str) -> None:
    """A language wins only with `MIN_DISTINCT` different function words: a repeated word is more often a
    name (`non-task`, SQL's NO, `el`, `em`) than a language, and English stays the default."""
    assert detect_language(text) == "en"


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Lista de la compra para el fin de semana y la fiesta", "es"),
        ("Die Datei ist nicht da", "de"),
        ("Non è una cosa che si fa per gli altri", "it"),
    ],
)
def test_a_short_sample_with_several_function_words_keeps_its_language(text: str, lang: str) -> None:
    assert detect_language(text) == lang


def test_too_little_prose_has_no_opinion() -> None:
    assert detect_language("`tar xf a.tar`") == ""
    assert detect_language("## Setup") == ""


def test_the_one_search_for_counted_scripts_misses_no_character_they_count() -> None:
    """`detect_language` skips its four CJK/Cyrillic passes when `_ANY_COUNTED` finds nothing: every
    character any of them would count must be one `_ANY_COUNTED` finds (and curly quotes are not)."""
    from core.vault import language

    counted = (language._HAN, language._KANA, language._HANGUL, language._CYRILLIC_WORD)
    missed = [cp for cp in range(0x110000) if any(p.match(chr(cp)) for p in counted) and not language._ANY_COUNTED.holds(chr(cp))]
    assert missed == []
    assert not language._ANY_COUNTED.found("It’s “quoted” — café, naïve")
    assert detect_language("Rust’s “ownership” — это не так, и это важно для нас всех здесь") == "ru"


def _counts_word_by_word(latin: list[str]) -> Counter[str]:
    """The loop `function_word_counts` replaced, over every word: the reference it must equal."""
    from core.vault.language import _WORD_LANGS

    counts: Counter[str] = Counter()
    for word in latin:
        for lang in _WORD_LANGS.get(word.lower(), ()):
            counts[lang] += 1
    return counts


def _generated_samples() -> list[str]:
    """Word mixes where order matters: ties between languages, shared function words, case, U+0130."""
    from core.vault.language import _FUNCTION_WORDS

    rng = random.Random(30)
    stops = sorted({w for words in _FUNCTION_WORDS.values() for w in words})
    shared = ["que", "en", "se", "is", "die", "et", "il", "e", "en", "al"]  # function words of several languages
    filler = ["İstanbul", "Straße", "ownership", "borrow", "naïve", "ÀÉÎ", "x"]
    samples = []
    for _ in range(400):
        pool = rng.choice([stops, shared + filler, stops + filler * 5])
        words = [rng.choice(pool) for _ in range(rng.randint(0, 40))]
        words = [w.upper() if rng.random() < 0.2 else w.capitalize() if rng.random() < 0.2 else w for w in words]
        samples.append(" ".join(words))
    return samples


def test_function_words_are_counted_as_the_word_by_word_loop_counts_them_and_in_its_order() -> None:
    """Same counts in the same insertion order (`most_common` breaks ties by it), so the same language."""
    from core.vault.language import _LATIN_WORD, function_word_counts

    samples = _generated_samples()
    for folder in ("pages", "pages.de", "pages.fr", "pages.es"):  # real pages, where the vault is
        samples += [p.read_text(encoding="utf-8") for p in sorted((TLDR / folder / "common").glob("*.md"))[:60]]
    ties = 0
    for text in samples:
        latin = _LATIN_WORD.findall(prose(text))
        want = _counts_word_by_word(latin)
        got = function_word_counts(latin)
        assert list(got.items()) == list(want.items()), text
        assert got.most_common(1) == want.most_common(1)
        ranked = want.most_common(2)
        ties += len(ranked) == 2 and ranked[0][1] == ranked[1][1]
    assert ties > 20  # the generated mixes do reach the ties the order decides


def _detect_by_pattern(text: str, min_words: int = 4) -> str:
    """`detect_language` as it was before `ascii_latin_words`: every sample through `_LATIN_WORD`."""
    from unittest import mock

    from core.vault import language

    with mock.patch.object(language, "ascii_latin_words", lambda sample: None):
        return language.detect_language(text, min_words)


def test_ascii_words_are_the_patterns_words_lowered() -> None:
    """`ascii_latin_words` gives `_LATIN_WORD`'s words, lowered, whenever it answers; it declines accented letters."""
    from core.vault import language

    rng = random.Random(5)
    alphabet = "aZ tHe Of, und.’“—…\t\n_9é×Ωɏɐ\u0250Ж中\ud800x"
    for _ in range(3000):
        sample = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        words = language.ascii_latin_words(sample)
        expected = [w.lower() for w in language._LATIN_WORD.findall(sample)]
        if words is None:
            assert any("\u00c0" <= ch <= "\u027f" for ch in sample)
        else:
            assert [w.decode() for w in words] == expected
    assert language.ascii_latin_words("Rust’s “ownership” — the rules") == [b"rust", b"s", b"ownership", b"the", b"rules"]
    assert language.ascii_latin_words("café au lait") is None


def test_the_ascii_way_detects_as_the_pattern_does() -> None:
    """Same language with and without the byte-map way, ties (first-seen order) included."""
    rng = random.Random(11)
    vocab = "the and of la le der die el het och il è für das ein une Ж 中文 ’ — ``code`` http://x.y".split() + ["\n", "THE", "Und"]
    texts = ["", "a b c", "the the", "The cat sat on the mat", "Le chat et le chien und der Hund"]
    texts += [" ".join(rng.choice(vocab) for _ in range(rng.randrange(0, 30))) for _ in range(2000)]
    for text in texts:
        for min_words in (0, 1, 4):
            assert detect_language(text, min_words) == _detect_by_pattern(text, min_words), (text, min_words)
    for folder in ("pages", "pages.de", "pages.fr", "pages.zh"):
        for page in sorted((TLDR / folder / "common").glob("*.md"))[:60] if TLDR.is_dir() else []:
            text = page.read_text(encoding="utf-8")
            assert detect_language(text) == _detect_by_pattern(text)
