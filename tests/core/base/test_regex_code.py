"""Regular expressions from a table of compiled programs (`core.base.regex_code`): the same patterns, compiled once.

Each test gives `re` the table's `compile` for its own patterns only (monkeypatch, and `re`'s own
cache purged), so the rest of the test process compiles as Python does.
"""

from __future__ import annotations

import _sre
import json
import marshal
import os
import random
import re
import subprocess
import sys
import warnings
from array import array
from collections.abc import Iterator
from pathlib import Path
from re import _compiler  # type: ignore[attr-defined]
from typing import Any

import pytest

from core.base import regex_code
from core.base.regex_code import PatternCache, may_warn
from tests.entry_probe import ARGVS, run_entry
from tests.index_dump import index_dump_by_chunk

REPO = Path(__file__).resolve().parents[3]
ORIGINAL = _compiler.compile  # as Python compiles (this module is imported before any test installs a table)

# (text, flags, subjects): named groups, inline and passed flags, bytes, Unicode classes, lookarounds,
# back references, verbose text, ASCII and LOCALE, atomic groups and possessive repeats, \N escapes.
CASES: list[tuple[str | bytes, int, list[Any]]] = [
    (r"(?P<year>\d{4})-(?P<month>\d\d)", 0, ["on 2024-05 and 1999-12", "none"]),
    (r"(?i)hello\s+(world)", 0, ["HeLLo   WORLD!", "hello"]),
    (r"^tag: (\w+)$", re.M | re.I, ["x\nTAG: abc\ny\ntag: d"]),
    (rb"(?P<k>[a-z]+)=(?P<v>\d+)", 0, [b"a=1 bc=22 =3"]),
    (r"\w+", 0, ["héllo wörld 日本語 ٣٤"]),
    (r"\w+", re.ASCII, ["héllo wörld"]),
    (r"\d+", 0, ["12 ٣٤ ７"]),
    (r"(?<=#)[\w/-]+", 0, ["a #tag/sub-x b #c"]),
    (r"(?<!\\)\[(\w+)\](?=\()", 0, [r"[a](x) \[b](y) [c]"]),
    (r"(['\"])(.*?)\1", 0, ["say \"hi\" and 'yo' or \"no'"]),
    (r"(?P<q>ab)(?P=q)+", 0, ["ababab abx"]),
    ("(?x) (?P<num> \\d+ ) # a number\n \\s* (?P<unit> [a-z ]+ ) # a unit, [sic]\n", 0, ["12 kg and 3g"]),
    (r"\d+ (?# a comment ) kg", 0, ["5 kg"]),
    (rb"\w+", re.LOCALE, [b"abc d_e 12"]),
    (rb"[^\x00-\x7f]+", 0, ["caf\u00e9 na\u00efve".encode("latin-1")]),
    (r"a.b", re.S, ["a\nb axb"]),
    (r"(?>a+)b|a++c", 0, ["aaab aac ab"]),
    (r"\N{EM DASH}|[\u00e0-\u00ff]+", 0, ["x\u2014\u00e0\u00e9y"]),
    (r"[^\W\d_]+", 0, ["abc123d\u00e9f_g"]),
    (r"(a)|(b)", 0, ["b a c"]),
    (r"", 0, ["abc"]),
    (r"\bfoo\b", re.I, ["a FOO b foobar"]),
    (r"(?s:.)+?(?-i:X)", re.I, ["abxX"]),
    (r"x{2,5}?|y{3}", 0, ["xxxxxx yyyy"]),
    (r"^\s*[-*+]\s+\[(?P<done>[ xX])\]\s+(?P<text>.*)$", re.M, ["- [x] done\n* [ ] todo\n-[x] no"]),
    ("|".join(f"word{n}" for n in range(200)), 0, ["a word17 b word199"]),
]


@pytest.fixture(autouse=True)
def _bytecode_may_be_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in an installed Cairn (a test run may have PYTHONDONTWRITEBYTECODE set)."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


