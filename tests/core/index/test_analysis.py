"""The analyzer for every language: CJK bigrams, per-language stemming, and the scan memo agreeing with it."""

from __future__ import annotations

from pathlib import Path

import pytest
from whoosh.analysis import CharsetFilter, StemmingAnalyzer
from whoosh.support.charset import accent_map

from core.index.analysis import Stemmer, build_analyzer, cjk_runs, language, pieces
from tests.fixture_notes import note_texts

# The real vaults sit beside the checkout (../shared/data/vaults), a worktree one level deeper.
VAULTS = next((p / "shared" / "data" / "vaults" for p in Path(__file__).resolve().parents if (p / "shared" / "data" / "vaults").is_dir()), Path("/nonexistent"))


def terms(text: str, lang: str = "en") -> list[str]:
    with language(lang):
        return [t.text for t in build_analyzer()(text)]


def test_a_cjk_run_becomes_overlapping_bigrams() -> None:
    assert terms("斐波那契数列") == ["斐波", "波那", "那契", "契数", "数列"]
    assert terms("ラーメン") == ["ラー", "ーメ", "メン"]
    assert terms("한국어 검색") == ["한국", "국어", "검색"]


def test_a_lone_cjk_character_is_a_unigram_and_is_not_a_stop_word() -> None:
    assert terms("猫 and 犬") == ["猫", "犬"]


def test_mixed_script_words_split_where_the_script_changes() -> None:
    assert terms("用tar文件打包 Python3の本") == ["用", "tar", "文件", "件打", "打包", "python3", "の本"]


def test_a_word_inside_a_sentence_shares_the_bigrams_of_the_word_alone() -> None:
    sentence = set(terms("新宿で美味しいラーメンを食べた"))
    assert set(terms("ラーメン")) <= sentence and set(terms("新宿")) <= sentence


def test_bigram_offsets_and_positions_land_on_the_characters() -> None:
    text = "the 斐波那 of cats"
    toks = [(t.text, t.pos, t.startchar, t.endchar) for t in build_analyzer()(text, positions=True, chars=True)]
    assert toks == [("斐波", 1, 4, 6), ("波那", 2, 5, 7), ("cat", 3, 11, 15)]
    assert all(text[s:e] == w for w, _, s, e in toks[:2])


def test_accents_keep_folding_and_english_stems_as_before() -> None:
    assert terms("Café naïve Ångström running") == ["cafe", "naiv", "angstrom", "runn"]  # Porter, as before


def test_german_words_get_the_german_stemmer_and_stop_words() -> None:
    assert terms("Die Dateien aus dem Archiv", "de") == ["datei", "archiv"]
    assert terms("Die Datei", "de") == ["datei"]
    assert terms("Die Dateien", "en") == ["die", "dateien"]  # Porter leaves German alone


def test_cjk_and_unknown_languages_stem_their_english_words_with_porter() -> None:
    assert terms("running 压缩", "zh") == ["runn", "压缩"] == terms("running 压缩", "ja")


def test_cjk_runs_are_found() -> None:
    assert cjk_runs("tar 压缩包 and ラーメン") == ["压缩包", "ラーメン"]


def test_pieces_keep_dotted_words_whole() -> None:
    assert [p[2] for p in pieces("os.path 3.14 v1.5")] == ["os.path", "3.14", "v1.5"]


@pytest.mark.parametrize("lang", ["en", "de", "zh", "ja", "fr"])
def test_snippet_stemmer_agrees_with_the_analyzer_in_every_language(lang: str) -> None:
    ana = build_analyzer()
    stemmer = Stemmer()
    texts = [
        "Café culture **bench** rest ERR_TOKEN_EXPIRED v1.5 naïve Ångström; the foxes were running.",
        "Erstelle ein mit gzip komprimiertes Archiv von Dateien und Verzeichnissen.",
        "将（压缩的）存档文件解压缩到目标目录中：tar xf 源文件.tar.gz",
        "ディレクトリ内の全てのファイルを再帰的に検索する: grep -r 猫",
        "Les fichiers sont compressés avec gzip.",
    ]
    for text in texts:
        with language(lang):
            expected = [(t.startchar, t.endchar, t.text) for t in ana(text, chars=True, mode="index")]
        assert stemmer.spans(text, lang) == expected


@pytest.mark.parametrize("source", ["generated", "real"])
def test_english_notes_analyse_exactly_as_before(source: str) -> None:
    """The old analyzer (StemmingAnalyzer + accent folding) and ours agree on English notes."""
    if source == "real" and not (VAULTS / "simonw-til").is_dir():
        pytest.skip("needs the simonw-til vault")
    old = StemmingAnalyzer(expression=r"\w+(?:\.?\w+)*") | CharsetFilter(accent_map)
    new = build_analyzer()
    if source == "generated":
        texts = list(note_texts(120).items())
    else:
        texts = [(p.name, p.read_text(encoding="utf-8")) for p in sorted((VAULTS / "simonw-til").rglob("*.md"))[:120]]
    for name, text in texts:
        if cjk_runs(text):
            continue  # CJK is what changed on purpose
        assert [t.text for t in new(text)] == [t.text for t in old(text)], name


