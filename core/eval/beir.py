"""BEIR datasets on disk: load them, fingerprint them, turn them into a vault.

A BEIR dataset folder holds ``corpus.jsonl``, ``queries.jsonl`` and
``qrels/<split>.tsv``. Cairn indexes notes, not JSON, so the benchmark writes
each corpus document as a markdown note and maps retrieved note paths back to
document ids. Everything is streamed line by line: corpora run to millions of
lines and should not be read whole just to be hashed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_HASH_BLOCK = 1 << 20
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_MAX_STEM = 100
# Names Windows refuses as file stems, whatever the extension.
_RESERVED = frozenset(
    {"CON", "PRN", "AUX", "NUL"} | {f"COM{i}" for i in range(1, 10)} | {f"LPT{i}" for i in range(1, 10)}
)


class BeirError(ValueError):
    """A BEIR dataset folder is incomplete or malformed; the message names the file."""


@dataclass(frozen=True, slots=True)
class BeirDoc:
    doc_id: str
    title: str
    text: str


@dataclass(frozen=True, slots=True)
class BeirQuery:
    query_id: str
    text: str


@dataclass(frozen=True, slots=True)
class BeirDataset:
    """One split of a BEIR dataset.

    ``queries`` holds only the queries judged in this split's qrels, in file
    order, so evaluation never scores a query that has no relevance data.
    ``qrels`` maps query id → doc id → grade; treat it as read-only.
    """

    name: str
    split: str
    docs: tuple[BeirDoc, ...]
    queries: tuple[BeirQuery, ...]
    qrels: dict[str, dict[str, int]]


def available_splits(directory: Path) -> list[str]:
    """Names of the ``qrels/*.tsv`` files in a dataset folder, sorted."""
    qrels_dir = directory / "qrels"
    if not qrels_dir.is_dir():
        return []
    return sorted(p.stem for p in qrels_dir.glob("*.tsv"))


def load_beir(directory: Path, split: str) -> BeirDataset:
    """Load one split of a BEIR dataset.

    Args:
        directory: The dataset folder (e.g. ``.../scifact``).
        split: The qrels split, e.g. ``"test"``.

    Returns:
        The corpus, the judged queries and their qrels.

    Raises:
        BeirError: A file is missing or a line is malformed.
    """
    corpus_path = directory / "corpus.jsonl"
    queries_path = directory / "queries.jsonl"
    qrels_path = directory / "qrels" / f"{split}.tsv"
    if not directory.is_dir():
        raise BeirError(f"BEIR dataset folder not found: {directory}")
    for required in (corpus_path, queries_path):
        if not required.is_file():
            raise BeirError(f"BEIR dataset is missing {required}")
    if not qrels_path.is_file():
        splits = available_splits(directory)
        listing = ", ".join(splits) if splits else "none"
        raise BeirError(f"BEIR split {split!r} not found: {qrels_path} is missing (available splits: {listing})")

    qrels = _read_qrels(qrels_path)
    queries: list[BeirQuery] = []
    for line_no, row in _read_jsonl(queries_path):
        query_id = _field_id(row, queries_path, line_no)
        if query_id in qrels:
            queries.append(BeirQuery(query_id, _field_text(row, "text", queries_path, line_no)))
    known = {q.query_id for q in queries}
    # Qrels for queries absent from queries.jsonl cannot be evaluated; drop them
    # so `qrels` and `queries` always describe the same set.
    qrels = {qid: docs for qid, docs in qrels.items() if qid in known}
    docs = tuple(
        BeirDoc(
            _field_id(row, corpus_path, line_no),
            _field_text(row, "title", corpus_path, line_no),
            _field_text(row, "text", corpus_path, line_no),
        )
        for line_no, row in _read_jsonl(corpus_path)
    )
    return BeirDataset(directory.name, split, docs, tuple(queries), qrels)


def corpus_hash(directory: Path) -> str:
    """SHA-256 (hex) of ``corpus.jsonl``'s bytes, streamed.

    Benchmarks cache the vault and index they build from a corpus; the hash
    tells them when the cache is stale.
    """
    path = directory / "corpus.jsonl"
    digest = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            while block := fh.read(_HASH_BLOCK):
                digest.update(block)
    except FileNotFoundError:
        raise BeirError(f"BEIR dataset is missing {path}") from None
    return digest.hexdigest()


def safe_note_stem(doc_id: str) -> str:
    """A file stem for ``doc_id`` that is safe on every OS and never hidden.

    Ids that are already safe keep their name, so the notes stay readable. Any
    id that needed changing gets a short hash of the original appended, so two
    ids that sanitise to the same text (``a/b`` and ``a:b``) stay distinct.
    """
    stem = _UNSAFE.sub("_", doc_id)
    if stem.startswith("."):
        stem = "_" + stem[1:]
    changed = stem != doc_id or not stem or len(stem) > _MAX_STEM or stem.upper() in _RESERVED
    if changed:
        suffix = hashlib.sha1(doc_id.encode("utf-8")).hexdigest()[:10]
        stem = f"{stem[:_MAX_STEM]}-{suffix}" if stem else suffix
    return stem


def note_content(doc: BeirDoc) -> str:
    """The markdown written for one document.

    The title becomes an H1 so Cairn's title field and heading path pick it up.
    Untitled documents (common in BEIR) get no heading rather than an empty one.
    """
    if doc.title.strip():
        return f"# {doc.title}\n\n{doc.text}\n"
    return f"{doc.text}\n"


def write_corpus_as_notes(ds: BeirDataset, out_dir: Path) -> dict[str, str]:
    """Write every corpus document as ``out_dir/<safe id>.md``.

    Files whose content is already right are left untouched (same bytes, same
    mtime), so a re-run costs a read per file and the indexer sees no changes.

    Args:
        ds: The dataset whose corpus to write.
        out_dir: Folder to use as the vault root; created if needed.

    Returns:
        Document id → note path relative to ``out_dir`` (POSIX).

    Raises:
        BeirError: Two ids map to the same file name on a case-insensitive
            file system (e.g. ``Doc1`` and ``doc1``).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    mapping: dict[str, str] = {}
    owner_by_key: dict[str, str] = {}
    for doc in ds.docs:
        rel_path = f"{safe_note_stem(doc.doc_id)}.md"
        key = rel_path.casefold()
        owner = owner_by_key.setdefault(key, doc.doc_id)
        if owner != doc.doc_id:
            raise BeirError(f"documents {owner!r} and {doc.doc_id!r} would both be written as {rel_path}")
        data = note_content(doc).encode("utf-8")
        target = out_dir / rel_path
        if not _same_bytes(target, data):
            target.write_bytes(data)
        mapping[doc.doc_id] = rel_path
    return mapping


def _same_bytes(path: Path, data: bytes) -> bool:
    try:
        if path.stat().st_size != len(data):
            return False
        return path.read_bytes() == data
    except FileNotFoundError:
        return False


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open("r", encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BeirError(f"{path}:{line_no}: invalid JSON: {exc.msg}") from exc
            if not isinstance(row, dict):
                raise BeirError(f"{path}:{line_no}: expected a JSON object")
            yield line_no, row


def _field_id(row: dict[str, Any], path: Path, line_no: int) -> str:
    value = row.get("_id")
    # Some BEIR exports store numeric ids as numbers; qrels always have text.
    if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value) == "":
        raise BeirError(f"{path}:{line_no}: missing or invalid '_id'")
    return str(value)


def _field_text(row: dict[str, Any], key: str, path: Path, line_no: int) -> str:
    value = row.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BeirError(f"{path}:{line_no}: field {key!r} must be a string")
    return value


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with path.open("r", encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            parts = line.split("\t")
            if line_no == 1 and parts[0] == "query-id":
                continue
            if len(parts) != 3:
                raise BeirError(f"{path}:{line_no}: expected 'query-id<TAB>corpus-id<TAB>score'")
            query_id, doc_id, score = parts
            try:
                grade = int(score)
            except ValueError:
                raise BeirError(f"{path}:{line_no}: score {score!r} is not an integer") from None
            qrels.setdefault(query_id, {})[doc_id] = grade
    return qrels
