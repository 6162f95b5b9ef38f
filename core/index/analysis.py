"""Text analysis shared by the keyword index and everything that scans text the same way.

The index analyzer decides which words become terms; snippets, highlights and
the answer's word overlap must agree with it, so the word → term mapping lives
here, below the search layer that uses it.

Two things make it work for every language:

- Chinese, Japanese and Korean write words without spaces, so a run of Han,
  kana or Hangul becomes overlapping character bigrams ("斐波那契数列" → 斐波,
  波那, 那契, 契数, 数列), a lone character a unigram. A query is cut the same
  way, so "斐波那契" finds the note whatever the surrounding sentence.
- Other words are stemmed in the language of the chunk they stand in (German
  with the German Snowball stemmer, ...), English with Porter as always. The
  language comes from a context variable the index sets per chunk (Whoosh calls
  the analyzer with the text only); a query is analysed once per language the
  vault holds.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from whoosh.analysis import Analyzer, Filter, Tokenizer
from whoosh.analysis.acore import Token
from whoosh.analysis.analyzers import STOP_WORDS
from whoosh.lang import stemmer_for_language, stopwords_for_language

from core.base.char_ranges import CharRanges
from core.base.lazy_re import LazyPattern
from core.base.lean_import import import_lean
from core.index.porter import porter

if TYPE_CHECKING:
    from whoosh.fields import Schema

# Han (with 々 and 〇), Hiragana, Katakana (with half-width forms) and Hangul.
CJK_CHARS = (
    "\u1100-\u11ff\u3005\u3007\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f"
)
# A CJK run, or a word of other letters and digits (dotted words such as "3.14" or
# "os.path" stay whole). A word stops where a CJK run starts: "tar文件" is "tar" + "文件".
TOKEN_PATTERN = rf"([{CJK_CHARS}]+)|[^\W{CJK_CHARS}]+(?:\.[^\W{CJK_CHARS}]+)*"
# Compiled when text first holds a character beyond ASCII: the CJK class costs ~2 ms a pattern to compile.
_TOKEN = LazyPattern(TOKEN_PATTERN)
_IS_CJK = CharRanges(CJK_CHARS)  # not a compiled class: ~3.5 ms to compile, for any text beyond ASCII
MIN_WORD = 2  # shorter words are noise ("a", "x") — but a CJK character is a word
DEFAULT_LANGUAGE = "en"
# Languages whose words get their own Snowball stemmer; any other language (Chinese,
# Japanese, Korean, ...) keeps Porter for the English words it is sprinkled with.
SNOWBALL = frozenset("da de es fi fr hu it nl no pt ro ru sv tr".split())

_LANGUAGE: ContextVar[str] = ContextVar("cairn_analysis_language", default=DEFAULT_LANGUAGE)


def stem_language(lang: str) -> str:
    """The stemming language used for words of a chunk detected as `lang`."""
    return lang if lang in SNOWBALL else DEFAULT_LANGUAGE


@contextmanager
def language(lang: str) -> Iterator[None]:
    """Analyse text inside this block as `lang` (a chunk's or a query's language)."""
    token = _LANGUAGE.set(stem_language(lang))
    try:
        yield
    finally:
        _LANGUAGE.reset(token)


def pieces(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, text) of each raw token: words, and CJK runs cut into bigrams."""
    if not has_cjk(text):
        for m in _PLAIN_WORD.finditer(text):
            yield m.start(), m.end(), m.group(0)
        return
    for m in _TOKEN.finditer(text):
        run = m.group(1)
        start = m.start()
        if run is None:
            yield start, m.end(), m.group(0)
        elif len(run) == 1:
            yield start, start + 1, run
        else:
            for i in range(len(run) - 1):
                yield start + i, start + i + 2, run[i : i + 2]


_CJK_RUN = LazyPattern(f"[{CJK_CHARS}]+")
# Without CJK characters `_TOKEN` matches exactly these words: one `findall`, no match objects.
# Possessive (`++`, `*+`): the same words as `\w+(?:\.\w+)*`, since nothing after a word could
# match by giving a character back, but without the backtracking state, ~15 % faster a `findall`.
_PLAIN_WORD = re.compile(r"\w++(?:\.\w++)*+")


def has_cjk(text: str) -> bool:
    """Whether `text` holds a CJK character (ASCII text answers without a pattern)."""
    return not text.isascii() and _IS_CJK.found(text)


def plain_words(text: str) -> list[str]:
    """The raw tokens of `text`, which holds no CJK character (see `has_cjk`), as `pieces` cuts them.

    Where no character beyond ASCII is a word character (the usual curly quotes, dashes and
    emoji of a Western note), `\\w` can only match an ASCII letter, digit or "_", and an ASCII class
    finds the same words ~20 % faster (a bitmap test per character, not a Unicode category
    look-up). `tests/core/index/test_analysis.py` holds the two equal.
    """
    if text.isascii() or _WORD_CHAR.search(beyond_ascii(text)) is None:
        return _ASCII_PLAIN_WORD.findall(text)
    return _PLAIN_WORD.findall(text)


