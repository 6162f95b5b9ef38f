"""The simple-shape front matter reader: the YAML loader's values wherever it reads a block, else it declines."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.vault import frontmatter
from core.vault.frontmatter_simple import NOT_SIMPLE, load_simple

VAULTS = next((p / "shared/data/vaults" for p in Path(__file__).resolve().parents if (p / "shared/data/vaults").is_dir()), Path("/nonexistent"))


def _loaded(text: str) -> Any:
    """What the YAML loader gives (libyaml where it agrees, else PyYAML), or an error marker."""
    data = frontmatter._load_with_libyaml(text)
    if data is not frontmatter._NOT_LOADED:
        return data
    try:
        return yaml.load(text, Loader=frontmatter._loader())
    except Exception as exc:  # noqa: BLE001 - any error: the simple reader must have declined
        return ("error", type(exc).__name__)


def _same(text: str) -> bool:
    """The reader declines `text`, or reads exactly the loader's values (types and key types too)."""
    simple = load_simple(text)
    if simple is NOT_SIMPLE:
        return True
    loaded = _loaded(text)
    loaded_keys = [type(k) for k in loaded] if isinstance(loaded, dict) else None
    return repr(simple) == repr(loaded) and (simple is None or [type(k) for k in simple] == loaded_keys)


def test_common_obsidian_shapes_are_read() -> None:
    text = 'title: "A: b"\ntags: [meeting, "finance", \'x\']\ncreated: 2025-10-10\nrating: 3\nscore: 1.5\ndone: yes\n'
    text += "aliases:\n  - One\n  - 'Two'\nempty:\nurl: https://example.com/a\nnothing: ~\nlist: []\n"
    expected = {"title": "A: b", "tags": ["meeting", "finance", "x"], "created": dt.date(2025, 10, 10), "rating": 3, "score": 1.5}
    expected |= {"done": True, "aliases": ["One", "Two"], "empty": None, "url": "https://example.com/a", "nothing": None, "list": []}
    assert load_simple(text) == expected == _loaded(text)
    assert load_simple("url: https://example.com/a#b\n") is NOT_SIMPLE  # any "#": the loader decides if it is a comment
    assert load_simple("title: T\ntags: [a, b]\ncreated: 2025-10-10\n") == {"title": "T", "tags": ["a", "b"], "created": dt.date(2025, 10, 10)}


@pytest.mark.parametrize(
    "text",
    [
        "a: b # comment\n", "a: 0x1F\n", "a: 012\n", "a: 1_000\n", "a: 1:20\n", "a: 1e3\n", "a: .inf\n", "a: 2023-05-09 10:00\n",
        "a: &x b\n", "a: *x\n", "a: !!str 5\n", "a: |\n  text\n", "a: >\n  text\n", "a: plain\n  continued\n", 'a: "esc\\n"\n',
        "a: 'it''s'\n", "a: [b, [c]]\n", "a: {b: c}\n", "a: [b, ]\n", "a: b: c\n", "- a\n", "  a: b\n", "a:\n  b: c\n", "a: @b\n",
        "a: `b\n", "a: %b\n", "a:\n- b\n  - c\n", "a: b\r\n", "a: b\x85c\n", "a:\tb\n", "<<: b\n", "a: =\n", "? a\n", "a : b\n",
        "a: -1\n", "a: [[Wiki]]\n", "a: b:\n", "a:b\n",
    ],
)
def test_yaml_traps_are_declined_or_read_exactly(text: str) -> None:
    assert _same(text)


def test_impossible_date_stays_text_as_the_loader_keeps_it() -> None:
    assert load_simple("date: 2023-02-30\n") == {"date": "2023-02-30"} == _loaded("date: 2023-02-30\n")


def test_yaml_11_booleans_and_nulls_are_typed_as_pyyaml_types_them() -> None:
    for word in ["yes", "No", "ON", "off", "TRUE", "False", "y", "n", "null", "Null", "~", "NULL", "nUll", "YeS"]:
        assert _same(f"k: {word}\n{word}: v\n"), word


