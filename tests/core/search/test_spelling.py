"""Typos forgiven: words the vault lacks are corrected from its own words, and the response says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.base.paths import AppPaths
from core.engine import Engine
from core.search.search import SearchRequest
from core.search.spelling import Vocabulary, apply_corrections, correct_words, max_edits, nearest_term
from tests.helpers import bag_of_words_engine

VOCAB = Vocabulary(
    ["recur", "recurs", "ownership", "borrow", "border", "tag", "tab", "archiv"],
    {"recur": 40, "recurs": 2, "ownership": 12, "borrow": 30, "border": 3, "tag": 50, "tab": 9, "archiv": 4},
)


def test_short_words_are_never_corrected_and_long_ones_allow_two_edits() -> None:
    assert max_edits("tga") == 0
    assert max_edits("borow") == 1
    assert max_edits("ownershp") == 2
    assert max_edits("x2y2z2") == 0  # not a word
    assert max_edits("Verzeichnis") == 2 and max_edits("größe") == 0  # letters beyond QWERTY's: not guessed


def test_the_closest_term_wins_and_the_more_frequent_of_equally_close_ones() -> None:
    assert nearest_term("ownershp", VOCAB, 2) == "ownership"
    assert nearest_term("borro", VOCAB, 1) == "borrow"
    assert nearest_term("recurz", VOCAB, 1) == "recur"  # recur (40 chunks) over recurs (2), both one edit away
    assert nearest_term("zzzzzz", VOCAB, 2) is None


def test_of_equally_close_terms_the_one_found_beside_the_querys_words_wins() -> None:
    """Frequency alone picks the wrong one; the context is asked only when there is a tie."""
    vocab = Vocabulary(["font", "front", "fonts"], {"font": 11, "front": 3, "fonts": 2})
    asked: list[str] = []

    def together(term: str) -> int:
        asked.append(term)
        return {"front": 2, "font": 1}.get(term, 0)

    assert nearest_term("fornt", vocab, 1) == "font"  # both one slip away, the same length: the more frequent
    assert nearest_term("fornt", vocab, 1, together) == "front"  # the one sharing chunks with more of the query's words
    assert sorted(asked) == ["font", "front"]
    asked.clear()
    assert nearest_term("fonts", vocab, 1, together) == "font"  # "fonts" itself costs more than any edit allowed: font, alone
    assert nearest_term("ownershp", VOCAB, 2, together) == "ownership" and asked == []  # no tie: context never read


def test_of_equally_close_terms_a_dropped_letter_explains_the_typo_before_frequency_does() -> None:
    vocab = Vocabulary(["star", "state"], {"star": 10, "state": 2})
    assert nearest_term("stae", vocab, 1) == "state"  # "stae" is state with a letter dropped; star needs a wrong one
    assert nearest_term("stae", vocab, 1, lambda term: {"star": 1}.get(term, 0)) == "star"  # the context comes first


def test_only_unknown_words_are_corrected_and_spelt_as_the_vault_spells_them() -> None:
    spelt = {"ownership": "ownership", "borrow": "borrowing"}
    fixes = correct_words(["ownershp", "borrow", "tga"], VOCAB, lambda w: [w.lower()], lambda term, _typed: spelt.get(term))
    assert fixes == {"ownershp": "ownership"}  # borrow is known; tga is too short to guess


def test_the_correction_replaces_whole_words_and_says_what_to_search_instead() -> None:
    corr = apply_corrections("rust ownershp rules", {"ownershp": "ownership"})
    assert corr is not None
    assert corr.corrected == "rust ownership rules"
    assert corr.message == "showing results for 'rust ownership rules', search instead for 'rust ownershp rules'"
    assert apply_corrections("rust", {}) is None


NOTES = {
    "Recurring.md": "# Recurring tasks\n\nA recurring task comes back every week after you complete it.\n",
    "Archive.md": "# Archive\n\nMove finished projects into the archive folder to keep the vault tidy.\n",
    "Garden.md": "# Garden\n\nTomatoes want sun and water in the morning.\n",
    "Notizen.md": "# Notizen\n\nIch schreibe jeden Tag eine kurze Notiz über das, was ich gelernt habe, und "
    "verschiebe fertige Projekte in einen eigenen Ordner, damit die Übersicht erhalten bleibt.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return bag_of_words_engine(tmp_path_factory, NOTES)


def test_a_typo_is_searched_as_the_vaults_word_and_the_response_says_so(engine: Engine) -> None:
    resp = engine.search(SearchRequest("reccuring tasks", mode="keyword", k=3))
    assert resp.correction is not None
    assert resp.correction.corrected == "recurring tasks"
    assert resp.hits and resp.hits[0].chunk.rel_path == "Recurring.md"
    assert resp.correction.message in resp.warnings


def test_search_instead_for_the_typed_words_turns_correction_off(engine: Engine) -> None:
    resp = engine.search(SearchRequest("reccuring tasks", mode="keyword", k=3, spelling=False))
    assert resp.correction is None


def test_known_words_are_left_as_typed(engine: Engine) -> None:
    resp = engine.search(SearchRequest("archive folder", mode="hybrid", k=3))
    assert resp.correction is None
    assert resp.hits[0].chunk.rel_path == "Archive.md"


CONTEXT_NOTES = {  # "font" is the vault's more frequent word; "front" is the one written beside "matter"
    **{f"Theme {i}.md": f"# Theme {i}\n\nPick a font and a font size for the theme, number {i}.\n" for i in range(4)},
    "Properties.md": "# Properties\n\nThe front matter of a note holds its properties.\n",
    "Blocks.md": "# Query blocks\n\nBlocking rules. A comment line inside a query block is ignored.\n",
}


def test_the_querys_other_words_choose_between_equally_close_corrections(tmp_path_factory: pytest.TempPathFactory) -> None:
    eng = bag_of_words_engine(tmp_path_factory, CONTEXT_NOTES)
    resp = eng.search(SearchRequest("fornt matter properties", mode="keyword", k=3))
    assert resp.correction is not None and resp.correction.corrected == "front matter properties"
    assert resp.hits[0].chunk.rel_path == "Properties.md"
    alone = eng.search(SearchRequest("fornt", mode="keyword", k=3))  # nothing to go by: the more frequent
    assert alone.correction is not None and alone.correction.corrected == "font"
    # The chunk holding "block" best writes "Blocking" first; the spelling offered is the one nearest the typed word.
    blck = eng.search(SearchRequest("comment in a query blck", mode="keyword", k=3))
    assert blck.correction is not None and blck.correction.corrected == "comment in a query block"
    eng.close()


SLIP_NOTES = {  # the stemmer cuts these words short: "location" is the term "locat", "using" is "us", "source" "sourc"
    "Location.md": "# Fake a location\n\nSimulate a GPS location on a phone for testing.\n",
    "Ports.md": "# Ports\n\nFind which process is using a port, and stop it.\n",
    "Source.md": "# Source\n\nSplit the program's source into several files.\n",
    "Src.md": "# Layout\n\nThe src folder. The src folder holds src files.\n",
}


def test_a_typo_the_stemmer_cuts_differently_is_found_a_slip_away_from_the_typed_word(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The typed word's own term is far from the vault's ("locaiton" vs "locat"); the words a slip away meet it."""
    eng = bag_of_words_engine(tmp_path_factory, SLIP_NOTES)
    resp = eng.search(SearchRequest("simulate gps locaiton", mode="keyword", k=3))
    assert resp.correction is not None and resp.correction.corrected == "simulate gps location"
    # "using" is the term "us", searched as a stop word: no chunk offers a spelling, the word a slip away is shown.
    port = eng.search(SearchRequest("which process is uing port 8080", mode="keyword", k=3))
    assert port.correction is not None and port.correction.corrected == "which process is using port 8080"
    assert port.hits[0].chunk.rel_path == "Ports.md"
    # "surce": its stem "surc" is one letter from the frequent "src", the word itself a slip from "source".
    src = eng.search(SearchRequest("several surce files", mode="keyword", k=3))
    assert src.correction is not None and src.correction.corrected == "several source files"
    eng.close()