def beyond_ascii(text: str) -> str:
    """`text`'s characters beyond ASCII, in order (deleted from its UTF-8, ASCII bytes never split one)."""
    return text.encode("utf-8", "surrogatepass").translate(None, _ASCII).decode("utf-8", "surrogatepass")


_ASCII_PLAIN_WORD = re.compile(r"[0-9A-Za-z_]++(?:\.[0-9A-Za-z_]++)*+")  # `_PLAIN_WORD` where `\w` is ASCII
_WORD_CHAR = re.compile(r"\w")
_ASCII = bytes(range(128))  # deleted from a text's UTF-8: its characters beyond ASCII remain, whole


def cjk_runs(text: str) -> list[str]:
    """The runs of CJK characters in `text`."""
    return _CJK_RUN.findall(text)


def is_cjk(term: str) -> bool:
    return not term.isascii() and _IS_CJK.holds(term[0])


# The module and class of each Snowball stemmer in `whoosh.lang.snowball` (its `classes`).
_SNOWBALL_MODULES = {
    "da": ("danish", "DanishStemmer"), "nl": ("dutch", "DutchStemmer"), "en": ("english", "EnglishStemmer"),
    "fi": ("finnish", "FinnishStemmer"), "fr": ("french", "FrenchStemmer"), "de": ("german", "GermanStemmer"),
    "hu": ("hungarian", "HungarianStemmer"), "it": ("italian", "ItalianStemmer"), "no": ("norwegian", "NorwegianStemmer"),
    "pt": ("portugese", "PortugueseStemmer"), "ro": ("romanian", "RomanianStemmer"), "ru": ("russian", "RussianStemmer"),
    "es": ("spanish", "SpanishStemmer"), "sv": ("swedish", "SwedishStemmer"),
}  # fmt: skip


def stemmer(lang: str) -> Callable[[str], str]:
    """`whoosh.lang.stemmer_for_language(lang)`, loading only that language's Snowball module.

    Whoosh's `whoosh.lang.snowball` package imports all fourteen stemmers (~2.5 ms) to give
    one; a vault with one German note needs the German one. Its module is imported while a
    stand-in package (the real folder, without the package's imports) takes the package's place:
    the same class, so the same stems. Any other language goes to Whoosh as before.
    """
    found = _SNOWBALL_MODULES.get(lang)
    spec = importlib.util.find_spec("whoosh.lang.snowball") if found else None
    if found is None or spec is None or spec.submodule_search_locations is None:
        return stemmer_for_language(lang)
    module_name, class_name = found
    name = f"whoosh.lang.snowball.{module_name}"
    package: dict[str, Any] = {"__path__": list(spec.submodule_search_locations)}
    import_lean({"whoosh.lang.snowball": package}, name)
    return getattr(sys.modules[name], class_name)().stem


class _Terms:
    """Word → term for one stemming language, memoised (the same word recurs a lot)."""

    def __init__(self, lang: str) -> None:
        self.stem: Callable[[str], str] = porter if lang == DEFAULT_LANGUAGE else stemmer(lang)
        stops = set(STOP_WORDS)
        if lang != DEFAULT_LANGUAGE:
            stops |= set(stopwords_for_language(lang))
        self.stops = frozenset(stops)
        self.cache: dict[str, str | None] = {}

    def term(self, word: str) -> str | None:
        cached = self.cache.get(word, "")
        if cached != "":
            return cached
        if is_cjk(word):
            term: str | None = word
        else:
            low = word.lower()
            stopped = low in self.stops or len(low) < MIN_WORD
            term = None if stopped else fold_accents(self.stem(low))
        if len(self.cache) < 100_000:
            self.cache[word] = term
        return term


@functools.cache
def accent_map() -> dict[int, str]:
    """Whoosh's accent-folding table (`whoosh.support.charset`), loaded when a word first needs it:
    the module is ~0.5 ms to load (a 700-entry table built from a 114 KB module), before the
    fork of every cold index, and a vault of English notes never folds an accent."""
    from whoosh.support.charset import accent_map as table

    return table


def fold_accents(stem: str) -> str:
    """`stem.translate(accent_map())`, without the per-character look-ups where they change nothing.

    `accent_map`'s only ASCII keys that change a character are upper-case letters (H -> h ...):
    an ASCII stem with no upper-case letter (`islower`: cased characters, all lower; or none at
    all, as in a number) is its own folding. Most stems are such; `translate` with a 700-entry
    dict cost ~0.5 us a new word.
    """
    return stem if stem.isascii() and (stem.islower() or stem == stem.lower()) else stem.translate(accent_map())


