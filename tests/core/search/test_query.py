"""The query language: words, "quoted phrases" and key:value filters."""

from __future__ import annotations

import pytest

from core.base.models import SearchFilters
from core.search.query import content_terms, parse_date, parse_query


def test_plain_words_are_terms_and_free_text() -> None:
    q = parse_query("token expiry sleep").query
    assert q.terms == ("token", "expiry", "sleep")
    assert q.phrases == ()
    assert q.text == "token expiry sleep"
    assert q.filters == SearchFilters()


def test_quoted_phrases_are_kept_whole() -> None:
    q = parse_query('backup "third place" cafe "red lentil dal"').query
    assert q.terms == ("backup", "cafe")
    assert q.phrases == ("third place", "red lentil dal")
    assert "third place" in q.text and "backup" in q.text


def test_unclosed_quote_is_a_phrase_to_the_end() -> None:
    assert parse_query('say "hello world').query.phrases == ("hello world",)


def test_empty_quotes_are_dropped() -> None:
    q = parse_query('"" word').query
    assert q.phrases == () and q.terms == ("word",)


def test_filters_are_taken_out_of_the_free_text() -> None:
    result = parse_query("vault:notes folder:Projects/Cairn tag:#Release type:Meeting after:2026-01-01 before:2026-02-01 plan")
    q = result.query
    assert q.text == "plan" and q.terms == ("plan",)
    f = q.filters
    assert f.vaults == ("notes",)
    assert f.folders == ("Projects/Cairn",)
    assert f.tags == ("release",)
    assert f.doc_types == ("meeting",)
    assert (f.after, f.before) == ("2026-01-01", "2026-02-01")
    assert result.warnings == ()


def test_filter_keys_are_case_insensitive() -> None:
    f = parse_query("TAG:x Type:y").query.filters
    assert (f.tags, f.doc_types) == (("x",), ("y",))


def test_quoted_filter_value_may_contain_spaces() -> None:
    f = parse_query('folder:"Projects/Home Lab/" dns').query.filters
    assert f.folders == ("Projects/Home Lab",)


def test_tag_filter_is_repeatable_and_deduplicated() -> None:
    f = parse_query("tag:a tag:B tag:#a").query.filters
    assert f.tags == ("a", "b")


def test_query_filters_merge_over_base_filters() -> None:
    base = SearchFilters(tags=("base",), tag_mode="all", allow_restricted=True, after="2020-01-01")
    f = parse_query("tag:extra after:2025-05-05 x", base).query.filters
    assert f.tags == ("base", "extra")
    assert f.tag_mode == "all" and f.allow_restricted
    assert f.after == "2025-05-05"


def test_bad_date_becomes_a_warning_not_an_error() -> None:
    result = parse_query("after:yesterday notes")
    assert result.query.filters.after is None
    assert result.query.terms == ("notes",)
    assert len(result.warnings) == 1 and "after:yesterday" in result.warnings[0]


def test_urls_times_and_empty_filters_stay_words() -> None:
    q = parse_query("http://example.com at 10:30 tag:").query
    assert q.terms == ("http://example.com", "at", "10:30", "tag:")
    assert q.filters == SearchFilters()


def test_any_other_key_is_a_property_filter() -> None:
    q = parse_query('author:ray rating>=4 -status:done has:due project:"Big launch" -tag:old task:open notes').query
    assert q.terms == ("notes",)
    spelled = [f.spelled() for f in q.filters.where]
    assert spelled == ["author:ray", "rating>=4", "-status:done", "has:due", 'project:"Big launch"', "-tags:old", "@task:open"]


def test_filter_only_query_has_empty_text() -> None:
    q = parse_query("tag:recipe").query
    assert q.text == "" and q.terms == () and q.filters.tags == ("recipe",)


@pytest.mark.parametrize(
    "text, expected",
    [("2026-03-04", "2026-03-04"), ("2026/03/04", "2026-03-04"), ("2026-03", "2026-03-01"), ("2026", "2026-01-01"), ("2026-13-01", None), ("soon", None)],
)
def test_parse_date_accepts_iso_like_forms(text: str, expected: str | None) -> None:
    assert parse_date(text) == expected


def test_unicode_words_survive() -> None:
    assert parse_query("café 日本語").query.terms == ("café", "日本語")


def test_content_terms_drop_stop_and_question_words() -> None:
    q = parse_query("how do I publish my vault?").query
    assert content_terms(q.terms) == ("publish", "vault?")
    assert content_terms(("what", "is", "it")) == ("what", "is", "it")  # nothing left: keep them all
    assert content_terms(("Doing", "MY", "taxes")) == ("taxes",)