def test_the_spelling_offered_is_looked_for_beyond_the_ten_best_chunks(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The best chunks for the term "thing" all write "things"; one further down writes "thing", one slip from "thong"."""
    notes = {f"Things {i}.md": f"# Things {i}\n\nThings to do, things to keep, number {i}.\n" for i in range(14)}
    notes["Priority.md"] = "# Priority\n\n" + "Tasks carry a priority and a due date in the list. " * 8 + "Pick the one thing that matters.\n"
    eng = bag_of_words_engine(tmp_path_factory, notes)
    resp = eng.search(SearchRequest("the most important thong", mode="keyword", k=3))
    assert resp.correction is not None and resp.correction.corrected == "the most important thing"
    eng.close()


def test_the_words_a_slip_away_come_before_terms_only_the_stem_is_near() -> None:
    from core.index.analysis import Stemmer
    from core.search.spelling import slipped_terms, slips

    assert {"using", "ing", "iung", "ying", "uinng"} <= slips("uing") and "ping" not in slips("uing")  # p is far from u
    vocab = Vocabulary(["src", "sourc", "locat", "us"], {"src": 50, "sourc": 5, "locat": 3, "us": 9})
    assert slipped_terms("surce", vocab, Stemmer().term) == {"sourc": "source"}
    assert slipped_terms("locaiton", vocab, Stemmer().term) == {"locat": "location"}
    beside = {"src": 2, "sourc": 1}.get  # "src" shares chunks with more of the query's words
    assert nearest_term("surc", vocab, 1, lambda t: beside(t, 0)) == "src"  # by the stem alone: both one letter away
    assert nearest_term("surc", vocab, 1, lambda t: beside(t, 0), slipped=["sourc"]) == "sourc"


def test_slips_of_the_finger_cost_one_and_far_keys_cost_more() -> None:
    from core.search.spelling import typo_cost

    assert typo_cost("recieve", "receive") == 1  # two neighbours swapped
    assert typo_cost("borow", "borrow") == 1  # a dropped letter
    assert typo_cost("borrrow", "borrow") == 1  # a doubled one
    assert typo_cost("bprrow", "borrow") == 1  # o → p: keys side by side
    assert typo_cost("intent", "invent") == 2  # t is nowhere near v: a different word, not a typo
    assert nearest_term("invent", Vocabulary(["intent"], {"intent": 9}), 1) is None


def test_a_question_in_another_language_the_vault_holds_is_searched_as_typed(engine: Engine) -> None:
    assert "de" in engine.index_for("v").keyword.languages()
    resp = engine.search(SearchRequest("wie verschiebe ich fertige Projekte in einen Ordnerr", mode="keyword", k=3))
    assert resp.correction is None
    # One German function word is enough to tell ("über"; the stemmers' guess calls any Latin-script
    # query English, and tldr's "Größe eines Verzeichnisses" had its "eines" "corrected" to "lein").
    short = engine.search(SearchRequest("kurze Notizz über Tag", mode="keyword", k=3))
    assert short.correction is None


def test_a_function_word_of_a_language_the_vault_holds_is_no_typo(tmp_path_factory: pytest.TempPathFactory) -> None:
    """German "aller" and "eine" are dropped by the index, so no term holds them; they are words, not typos."""
    notes = {
        "Speicher.md": "# Speicherplatz\n\nZeigt den verfügbaren Speicherplatz aller Dateisysteme an, "
        "und die Größe eines Verzeichnisses in einer lesbaren Einheit.\n",
        "Ping.md": "# Ping\n\nSendet eine bestimmte Anzahl an Pings an einen Rechner und zeigt die Antwortzeit an.\n",
        "Caller.md": "# Caller\n\nThe caller of a function gets its return value.\n",
    }
    eng = bag_of_words_engine(tmp_path_factory, notes)
    assert "de" in eng.index_for("v").keyword.languages()
    resp = eng.search(SearchRequest("Speicherplatz aller Dateisystme", mode="keyword", k=3))
    assert resp.correction is not None  # the typo is still corrected; the function word is left alone
    assert resp.correction.corrected == "Speicherplatz aller dateisysteme"  # spelt as the vault writes it
    assert eng.search(SearchRequest("Speicherplatz aller Dateisysteme", mode="keyword", k=3)).correction is None
    eng.close()


def test_a_word_a_live_edit_adds_is_known_and_corrected_to_at_once(tmp_path: Path) -> None:
    """What the index knows is kept per state of the index: a live edit's words count from the next search."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Recurring.md").write_text(NOTES["Recurring.md"], encoding="utf-8")
    eng = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    eng.add_vault(vault, name="v")
    eng.sync(["v"], embed=False)
    before = eng.search(SearchRequest("reccuring zebrra", mode="keyword", k=3))
    assert before.correction is not None and before.correction.corrected == "recurring zebrra"  # no near word for zebrra
    (vault / "Typos.md").write_text("# Field notes\n\nA reccuring visitor: the zebra at the waterhole.\n", encoding="utf-8")
    eng.update_notes("v", ["Typos.md"])  # the live path: searchable at once, nothing else rebuilt
    after = eng.search(SearchRequest("reccuring zebrra", mode="keyword", k=3))
    assert after.correction is not None
    assert after.correction.corrected == "reccuring zebra"  # reccuring is the vault's word now; zebra is near zebrra
    eng.close()


def test_near_terms_by_length_are_rapidfuzzs_over_the_whole_list() -> None:
    """Reading only the lengths that can be close changes nothing: same terms, same order, ties in list order."""
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    from core.index.vocabulary import TermList

    words = [w for text in NOTES.values() for w in text.lower().split()] + ["recurs", "recur", "recurrent", "ring", "tasks"]
    terms = TermList(dict.fromkeys(words))
    for typed in ("reccuring", "taks", "archve", "folder", "zzzz", "a"):
        for distance in (1, 2, 3):
            whole = process.extract(typed, list(terms), scorer=Levenshtein.distance, score_cutoff=distance, limit=4)
            assert terms.near(typed, distance, 4) == [(cand, dist) for cand, dist, _ in whole]


def test_each_segments_terms_are_kept_beside_it_read_back_whole_and_go_with_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold search with a word the vault lacks reads the kept term lists, not the term tables;
    the list is every segment's terms, the body's in index order first; a merge takes the files away."""
    from core.index import vocabulary

    vault = tmp_path / "vault"
    vault.mkdir()
    for name, text in NOTES.items():
        (vault / name).write_text(text, encoding="utf-8")
    eng = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    eng.add_vault(vault, name="v")
    eng.sync(["v"], embed=False)
    (vault / "Zebra.md").write_text("# Zebras\n\nA zebra at the waterhole, zzyzx road.\n", encoding="utf-8")
    eng.update_notes("v", ["Zebra.md"])  # a second segment
    keyword = eng.index_for("v").keyword
    with keyword.reading() as searcher:
        leaves = [leaf for leaf, _ in searcher.reader().leaf_readers()]
        assert len(leaves) >= 2
        expected: dict[str, set[str]] = {f: set() for f in vocabulary.FIELDS}
        for leaf in leaves:  # each segment's own table (the merged lexicon may stop early, see searcher_terms)
            for field in vocabulary.FIELDS:
                if field in leaf.indexed_field_names():
                    expected[field].update(raw.decode() for raw in leaf.lexicon(field))
        terms = list(vocabulary.searcher_terms(searcher, keyword.directory))
    body = sorted(expected["body"])
    assert terms[: len(body)] == body and "zzyzx" in terms
    assert set(terms) == set().union(*expected.values()) and len(terms) == len(set(terms))
    kept = sorted(keyword.directory.glob(f"*.{vocabulary.TERMS_EXT}"))
    assert len(kept) == len(leaves)

    def no_table(*args: object) -> None:
        raise AssertionError("read the term table")

    monkeypatch.setattr(type(leaves[0]), "lexicon", no_table)
    vocabulary._cache.clear()  # as a new process: nothing in memory
    with keyword.reading() as searcher:
        assert list(vocabulary.searcher_terms(searcher, keyword.directory)) == terms
    merged = list(keyword.directory.glob(f"*.{vocabulary.MERGED_EXT}"))
    assert len(merged) == 1  # the union too, for this set of segments
    monkeypatch.setattr(vocabulary, "_segment_terms", no_table)
    vocabulary._cache.clear()
    with keyword.reading() as searcher:
        assert list(vocabulary.searcher_terms(searcher, keyword.directory)) == terms  # read whole from it
    monkeypatch.undo()
    assert eng.search(SearchRequest("zebrra waterhole", mode="keyword", k=3)).correction is not None
    keyword.optimize()  # one segment now: Whoosh removes the others' files, kept lists included
    assert all(not path.exists() for path in kept)
    vocabulary._cache.clear()
    with keyword.reading() as searcher:
        assert list(vocabulary.searcher_terms(searcher, keyword.directory)) == terms  # another set: not the old union
    assert [p.name for p in keyword.directory.glob(f"*.{vocabulary.MERGED_EXT}")] != [merged[0].name]
    assert len(list(keyword.directory.glob(f"*.{vocabulary.MERGED_EXT}"))) == 1  # the earlier set's union is gone
    eng.close()


def test_a_full_embedding_pass_leaves_every_segment_its_term_list(tmp_path_factory: pytest.TempPathFactory) -> None:
    """So even the first search with a typo after a build reads lists, not term tables."""
    from core.index import vocabulary

    fresh = bag_of_words_engine(tmp_path_factory, NOTES)  # built and embedded; nothing searched yet
    keyword = fresh.index_for("v").keyword
    with keyword.reading() as searcher:
        segments = {leaf.segment().segment_id() for leaf, _ in searcher.reader().leaf_readers()}
    assert {p.name.removesuffix(f".{vocabulary.TERMS_EXT}") for p in keyword.directory.glob(f"*.{vocabulary.TERMS_EXT}")} >= segments
    fresh.close()
