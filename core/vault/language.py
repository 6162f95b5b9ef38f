"""Which language a piece of prose is in: cheap, offline, good enough to pick a stemmer.

The keyword index stems each chunk with its own language's Snowball stemmer and
records the language so `lang:` can filter on it. That needs a guess per chunk
in microseconds, not a model: scripts decide CJK, Korean and Cyrillic, and the
most frequent function words decide between the Latin-script languages (English by
default: another one needs several different function words, not one said over and
over). Code spans and fenced blocks are dropped first: a Chinese note full of shell
commands is still a Chinese note.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from functools import partial
from itertools import chain, repeat
from operator import itemgetter

from core.base.char_ranges import CharRanges
from core.base.lazy_re import LazyPattern

SAMPLE_CHARS = 4000  # the first few thousand characters say as much as the whole note
MIN_WORDS = 4  # fewer prose words than this: no opinion (the caller falls back to the note's language)
# Different function words of a language a sample must hold before that language can win: one word said
# over and over is more often a name than a language ("non-task child" ×15 made a Tasks note Italian,
# "no_yaml" a Portuguese one), and real prose in any language uses several of them.
MIN_DISTINCT = 2

_FENCE = LazyPattern(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"`[^`\n]*`|<https?://[^>\s]*>|https?://\S+|\{\{[^}]*\}\}")
# The script classes are read only for text beyond ASCII, and compiled then (core.base.lazy_re).
_HAN = LazyPattern(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")
_KANA = LazyPattern(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HANGUL = LazyPattern(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_LATIN_WORD = re.compile(r"[a-zA-Z\u00c0-\u024f]+")
_CYRILLIC_WORD = LazyPattern(r"[\u0400-\u04ff]+")
_UKRAINIAN = LazyPattern(r"[іїєґІЇЄҐ]")
# Any character `_HAN`, `_KANA`, `_HANGUL` or `_CYRILLIC_WORD` would count: one search instead of
# their four passes over the Latin-script chunks that are not ASCII (curly quotes, dashes, é),
# without compiling a class over these blocks (core.base.char_ranges).
COUNTED_CHARS = (
    "\u0400-\u04ff\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f"
)
_ANY_COUNTED = CharRanges(COUNTED_CHARS)

# The most frequent function words of each language, chosen to overlap little.
_FUNCTION_WORDS: dict[str, frozenset[str]] = {
    lang: frozenset(words.split())
    for lang, words in {
        "en": "the and of to is in that it for with as on are this be you from or by an not can your if",
        "de": "der die und das ist nicht mit ein eine einen einem den dem zu von auf für sich des im auch oder "
        "werden wird einer eines ich bei aus als zum zur wenn alle über nach dass",
        "fr": "le la les des et est une du dans que pour pas sur qui avec au aux ce il sont par vous ou ne",
        "es": "el los las y que en una es por con para del se al lo como más su o",
        "it": "il di che e gli una per non sono della del con da nel è si al lo dei delle",
        "pt": "os as que do da em um uma para com não é dos das no na por se ao",
        "nl": "het een en van is dat niet op te met voor zijn er aan ook als bij naar uit",
        "sv": "och att det är som en på för med av inte till den jag har om ett",
    }.items()
}
# word -> the languages it is a function word of, in `_FUNCTION_WORDS` order (so ties break alike)
_WORD_LANGS: dict[str, tuple[str, ...]] = {
    word: tuple(lang for lang, stops in _FUNCTION_WORDS.items() if word in stops)
    for word in frozenset().union(*_FUNCTION_WORDS.values())
}


def query_language(text: str) -> str:
    """The language of a search query ("" when it cannot tell): a couple of CJK characters suffice."""
    return detect_language(text, min_words=1)


def prose(text: str) -> str:
    """`text` without fenced code, inline code, URLs and `{{placeholders}}`."""
    sample = text[:SAMPLE_CHARS]
    if "```" in sample or "~~~" in sample:
        sample = _FENCE.sub(" ", sample)
    if "`" in sample or "://" in sample or "{{" in sample:  # what every `_CODE` match holds
        return _CODE.sub(" ", sample)
    return sample


def detect_language(text: str, min_words: int = MIN_WORDS) -> str:
    """The main language of `text` as an ISO 639-1 code, or "" when it says too little.

    Args:
        text: Markdown; only its first few thousand characters are read.

    Returns:
        "zh", "ja", "ko", "ru", "uk", one of the Latin-script languages in
        `_FUNCTION_WORDS` ("en" when no function word decides), or "" when the
        text holds fewer than `MIN_WORDS` words of prose.
    """
    sample = prose(text)
    if sample.isascii() or not _ANY_COUNTED.found(sample):  # most notes: no CJK or Cyrillic to count
        ascii_words = ascii_latin_words(sample) if min_words > 0 else None  # (no words and no minimum: the scripts' rule)
        if ascii_words is not None:
            distinct = partial(_ascii_function_word_counts, ascii_words, once=True)
            return _latin_language(len(ascii_words), _ascii_function_word_counts(ascii_words), distinct, min_words)
        latin = _LATIN_WORD.findall(sample)
        han = kana = hangul = 0
        cyrillic: list[str] = []
    else:
        latin = _LATIN_WORD.findall(sample)
        han = len(_HAN.findall(sample))
        kana = len(_KANA.findall(sample))
        hangul = len(_HANGUL.findall(sample))
        cyrillic = _CYRILLIC_WORD.findall(sample)
    cjk_words = (han + kana + hangul) / 2  # about two CJK characters to a word
    words = cjk_words + len(latin) + len(cyrillic)
    if words < min_words:
        return ""
    if cjk_words >= 0.3 * words:
        if hangul > han + kana:
            return "ko"
        return "ja" if kana and kana * 10 >= han + kana else "zh"  # Japanese writes its grammar in kana
    if len(cyrillic) > len(latin):
        return "uk" if _UKRAINIAN.search(sample) else "ru"
    return _latin_language(len(latin), function_word_counts(latin), partial(function_word_counts, latin, once=True), 0)


def _latin_language(words: int, counts: Counter[str], distinct: Callable[[], Counter[str]], min_words: int) -> str:
    """The Latin-script language the function word `counts` of a sample of `words` words say: the one
    with the most of them, if it is English (the default) or `MIN_DISTINCT` of them are different words
    (`distinct()`, each counted once: asked only then); else the next such language; else English."""
    if words < min_words:
        return ""
    if not counts:
        return "en"
    best, n = max(counts.items(), key=itemgetter(1))  # `counts.most_common(1)[0]`, without its two calls around `max`
    if best == "en" or n < MIN_DISTINCT:
        return "en"
    different = distinct()
    ranked = [(lang, count) for lang, count in counts.items() if lang == "en" or different[lang] >= MIN_DISTINCT]
    return max(ranked, key=itemgetter(1))[0] if ranked else "en"


# `ascii_latin_words`' byte maps: an ASCII letter to its lower case, any other byte to a space; and the
# bytes to delete so that only the lead bytes of U+00C0-U+024F's UTF-8 remain (0xC3-0xC9, and a little
# beyond U+024F: such a sample takes the pattern, which is exact anyway).
_LOWER_LETTERS = bytes(i + 32 if 0x41 <= i <= 0x5A else i if 0x61 <= i <= 0x7A else 0x20 for i in range(256))
_NOT_LATIN_LEAD = bytes(i for i in range(256) if not 0xC3 <= i <= 0xC9)
_WORD_LANGS_BYTES = {word.encode("utf-8"): langs for word, langs in _WORD_LANGS.items()}


def ascii_latin_words(sample: str) -> list[bytes] | None:
    """`_LATIN_WORD.findall(sample)`, each word lowered and in UTF-8, when every letter it finds is ASCII.

    None when `sample` holds a character of U+00C0-U+024F (an accented letter): the pattern is
    for that. Otherwise the pattern's words are exactly the runs of ASCII letters (any other
    character, curly quotes and dashes included, only separates them), and one byte map and a
    split find them in C, lowered as `str.lower` lowers an ASCII word: ~3x less than the pattern's
    `findall` and a `lower` per word (rust-book's chunks: 1,652 of 1,658 take this way).
    `tests/core/vault/test_language.py` holds the two equal.
    """
    raw = sample.encode("utf-8", "surrogatepass")
    if len(raw) != len(sample) and raw.translate(None, _NOT_LATIN_LEAD):
        return None
    return raw.translate(_LOWER_LETTERS).split()


def _ascii_function_word_counts(words: list[bytes], *, once: bool = False) -> Counter[str]:
    """`function_word_counts` of `ascii_latin_words`' lowered words (same counts, same order)."""
    return Counter(chain.from_iterable(map(_WORD_LANGS_BYTES.get, dict.fromkeys(words) if once else words, repeat(()))))


def function_word_counts(latin: list[str], *, once: bool = False) -> Counter[str]:
    """How many of `latin`'s words are function words of each language, in first-seen order; with
    `once`, how many different ones (each word, lowered, counted once).

    One pass in C (`map`, `chain`, `Counter`'s counting) instead of a Python loop over every
    word: each word is lowered on its own, as before (lowering the whole sample instead could
    change its length: U+0130 becomes two characters), mapped to the languages it is a function
    word of (none for most words), and the flattened languages are counted.

    The result equals the loop it replaced, `for word in latin: for lang in
    _WORD_LANGS.get(word.lower(), ()): counts[lang] += 1`, counts and order alike, and the order
    matters: `most_common` breaks ties by it. `Counter(iterable)` adds one per element in the
    iterable's order, and the flattened iterable yields exactly that loop's languages in that
    loop's order. `tests/core/vault/test_language.py` holds the two equal.
    """
    lowered = map(str.lower, latin)
    return Counter(chain.from_iterable(map(_WORD_LANGS.get, dict.fromkeys(lowered) if once else lowered, repeat(()))))


def confident_query_language(text: str) -> str:
    """The query's language only when it shows: its script (CJK, Korean, Cyrillic) or one language's function words.

    `query_language` falls back to English for any Latin-script query, which is
    right for picking stemmers but not for preferring pages: "Dateien nach
    Erweiterung suchen" has one German function word and is German; "tar
    Archiv entpacken" has none and says nothing.
    """
    lang = query_language(text)
    if lang != "en" and lang:
        return lang
    ranked = function_word_counts(_LATIN_WORD.findall(prose(text))).most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[1][1] == ranked[0][1]):
        return ""
    return ranked[0][0]
