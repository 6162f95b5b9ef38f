"""Fetch by reference: parsing, the round trip from a search, and stale references."""

from __future__ import annotations

import hashlib
import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.answer.fetch import MalformedReferenceError, RestrictedNoteError, StaleReferenceError, fetch_chunk, parse_ref
from core.base.paths import AppPaths
from core.cli.main import main
from core.engine import Engine
from core.search.search import SearchRequest

SECRET = "sk-abcdefghijklmnopqrstuvwx1234"
SOUP = "# Soup\n\nTomato and basil soup, simmered slowly.\n\n## Serving\n\nServe with crusty bread.\n"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "kitchen"
    (root / "Recipes").mkdir(parents=True)
    (root / "Recipes" / "Soup.md").write_text(SOUP)
    (root / "Keys.md").write_text(f"# Keys\n\nThe staging api_key = {SECRET} for the deploy bot.\n")
    (root / "Pay.md").write_text("---\nconfidentiality: restricted\n---\n# Pay\n\nSalary bands for the team.\n")
    return root


@pytest.fixture
def engine(vault: Path, cairn_home: Path) -> Iterator[Engine]:
    eng = Engine(AppPaths(cairn_home), embedder_factory=None)
    eng.add_vault(vault)
    eng.sync(embed=False)
    yield eng
    eng.close()


@pytest.fixture(autouse=True)
def restore_sigint() -> Iterator[None]:
    previous = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, previous)


def test_parse_ref_splits_on_the_last_hash_and_finds_the_longest_vault_prefix() -> None:
    names = ["work", "work/archive", "a#b"]
    assert parse_ref("work/archive/Notes/C# tips.md#12", names) == parse_ref(" /work/archive/Notes/C# tips.md#12 ", names)
    addr = parse_ref("work/archive/Notes/C# tips.md#12", names)
    assert (addr.vault, addr.rel_path, addr.ordinal) == ("work/archive", "Notes/C# tips.md", 12)
    assert parse_ref("work/Inbox/x.md#0", names).vault == "work"
    assert parse_ref("a#b/n.md#3", names).rel_path == "n.md"


@pytest.mark.parametrize("ref", ["", "no-hash.md", "work/x.md#", "work/x.md#two", "#3", "other/x.md#1", "work/#1"])
def test_malformed_refs_are_usage_errors(ref: str) -> None:
    with pytest.raises(MalformedReferenceError) as err:
        parse_ref(ref, ["work"])
    assert err.value.exit_code == 2 and "malformed reference" in str(err.value)


def test_a_search_hit_fetches_back_with_its_text_heading_range_and_version(engine: Engine, vault: Path) -> None:
    hit = engine.search(SearchRequest("crusty bread")).hits[0]
    chunk = fetch_chunk(engine, f"kitchen/{hit.chunk.rel_path}#{hit.chunk.ordinal}")
    assert (chunk.rel_path, chunk.heading_path, chunk.start_byte, chunk.end_byte) == (
        "Recipes/Soup.md", "Soup > Serving", hit.start_byte, hit.end_byte,
    )  # fmt: skip
    raw = (vault / "Recipes" / "Soup.md").read_bytes()
    assert chunk.text == hit.text == raw[chunk.start_byte : chunk.end_byte].decode()
    assert chunk.document_version == hashlib.sha256(raw).hexdigest() and chunk.title == "Soup"
    assert fetch_chunk(engine, chunk.ref, expected_version=chunk.document_version).text == chunk.text


def test_fetched_text_has_secrets_masked(engine: Engine) -> None:
    chunk = fetch_chunk(engine, "kitchen/Keys.md#0")
    assert SECRET not in chunk.text and "[REDACTED]" in chunk.text
    assert SECRET not in json.dumps(chunk.to_json()) + chunk.to_text()


def test_editing_the_chunk_after_indexing_makes_the_reference_stale(engine: Engine, vault: Path) -> None:
    (vault / "Recipes" / "Soup.md").write_text(SOUP.replace("crusty bread", "toast"))
    with pytest.raises(StaleReferenceError) as err:
        fetch_chunk(engine, "kitchen/Recipes/Soup.md#1")
    assert err.value.exit_code == 1
    assert str(err.value) == "stale reference: kitchen/Recipes/Soup.md#1 changed since it was indexed; search again"


def test_editing_elsewhere_in_the_note_keeps_the_chunk_with_a_warning(engine: Engine, vault: Path) -> None:
    (vault / "Recipes" / "Soup.md").write_text(SOUP + "\n## Notes\n\nFreezes well.\n")
    chunk = fetch_chunk(engine, "kitchen/Recipes/Soup.md#1")
    assert "crusty bread" in chunk.text and chunk.warnings


def test_deleting_the_note_makes_the_reference_stale(engine: Engine, vault: Path) -> None:
    (vault / "Recipes" / "Soup.md").unlink()
    with pytest.raises(StaleReferenceError, match="moved or deleted since it was indexed; search again"):
        fetch_chunk(engine, "kitchen/Recipes/Soup.md#0")


def test_unknown_note_chunk_or_version_is_stale(engine: Engine) -> None:
    with pytest.raises(StaleReferenceError, match="not in the index"):
        fetch_chunk(engine, "kitchen/Recipes/Stew.md#0")
    with pytest.raises(StaleReferenceError, match="chunk"):
        fetch_chunk(engine, "kitchen/Recipes/Soup.md#9")
    with pytest.raises(StaleReferenceError, match="re-indexed"):
        fetch_chunk(engine, "kitchen/Recipes/Soup.md#0", expected_version="0" * 64)


def test_restricted_notes_are_refused_unless_allowed(engine: Engine) -> None:
    with pytest.raises(RestrictedNoteError, match="restricted"):
        fetch_chunk(engine, "kitchen/Pay.md#0")
    assert "Salary bands" in fetch_chunk(engine, "kitchen/Pay.md#0", allow_restricted=True).text


def test_cli_fetch_exit_codes(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["index", "--vault", str(vault), "--no-embed", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["fetch", "kitchen/Recipes/Soup.md#1", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["heading_path"] == "Soup > Serving" and "crusty bread" in payload["text"]
    assert main(["fetch", "kitchen/Recipes/Soup.md#1"]) == 0
    assert "crusty bread" in capsys.readouterr().out
    assert main(["fetch", "kitchen/Recipes/Soup.md"]) == 2
    assert main(["fetch", "kitchen/Pay.md#0"]) == 1
    (vault / "Recipes" / "Soup.md").unlink()
    assert main(["fetch", "kitchen/Recipes/Soup.md#1"]) == 1
    assert "stale reference" in capsys.readouterr().err