@pytest.mark.parametrize(
    "text",
    [
        "q: |-\n  not done\n  # sort by due\n\n  limit 20\nshort: false\n",  # the Tasks plugin's query property
        "a: |\n  one\n\n\nb: 1\n",
        "a: |+\n  one\n   \n\nb: 2\n",
        "a: |\n    deep\n     deeper\n    back\n",
        "a: |+\n  end\n\n",
        "created: 2024-07-21T12:37:00\ndue: 2024-07-22\n",
    ],
)
def test_literal_blocks_and_date_times_are_read_as_the_loader_reads_them(text: str) -> None:
    assert load_simple(text) is not NOT_SIMPLE
    assert _same(text)


def test_an_impossible_date_time_is_left_to_the_loader_which_reports_it() -> None:
    assert load_simple("d: 2024-13-21T12:37:00\n") is NOT_SIMPLE


_KEYS = ["title", "tags", "a b", "créé", "yes", "1", "on", "null", "2023-01-01", "x-y", "'q'", '"dq"', "k" * 1100, "a#b", "?x"]
_VALUES = [
    "", " T", " [a, b]", " [ a ,b ]", " []", " [ ]", ' ["x", \'y\']', " [1, 2.5, yes, ~]", " [a b, c]", " [a,]", " [a", " 2023-05-09",
    " 2023-02-30", " 0000-01-01", " 3", " 0", " -0", " 007", " 1.50", " 1.", " yes", " Off", " ~", " null", " 'single'", ' "double"',
    ' "a\\"b"', " 'a''b'", " x y", " a, b", " it's", ' say "hi"', " a:b", " a: b", " a #c", " a#c", " C#", " [[Wiki]]", ' "[[Wiki]]"',
    " #tag", " 中文", " \xa0nbsp", " \u2028ls", " \ufeffbom", " \x1besc", " trailing  ", " (paren)", " {a}", " x]", " x}",
    "\n  - a\n  - b", "\n- a\n- b", "\n  - a\n    - b", "\n  - a\n  b", "\n- 1\n- yes\n- 2023-01-01", "\n  - [a]", "\n  -", "\n\n  - a",
    " multi\n  line", " =", " <<", " !x", " &a x", " *a", " |\n  t", " 1:2", " 0o7", " +1", " 1e3", " .5", " 1_0",
    # literal block scalars (Obsidian's multi-line text, the Tasks plugin's query properties) and Obsidian's date & time
    " |-\n  a\n  # b\n\n  c: d", " |+\n  a\n\n", " |\n  a\n   \n", " |\n\n  a", " |2\n  a", " | # c\n  a", " >\n  a", " >-\n  a",
    " |\n    a\n  b", " |-\n  a\n- b", " |\n  a\n    b\n  c\n", " |+\n  a\n \n  \n", " |\n  - a", " |-  \n  'q'\n  [x]",
    " |\n  a\n...", " |\n  a\n ---", " 2024-07-21T12:37:00", " 2024-02-30T10:00:00", " 2024-07-21t12:37:00",
    " 2024-07-21T12:37", " 2024-07-21T25:00:00", " 2024-07-21 12:37:00", " 2024-07-21T12:37:00Z", " [2024-07-21T12:37:00]",
]


def test_generated_front_matter_reads_exactly_as_the_loader_reads_it() -> None:
    rng = random.Random(30)
    read = 0
    for _ in range(6000):
        prefixes, seps = ["", "", "", "", "", "", "", " ", "- "], [":", ":", ":", " :", ""]
        lines = [rng.choice(prefixes) + rng.choice(_KEYS) + rng.choice(seps) + rng.choice(_VALUES) for _ in range(rng.randint(1, 3))]
        text = "\n".join(lines) + "\n"
        assert _same(text), text
        read += load_simple(text) is not NOT_SIMPLE
    assert read > 300  # the reader really took many blocks, not only declined them


@pytest.mark.skipif(not VAULTS.is_dir(), reason="needs the shared real vaults")
def test_every_real_note_front_matter_reads_exactly_as_the_loader_reads_it() -> None:
    read = 0
    for path in sorted(VAULTS.rglob("*.md")):
        raw = path.read_bytes()
        text, _ = frontmatter.split_front_matter(raw, 3 if raw.startswith(b"\xef\xbb\xbf") else 0)
        if text is not None:
            assert _same(text), path
            read += load_simple(text) is not NOT_SIMPLE
    assert read > 50


