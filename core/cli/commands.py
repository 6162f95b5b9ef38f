"""The `cairn` sub-commands other than `eval`."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from core.base.errors import UsageError
from core.base.paths import AppPaths
from core.cli.common import EXIT_FAIL, EXIT_OK, EXIT_USAGE, cancel_on_sigint, print_json, resolve_path
from core.cli.progress import ProgressLine
from core.engine import Engine
from core.serialize import status_json, sync_json

if TYPE_CHECKING:
    from core.base.models import Document

# `cairn chunk` imports the note parser and the PDF extractor where it runs: a cold `cairn index`
# imports what indexing needs (issue #30), and no search (`core.cli.search_cmd`) either.


def open_engine() -> Engine:
    return Engine(AppPaths.from_env())


def _named_vaults(engine: Engine, items: list[str]) -> list[str]:
    """The vaults `--vault` names: a folder (registered if new) or a known vault name."""
    names: list[str] = []
    for item in items:
        path = resolve_path(item)
        if path.is_dir():
            names.append(engine.add_vault(path).name)
        elif engine.config.vault_named(item) is not None:
            names.append(item)
        else:
            raise UsageError(f"{item} is neither a folder nor a known vault name")
    return names


def cmd_index(args: argparse.Namespace) -> int:
    engine = open_engine()
    names = _named_vaults(engine, args.vault)
    if not engine.vaults:
        raise UsageError("No vaults yet. Add one: cairn index --vault PATH/TO/NOTES")
    if args.embedder is not None:
        set_embedder(engine, names, args.embedder)
    cancel = cancel_on_sigint()
    reports = []
    missing: list[str] = []
    for name in names or [v.name for v in engine.vaults]:
        progress = ProgressLine(f"indexing {name}", quiet=args.quiet)
        try:
            reports.extend(engine.sync([name], progress=progress, cancel=cancel, embed=not args.no_embed))
        except FileNotFoundError as exc:  # a registered vault whose folder is gone (unplugged drive)
            missing.append(f"vault {name!r}: {exc}; its old index was kept")
    payload = [sync_json(r) for r in reports]
    for problem in missing:
        print(f"cairn: {problem}", file=sys.stderr)
    if args.json:
        print_json({"vaults": payload})
    else:
        for r in payload:
            skipped = ", ".join(f"{k} {v}" for k, v in r["skipped"].items()) or "none"
            print(
                f"{r['vault']}: {r['documents']} notes, {r['chunks']} chunks "
                f"(+{r['added']} new, ~{r['changed']} changed, -{r['removed']} removed); "
                f"skipped: {skipped}; {r['seconds']:.2f} s"
            )
            if r["embedding"]:
                e = r["embedding"]
                left = f", {e['no_vector']} left out (link lists, tables, data: keyword only)" if e.get("no_vector") else ""
                print(f"  embeddings: {e['embedded']} embedded, {e['from_cache']} from cache{left}, {e['seconds']:.2f} s")
            if r.get("ocr"):
                o = r["ocr"]
                left = f", {o['remaining']} left for the next sync" if o["remaining"] else ""
                print(f"  OCR: {len(o['read'])} images and scans read ({o['pages']} pages), {o['skipped']} skipped{left}, {o['seconds']:.2f} s")
            if r.get("semantic_problem"):
                print(f"  semantic search unavailable: {r['semantic_problem']}")
    if missing:
        return EXIT_USAGE
    return EXIT_FAIL if any(r["cancelled"] for r in payload) else EXIT_OK


def set_embedder(engine: Engine, names: list[str], provider_id: str) -> None:
    """Give the named vaults their own embedding model (the app's Settings choose one for every vault).

    Vectors made by the previous model are replaced through the usual
    model-mismatch path on the sync that follows.
    """
    from core.providers.embedding import default_registry  # numpy: not for `cairn index --no-embed` or `status`

    info = default_registry().get(provider_id)
    if not names:
        raise UsageError("--embedder needs the vaults it applies to: cairn index --vault NAME --embedder ID")
    if info is None:
        raise UsageError(f"unknown embedding provider {provider_id!r}; choose one of: {', '.join(default_registry())}")
    if not info.installed():
        raise UsageError(f"{info.label} is not installed here")
    vaults = tuple(replace(v, embedder=provider_id, embed_model=None, embed_base_url=None) if v.name in names and v.embedder != provider_id else v
                   for v in engine.config.vaults)  # fmt: skip
    engine.update_config(replace(engine.config, vaults=vaults))


def cmd_similar(args: argparse.Namespace) -> int:
    engine = open_engine()
    name = args.vault or (engine.vaults[0].name if len(engine.vaults) == 1 else None)
    if name is None:
        raise UsageError("Several vaults are indexed: say which with --vault NAME")
    results = engine.similar(name, args.rel_path, k=args.k, allow_restricted=args.allow_restricted)
    if args.json:
        print_json({"vault": name, "rel_path": args.rel_path, "similar": [{"rel_path": r, "title": t, "score": round(s, 6)} for r, t, s in results]})
    else:
        for i, (rel, title, score) in enumerate(results, 1):
            print(f"{i:>2}. {title}  [{rel}]  cosine {score:.3f}")
    return EXIT_OK


def cmd_chunk(args: argparse.Namespace) -> int:
    from core.vault.attachments import attachment_kind
    from core.vault.chunker import ChunkLimits
    from core.vault.kinds import unit_label
    from core.vault.notes import parse_note
    from core.vault.scanner import as_utf8

    path = Path(args.file)
    if attachment_kind(path.name) is not None:
        doc = _chunk_attachment(path)
    else:
        try:
            raw = as_utf8(path.read_bytes())
        except OSError as exc:
            raise UsageError(f"Cannot read {path}: {exc.strerror or exc}") from exc
        if b"\x00" in raw:
            raise UsageError(f"{path} contains NUL bytes; it is not a text note")
        st = path.stat()
        doc = parse_note("-", path.name, raw, size=st.st_size, mtime_ns=st.st_mtime_ns, limits=ChunkLimits())
    if args.json:
        print_json(
            {
                "file": str(path),
                "title": doc.title,
                "tags": list(doc.tags),
                "date": doc.date,
                "doc_type": doc.doc_type,
                "confidentiality": doc.confidentiality,
                "document_version": doc.document_version,
                "warnings": [{"code": w.code, "detail": w.detail} for w in doc.warnings],
                "chunks": [
                    {
                        "ordinal": c.ordinal,
                        "heading_path": c.heading_path,
                        "start_byte": c.start_byte,
                        "end_byte": c.end_byte,
                        "page": c.page,
                        "chars": len(c.text),
                        "text": c.text,
                    }
                    for c in doc.chunks
                ],
            }
        )
        return EXIT_OK
    print(f"{doc.title}  ({len(doc.chunks)} chunks; tags: {', '.join(doc.tags) or '-'})")
    for w in doc.warnings:
        print(f"warning: {w.detail}", file=sys.stderr)
    for c in doc.chunks:
        where = unit_label(doc.rel_path, c.page) or f"{c.start_byte}:{c.end_byte}"
        print(f"--- #{c.ordinal} [{where}] {c.heading_path or '(top)'} ({len(c.text)} chars)")
        print(c.text)
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    from core.vault.attachments import describe_attachments

    engine = open_engine()
    statuses = engine.status()
    if args.json:
        print_json({"data_dir": str(engine.paths.data_dir), "vaults": [status_json(s) for s in statuses]})
        return EXIT_OK
    if not statuses:
        print("No vaults yet. Add one: cairn index --vault PATH/TO/NOTES")
    for s in statuses:
        i = s.info
        print(f"{i.vault}  ({i.root})")
        notes = i.documents - sum(c.indexed for c in s.attachments)
        print(f"  state: {i.state}; {notes} notes, {i.chunks} chunks; built {i.built_at or 'never'}")
        if s.attachments:
            print(f"  attachments: {describe_attachments(s.attachments)}")
        why = f" — {s.semantic_reason}" if s.semantic_reason else ""
        share = "" if s.cover.with_vector else f" ({s.semantic_fraction:.0%} embedded)"  # else the reason says both
        print(f"  semantic: {s.semantic.value}{share}{why}")
        if s.languages:
            print("  languages: " + ", ".join(f"{lang} {share:.0%}" for lang, share in s.languages[:6]))
        if s.advice:
            print(f"  advice: {s.advice}")
        for sk in i.skipped:
            print(f"  skipped {sk.rel_path}: {sk.reason.value} — {sk.detail}")
        for w in i.warnings:
            print(f"  warning {w.rel_path}: {w.code} — {w.detail}")
    return EXIT_OK


def _chunk_attachment(path: Path) -> Document:
    """An attachment chunked as the index would (extracted in a child process, time- and memory-limited)."""
    from core.base.models import SkippedFile
    from core.vault.attachments import AttachmentSource, file_version, parse_attachment
    from core.vault.extractor import PdfExtractor

    try:
        st = path.stat()
        version = file_version(path)
    except OSError as exc:
        raise UsageError(f"Cannot read {path}: {exc.strerror or exc}") from exc
    src = AttachmentSource("-", path.name, path, st.st_size, st.st_mtime_ns, version, "internal")
    with PdfExtractor() as extractor:
        got = parse_attachment(src, extractor)
    if isinstance(got, SkippedFile):
        raise UsageError(f"{path} cannot be indexed: {got.reason.value} — {got.detail}")
    return got
