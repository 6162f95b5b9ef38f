"""Keyword (BM25F) search over indexed vaults: words, phrases, filters, snippets and order."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.base.models import SearchFilters, SearchResponse, chunk_id
from core.base.paths import AppPaths
from core.engine import Engine
from core.index.filters import record_matches
from core.index.keyword_index import KeywordIndex, filter_query
from core.index.keyword_schema import folder_ancestors
from core.search.query import parse_query
from core.search.search import SearchRequest
from core.vault.notes import parse_note

SAMPLE_VAULT = Path(__file__).resolve().parents[3] / "resources" / "sample-vault"
RESTRICTED = "People/Salary review notes.md"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """The sample vault, keyword-indexed once for every test in this module."""
    eng = Engine(AppPaths(tmp_path_factory.mktemp("cairn-home")), embedder_factory=None)
    eng.add_vault(SAMPLE_VAULT, name="sample")
    eng.sync(embed=False)
    yield eng
    eng.close()


def search(engine: Engine, query: str, **kwargs: object) -> SearchResponse:
    return engine.search(SearchRequest(query, mode="keyword", **kwargs))  # type: ignore[arg-type]


def notes(resp: SearchResponse) -> list[str]:
    return list(dict.fromkeys(h.chunk.rel_path for h in resp.hits))


def make_engine(home: Path, vaults: dict[str, dict[str, str]]) -> Engine:
    eng = Engine(AppPaths(home), embedder_factory=None)
    for name, files in vaults.items():
        root = home.parent / f"vault-{name}"
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        eng.add_vault(root, name=name)
    eng.sync(embed=False)
    return eng


# -- words and phrases -----------------------------------------------------------------------


def test_words_find_the_note_that_contains_them(engine: Engine) -> None:
    resp = search(engine, "lentils turmeric")
    assert resp.mode == "keyword" and resp.warnings == ()
    assert notes(resp)[0] == "Recipes/Weeknight dal.md"


def test_words_are_stemmed_and_accents_folded(engine: Engine) -> None:
    assert notes(search(engine, "cafe"))[0] == "Reading/Café culture.md"
    assert "Reading/Café culture.md" in notes(search(engine, "places"))


def test_title_aliases_and_tags_are_searched(engine: Engine) -> None:
    assert notes(search(engine, "masoor"))[0] == "Recipes/Weeknight dal.md"  # alias and body
    assert "Recipes/Sourdough loaf.md" in notes(search(engine, "country loaf"))  # alias only


def test_quoted_phrase_requires_the_words_together_in_order(tmp_path: Path) -> None:
    eng = make_engine(tmp_path / "home", {"v": {"a.md": "red lentil soup\n", "b.md": "lentil red soup\n", "c.md": "red wine, lentil stew\n"}})
    try:
        assert notes(search(eng, '"red lentil"')) == ["a.md"]
        assert sorted(notes(search(eng, "red lentil"))) == ["a.md", "b.md", "c.md"]
    finally:
        eng.close()


def test_phrase_and_words_combine_phrase_required(engine: Engine) -> None:
    resp = search(engine, '"third place" coffee')
    assert resp.hits
    assert all("third place" in h.text.lower() or "third place" in h.title.lower() for h in resp.hits)


def test_query_without_matches_returns_no_hits(engine: Engine) -> None:
    assert search(engine, "xylophonequartz").hits == ()


def test_search_before_syncing_any_vault_raises_index_not_built(tmp_path: Path) -> None:
    from core.base.errors import IndexNotBuiltError

    vault = tmp_path / "v"
    vault.mkdir()
    eng = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    eng.add_vault(vault)
    with pytest.raises(IndexNotBuiltError, match="cairn index"):
        search(eng, "anything")
    eng.close()


# -- filters ---------------------------------------------------------------------------------


def test_folder_filter_matches_a_path_prefix_case_insensitively(engine: Engine) -> None:
    for query in ("folder:Projects cairn", "folder:projects/ cairn", "folder:PROJECTS cairn"):
        found = notes(search(engine, query, k=50, per_note_cap=1))
        assert found and all(p.startswith("Projects/") for p in found), query
    nested = notes(search(engine, 'folder:"projects/cairn" token', k=50))
    assert "Projects/Cairn/Bugs/CAIRN-142 Token expiry after sleep.md" in nested


def test_folder_filter_matches_whole_folder_names_only(engine: Engine) -> None:
    assert search(engine, "folder:Proj cairn").hits == ()
    assert search(engine, 'folder:"Projects/Home" backup').hits == ()
    assert notes(search(engine, 'folder:"Projects/Home Lab" backup'))


def test_folder_filter_works_for_folder_names_with_commas(tmp_path: Path) -> None:
    eng = make_engine(tmp_path / "home", {"v": {"Smith, Jones/n.md": "zebra\n", "Smith/m.md": "zebra\n"}})
    try:
        assert notes(search(eng, 'zebra folder:"Smith, Jones"')) == ["Smith, Jones/n.md"]
        assert notes(search(eng, "zebra folder:smith")) == ["Smith/m.md"]
    finally:
        eng.close()


def test_tag_filter_any_and_all(engine: Engine) -> None:
    any_mode = set(notes(search(engine, "tag:vegetarian tag:bread", k=50, per_note_cap=1)))
    assert any_mode == {"Recipes/Weeknight dal.md", "Recipes/Roasted tomato soup.md", "Recipes/Sourdough loaf.md"}
    all_mode = search(engine, "tag:recipe tag:vegetarian", k=50, per_note_cap=1, filters=SearchFilters(tag_mode="all"))
    assert set(notes(all_mode)) == {"Recipes/Weeknight dal.md", "Recipes/Roasted tomato soup.md"}


def test_tag_filter_sees_inline_tags(engine: Engine) -> None:
    assert "Inbox/Ideas.md" in notes(search(engine, "tag:idea", k=50, per_note_cap=1))


def test_type_filter(engine: Engine) -> None:
    found = notes(search(engine, "type:meeting", k=50, per_note_cap=1))
    assert found and all(p.startswith("Meetings/") for p in found)
    assert len(found) == 5


def test_after_and_before_are_inclusive_and_exclude_undated_notes(engine: Engine) -> None:
    found = notes(search(engine, "type:meeting after:2026-03-10 before:2026-04-22", k=50, per_note_cap=1))
    assert sorted(found) == ["Meetings/2026/2026-03-10 Sprint 5 retro.md", "Meetings/2026/2026-04-22 1-1 Jonah.md"]
    undated = "Recipes/Lemon ricotta pancakes.md"
    assert undated in notes(search(engine, "ricotta"))
    assert undated not in notes(search(engine, "ricotta after:1900-01-01"))


def test_vault_filter_picks_vaults(tmp_path: Path) -> None:
    eng = make_engine(tmp_path / "home", {"work": {"w.md": "shared word\n"}, "home": {"h.md": "shared word\n"}})
    try:
        assert {h.chunk.vault for h in search(eng, "shared").hits} == {"work", "home"}
        assert {h.chunk.vault for h in search(eng, "shared vault:home").hits} == {"home"}
        resp = search(eng, "shared vault:nowhere")
        assert resp.hits == () and any("nowhere" in w for w in resp.warnings)
    finally:
        eng.close()


def test_filter_only_query_browses_the_matching_notes(engine: Engine) -> None:
    found = notes(search(engine, "tag:bread", k=50))
    assert found == ["Recipes/Sourdough loaf.md"]


def test_bad_date_filter_is_a_warning_and_is_ignored(engine: Engine) -> None:
    resp = search(engine, "lentils after:someday")
    assert resp.hits and any("after:someday" in w for w in resp.warnings)


# -- confidentiality -------------------------------------------------------------------------


def test_restricted_note_is_excluded_unless_allowed(engine: Engine) -> None:
    assert RESTRICTED not in notes(search(engine, "merit pool payroll"))
    assert RESTRICTED not in notes(search(engine, "type:person", k=50, per_note_cap=1))
    assert RESTRICTED not in notes(search(engine, "folder:People", k=50, per_note_cap=1))
    allowed = search(engine, "merit pool payroll", filters=SearchFilters(allow_restricted=True))
    assert notes(allowed)[0] == RESTRICTED


# -- snippets, order and caps ----------------------------------------------------------------


def test_snippet_marks_matched_terms(engine: Engine) -> None:
    hit = search(engine, "turmeric").hits[0]
    assert "**turmeric**" in hit.snippet.lower()
    marked = re.findall(r"\*\*(.+?)\*\*", hit.snippet)
    assert marked and all(m.lower().startswith("turmeric") for m in marked)


def test_snippet_marks_stemmed_and_phrase_matches(engine: Engine) -> None:
    hit = search(engine, '"third place"').hits[0]
    assert "**third place**" in hit.snippet.lower()  # a phrase is marked whole
    assert "**third places**" in hit.snippet.lower()  # stemmed, as the index matches it


def test_hits_carry_what_the_ui_shows(engine: Engine) -> None:
    hit = search(engine, "turmeric").hits[0]
    assert hit.title == "Weeknight dal"
    assert hit.chunk.vault == "sample" and hit.chunk.heading_path.startswith("Weeknight dal")
    assert hit.bm25 is not None and hit.bm25.rank == 1 and hit.bm25.score > 0
    assert hit.vector is None
    assert abs(sum(t.value for t in hit.contributions) - hit.score) < 1e-9
    raw = (SAMPLE_VAULT / hit.chunk.rel_path).read_bytes()
    assert raw[hit.start_byte : hit.end_byte].decode().replace("\r\n", "\n") == hit.text


def test_order_is_deterministic_score_then_path_then_ordinal(engine: Engine) -> None:
    first = search(engine, "cairn release", k=30, per_note_cap=0)
    again = search(engine, "cairn release", k=30, per_note_cap=0)
    key = [(h.chunk.rel_path, h.chunk.ordinal, h.score) for h in first.hits]
    assert key == [(h.chunk.rel_path, h.chunk.ordinal, h.score) for h in again.hits]
    assert key == sorted(key, key=lambda t: (-t[2], t[0], t[1]))


def test_equal_bm25_scores_are_broken_by_path_then_ordinal(tmp_path: Path) -> None:
    twin = "zebra crossing\n"
    eng = make_engine(tmp_path / "home", {"v": {"b.md": twin, "a.md": twin, "c/a.md": twin}})
    try:
        assert notes(search(eng, "zebra")) == ["a.md", "b.md", "c/a.md"]
    finally:
        eng.close()


def test_equal_bm25_scores_within_a_note_keep_ordinal_order(tmp_path: Path) -> None:
    sections = "".join("## Section\n\nzebra crossing\n\n" for _ in range(12))
    eng = make_engine(tmp_path / "home", {"v": {"same.md": sections}})
    try:
        ordinals = [h.chunk.ordinal for h in search(eng, "crossing", k=20, per_note_cap=0).hits]
        assert ordinals == list(range(12))
    finally:
        eng.close()


def test_one_row_per_note_by_default_with_the_other_passages_folded(tmp_path: Path) -> None:
    sections = "".join(f"## Part {i}\n\nzebra number {i}\n\n" for i in range(6))
    eng = make_engine(tmp_path / "home", {"v": {"many.md": sections, "one.md": "a zebra\n"}})
    try:
        capped = search(eng, "zebra")
        assert [h.chunk.rel_path for h in capped.hits].count("many.md") == 1
        assert "one.md" in notes(capped)
        many = next(h for h in capped.hits if h.chunk.rel_path == "many.md")
        assert len(many.more) == 5 and all(m.chunk.rel_path == "many.md" for m in many.more)
        assert [h.chunk.rel_path for h in search(eng, "zebra", per_note_cap=3).hits].count("many.md") == 3
        uncapped = search(eng, "zebra", per_note_cap=0)
        assert [h.chunk.rel_path for h in uncapped.hits].count("many.md") == 6
        assert len(search(eng, "zebra", per_note_cap=1).hits) == 2
    finally:
        eng.close()


def test_k_limits_the_number_of_hits(engine: Engine) -> None:
    assert len(search(engine, "cairn", k=2).hits) == 2


# -- the index itself ------------------------------------------------------------------------


def test_folder_ancestors_lists_every_enclosing_folder() -> None:
    assert folder_ancestors("a/b/c.md") == ["a", "a/b"]
    assert folder_ancestors("top.md") == []


def test_filter_query_is_none_without_filters() -> None:
    assert filter_query(SearchFilters()) is None
    assert filter_query(SearchFilters(allow_restricted=True)) is None
    assert filter_query(SearchFilters(tags=("x",))) is not None


def test_apply_replaces_a_notes_chunks_and_removes_deleted_notes(tmp_path: Path) -> None:
    ix = KeywordIndex(tmp_path / "ix")
    try:
        one = parse_note("v", "n.md", b"# A\n\nalpha\n\n# B\n\nbeta\n", size=1, mtime_ns=1)
        ix.apply([], [one])
        assert ix.doc_count() == 2
        assert [d.ordinal for d in ix.stored_for_note("n.md")] == [0, 1]
        two = parse_note("v", "n.md", b"gamma only\n", size=1, mtime_ns=2)
        ix.apply([], [two])
        assert [d.body for d in ix.stored_for_note("n.md")] == ["gamma only"]
        q = parse_query("alpha").query
        assert ix.search(q, q.filters, 10) == []
        ix.apply(["n.md"], [])
        assert ix.doc_count() == 0
    finally:
        ix.close()


def test_a_reopened_index_deletes_replaced_and_removed_notes(tmp_path: Path) -> None:
    """A first index skips the delete check (no segments); a later one, in a new process, still deletes."""
    ix = KeywordIndex(tmp_path / "ix")
    notes = {n: parse_note("v", n, f"# {n}\n\nwalrus {n}\n\n## more\n\nmore walrus\n".encode(), size=1, mtime_ns=1) for n in ("a.md", "b.md", "c.md")}
    ix.apply([], list(notes.values()))
    ix.close()
    again = KeywordIndex(tmp_path / "ix")
    try:
        assert again.doc_count() == 6
        again.apply(["a.md"], [parse_note("v", "b.md", b"only otter now\n", size=1, mtime_ns=2)])
        assert again.doc_count() == 3
        assert [d.body for d in again.stored_for_note("b.md")] == ["only otter now"]
        assert again.stored_for_note("a.md") == []
        q = parse_query("walrus").query
        assert {h.chunk_id for h in again.search(q, q.filters, 10)} == {chunk_id("v", "c.md", 0), chunk_id("v", "c.md", 1)}
    finally:
        again.close()


def test_index_persists_and_reopens(tmp_path: Path) -> None:
    ix = KeywordIndex(tmp_path / "ix")
    ix.apply([], [parse_note("v", "n.md", b"persistent words\n", size=1, mtime_ns=1)])
    ix.close()
    again = KeywordIndex(tmp_path / "ix")
    try:
        q = parse_query("persistent").query
        assert [h.chunk_id for h in again.search(q, q.filters, 10)] == [chunk_id("v", "n.md", 0)]
    finally:
        again.close()


@pytest.mark.parametrize(
    "filters",
    [
        SearchFilters(folders=("Projects",)),
        SearchFilters(folders=("projects/cairn",)),
        SearchFilters(tags=("recipe", "vegetarian"), tag_mode="all"),
        SearchFilters(tags=("cairn", "homelab")),
        SearchFilters(doc_types=("meeting", "journal")),
        SearchFilters(after="2026-01-01", before="2026-03-31"),
        SearchFilters(doc_types=("person",), allow_restricted=True),
        SearchFilters(doc_types=("person",)),
    ],
)
def test_keyword_filters_agree_with_manifest_filters(engine: Engine, filters: SearchFilters) -> None:
    """The vector list filters manifest records; both sides must pick the same notes."""
    vi = engine.index_for("sample")
    expected = {rel for rel, rec in vi.files.items() if record_matches(rel, rec, filters) and rec.chunks}
    resp = engine.search(SearchRequest("", mode="keyword", k=500, per_note_cap=1, top_n=1000, filters=filters))
    assert set(notes(resp)) == expected


@pytest.mark.parametrize(
    "filters",
    [
        SearchFilters(folders=("Projects",)),
        SearchFilters(tags=("recipe", "vegetarian"), tag_mode="all"),
        SearchFilters(doc_types=("meeting", "journal")),
        SearchFilters(after="2026-01-01", before="2026-03-31"),
        SearchFilters(doc_types=("person",)),
    ],
)
def test_every_word_search_hit_satisfies_the_filters(engine: Engine, filters: SearchFilters) -> None:
    files = engine.index_for("sample").files
    resp = engine.search(SearchRequest("the plan notes week cairn time", mode="keyword", k=200, per_note_cap=0, filters=filters))
    assert resp.hits
    assert all(record_matches(h.chunk.rel_path, files[h.chunk.rel_path], filters) for h in resp.hits)