def test_plain_scalar_tags_match_pyyaml_resolver_without_it() -> None:
    """`_tag` answers most values without importing yaml: every answer is the resolver's."""
    from yaml.nodes import ScalarNode
    from yaml.resolver import Resolver

    from core.vault.frontmatter_scalars import _tag

    resolver = Resolver()
    rng = random.Random(27)
    pieces = ["y", "Y", "es", "n", "o", "No", "ull", "NULL", "true", "off", "On", "t", "f", "0", "1", "7", "2023", "-", "+", ".", ":", "e", "_"]
    pieces += ["x", "é", "~", "=", "<", "a b", "inf", "nan", "0x", "0b", "2024-01-31", "12:30", "T", "2024-01-31T10:00:00", ":00"]
    values = ["yes", "YeS", "null", "nUll", "Null", "2023-02-30", "1.50", "-0", "007", "1_0", "1e3", "~", "=", "<<"]
    values += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))) for _ in range(20000)]
    for value in values:
        assert _tag(value) == resolver.resolve(ScalarNode, value, (True, False)), value


def test_unsafe_characters_are_exactly_those_outside_yaml_printable_set() -> None:
    import re

    from core.vault.frontmatter_simple import _UNSAFE

    printable = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
    assert [cp for cp in range(0x110000) if (_UNSAFE.match(chr(cp)) is None) != (printable.match(chr(cp)) is None)] == []


@pytest.mark.parametrize(
    "text",
    [
        # Obsidian plugins' nested properties, lists of mappings, empty items (obsidian-tasks-demo's test notes)
        "unknown_list:\n  -\n  -\nparent:\n  - child1:\n    - grandchild1: 1\n    - grandchild2: 2\n  - child2:\n    - grandchild3: 3\n",
        'nested_data:\n  surname: "Doe"\n  middle name: "Frances"\nobject_serialization: {"nested1": "value1", "nested2": "value2"}\n',
        '{\n  "tags": "journal",\n  "publish": false\n}\n',
        "a:\n  b:\n    c: 1\n    d: [x, y]\n  e:\n  - f\n  - g: |\n      text\n    h: 2024-07-21\ni: {}\nj: { k: v , 'l': 2 }\n",
        "list:\n- name: x\n  value: 1\n-   name: y\n    value: 2\n-\n  - nested\n-\n  key: v\n- [a, b]\n- {c: d}\n",
        "{}\n", "{a: 1, b: yes, c: ~, d: 2024-01-01, e: 1.5}\n", "{\n}\n",
    ],
)
def test_nested_and_flow_shapes_are_read_as_the_loader_reads_them(text: str) -> None:
    assert load_simple(text) is not NOT_SIMPLE, text
    assert _same(text), text


@pytest.mark.parametrize(
    "text",
    [
        "a:\n  b: 1\n   c: 2\n", "a:\n  b: 1\n c: 2\n", "a:\n  - x\n  b: 1\n", "- x\n", "  a: 1\n", "a: 1\n  b: 2\n",
        "a:\n  - x\n   - y\n", "a:\n- - x\n", "a:\n- |\n  t\n", "a:\n  b: |\n  t\n", "{a: 1,}\n", "{a: [1]}\n", "{a:1}\n",
        '{\n  "a": 1\n  , "b": 2}\n', '{"a": 1}\nb: 2\n', "{a: 1\n}\n", "a: {b: {c: 1}}\n", "a: {b: 1, b: 2}\nc: {1.5: x}\n",
    ],
)
def test_nested_shapes_yaml_reads_otherwise_are_declined_or_read_exactly(text: str) -> None:
    assert _same(text), text


_LEAVES = ["x", "a b", "'q'", '"dq"', "1", "1.5", "yes", "~", "2024-07-21", "2024-07-21T12:37:00", "[a, b]", "{a: 1}", "{'k': v, l: 2}", "[[W]]", "a:b"]
_NESTED_KEYS = ["k", "name", "a b", "1", "yes", "x-y"]