def test_text_without_cjk_is_cut_as_the_full_token_pattern_cuts_it() -> None:
    """`pieces` skips the CJK pattern for text without CJK characters: the same tokens, at the same places."""
    from core.index import analysis

    texts = ["os.path and 3.14 ratios", "Café naïve — “quoted” it’s", "Привет мир", "tar文件 mixed 検索 words", "", "...", "a.b.c d"]
    texts += list(note_texts(40).values())
    for text in texts:
        full = [(m.start(), m.end(), m.group(0)) for m in analysis._TOKEN.compiled.finditer(text) if m.group(1) is None]
        if not analysis.has_cjk(text):
            assert list(pieces(text)) == full


ASCII_PROBE = """
from core.index import analysis
from core.vault import language
assert analysis.terms_for("en").term("Backups") == analysis.terms_for("en").term("backup")
assert [w for _, _, w in analysis.pieces("Backup the database, nightly.")] == ["Backup", "the", "database", "nightly"]
assert not analysis.has_cjk("plain text") and language.detect_language("the cat and the dog and the bird") == "en"
lazy = [analysis._TOKEN, analysis._IS_CJK._candidate, analysis._CJK_RUN, language._HAN, language._KANA, language._ANY_COUNTED._candidate]
print(sum(p._compiled is not None for p in lazy))
# Latin text beyond ASCII (curly quotes, accents, emoji) compiles only the small candidate classes.
assert not analysis.has_cjk("It’s café time 📅") and language.detect_language("the café and the naïve “cat” 📅") == "en"
print(sum(p._compiled is not None for p in [analysis._TOKEN, analysis._CJK_RUN, language._HAN, language._KANA, language._HANGUL]))
"""


def test_ascii_text_compiles_no_cjk_pattern() -> None:
    """The CJK character classes cost ~2 ms each to compile: a search of ASCII words never compiles one."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", ASCII_PROBE], cwd=repo, capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["0", "0"]


def test_plain_words_with_the_ascii_class_are_the_unicode_patterns_words() -> None:
    """`plain_words` takes an ASCII class where no character beyond ASCII is a word character: same
    words as `_PLAIN_WORD` on texts mixing dotted words, curly quotes, emoji, accents and digits."""
    import random

    from core.index import analysis

    rng = random.Random(7)
    alphabet = ["a", "Z", "9", "_", ".", " ", "..", "’", "“", "—", "📅", "é", "ß", "٣", "²", "\u00a0", "\ud800", "\n", "os.path", "3.14"]
    texts = ["", "Rust’s “ownership” — os.path.join 3.14.", "café au lait", "x²", "٣.٤"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30))) for _ in range(4000)]
    texts += list(note_texts(40).values())
    for text in texts:
        if not analysis.has_cjk(text):
            assert analysis.plain_words(text) == analysis._PLAIN_WORD.findall(text), repr(text)
    assert analysis.beyond_ascii("a’b📅c") == "’📅"


def test_fold_accents_is_translate_with_the_accent_map() -> None:
    """`fold_accents` skips `translate` only where it changes nothing: on every stem the stemmers make of
    fixture words in several languages, and on ASCII strings with and without upper-case letters."""
    import random

    from whoosh.support.charset import accent_map

    from core.index import analysis

    rng = random.Random(9)
    words = {w for text in note_texts(40).values() for w in analysis.plain_words(text)}
    words |= {"".join(rng.choice("aHIJNPSTWYinps1_.éÉßøÅ") for _ in range(rng.randrange(0, 8))) for _ in range(3000)}
    words |= {"Über", "naïve", "CAFÉ", "straße", "İstanbul", "123", "", "ſ", "ﬁ", "K"}
    for lang in ("en", "de", "fr", "es", "it", "pt", "ru"):
        stem = analysis.terms_for(lang).stem
        for word in words:
            for text in (word, word.lower(), stem(word.lower())):
                assert analysis.fold_accents(text) == text.translate(accent_map), (lang, text)


def test_porter_answers_whooshs_stem_for_every_word() -> None:
    """`core.index.porter` (each step's expression asked only where the word has its ending): every word of
    the shared vaults, and generated words carrying each step's endings (doubled, cut short, after a "y" or
    a random stem), stem as Whoosh's Porter stemmer stems them."""
    import random

    from whoosh.lang import porter as whoosh_porter

    from core.index.analysis import plain_words, terms_for
    from core.index.porter import ENDINGS, porter

    assert terms_for("en").stem is porter
    assert {"s", "e", "y", "ed", "ing", "eed", "ll", "ion", "ational", "icate", "ement", "ize"} <= set(ENDINGS)
    rng = random.Random(7)
    words = {"y", "ye", "yes", "ys", "sky", "ll", "all", "eed", "ed", "ing", "ion", "tion", "sion", "ies", "sses", "yll", "yed"}
    for ending in ENDINGS:
        for _ in range(60):
            stem = "".join(rng.choice("aeiouybcdlmnrstvwxz") for _ in range(rng.randint(0, 7)))
            words |= {stem + ending, stem + ending + ending, "y" + stem + ending, stem + ending[:-1], stem + ending + "x"}
            words |= {stem + ending + other for other in rng.sample(ENDINGS, 3)}
    for path in sorted(VAULTS.rglob("*.md")) if VAULTS.is_dir() else []:
        words.update(w.lower() for w in plain_words(path.read_text(encoding="utf-8", errors="replace")))
    assert len(words) > 10_000
    assert [w for w in sorted(words) if porter(w) != whoosh_porter.stem(w)] == []
