"""Front matter: the properties a note declares about itself, and what happens when YAML is broken."""

from __future__ import annotations

import random
import time

import pytest

from core.vault import frontmatter
from core.vault.frontmatter import normalise_tags, parse_front_matter, split_front_matter
from core.vault.notes import parse_note

BOM = b"\xef\xbb\xbf"


def note(raw: bytes, rel_path: str = "Folder/My note.md"):
    return parse_note("v", rel_path, raw, size=len(raw), mtime_ns=0)


# -- the block itself -------------------------------------------------------------------------


def test_front_matter_block_is_split_off_and_body_starts_after_closing_fence() -> None:
    raw = b"---\ntitle: T\n---\n# Body\n"
    yaml_text, body = split_front_matter(raw)
    assert yaml_text == "title: T\n"
    assert raw[body:] == b"# Body\n"


def test_front_matter_may_close_with_three_dots() -> None:
    raw = b"---\ntitle: T\n...\nbody\n"
    fm = parse_front_matter(raw)
    assert fm.title == "T"
    assert raw[fm.end_byte :] == b"body\n"


def test_front_matter_with_crlf_line_endings_is_parsed() -> None:
    raw = b"---\r\ntitle: Windows\r\ntags: [a]\r\n---\r\nbody\r\n"
    fm = parse_front_matter(raw)
    assert (fm.title, fm.tags) == ("Windows", ("a",))
    assert raw[fm.end_byte :] == b"body\r\n"


def test_front_matter_after_a_bom_is_parsed_from_the_given_offset() -> None:
    raw = BOM + b"---\ntitle: With BOM\n---\nbody\n"
    fm = parse_front_matter(raw, len(BOM))
    assert fm.title == "With BOM"
    assert raw[fm.end_byte :] == b"body\n"


def test_note_without_front_matter_has_defaults_and_body_from_offset() -> None:
    fm = parse_front_matter(b"# Just a note\n")
    assert fm.title is None and fm.tags == () and fm.date is None
    assert fm.confidentiality == "internal"
    assert fm.end_byte == 0 and fm.error is None


def test_unclosed_front_matter_is_treated_as_body() -> None:
    raw = b"---\ntitle: never closed\n\nSome text\n"
    fm = parse_front_matter(raw)
    assert fm.title is None and fm.end_byte == 0


def test_front_matter_must_start_at_the_first_line() -> None:
    raw = b"\n---\ntitle: late\n---\n"
    assert parse_front_matter(raw).title is None


def test_empty_front_matter_is_fine() -> None:
    raw = b"---\n---\nbody\n"
    fm = parse_front_matter(raw)
    assert fm.error is None and raw[fm.end_byte :] == b"body\n"


# -- properties ------------------------------------------------------------------------------


def test_all_known_properties_are_read() -> None:
    raw = (
        b"---\n"
        b"title: Quarterly plan\n"
        b"tags: [Planning, '#Work']\n"
        b"aliases: [Q3 plan, plan]\n"
        b"date: 2026-07-01\n"
        b"project: Cairn\n"
        b"doc_type: Meeting\n"
        b"confidentiality: Public\n"
        b"unknown_key: ignored\n"
        b"---\n"
    )
    fm = parse_front_matter(raw)
    assert fm.title == "Quarterly plan"
    assert fm.tags == ("planning", "work")
    assert fm.aliases == ("Q3 plan", "plan")
    assert fm.date == "2026-07-01"
    assert fm.project == "Cairn"
    assert fm.doc_type == "meeting"
    assert fm.confidentiality == "public"
    assert fm.error is None


@pytest.mark.parametrize(
    "value, expected",
    [
        ("[Python, '#Dev']", ("python", "dev")),
        ("'python, #Dev, python'", ("python", "dev")),
        ("python dev", ("python", "dev")),
        ("\n  - Home-Lab\n  - '#nested/Tag'", ("home-lab", "nested/tag")),
        ("'#solo'", ("solo",)),
        ("[]", ()),
        ("", ()),
    ],
)
def test_tags_accept_a_list_or_a_comma_string_lower_cased_without_hash(value: str, expected: tuple[str, ...]) -> None:
    fm = parse_front_matter(f"---\ntags: {value}\n---\n".encode())
    assert fm.tags == expected


