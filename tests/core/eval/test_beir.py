"""BEIR loading, hashing and conversion to notes, on a tiny dataset written per test."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from core.eval.beir import (
    BeirError,
    available_splits,
    corpus_hash,
    load_beir,
    safe_note_stem,
    write_corpus_as_notes,
)


def make_dataset(root: Path) -> Path:
    ds = root / "tiny"
    (ds / "qrels").mkdir(parents=True)
    corpus = [
        {"_id": "d1", "title": "Backups", "text": "We back up nightly.", "metadata": {}},
        {"_id": "d2", "title": "", "text": "Untitled body."},
        {"_id": "a/b:c", "title": "Odd id", "text": "Slashes and colons."},
        {"_id": 42, "title": "Numeric", "text": "Numeric id."},
    ]
    queries = [
        {"_id": "q1", "text": "how often are backups"},
        {"_id": "q2", "text": "not judged in test"},
        {"_id": "q3", "text": "odd one"},
    ]
    (ds / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus), encoding="utf-8")
    (ds / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in queries), encoding="utf-8")
    (ds / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\nq3\ta/b:c\t1\nq9\td1\t1\n", encoding="utf-8"
    )
    (ds / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq2\td2\t1\n", encoding="utf-8")
    return ds


def test_load_keeps_only_queries_judged_in_the_split(tmp_path: Path) -> None:
    ds = load_beir(make_dataset(tmp_path), "test")
    assert ds.name == "tiny" and ds.split == "test"
    assert [q.query_id for q in ds.queries] == ["q1", "q3"]
    # q9 is judged but absent from queries.jsonl, so its qrels are dropped too.
    assert ds.qrels == {"q1": {"d1": 2, "d2": 0}, "q3": {"a/b:c": 1}}
    assert [d.doc_id for d in ds.docs] == ["d1", "d2", "a/b:c", "42"]
    assert ds.docs[0].title == "Backups" and ds.docs[0].text == "We back up nightly."


def test_missing_split_lists_the_splits_that_exist(tmp_path: Path) -> None:
    root = make_dataset(tmp_path)
    with pytest.raises(BeirError) as info:
        load_beir(root, "train")
    message = str(info.value)
    assert str(root / "qrels" / "train.tsv") in message
    assert "available splits: dev, test" in message
    assert available_splits(root) == ["dev", "test"]


@pytest.mark.parametrize("name", ["corpus.jsonl", "queries.jsonl"])
def test_missing_jsonl_file_is_named(tmp_path: Path, name: str) -> None:
    root = make_dataset(tmp_path)
    (root / name).unlink()
    with pytest.raises(BeirError, match=f"missing .*{name}"):
        load_beir(root, "test")


def test_missing_folder_is_reported(tmp_path: Path) -> None:
    with pytest.raises(BeirError, match="folder not found"):
        load_beir(tmp_path / "absent", "test")


def test_malformed_lines_name_file_and_line(tmp_path: Path) -> None:
    root = make_dataset(tmp_path)
    with (root / "corpus.jsonl").open("a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    with pytest.raises(BeirError, match=r"corpus\.jsonl:5: invalid JSON"):
        load_beir(root, "test")
    root2 = make_dataset(tmp_path / "second")
    (root2 / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\thigh\n", encoding="utf-8")
    with pytest.raises(BeirError, match=r"test\.tsv:2: score 'high' is not an integer"):
        load_beir(root2, "test")


def test_corpus_hash_is_sha256_of_corpus_bytes(tmp_path: Path) -> None:
    root = make_dataset(tmp_path)
    expected = hashlib.sha256((root / "corpus.jsonl").read_bytes()).hexdigest()
    assert corpus_hash(root) == expected
    with pytest.raises(BeirError, match="missing"):
        corpus_hash(tmp_path)


def test_write_corpus_as_notes_writes_markdown_and_maps_ids(tmp_path: Path) -> None:
    ds = load_beir(make_dataset(tmp_path), "test")
    out = tmp_path / "vault"
    mapping = write_corpus_as_notes(ds, out)
    assert mapping["d1"] == "d1.md"
    assert (out / "d1.md").read_text(encoding="utf-8") == "# Backups\n\nWe back up nightly.\n"
    assert (out / "d2.md").read_text(encoding="utf-8") == "Untitled body.\n"
    odd = mapping["a/b:c"]
    assert "/" not in odd and ":" not in odd and odd.startswith("a_b_c-")
    assert (out / odd).is_file()
    assert sorted(p.name for p in out.iterdir()) == sorted(mapping.values())


def test_rewriting_leaves_unchanged_notes_alone(tmp_path: Path) -> None:
    ds = load_beir(make_dataset(tmp_path), "test")
    out = tmp_path / "vault"
    write_corpus_as_notes(ds, out)
    untouched = out / "d1.md"
    stale = out / "d2.md"
    before = untouched.stat().st_mtime_ns
    stale.write_text("edited\n", encoding="utf-8")
    os.utime(untouched, ns=(before - 10**9, before - 10**9))
    write_corpus_as_notes(ds, out)
    assert untouched.stat().st_mtime_ns == before - 10**9
    assert stale.read_text(encoding="utf-8") == "Untitled body.\n"


def test_safe_note_stem_keeps_clean_ids_and_disambiguates_others() -> None:
    assert safe_note_stem("MED-10") == "MED-10"
    assert safe_note_stem("a/b") != safe_note_stem("a:b")
    assert not safe_note_stem(".hidden").startswith(".")
    assert safe_note_stem("CON").startswith("CON-")
    assert len(safe_note_stem("x" * 300)) <= 111