def _kept(path: Path, *texts: str | bytes, flags: int = 0) -> PatternCache:
    """`texts` compiled by two processes, each saving (the first logs digests, the second keeps arguments); a third's table."""
    for _ in range(2):
        cache = PatternCache(path, ORIGINAL)
        for text in texts:
            cache.compile(text, flags)
        cache.save()
    return PatternCache(path, ORIGINAL)


@pytest.fixture()
def use(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """`use(cache)`: `re` compiles through `cache` for the rest of the test (its own cache emptied)."""

    def install(cache: PatternCache) -> PatternCache:
        monkeypatch.setattr(_compiler, "compile", cache.compile)
        re.purge()
        return cache

    yield install
    re.purge()


def _behaviour(pattern: re.Pattern[Any], subjects: list[Any]) -> list[Any]:
    """What a pattern does on `subjects`: its attributes and every match's spans, groups and names."""
    seen: list[Any] = [pattern.pattern, pattern.flags, pattern.groups, dict(pattern.groupindex)]
    for subject in subjects:
        for m in pattern.finditer(subject):
            seen.append((m.span(), m.group(), m.groups(), m.groupdict(), m.lastindex, m.lastgroup, m.regs))
        found = pattern.search(subject)
        seen.append((found and found.span(), pattern.fullmatch(subject) is not None, pattern.split(subject)))
    return seen


@pytest.mark.parametrize(("text", "flags", "subjects"), CASES, ids=[repr(c[0])[:40] for c in CASES])
def test_patterns_from_the_table_behave_as_patterns_compiled_anew(text: str | bytes, flags: int, subjects: list[Any], tmp_path: Path) -> None:
    path = tmp_path / "regex.marshal"
    made = PatternCache(path, ORIGINAL).compile(text, flags)
    third = _kept(path, text, flags=flags)
    from_table = third.compile(text, flags)
    assert third.compiled == 0 and (isinstance(text, bytes), text, flags) in third.used  # not parsed: read
    expected = ORIGINAL(text, flags)
    assert from_table == expected and made == expected  # the same flags, text and program
    assert _behaviour(from_table, subjects) == _behaviour(expected, subjects)


def test_re_compile_through_the_table(tmp_path: Path, use: Any) -> None:
    for _ in range(3):  # compiled, compiled and kept, read from the table
        cache = use(PatternCache(tmp_path / "regex.marshal", ORIGINAL))
        assert re.sub(r"(?P<w>\w+)@(\w+)", r"\2 at \g<w>", "me@home, you@work") == "home at me, work at you"
        assert re.findall(rb"\d+", b"a1b22") == [b"1", b"22"]
        assert re.compile("x", re.I) is re.compile("x", re.I)  # `re`'s own cache still in front
        cache.save()
    assert cache.compiled == 0 and len(cache.used) == 3  # a replacement template is not a pattern


def test_a_text_is_kept_once_two_processes_compiled_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, log = tmp_path / "regex.marshal", tmp_path / "regex.seen"
    first = PatternCache(path, ORIGINAL)
    first.compile("one"), first.compile("two"), first.compile("one")
    assert first.save() and not path.exists() and log.stat().st_size == 8  # two digests logged: no text written
    second = PatternCache(path, ORIGINAL)
    for text in ("one", "two", "made anew by each process 1"):
        second.compile(text)
    assert second.save() and log.stat().st_size == 12
    third = PatternCache(path, ORIGINAL)
    assert {key[1] for key in third.known} == {"one", "two"}
    stamp = path.stat().st_mtime_ns
    third.compile("one"), third.compile("made anew by each process 2")
    assert third.save() and third.compiled == 0 and path.stat().st_mtime_ns == stamp  # the table is not rewritten
    assert log.stat().st_size == 16
    log.write_bytes(b"\x01\x02\x03\x04\x05")  # a torn write: read as empty, then started over
    fourth = PatternCache(path, ORIGINAL)
    assert fourth.seen == set() and not fourth.log_ok
    fourth.compile("three")
    assert fourth.save() and log.stat().st_size == 4
    monkeypatch.setattr(regex_code, "MAX_SEEN", 2)
    fifth = PatternCache(path, ORIGINAL)
    fifth.compile("four"), fifth.compile("five")
    assert fifth.save() and log.stat().st_size == 8  # past the bound: started over with this process's digests


@pytest.mark.parametrize(
    ("text", "flags"),
    [("(", 0), ("a**", 0), ("[z-a]", 0), ("(?P<1>x)", 0), (r"\q", 0), ("(?L)x", 0), (r"\w", re.ASCII | re.UNICODE), (b"\\u1234", 0)],
)
def test_errors_are_raised_as_before_and_not_kept(text: str | bytes, flags: int, tmp_path: Path) -> None:
    with pytest.raises((re.error, ValueError)) as python_s:
        ORIGINAL(text, flags)
    cache = PatternCache(tmp_path / "regex.marshal", ORIGINAL)
    with pytest.raises(python_s.type) as ours:
        cache.compile(text, flags)
    assert str(ours.value) == str(python_s.value)
    assert getattr(ours.value, "pos", None) == getattr(python_s.value, "pos", None)
    assert cache.known == {} and not cache.save()


def test_the_parsers_warnings_are_given_by_every_process(tmp_path: Path, use: Any) -> None:
    path = tmp_path / "regex.marshal"
    for _ in range(3):  # compiled, compiled and kept (but for the warning text), read from the table
        cache = use(PatternCache(path, ORIGINAL))
        with pytest.warns(FutureWarning, match="Possible nested set") as caught:
            assert re.compile("[[a]b").match("[b")
        assert caught[0].filename == __file__  # it still names re.compile's caller
        re.compile("kept")
        cache.save()
    known = PatternCache(path, ORIGINAL).known
    assert (False, "kept", 0) in known and (False, "[[a]b", 0) not in known


def test_a_text_the_parser_warns_about_is_never_kept() -> None:
    """`may_warn` says yes for every text that warned, over random texts made of the marks that matter."""
    rng = random.Random(30)
    parts = ["[", "]", "^", "\\", "-", "&", "~", "|", "a", "#", ")", "(?:", "(?x)", "(?#", "(?-x:", "(?(1)", "(?P<n>", "\n"]
    warned = 0
    for _ in range(20_000):
        chosen = "".join(rng.choice(parts) for _ in range(rng.randint(1, 9)))
        flags = rng.choice((0, 0, re.VERBOSE))
        text = chosen.encode() if rng.random() < 0.2 else chosen
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                ORIGINAL(text, flags)
            except (re.error, RecursionError, OverflowError):
                continue
        if caught:
            warned += 1
            assert may_warn(text, flags), (text, flags, str(caught[0].message))
    assert warned >= 3
    for text in ("[[a]", "[+--]", "[a&&b]", "[a~~b]", "[a||b]", "[]&&a]", "[^]&&a]", "(a)(?(+1)b)"):
        with pytest.warns((FutureWarning, DeprecationWarning)):
            ORIGINAL(text, 0)
        assert may_warn(text, 0)
    assert not may_warn(r"!?\[\[([^\[\n]+?)\]\]|\[([^\]]*)\]\((?:[a-z#-]|%[0-9])*\)", 0)  # Cairn's links: kept
    assert may_warn("a\\#[--]", re.VERBOSE) and may_warn(b"(?P<\xe9>x)", 0)


def test_pythons_own_path_for_debug_parsed_and_subclassed_patterns(tmp_path: Path, use: Any, capsys: pytest.CaptureFixture[str]) -> None:
    cache = use(PatternCache(tmp_path / "regex.marshal", ORIGINAL))
    assert re.compile("ab+", re.DEBUG).match("abb")
    assert "LITERAL 97" in capsys.readouterr().out  # the program is printed, as Python prints it
    scanner = re.Scanner([(r"\d+", lambda s, t: int(t)), (r"\s+", None)])  # type: ignore[attr-defined]  # an already parsed pattern; not in the stubs
    assert scanner.scan("1 22") == ([1, 22], "")

    class Text(str):
        pass

    subclassed: re.Pattern[str] = re.compile(Text("c+d"))
    assert subclassed.match("ccd") and subclassed.pattern == "c+d"
    assert cache.compiled == 0 and cache.known == {}


def test_a_damaged_or_foreign_file_is_an_empty_table(tmp_path: Path) -> None:
    path = tmp_path / "regex.marshal"
    for content in (b"", b"not marshal at all", marshal.dumps(["a list"]), marshal.dumps({"abc": 3}), marshal.dumps({(False, b"abc", 0): (0, [], 0, {}, ())})):
        path.write_bytes(content)
        cache = PatternCache(path, ORIGINAL)
        assert cache.known == {}
        assert cache.compile("abc").match("abc") and len(cache.met) == 1
    for program in (array("I", [999, 1]).tobytes(), b"\x01\x02\x03"):  # a program `_sre` refuses, a torn one
        path.write_bytes(marshal.dumps({(False, "abc", 0): (32, program, 0, {}, (None,))}))
        cache = PatternCache(path, ORIGINAL)
        assert len(cache.known) == 1
        assert cache.compile("abc") == ORIGINAL("abc", 0) and cache.known == {}  # compiled anew, the entry dropped
    assert cache.save() and _kept(path, "abc").compile("abc") == ORIGINAL("abc", 0)


def test_the_table_lives_beside_cairns_bytecode_named_for_the_interpreter_and_sre() -> None:
    path = regex_code.default_path()
    assert path.parent == REPO / "core" / "__pycache__"
    assert sys.implementation.cache_tag in path.name and f"{sys.hexversion:x}" in path.name and str(_sre.MAGIC) in path.name


def test_nothing_is_written_where_bytecode_may_not_be(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = PatternCache(tmp_path / "regex.marshal", ORIGINAL)
    cache.compile("abc")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert not cache.save() and not list(tmp_path.iterdir())
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "frozen", True, raising=False)  # a frozen build (PyInstaller sets it)
    assert not cache.save() and not list(tmp_path.iterdir())
    monkeypatch.delattr(sys, "frozen")
    (tmp_path / "file").write_text("a file, not a folder")
    blocked = PatternCache(tmp_path / "file" / "regex.marshal", ORIGINAL)
    blocked.compile("abc")
    assert not blocked.save()  # the process goes on; the next one compiles again
    assert cache.save() and not PatternCache(tmp_path / "regex.marshal", ORIGINAL).save()  # nothing new: nothing to write


def test_a_table_grown_past_its_bound_keeps_this_process_patterns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "regex.marshal"
    _kept(path, *(f"old{n}" for n in range(20)))
    monkeypatch.setattr(regex_code, "MAX_ENTRIES", 10)
    for _ in range(2):  # the new text met by two processes: the second one rewrites the table
        cache = PatternCache(path, ORIGINAL)
        cache.compile("old3"), cache.compile("new")
        assert cache.save()
    assert set(marshal.loads(path.read_bytes())) == {(False, "old3", 0), (False, "new", 0)}


def test_install_is_idempotent_and_only_on_releases_it_follows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_compiler, "compile", _compiler.compile)  # restored after the test
    monkeypatch.setattr(regex_code, "_INSTALLED", [])
    monkeypatch.setattr(regex_code, "RELEASES", ((3, 0),))
    assert regex_code.install(tmp_path / "regex.marshal") is None and _compiler.compile is ORIGINAL
    monkeypatch.setattr(regex_code, "RELEASES", (sys.version_info[:2],))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert regex_code.install(tmp_path / "regex.marshal") is None  # nothing to read, nothing may be written
    (tmp_path / "regex.marshal").write_bytes(marshal.dumps({}))
    cache = regex_code.install(tmp_path / "regex.marshal")  # a table to read (written by an earlier run)
    assert cache is not None and regex_code.install() is cache and _compiler.compile == cache.compile


