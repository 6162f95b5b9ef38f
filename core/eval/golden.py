"""Golden query files: hand-written queries with the notes they must find.

A golden file is YAML or JSON with a top-level mapping::

    cases:
      - id: backup-policy            # optional, default "case-N" (1-based)
        query: how often do we back up the database
        kind: factual                # optional free-form label
        must_include_source_paths: [ops/backups.md]
        acceptable_source_paths: [ops/runbook.md]
        must_include_chunk_refs:
          - {source_path: ops/backups.md, chunk_ordinal: 2}
        forbidden_claims: ["backups are weekly"]
        where: ["status=draft", "rating>=4"]   # optional property conditions (as `cairn search --where`)
    vault_path: ../shared/data/vaults/notes   # optional: the vault the cases are for
    ask_cases:                       # optional, for the answering pipeline
      - id: backup-ask
        question: How often are backups taken?
        expected_sources: [ops/backups.md]
        forbidden_claims: []
        expect_abstain: false
        expected_answer: ["pg_dump -s"]  # optional: the answer must contain one of these

An optional top-level ``vault:`` names the folder the cases were written for, relative to
the repository (``../shared/data/vaults/simonw-til``); `cairn eval` resolves it against the
golden file's parent folders and evaluates that vault.

Validation is strict -- unknown keys are errors -- because a misspelt key
(``must_include_source_path``) would otherwise silently turn a case into one
that can never fail. Every error names the file, the case and the field so the
author can fix it without a debugger.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from core.base.structured import PropertyFilter
from core.search.property_query import parse_wheres

MUST_INCLUDE_GRADE = 2
ACCEPTABLE_GRADE = 1

_CASE_FIELDS = frozenset(
    {
        "id",
        "query",
        "kind",
        "must_include_source_paths",
        "acceptable_source_paths",
        "must_include_chunk_refs",
        "forbidden_claims",
        "where",
    }
)
_ASK_FIELDS = frozenset({"id", "question", "expected_sources", "forbidden_claims", "expect_abstain", "expected_answer"})
_CHUNK_REF_FIELDS = frozenset({"source_path", "chunk_ordinal"})
_TOP_FIELDS = frozenset({"cases", "ask_cases", "vault_path", "vault"})  # `vault` is an alias of `vault_path`
_DRIVE = re.compile(r"^[A-Za-z]:")


class GoldenFileError(ValueError):
    """A golden (or baseline) file cannot be used; the message says where and why."""


@dataclass(frozen=True, slots=True)
class GoldenChunkRef:
    """A specific chunk a case must retrieve (path relative to the vault root)."""

    source_path: str
    chunk_ordinal: int


@dataclass(frozen=True, slots=True)
class GoldenCase:
    """One retrieval query with the notes that count as correct answers."""

    id: str
    query: str
    must_include_source_paths: tuple[str, ...] = ()
    acceptable_source_paths: tuple[str, ...] = ()
    must_include_chunk_refs: tuple[GoldenChunkRef, ...] = ()
    forbidden_claims: tuple[str, ...] = ()
    kind: str | None = None
    where: tuple[PropertyFilter, ...] = ()  # property conditions the search runs with

    def graded_relevance(self) -> dict[str, int]:
        """Relevance grade per source path, for nDCG.

        Must-include paths get grade 2 and acceptable ones grade 1, so a
        ranking that puts the essential note first scores higher than one that
        leads with a merely acceptable note. A path listed in both keeps 2.
        """
        grades = {path: ACCEPTABLE_GRADE for path in self.acceptable_source_paths}
        grades.update({path: MUST_INCLUDE_GRADE for path in self.must_include_source_paths})
        return grades


@dataclass(frozen=True, slots=True)
class AskCase:
    """One question for the answering pipeline, with the sources it should cite."""

    id: str
    question: str
    expected_sources: tuple[str, ...] = ()
    forbidden_claims: tuple[str, ...] = ()
    expect_abstain: bool = False
    expected_answer: tuple[str, ...] = ()  # the answer must contain at least one (code included)


@dataclass(frozen=True, slots=True)
class GoldenSet:
    """Everything loaded from one golden file."""

    source: str
    cases: tuple[GoldenCase, ...]
    ask_cases: tuple[AskCase, ...] = ()
    vault_path: str | None = None  # the vault the cases were written for, relative to the repo root

    def resolve_vault(self) -> Path | None:
        """The folder named by ``vault_path``, found beside the golden file or any of its parents.

        A relative path is tried against the golden file's folder and each folder
        above it, so ``../shared/data/vaults/x`` written for a fresh clone (where
        ``shared/`` sits beside the checkout) also resolves from a worktree one
        level deeper. Returns ``None`` when the file names no vault.

        Raises:
            GoldenFileError: The file names a vault that exists nowhere.
        """
        if self.vault_path is None:
            return None
        given = Path(self.vault_path)
        if given.is_absolute():
            candidates = [given]
        else:
            start = Path(self.source).resolve().parent
            candidates = [(folder / given).resolve() for folder in (start, *start.parents)]
        for candidate in candidates:
            if candidate.is_dir():
                return candidate
        raise GoldenFileError(f"{self.source}: vault_path {self.vault_path!r} is not a folder beside the file or any parent")


def load_golden(path: Path) -> GoldenSet:
    """Read and validate a golden file (``.yaml``, ``.yml`` or ``.json``).

    Args:
        path: The file to read.

    Returns:
        The validated cases.

    Raises:
        GoldenFileError: The file is missing, unparsable or breaks the schema.
    """
    source = str(path)
    suffix = path.suffix.lower()
    if suffix not in {".yaml", ".yml", ".json"}:
        raise GoldenFileError(f"{source}: unsupported golden file type (use .yaml, .yml or .json)")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GoldenFileError(f"{source}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise GoldenFileError(f"{source}: cannot read file: {exc}") from exc
    try:
        data = json.loads(text) if suffix == ".json" else yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise GoldenFileError(f"{source}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    except yaml.YAMLError as exc:
        where = ""
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 1}"
        raise GoldenFileError(f"{source}: invalid YAML{where}: {exc}") from exc
    return parse_golden(data, source)


def parse_golden(data: Any, source: str) -> GoldenSet:
    """Validate already-parsed golden data (the part of :func:`load_golden` after parsing).

    Args:
        data: The decoded YAML/JSON document.
        source: Name used in error messages, usually the file path.

    Returns:
        The validated cases.

    Raises:
        GoldenFileError: The data breaks the schema.
    """
    if not isinstance(data, Mapping):
        raise GoldenFileError(f"{source}: top level must be a mapping with a 'cases' list")
    unknown = sorted(str(key) for key in data if key not in _TOP_FIELDS)
    if unknown:
        raise GoldenFileError(
            f"{source}: unknown top-level field(s) {', '.join(map(repr, unknown))}"
            f" (allowed: 'cases', 'ask_cases', 'vault_path' (or 'vault'))"
        )
    if "cases" not in data and "ask_cases" not in data:
        raise GoldenFileError(f"{source}: needs a 'cases' or 'ask_cases' list")
    raw_cases = _top_list(data, "cases", source)
    raw_asks = _top_list(data, "ask_cases", source)
    cases = tuple(_parse_case(raw, i, source) for i, raw in enumerate(raw_cases, start=1))
    asks = tuple(_parse_ask(raw, i, source) for i, raw in enumerate(raw_asks, start=1))
    _check_unique_ids([c.id for c in cases], "case", source)
    _check_unique_ids([a.id for a in asks], "ask case", source)
    vault_path = data.get("vault_path", data.get("vault"))
    if vault_path is not None and (not isinstance(vault_path, str) or not vault_path.strip()):
        raise GoldenFileError(f"{source}: top-level field 'vault_path' must be a non-empty string")
    return GoldenSet(source=source, cases=cases, ask_cases=asks, vault_path=vault_path.strip() if vault_path else None)


def _top_list(data: Mapping[str, Any], key: str, source: str) -> list[Any]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise GoldenFileError(f"{source}: top-level field {key!r} must be a list")
    return value


class _Fields:
    """Reads typed fields of one case, naming the case in every error."""

    def __init__(self, raw: Any, label: str, index: int, source: str, allowed: frozenset[str]) -> None:
        self._where = f"{source}: {label} {index}"
        if not isinstance(raw, Mapping):
            raise GoldenFileError(f"{self._where}: must be a mapping, got {type(raw).__name__}")
        self.raw = raw
        self.id = self._read_id(index, label)
        self._where = f"{source}: {label} {index} ({self.id!r})"
        unknown = sorted(str(key) for key in raw if key not in allowed)
        if unknown:
            raise self.error(unknown[0], f"is not a known field (allowed: {', '.join(sorted(allowed))})")

    def _read_id(self, index: int, label: str) -> str:
        if "id" not in self.raw:
            return f"{label.replace(' ', '-')}-{index}"
        value = self.raw["id"]
        if not isinstance(value, str) or not value.strip():
            raise self.error("id", "must be a non-empty string")
        return value.strip()

    def error(self, field: str, problem: str) -> GoldenFileError:
        return GoldenFileError(f"{self._where}: field {field!r} {problem}")

    def required_text(self, field: str) -> str:
        if field not in self.raw:
            raise self.error(field, "is required")
        value = self.raw[field]
        if not isinstance(value, str) or not value.strip():
            raise self.error(field, "must be a non-empty string")
        return value.strip()

    def optional_text(self, field: str) -> str | None:
        # `kind:` with no value (null) reads as "not given", as for the lists.
        return None if self.raw.get(field) is None else self.required_text(field)

    def strings(self, field: str) -> tuple[str, ...]:
        value = self.raw.get(field)
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.error(field, "must be a list of strings")
        for item in value:
            if not isinstance(item, str) or not item.strip():
                raise self.error(field, f"must contain only non-empty strings, got {item!r}")
        return tuple(item.strip() for item in value)

    def paths(self, field: str) -> tuple[str, ...]:
        return tuple(self.path_value(field, item) for item in self.strings(field))

    def path_value(self, field: str, value: str) -> str:
        # Vault rel_paths are POSIX and NFC; golden paths must compare equal to them.
        if "\\" in value or value.startswith("/") or _DRIVE.match(value):
            raise self.error(field, f"must hold vault-relative POSIX paths, got {value!r}")
        return unicodedata.normalize("NFC", value.removeprefix("./"))

    def flag(self, field: str) -> bool:
        value = self.raw.get(field, False)
        if not isinstance(value, bool):
            raise self.error(field, f"must be true or false, got {value!r}")
        return value

    def chunk_refs(self, field: str) -> tuple[GoldenChunkRef, ...]:
        value = self.raw.get(field)
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.error(field, "must be a list of {source_path, chunk_ordinal} mappings")
        refs: list[GoldenChunkRef] = []
        for pos, item in enumerate(value, start=1):
            item_field = f"{field}[{pos}]"
            if not isinstance(item, Mapping):
                raise self.error(item_field, "must be a mapping with 'source_path' and 'chunk_ordinal'")
            extra = sorted(str(key) for key in item if key not in _CHUNK_REF_FIELDS)
            if extra:
                raise self.error(f"{item_field}.{extra[0]}", "is not a known field")
            path = item.get("source_path")
            if not isinstance(path, str) or not path.strip():
                raise self.error(f"{item_field}.source_path", "must be a non-empty string")
            ordinal = item.get("chunk_ordinal")
            if isinstance(ordinal, bool) or not isinstance(ordinal, int) or ordinal < 0:
                raise self.error(f"{item_field}.chunk_ordinal", f"must be an integer >= 0, got {ordinal!r}")
            refs.append(GoldenChunkRef(self.path_value(f"{item_field}.source_path", path.strip()), ordinal))
        return tuple(refs)


def _parse_case(raw: Any, index: int, source: str) -> GoldenCase:
    f = _Fields(raw, "case", index, source, _CASE_FIELDS)
    return GoldenCase(
        id=f.id,
        query=f.required_text("query"),
        must_include_source_paths=f.paths("must_include_source_paths"),
        acceptable_source_paths=f.paths("acceptable_source_paths"),
        must_include_chunk_refs=f.chunk_refs("must_include_chunk_refs"),
        forbidden_claims=f.strings("forbidden_claims"),
        kind=f.optional_text("kind"),
        where=_wheres(f, f.strings("where")),
    )


def _wheres(f: _Fields, texts: tuple[str, ...]) -> tuple[PropertyFilter, ...]:
    try:
        return parse_wheres(texts)
    except ValueError as exc:
        raise f.error("where", str(exc)) from None


def _parse_ask(raw: Any, index: int, source: str) -> AskCase:
    f = _Fields(raw, "ask case", index, source, _ASK_FIELDS)
    return AskCase(
        id=f.id,
        question=f.required_text("question"),
        expected_sources=f.paths("expected_sources"),
        forbidden_claims=f.strings("forbidden_claims"),
        expect_abstain=f.flag("expect_abstain"),
        expected_answer=f.strings("expected_answer"),
    )


def _check_unique_ids(ids: list[str], label: str, source: str) -> None:
    first_seen: dict[str, int] = {}
    for index, case_id in enumerate(ids, start=1):
        if case_id in first_seen:
            raise GoldenFileError(
                f"{source}: {label} {index} ({case_id!r}): field 'id' duplicates {label} {first_seen[case_id]}"
            )
        first_seen[case_id] = index