def test_normalise_tags_drops_duplicates_and_punctuation() -> None:
    assert normalise_tags(["A", "#a", "b!", None, 3]) == ("a", "b", "3")


def test_aliases_accept_a_comma_string() -> None:
    fm = parse_front_matter(b"---\naliases: one, two\n---\n")
    assert fm.aliases == ("one", "two")


@pytest.mark.parametrize(
    "value, expected",
    [
        ("2026-03-04", "2026-03-04"),
        ("'2026-03-04'", "2026-03-04"),
        ("2026-03-04T10:11:12", "2026-03-04"),
        ("2026-03-04 10:11:12", "2026-03-04"),
        ("'2026/3/4'", "2026-03-04"),
        ("'2026-03'", "2026-03-01"),
    ],
)
def test_date_is_normalised_to_iso(value: str, expected: str) -> None:
    fm = parse_front_matter(f"---\ndate: {value}\n---\n".encode())
    assert fm.date == expected
    assert fm.error is None


def test_unparseable_date_is_dropped_with_an_error() -> None:
    fm = parse_front_matter(b"---\ndate: next tuesday\n---\n")
    assert fm.date is None
    assert fm.error is not None and "next tuesday" in fm.error


@pytest.mark.parametrize("level", ["public", "internal", "restricted", "RESTRICTED", " Public "])
def test_confidentiality_levels_are_recognised(level: str) -> None:
    fm = parse_front_matter(f"---\nconfidentiality: '{level}'\n---\n".encode())
    assert fm.confidentiality == level.strip().lower()
    assert fm.error is None


def test_confidentiality_defaults_to_internal() -> None:
    assert parse_front_matter(b"---\ntitle: x\n---\n").confidentiality == "internal"


def test_unknown_confidentiality_fails_closed_as_restricted_with_an_error() -> None:
    fm = parse_front_matter(b"---\nconfidentiality: top-secret\n---\n")
    assert fm.confidentiality == "restricted"
    assert fm.error is not None and "top-secret" in fm.error


# -- broken YAML -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "block",
    [b"title: [unclosed\n", b"title: a: b: c\n", b"\tbad: tab indent\n", b"- just\n- a list\n", b"just a string\n"],
)
def test_broken_or_non_mapping_yaml_becomes_an_error_not_an_exception(block: bytes) -> None:
    raw = b"---\n" + block + b"---\nbody\n"
    fm = parse_front_matter(raw)
    assert fm.error
    assert raw[fm.end_byte :] == b"body\n"  # the block is still not part of the body


def test_note_with_broken_yaml_is_still_indexed_with_a_front_matter_warning() -> None:
    doc = note(b"---\ntitle: [oops\ntags: x\n---\n# Fallback title\n\nThe body survives.\n")
    assert [w.code for w in doc.warnings] == ["front_matter"]
    assert doc.title == "Fallback title"
    assert "The body survives." in doc.chunks[0].text
    assert "oops" not in doc.chunks[0].text


# -- tags from the body ----------------------------------------------------------------------


def test_inline_hash_tags_in_the_body_count_as_tags() -> None:
    doc = note(b"---\ntags: [front]\n---\nWorking on #Project/Alpha and #ideas today. #front again.\n")
    assert doc.tags == ("front", "project/alpha", "ideas")


def test_hash_inside_code_fence_or_inline_code_is_not_a_tag() -> None:
    raw = b"Text with `#notatag` inline.\n\n```python\n# comment\nx = 1  #alsonot\n```\n\n    #indentedcode\n\nReal #tag here.\n"
    assert note(raw).tags == ("tag",)


def test_headings_urls_numbers_and_mid_word_hashes_are_not_tags() -> None:
    raw = b"# Heading\n\n## Sub\n\nSee [x](#anchor), http://example.com/#frag, issue #123, C#sharp, a&#39;b.\n"
    assert note(raw).tags == ()


# -- title fallback --------------------------------------------------------------------------


def test_title_comes_from_front_matter_first() -> None:
    assert note(b"---\ntitle: From YAML\n---\n# From H1\n").title == "From YAML"


