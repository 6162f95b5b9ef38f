"""The hostile corpus (tests/hostile_corpus.py, 40+ kinds) and random input from hypothesis:
indexing never raises, every note file is indexed or skipped with a reason, the vault is
never written, and a second sync finds nothing to do."""

from __future__ import annotations

import hashlib
import os
import stat
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.answer.fetch import fetch_chunk
from core.base.models import SearchFilters
from core.base.paths import AppPaths
from core.engine import Engine
from core.search.search import SearchRequest
from core.vault.scanner import is_note_name, printable_name
from tests.hostile_corpus import KINDS, make_corpus

IGNORED = (".obsidian/", "ignored/", "x.tmp.md")


def vault_digest(root: Path) -> dict[bytes, tuple[int, str]]:
    """Every entry's type and content hash, without following links or opening FIFOs."""
    out: dict[bytes, tuple[int, str]] = {}
    broot = os.fsencode(root)
    for folder, dirs, files in os.walk(broot, followlinks=False):
        for name in dirs + files:
            path = os.path.join(folder, name)
            st_ = os.lstat(path)
            kind = stat.S_IFMT(st_.st_mode)
            if stat.S_ISREG(st_.st_mode):
                with open(path, "rb") as fh:
                    digest = hashlib.sha256(fh.read()).hexdigest()
            elif stat.S_ISLNK(st_.st_mode):
                digest = os.fsdecode(os.readlink(path))
            else:
                digest = ""
            out[os.path.relpath(path, broot)] = (kind | stat.S_IMODE(st_.st_mode), digest + str(st_.st_mtime_ns))
    return out


def note_paths(root: Path) -> set[str]:
    """What a user would call the vault's notes: note-named entries outside ignored places."""
    found = set()
    for folder, dirs, files in os.walk(os.fsencode(root), followlinks=False):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            rel = os.fsdecode(os.path.relpath(os.path.join(folder, name), os.fsencode(root))).replace(os.sep, "/")
            if is_note_name(rel) and not any(rel.startswith(i) or rel == i for i in IGNORED):
                found.add(printable_name(unicodedata.normalize("NFC", rel)))
    return found


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("hostile") / "vault"
    return root, make_corpus(root)


def test_the_corpus_has_at_least_40_kinds(corpus: tuple[Path, list[str]]) -> None:
    assert len(corpus[1]) >= 40 and len(KINDS) >= 40


def test_the_hostile_corpus_indexes_without_an_exception_and_accounts_for_every_note(corpus: tuple[Path, list[str]], tmp_path: Path) -> None:
    root, _ = corpus
    before = vault_digest(root)
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    try:
        engine.add_vault(root, name="v")
        (report,) = engine.sync(["v"], embed=False)
        vi = engine.index_for("v")
        accounted = set(vi.files) | {s.rel_path for s in vi.info.skipped}
        missing = sorted(note_paths(root) - accounted)
        assert missing == [], f"neither indexed nor skipped with a reason: {missing}"
        assert all(s.detail for s in vi.info.skipped)
        assert report.keyword.unchanged >= 0
        # The odd notes that are text are searchable; the secrets in them are not shown.
        def hits(q: str) -> set[str]:
            request = SearchRequest(q, mode="keyword", filters=SearchFilters(allow_restricted=True))
            return {h.chunk.rel_path for h in engine.search(request).hits}

        assert "plain.md" in hits("lighthouse") and "stub.md" in hits("zanzibar")
        assert "utf16le.md" in hits("harbourmaster") and "utf32.md" in hits("boatswain")
        for c in vi.files["keys.md"].chunks:
            text = fetch_chunk(engine, f"v/keys.md#{c.ordinal}").text
            assert not any(len(w) >= 40 for w in text.split()), text[:200]
        (again,) = engine.sync(["v"], embed=False)
        assert (again.keyword.added, again.keyword.changed, again.keyword.removed) == (0, 0, 0)
    finally:
        engine.close()
    assert vault_digest(root) == before, "the vault was written to"


# -- random input ----------------------------------------------------------------------------

_names = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/\\\x00:*?\"<>|"), min_size=1, max_size=20
).filter(lambda s: s.strip(" .") == s and s not in (".", ".."))
_yaml_values = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["2023-02-30", "0000-01-01", "25:61:00", "[[[", "{a: *b}", "!!binary AAAA", "\"\\ud800\"", "&a [*a]", "- - -"]),
    st.integers(),
)
_keys = st.sampled_from(["title", "tags", "aliases", "date", "confidentiality", "doc_type", "project", "x"])


@st.composite
def note_bytes(draw: st.DrawFn) -> bytes:
    shape = draw(st.sampled_from(["bytes", "front_matter", "markdown"]))
    if shape == "bytes":
        return draw(st.binary(max_size=400))
    body = draw(st.text(max_size=300))
    if shape == "markdown":
        return body.encode("utf-8", "surrogatepass")
    fields = draw(st.lists(st.tuples(_keys, _yaml_values), max_size=5))
    yaml = "\n".join(f"{k}: {v}" for k, v in fields)
    return f"---\n{yaml}\n---\n{body}".encode("utf-8", "surrogatepass")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(files=st.dictionaries(_names, note_bytes(), min_size=1, max_size=6), odd_name=st.binary(min_size=1, max_size=12))
def test_random_files_are_indexed_or_skipped_and_the_vault_is_untouched(
    tmp_path_factory: pytest.TempPathFactory, files: dict[str, bytes], odd_name: bytes
) -> None:
    root = tmp_path_factory.mktemp("random") / "vault"
    root.mkdir()
    for name, data in files.items():
        try:
            (root / f"{name}.md").write_bytes(data)
        except OSError:
            continue  # a name this file system refuses
    if os.name != "nt" and b"/" not in odd_name and b"\x00" not in odd_name and odd_name not in (b".", b".."):
        try:
            with open(os.path.join(os.fsencode(root), odd_name + b".md"), "wb") as fh:
                fh.write(odd_name)
        except OSError:
            pass
    before = vault_digest(root)
    engine = Engine(AppPaths(tmp_path_factory.mktemp("home")), embedder_factory=None)
    try:
        engine.add_vault(root, name="v")
        engine.sync(["v"], embed=False)  # never raises
        vi = engine.index_for("v")
        accounted = set(vi.files) | {s.rel_path for s in vi.info.skipped}
        assert note_paths(root) <= accounted
        (again,) = engine.sync(["v"], embed=False)
        assert (again.keyword.added, again.keyword.changed, again.keyword.removed) == (0, 0, 0)
    finally:
        engine.close()
    assert vault_digest(root) == before