# The `cairn` command and the build's worker compile from the table (an empty one an earlier run wrote).
REPORT = """
from re import _compiler
from core.base import regex_code
cache = regex_code._INSTALLED[0] if regex_code._INSTALLED else None
installed = cache is not None and getattr(_compiler.compile, "__self__", None) is cache
print(json.dumps({"installed": installed, "seen": len(cache.used) + len(cache.met) if cache else 0}), file=sys.stderr)
"""
BEFORE = """
import os
from pathlib import Path
from core.base import regex_code
regex_code.default_path = lambda role="": Path(os.environ["TABLE"])
"""


@pytest.mark.parametrize("argv", ARGVS)
def test_the_cairn_command_and_the_worker_use_the_table(tmp_path: Path, argv: list[str]) -> None:
    (tmp_path / "regex.marshal").write_bytes(marshal.dumps({}))
    report = run_entry(tmp_path, argv, REPORT, before=BEFORE, env={"TABLE": str(tmp_path / "regex.marshal")})
    assert report["installed"], report
    assert report["seen"] > 20  # patterns read from the table or met: ~70 in the worker, ~200 in the command


# A cold index in its own process: compiling as Python does, or with the table (two runs fill it, the third reads it).
INDEX = """
import json, sys
from pathlib import Path
from core.base import regex_code
from core.cli.main import main
sys.dont_write_bytecode = False
table = sys.argv[1]
cache = regex_code.install(Path(table)) if table != "-" else None
loaded = {key for key in cache.known if type(key) is tuple} if cache else set()
main(["index", "--vault", sys.argv[2], "--no-embed", "--quiet"])
report = {"kept": cache.compiled, "met": len(cache.met), "read": len(loaded & set(cache.used))} if cache else {}
regex_code.save()
print(json.dumps(report), file=sys.stderr)
"""