_TERMS: dict[str, _Terms] = {}


def terms_for(lang: str) -> _Terms:
    lang = stem_language(lang)
    found = _TERMS.get(lang)
    if found is None:
        found = _TERMS[lang] = _Terms(lang)
    return found


class ScriptTokenizer(Tokenizer):
    """Words, and CJK runs as overlapping bigrams (see `pieces`)."""

    def __call__(
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Iterator[Token]:
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        if not tokenize:  # Whoosh asks for the value as one token (e.g. a stored-field lookup)
            t.original = t.text = value
            t.boost, t.stopped = 1.0, False
            if positions:
                t.pos = start_pos
            if chars:
                t.startchar, t.endchar = start_char, start_char + len(value)
            yield t
            return
        for pos, (start, end, text) in enumerate(pieces(value)):
            t.text = text
            t.boost, t.stopped = 1.0, False
            if keeporiginal:
                t.original = text
            if positions:
                t.pos = start_pos + pos
            if chars:
                t.startchar, t.endchar = start_char + start, start_char + end
            yield t


class TermFilter(Filter):
    """Lower case, stop words, stemming in the current language, accent folding."""

    def __call__(self, tokens: Iterator[Token]) -> Iterator[Token]:
        term = terms_for(_LANGUAGE.get()).term
        pos: int | None = None
        for t in tokens:
            text = term(t.text)
            if text is None:
                if not t.removestops:
                    t.stopped = True
                    yield t
                continue
            if t.positions:  # renumber past removed stop words, as Whoosh's StopFilter does
                pos = t.pos if pos is None else pos + 1
                t.pos = pos
            t.text, t.stopped = text, False
            yield t


def build_analyzer() -> Analyzer:
    """The analyzer of every text field of the keyword index."""
    return ScriptTokenizer() | TermFilter()


class Stemmer:
    """The index analyzer's word → term mapping, for text that is only scanned.

    Running the full Whoosh analyzer over every shown chunk cost ~2 ms a hit; this
    does the same steps through the same memo. A test holds it equal to the analyzer.
    """

    def __init__(self, analyzer: Analyzer | None = None, lang: str = DEFAULT_LANGUAGE) -> None:
        del analyzer  # accepted for old callers: there is one analyzer now
        self.lang = lang

    def term(self, word: str, lang: str | None = None) -> str | None:
        return terms_for(lang or self.lang).term(word)

    def spans(self, text: str, lang: str | None = None) -> list[tuple[int, int, str]]:
        """(start, end, term) of each indexed term of `text` analysed as `lang`."""
        term = terms_for(lang or self.lang).term
        out = []
        for start, end, word in pieces(text):
            found = term(word)
            if found is not None:
                out.append((start, end, found))
        return out


def fold(word: str) -> str:
    """A word as a phrase compares it when the index drops it: lower case, accents folded."""
    return word.lower().translate(accent_map())


def word_keys(text: str, lang: str = DEFAULT_LANGUAGE) -> list[tuple[int, int, str]]:
    """(start, end, key) of every word of `text`, stop words included.

    A word's key is its index term ("running" → "run"), or, for a word the index
    drops (a stop word, a one-letter word), the folded word itself: a quoted
    phrase must hold its stop words exactly ("state of the art" is not "state
    and the art") while its content words keep their stemming.
    """
    term = terms_for(lang).term
    return [(start, end, term(word) or fold(word)) for start, end, word in pieces(text)]


def phrase_spans(text: str, phrase: str, lang: str = DEFAULT_LANGUAGE) -> list[tuple[int, int]]:
    """(start, end) of each place `text` holds `phrase` word for word (see `word_keys`).

    Case, accents, punctuation and spacing between the words do not matter:
    "To be, or not to be" holds "to be or not to be".
    """
    keys = [k for _, _, k in word_keys(phrase, lang)]
    if not keys:
        return []
    words = word_keys(text, lang)
    seq = [k for _, _, k in words]
    n = len(keys)
    first = keys[0]
    return [
        (words[i][0], words[i + n - 1][1])
        for i in range(len(seq) - n + 1)
        if seq[i] == first and seq[i : i + n] == keys
    ]


def analysed_terms(schema: Schema, field: str, text: str, langs: Sequence[str] = ("en",)) -> list[str]:
    """The distinct terms of `text` in `field`, analysed in each of `langs` in turn."""
    if not text.strip():
        return []
    fld = schema[field]
    if field == "tags":
        return [t.lstrip("#").lower() for t in text.split() if t.strip("#")]
    seen: list[str] = []
    for lang in langs:
        with language(lang):
            for tok in fld.analyzer(text):
                if tok.text not in seen:
                    seen.append(tok.text)
    return seen