def _render(rng: random.Random, value: Any, column: int, depth: int) -> list[str]:
    """Lines of a generated node at `column`: a mapping, a sequence, or a leaf written after its key/dash."""
    pad = " " * column
    lines: list[str] = []
    if isinstance(value, dict):
        for key, sub in value.items():
            lines.extend(_with_head(rng, pad + key + ":", sub, column, depth))
    else:
        for sub in value:
            if isinstance(sub, dict) and sub and rng.random() < 0.7:  # `- key: value` with the other keys under it
                gap = rng.choice([1, 1, 2, 3])
                inner = _render(rng, sub, column + 1 + gap, depth + 1)
                lines.extend([pad + "-" + " " * gap + inner[0].lstrip(" "), *inner[1:]])
            else:
                lines.extend(_with_head(rng, pad + "-", sub, column, depth))
    return lines


def _with_head(rng: random.Random, head: str, value: Any, column: int, depth: int) -> list[str]:
    if isinstance(value, str):
        return [head + (" " + value if value else rng.choice(["", " "]))]
    step = rng.choice([1, 2, 2, 4] + ([0] * 2 if isinstance(value, list) and head.endswith(":") else []))
    return [head, *rng.choice([[], [""]]), *_render(rng, value, column + step, depth + 1)]


def _tree(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.45:
        return rng.choice([*_LEAVES, ""])
    if roll < 0.75:
        return {rng.choice(_NESTED_KEYS): _tree(rng, depth + 1) for _ in range(rng.randint(1, 3))}
    return [_tree(rng, depth + 1) for _ in range(rng.randint(1, 3))]


def test_generated_nested_front_matter_reads_exactly_as_the_loader_reads_it() -> None:
    """Mappings and sequences nested as YAML's block rules place them (compact sequences, `- key:` items,
    bare `-`), and lines then shifted by a space or joined with a stray one: read exactly, or declined."""
    rng = random.Random(8)
    read = 0
    for _ in range(3000):
        lines = _render(rng, {rng.choice(_KEYS[:6]): _tree(rng, 0) for _ in range(rng.randint(1, 3))}, 0, 0)
        if rng.random() < 0.3:  # a line shifted: YAML's error, another nesting, or a multi-line scalar
            k = rng.randrange(len(lines))
            lines[k] = rng.choice([" " + lines[k], lines[k][1:] if lines[k].startswith(" ") else lines[k], lines[k] + " #c"])
        text = "\n".join(lines) + "\n"
        assert _same(text), text
        read += load_simple(text) is not NOT_SIMPLE
    assert read > 1500


def test_generated_flow_mappings_read_exactly_as_the_loader_reads_them() -> None:
    """JSON-style front matter and one-line flow mappings, broken over lines anywhere: read exactly, or declined."""
    rng = random.Random(9)
    keys = ['"tags"', "'a b'", "plain", "1", "yes", '"x:y"', "k k", "[k]", "-k", '"es\\"c"']
    values = ['"journal"', "false", "null", "42", "1.5", "'it''s'", "x y", "2024-01-01", "[a]", "{b: 1}", '"a,b"', "", "a:b", "-1"]
    read = 0
    for _ in range(4000):
        entries = [rng.choice(keys) + rng.choice([": ", ": ", ":", " : ", ":  "]) + rng.choice(values) for _ in range(rng.randint(0, 4))]
        text = "{" + rng.choice(["", " ", "\n  "])
        for k, entry in enumerate(entries):
            text += entry + ("" if k == len(entries) - 1 else rng.choice([",", ", ", ",\n  ", "\n, ", ",,"]))
        text += rng.choice(["", " ", "\n", ",\n", " \n  "]) + "}" + rng.choice(["\n", "", "\nx: 1\n", " \n"])
        line = "key: " + text.replace("\n", " ").strip()
        for sample in (text, line + "\n"):
            assert _same(sample), sample
            read += load_simple(sample) is not NOT_SIMPLE
    assert read > 1000


def test_the_copied_implicit_resolvers_are_the_installed_pyyamls() -> None:
    from yaml.resolver import Resolver

    from core.vault.frontmatter_scalars import _implicit_resolvers

    installed = {first: [(tag, p.pattern, p.flags) for tag, p in rules] for first, rules in Resolver.yaml_implicit_resolvers.items()}
    assert {first: [(tag, p.pattern, p.flags) for tag, p in rules] for first, rules in _implicit_resolvers().items()} == installed