def _index(tmp_path: Path, name: str, table: str) -> tuple[dict[str, Any], Path]:
    home = tmp_path / name
    env: dict[str, Any] = {**os.environ, "CAIRN_HOME": str(home)}
    vault = REPO / "tests" / "fixtures" / "tasks-docs-sample"
    done = subprocess.run([sys.executable, "-c", INDEX, table, str(vault)], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stderr.strip().splitlines()[-1]), home / "indexes" / vault.name


def _side_files(folder: Path) -> list[Any]:
    """The manifest's records (JSON lines, one a note) and the links table."""
    manifest = sorted((folder / "manifest.json").read_text(encoding="utf-8").splitlines())
    return [manifest, json.loads((folder / "links.json").read_text(encoding="utf-8"))]


def test_an_index_built_from_the_table_equals_one_compiled_anew(tmp_path: Path) -> None:
    from whoosh.index import open_dir

    table = str(tmp_path / "regex.marshal")
    _, plain = _index(tmp_path, "plain", "-")
    first, _ = _index(tmp_path, "first", table)
    second, _ = _index(tmp_path, "second", table)
    third, from_table = _index(tmp_path, "third", table)
    assert first["met"] > 50 and first["kept"] == first["read"] == 0  # logged
    assert second["kept"] > 50 and second["read"] == 0  # the texts the first one met, kept now
    assert third["kept"] == 0 and third["met"] <= 2 and third["read"] > 50  # but for a text made anew (markdown-it's terminators), from the table
    dumps = [index_dump_by_chunk(open_dir(str(folder / "whoosh"), indexname="chunks")) for folder in (plain, from_table)]
    assert dumps[0] == dumps[1] and len(dumps[0]) > 100
    assert _side_files(plain) == _side_files(from_table)