def test_title_falls_back_to_the_first_h1() -> None:
    assert note(b"Intro\n\n## Not this\n\n# First H1\n\n# Second H1\n").title == "First H1"


def test_title_falls_back_to_the_file_stem() -> None:
    assert note(b"## Only an H2\n\ntext\n", rel_path="Folder/My note.md").title == "My note"


def test_setext_h1_counts_as_the_first_h1() -> None:
    assert note(b"Underlined title\n================\n\ntext\n").title == "Underlined title"


def test_h1_inside_a_code_fence_is_not_a_title() -> None:
    assert note(b"```\n# not a title\n```\n", rel_path="stem.md").title == "stem"


def test_empty_front_matter_title_falls_back() -> None:
    assert note(b"---\ntitle: ''\n---\n# H1 wins\n").title == "H1 wins"


def test_nested_values_are_ignored_and_nested_confidentiality_fails_closed() -> None:
    fm = parse_front_matter(b"---\ntags: [a, [b, c], {d: e}]\nconfidentiality: {level: public}\n---\n")
    assert fm.tags == ("a",)
    assert fm.confidentiality == "restricted" and fm.error


def test_yaml_alias_bomb_is_parsed_quickly() -> None:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    previous = "a"
    for name in "bcdefghi":  # 9**9 strings if anything ever flattened it to text
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
        previous = name
    lines += [f"tags: *{previous}", f"title: *{previous}", f"aliases: *{previous}", f"confidentiality: *{previous}"]
    raw = ("---\n" + "\n".join(lines) + "\n---\n# Real title\n").encode()
    started = time.perf_counter()
    doc = note(raw)
    assert time.perf_counter() - started < 2
    assert doc.tags == () and doc.aliases == () and doc.confidentiality == "restricted"


# -- libyaml and PyYAML's own parser ---------------------------------------------------------

_KEYS = ["title", "tags", "aliases", "date", "project", "doc_type", "confidentiality", "x", "'q'", '"dq"', "a b", "créé"]
_VALUES = [
    "", " T", " [a, b]", " [a, [b, c], {d: e}]", " {a: 1}", " 2023-05-09", " 2023-02-30", " 2023-05-09 10:00", " 25:61:00",
    " 'single'", ' "double \\u00e9"', ' "\\ud800"', ' "\\x07"', " yes", " ~", " 1e3", " 0x1F", " .inf", " 12:30:00",
    " &a x", " *a", " !!str 5", " !!python/object:os.system", " |\n  block\n  text", " >\n  folded", "\n  - a\n  - b", "\n- a",
    " a: b", " #comment", " x # c", " [unclosed", " 'unclosed", " `tick", " @at", " \t tab", " text: with colon",
    " [[Wiki]]", " #tag", " 中文", " \x85nel", " \u2028ls", " \ufeffbom", " \x1besc", " \ud800lone", " multi\n  line plain",
    " " + "k" * 1100, " [" * 60 + "]" * 60, " !!binary aGk=", " !!set {a, b}", " <<: *a", " 1:2:3", " 2001-12-14t21:59:43.10-05:00",
]


def test_libyaml_reads_front_matter_exactly_as_pyyaml_does(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(21)
    blocks = []
    for _ in range(1500):
        lines = [
            rng.choice(["", "", "", "  ", "\t", "- "]) + rng.choice(_KEYS) + rng.choice([":", ":", " :", "::", ""]) + rng.choice(_VALUES)
            for _ in range(rng.randint(1, 6))
        ]
        blocks.append(("---\n" + "\n".join(lines) + "\n---\nbody\n").encode("utf-8", "surrogatepass"))
    loaded = sum(frontmatter._load_with_libyaml(frontmatter.split_front_matter(b)[0] or "") is not frontmatter._NOT_LOADED for b in blocks)
    fast = [parse_front_matter(b) for b in blocks]
    monkeypatch.setattr(frontmatter, "_c_loader", lambda: None)
    slow = [parse_front_matter(b) for b in blocks]
    assert repr(fast) == repr(slow)  # repr: a NaN is not equal to itself
    assert loaded > 100  # libyaml really read the valid ones (most generated blocks are broken YAML)
