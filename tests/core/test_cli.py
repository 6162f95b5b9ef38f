"""`cairn index|search|status|chunk`: JSON contracts, bad input and exit codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import core.index.indexer
import core.index.intake
from core.base.models import ChunkRef, Hit, Term
from core.cli.main import main
from core.search.fusion import rrf_term
from core.serialize import hit_json
from core.vault.scanner import read_note_bytes

REPO = Path(__file__).resolve().parents[2]
HIT_KEYS = {
    "rank", "vault", "rel_path", "chunk_ordinal", "heading_path", "title", "snippet", "score",
    "start_byte", "end_byte", "bm25", "vector", "contributions",
}  # fmt: skip


# root reads files whatever their mode, so chmod 000 only makes a file unreadable for other users
CAN_LOCK_FILES = hasattr(os, "geteuid") and os.geteuid() != 0


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.fixture
def tiny_vault(tmp_path: Path) -> Path:
    root = tmp_path / "tiny"
    root.mkdir()
    (root / "Soup.md").write_text("---\ntags: [recipe]\ndate: 2026-01-05\n---\n# Soup\n\nTomato and basil soup.\n")
    (root / "Garden.md").write_text("# Garden\n\nPlant zucchini in May.\n\n## Tools\n\nA spade and a rake.\n")
    return root


def assert_hit_contract(hit: dict[str, Any], rank: int) -> None:
    assert HIT_KEYS <= set(hit)
    assert hit["rank"] == rank
    for side in ("bm25", "vector"):
        assert hit[side] is None or (set(hit[side]) == {"rank", "score"} and hit[side]["rank"] >= 1)
    assert hit["contributions"] and all(set(t) == {"name", "value"} for t in hit["contributions"])
    # each number is rounded to 6 places on its own, so allow for float noise at the boundary
    assert abs(sum(t["value"] for t in hit["contributions"]) - hit["score"]) <= 1e-6 + 1e-12
    assert 0 <= hit["start_byte"] < hit["end_byte"]


# -- index -----------------------------------------------------------------------------------


def test_index_json_reports_stats_per_vault(capsys: pytest.CaptureFixture[str], tiny_vault: Path) -> None:
    payload = run_json(capsys, "index", "--vault", str(tiny_vault), "--no-embed", "--quiet")
    (stats,) = payload["vaults"]
    assert stats["vault"] == "tiny"
    assert (stats["documents"], stats["chunks"], stats["added"], stats["changed"], stats["removed"]) == (2, 3, 2, 0, 0)
    assert stats["skipped"] == {} and isinstance(stats["seconds"], float)
    assert stats["embedding"] is None
    again = run_json(capsys, "index", "--no-embed", "--quiet")["vaults"][0]
    assert (again["added"], again["changed"], again["removed"], again["unchanged"]) == (0, 0, 0, 2)


def test_index_by_vault_name_after_registration(capsys: pytest.CaptureFixture[str], tiny_vault: Path) -> None:
    run_json(capsys, "index", "--vault", str(tiny_vault), "--no-embed", "--quiet")
    (stats,) = run_json(capsys, "index", "--vault", "tiny", "--no-embed", "--quiet")["vaults"]
    assert stats["vault"] == "tiny" and stats["added"] == 0


def test_index_text_output_summarises(capsys: pytest.CaptureFixture[str], tiny_vault: Path) -> None:
    code, out, _ = run(capsys, "index", "--vault", str(tiny_vault), "--no-embed", "--quiet")
    assert code == 0 and out.startswith("tiny: 2 notes, 3 chunks (+2 new")


# -- search ----------------------------------------------------------------------------------


def test_search_json_contract_in_keyword_mode(capsys: pytest.CaptureFixture[str], tiny_vault: Path) -> None:
    import gc

    run_json(capsys, "index", "--vault", str(tiny_vault), "--no-embed", "--quiet")
    frozen = gc.get_freeze_count()
    payload = run_json(capsys, "search", "zucchini spade", "--mode", "keyword")
    assert gc.get_freeze_count() == frozen  # only `cairn search` as its own process freezes its heap at the end
    assert {"query", "mode", "warnings", "timings_ms", "hits"} <= set(payload)
    assert (payload["query"], payload["mode"], payload["warnings"]) == ("zucchini spade", "keyword", [])
    assert payload["timings_ms"]["total"] >= 0
    assert [h["rel_path"] for h in payload["hits"]] == ["Garden.md"]  # one row per note by default
    assert [m["chunk_ordinal"] for m in payload["hits"][0]["more_passages"]] != []  # its other passage, folded
    assert payload["exact_matches"] is True
    for rank, hit in enumerate(payload["hits"], 1):
        assert_hit_contract(hit, rank)
        assert hit["vector"] is None and hit["bm25"]["rank"] == rank
    first = payload["hits"][0]
    raw = (tiny_vault / first["rel_path"]).read_bytes()
    assert b"zucchini" in raw[first["start_byte"] : first["end_byte"]] or b"spade" in raw[first["start_byte"] : first["end_byte"]]
    assert "**" in first["snippet"]


def test_semantic_mode_without_embeddings_falls_back_to_keyword_with_a_warning(
    capsys: pytest.CaptureFixture[str], tiny_vault: Path
) -> None:
    run_json(capsys, "index", "--vault", str(tiny_vault), "--no-embed", "--quiet")
    payload = run_json(capsys, "search", "basil", "--mode", "semantic")
    assert payload["mode"] == "keyword"
    assert any("semantic unavailable; fallback=keyword" in w for w in payload["warnings"])
    assert [h["rel_path"] for h in payload["hits"]] == ["Soup.md"]
    code, out, err = run(capsys, "search", "basil", "--mode", "semantic")
    assert code == 0 and "semantic unavailable; fallback=keyword" in err and "Soup" in out


def test_hybrid_search_with_real_embeddings_fills_both_sides(capsys: pytest.CaptureFixture[str], tiny_vault: Path) -> None:
    (stats,) = run_json(capsys, "index", "--vault", str(tiny_vault), "--quiet")["vaults"]
    assert stats["embedding"] is not None and stats["embedding"]["embedded"] == 3
    payload = run_json(capsys, "search", "zucchini", "-k", "3")
    assert (payload["mode"], payload["warnings"]) == ("hybrid", [])
    assert len(payload["hits"]) == 2  # one row per note: Garden's second passage is folded under it
    assert len(payload["hits"][0]["more_passages"]) == 1
    for rank, hit in enumerate(payload["hits"], 1):
        assert_hit_contract(hit, rank)
        assert hit["vector"] is not None
    top = payload["hits"][0]
    assert top["rel_path"] == "Garden.md" and top["bm25"]["rank"] == 1
    names = [t["name"].split(" ")[0] for t in top["contributions"]]
    assert names[:2] == ["keyword", "meaning"]
    assert set(names[2:]) <= {"keyword", "note's", "found"}  # evidence weighting, note aggregation, meaning kept


def test_search_filters_from_flags(capsys: pytest.CaptureFixture[str], tiny_vault: Path) -> None:
    run_json(capsys, "index", "--vault", str(tiny_vault), "--no-embed", "--quiet")
    hits = run_json(capsys, "search", "", "--tag", "#Recipe", "--mode", "keyword")["hits"]
    assert [h["rel_path"] for h in hits] == ["Soup.md"]
    assert run_json(capsys, "search", "soup", "--after", "2026-02-01", "--mode", "keyword")["hits"] == []


def test_search_text_output_and_no_matches(capsys: pytest.CaptureFixture[str], tiny_vault: Path) -> None:
    run_json(capsys, "index", "--vault", str(tiny_vault), "--no-embed", "--quiet")
    code, out, _ = run(capsys, "search", "rake", "--mode", "keyword", "--explain")
    assert code == 0 and "Garden › Garden > Tools" in out and "BM25: rank 1" in out
    code, out, _ = run(capsys, "search", "xylophone", "--mode", "keyword")
    assert code == 0 and "No matches." in out


def test_json_contributions_sum_to_score_within_1e_6_for_any_ranks() -> None:
    terms = (Term("rrf_keyword (w=1, rank 99)", rrf_term(99, 60, 1.0)), Term("rrf_vector (w=1, rank 97)", rrf_term(97, 60, 1.0)))
    hit = Hit(ChunkRef("v", "n.md", 0, ""), sum(t.value for t in terms), "t", "s", 0, 1, None, None, terms)
    out = hit_json(1, hit)
    assert abs(sum(t["value"] for t in out["contributions"]) - out["score"]) <= 1e-6


# -- chunk -----------------------------------------------------------------------------------


def test_chunk_json_shows_chunks_with_exact_byte_ranges(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "note.md"
    raw = b"\xef\xbb\xbf---\r\ntitle: Shown\r\ntags: [x]\r\n---\r\n# A\r\n\r\none\r\n\r\n## B\r\n\r\ntwo #y\r\n"
    path.write_bytes(raw)
    payload = run_json(capsys, "chunk", str(path))
    assert (payload["title"], payload["tags"], payload["warnings"]) == ("Shown", ["x", "y"], [])
    assert [c["heading_path"] for c in payload["chunks"]] == ["A", "A > B"]
    for i, c in enumerate(payload["chunks"]):
        assert c["ordinal"] == i and c["chars"] == len(c["text"])
        assert raw[c["start_byte"] : c["end_byte"]].decode().replace("\r\n", "\n") == c["text"]


def test_chunk_reports_warnings_and_refuses_binary(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"---\ntitle: [\n---\nbad \xff\n")
    codes = [w["code"] for w in run_json(capsys, "chunk", str(bad))["warnings"]]
    assert codes == ["invalid_utf8", "front_matter"]
    blob = tmp_path / "blob.md"
    blob.write_bytes(b"\x00\x01")
    code, _, err = run(capsys, "chunk", str(blob))
    assert code == 2 and "NUL" in err
    code, _, err = run(capsys, "chunk", str(tmp_path / "missing.md"))
    assert code == 2 and "missing.md" in err


# -- status and bad inputs -------------------------------------------------------------------


@pytest.fixture
def bad_vault(tmp_path: Path) -> Path:
    """One file of every kind of bad input the scanner and parser must survive."""
    root = tmp_path / "bad"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "outside.md").write_text("# outside\n")
    (root / "good.md").write_text("# Good\n\nordinary words\n")
    (root / "binary.md").write_bytes(b"# looks fine\n\x00\x00\x00")
    with (root / "huge.md").open("wb") as fh:  # sparse: 10.5 MB on paper, a few bytes on disk
        fh.write(b"# big\n")
        fh.truncate(10 * 1024 * 1024 + 512 * 1024)
    (root / "escape.md").symlink_to(tmp_path / "outside.md")
    (root / "loop-a.md").symlink_to("loop-b.md")
    (root / "loop-b.md").symlink_to("loop-a.md")
    (root / "sub" / "up").symlink_to(Path(".."), target_is_directory=True)
    (root / "dangling.md").symlink_to("nowhere.md")
    (root / "invalid-utf8.md").write_bytes(b"# Latin-1 \xe9t\xe9\n\ncaf\xe9 au lait\n")
    (root / "broken-yaml.md").write_bytes(b"---\ntitle: [oops\n---\n# Broken yaml\n\nstill searchable marmalade\n")
    (root / "bom-crlf.md").write_bytes(b"\xef\xbb\xbf---\r\ntitle: Windows note\r\n---\r\n# Heading\r\n\r\nwindows penguin\r\n")
    (root / "empty.md").write_bytes(b"")
    (root / "vanish.md").write_text("# going\n")
    (root / "only-front-matter.md").write_text("---\ntitle: stub\n---\n")
    if CAN_LOCK_FILES:
        (root / "locked.md").write_text("# locked\n")
        (root / "locked.md").chmod(0)
    return root


@pytest.mark.skipif(os.name == "nt", reason="needs POSIX symlinks")
def test_bad_vault_indexes_without_crashing_and_status_lists_every_skip(
    capsys: pytest.CaptureFixture[str], bad_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def vanish_then_read(entry, *args):  # type: ignore[no-untyped-def]
        if entry.rel_path == "vanish.md":
            entry.path.unlink(missing_ok=True)
        return read_note_bytes(entry, *args)

    monkeypatch.setattr(core.index.intake, "read_note_bytes", vanish_then_read)
    (stats,) = run_json(capsys, "index", "--vault", str(bad_vault), "--no-embed", "--quiet")["vaults"]
    unreadable = 3 if CAN_LOCK_FILES else 2
    assert stats["skipped"] == {"binary": 1, "symlink_escape": 1, "symlink_loop": 3, "too_large": 1, "unreadable": unreadable}
    assert stats["documents"] == 6  # good, invalid-utf8, broken-yaml, bom-crlf, empty, only-front-matter
    assert stats["warnings"] == 2

    (vault,) = run_json(capsys, "status")["vaults"]
    assert vault["built"] is True and vault["totals"]["documents"] == 6
    reasons = {s["rel_path"]: s["reason"] for s in vault["skipped"]}
    if CAN_LOCK_FILES:
        assert reasons.pop("locked.md") == "unreadable"
    assert reasons == {
        "binary.md": "binary",
        "huge.md": "too_large",
        "escape.md": "symlink_escape",
        "loop-a.md": "symlink_loop",
        "loop-b.md": "symlink_loop",
        "sub/up": "symlink_loop",
        "dangling.md": "unreadable",
        "vanish.md": "unreadable",
    }
    assert all(s["detail"] for s in vault["skipped"])
    assert sorted((w["rel_path"], w["code"]) for w in vault["warnings"]) == [
        ("broken-yaml.md", "front_matter"),
        ("invalid-utf8.md", "invalid_utf8"),
    ]

    code, out, _ = run(capsys, "status")
    assert code == 0 and "skipped huge.md: too_large" in out and "warning broken-yaml.md: front_matter" in out

    def found(query: str) -> list[str]:
        return [h["rel_path"] for h in run_json(capsys, "search", query, "--mode", "keyword")["hits"]]

    assert found("marmalade") == ["broken-yaml.md"]
    assert found("penguin") == ["bom-crlf.md"]
    assert found("lait") == ["invalid-utf8.md"]
    assert found("outside") == []


@pytest.mark.skipif(os.name == "nt", reason="needs POSIX symlinks")
def test_chunk_command_survives_every_bad_input(capsys: pytest.CaptureFixture[str], bad_vault: Path) -> None:
    outcomes = {}
    for path in sorted(bad_vault.rglob("*")):
        code, out, err = run(capsys, "chunk", str(path), "--json")
        outcomes[str(path.relative_to(bad_vault))] = code
        assert code in (0, 2) and "Traceback" not in err
        if code == 0:
            assert json.loads(out)["chunks"] is not None
    assert outcomes["binary.md"] == outcomes["huge.md"] == outcomes["loop-a.md"] == outcomes["dangling.md"] == 2
    assert outcomes["invalid-utf8.md"] == outcomes["bom-crlf.md"] == outcomes["empty.md"] == 0


def test_status_without_vaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_json(capsys, "status")["vaults"] == []
    code, out, _ = run(capsys, "status")
    assert code == 0 and "cairn index --vault" in out


# -- exit codes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "x", "--bogus-flag"],
        ["search", "x", "-k", "0"],
        ["search", "x", "-k", "-3"],
        ["search", "x", "--after", "2026-13-45"],
        ["search", "x", "--before", "last week"],
        ["search", "x", "--mode", "psychic"],
        ["search", "x", "--profile", "nonsense"],
        ["index", "--vault", "/definitely/not/a/folder"],
        ["search"],
        ["frobnicate"],
        [],
    ],
)
def test_bad_usage_exits_2_with_a_message(capsys: pytest.CaptureFixture[str], tiny_vault: Path, argv: list[str]) -> None:
    run_json(capsys, "index", "--vault", str(tiny_vault), "--no-embed", "--quiet")
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.strip() and out == ""


def test_search_before_any_vault_exits_4_and_says_how_to_index(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "search", "anything")
    assert code == 4 and "cairn index --vault" in err


def test_search_of_a_registered_but_unbuilt_vault_exits_4(capsys: pytest.CaptureFixture[str], tiny_vault: Path) -> None:
    from core.base.paths import AppPaths
    from core.engine import Engine

    Engine(AppPaths.from_env(), embedder_factory=None).add_vault(tiny_vault)
    code, _, err = run(capsys, "search", "anything", "--json")
    assert code == 4 and "cairn index" in err


def test_index_of_a_vault_whose_folder_is_gone_says_so_and_indexes_the_others(
    capsys: pytest.CaptureFixture[str], tiny_vault: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "n.md").write_text("# other\n")
    run_json(capsys, "index", "--vault", str(tiny_vault), "--vault", str(other), "--no-embed", "--quiet")
    shutil.rmtree(tiny_vault)
    code, out, err = run(capsys, "index", "--no-embed", "--quiet", "--json")
    assert code == 2
    assert "'tiny'" in err and "does not exist" in err and "Traceback" not in err
    assert [v["vault"] for v in json.loads(out)["vaults"]] == ["other"]
    assert run_json(capsys, "search", "zucchini", "--mode", "keyword")["hits"]  # the old index still answers


def test_index_with_no_vaults_at_all_is_bad_usage(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "index")
    assert code == 2 and "cairn index --vault" in err


# -- the installed entry point ---------------------------------------------------------------


def test_console_entry_point_runs_in_a_fresh_process(tiny_vault: Path, cairn_home: Path) -> None:
    env = {**os.environ, "CAIRN_HOME": str(cairn_home)}
    index = subprocess.run(
        [sys.executable, "-m", "core.cli.main", "index", "--vault", str(tiny_vault), "--no-embed", "--json", "--quiet"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert index.returncode == 0, index.stderr
    assert json.loads(index.stdout)["vaults"][0]["documents"] == 2
    script = Path(sys.executable).parent / "cairn"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "core.cli.main"]
    found = subprocess.run(
        [*command, "search", "zucchini", "--mode", "keyword", "--json"], env=env, capture_output=True, text=True, timeout=120
    )
    assert found.returncode == 0, found.stderr
    assert [h["rel_path"] for h in json.loads(found.stdout)["hits"]] == ["Garden.md"]
    bad = subprocess.run([*command, "search", "x", "-k", "0"], env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2


def test_links_json_names_links_backlinks_mentions_and_related(capsys: pytest.CaptureFixture[str], tmp_path: Path, cairn_home: Path) -> None:
    vault = tmp_path / "link_vault"
    shutil.copytree(REPO / "tests" / "fixtures" / "link_vault", vault)
    assert run(capsys, "index", "--vault", str(vault), "--no-embed", "--quiet")[0] == 0
    data = run_json(capsys, "links", "Recipes")
    assert data["rel_path"] == "Recipes.md"
    assert {(b["rel_path"], b["line"]) for b in data["backlinks"]} == {("Home.md", 8), ("Home.md", 9), ("Home.md", 13), ("café.md", 3)}
    assert {m["rel_path"] for m in data["unlinked_mentions"]} >= {"Journal/2024-01-01.md"}
    home = run_json(capsys, "links", "Home.md")
    dead = [o for o in home["outgoing"] if not o["resolved"]]
    assert [o["target"] for o in dead] == ["Missing note"]
    code, _, err = run(capsys, "links", "Nowhere")
    assert code == 2 and "Nowhere" in err


def test_index_embedder_sets_one_vaults_model_and_re_embeds_it(capsys: pytest.CaptureFixture[str], tiny_vault: Path, tmp_path: Path) -> None:
    from core.base.config import load_config
    from core.base.paths import AppPaths
    from core.providers.embedding.multilingual import available

    other = tmp_path / "other"
    shutil.copytree(tiny_vault, other)
    run_json(capsys, "index", "--vault", str(tiny_vault), "--vault", str(other), "--no-embed", "--quiet")
    assert run(capsys, "index", "--embedder", "multilingual", "--no-embed")[0] == 2  # which vaults?
    assert run(capsys, "index", "--vault", "tiny", "--embedder", "psychic", "--no-embed")[0] == 2
    if not available():
        assert run(capsys, "index", "--vault", "tiny", "--embedder", "multilingual", "--no-embed")[0] == 2
        return
    (stats,) = run_json(capsys, "index", "--vault", "tiny", "--embedder", "multilingual", "--quiet")["vaults"]
    assert stats["embedding"]["embedded"] == 3
    embedders = {v.name: v.embedder for v in load_config(AppPaths.from_env()).vaults}
    assert embedders == {"tiny": "multilingual", "other": "builtin"}  # the other vault keeps its model
    hits = run_json(capsys, "search", "Suppe mit Tomaten", "--mode", "semantic", "--vault", "tiny")["hits"]
    assert hits[0]["rel_path"] == "Soup.md"  # German query, English note: the multilingual model reads both
