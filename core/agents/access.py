"""The engine as one agent may see it: every operation narrowed to the scope before it runs,
and every result checked again before it leaves.

Whatever is outside the scope — another vault, a folder not granted, a note above
the agent's confidentiality, a restricted note — is answered exactly as a note
that does not exist: the same error text, no count, no title, no path. Each
function returns the text for the agent and the references it was given (for
the audit log), never more.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from core.agents.scope import Scope
from core.answer import Answerer, AskRequest
from core.answer.evidence import build_llm_pack, chunk_ref
from core.answer.fetch import StaleReferenceError, fetch_chunk, parse_ref
from core.base.errors import CairnError, UsageError
from core.base.models import Hit, SearchFilters, SearchMode, SearchResponse
from core.index.property_stats import KeyStats, property_stats
from core.search.bases import BaseFileError, BaseView, load_base, run_base
from core.search.guardrails import mask_secrets
from core.search.related import NoteLinks, OutLink, resolve_note
from core.search.search import SearchRequest
from core.search.tasks import TaskHit, find_tasks
from core.structured.checkup import Checkup, vault_checkup

if TYPE_CHECKING:
    from core.engine import Engine
    from core.index.manifest import FileRecord
    from core.structured.listing import TaskQuery

OVERFETCH = 3  # a narrowed scope drops hits after the search: ask for more, keep k
MAX_RESOURCES = 1000


class NotFoundError(UsageError):
    """Out of scope or absent: the agent cannot tell which."""


def no_vault(name: str) -> NotFoundError:
    return NotFoundError(f"no vault named {name!r} (see list_vaults)")


def no_note(vault: str, note: str) -> NotFoundError:
    return NotFoundError(f"{note} is not an indexed note of vault {vault!r}")


class ScopedEngine:
    """One agent's view of the engine (the object `Answerer` asks, too)."""

    def __init__(self, engine: Engine, scope: Scope) -> None:
        self.engine = engine
        self.scope = scope

    def __getattr__(self, name: str) -> Any:  # Answerer reads config, index_for, embedder_for as they are
        return getattr(self.engine, name)

    # -- what the agent may see ---------------------------------------------------------

    @property
    def vault_names(self) -> list[str]:
        return self.scope.vaults_in([v.name for v in self.engine.vaults])

    def record(self, vault: str, rel_path: str) -> FileRecord | None:
        """The note's record if this agent may see it, else None (absent and hidden alike)."""
        if vault not in self.vault_names:
            return None
        try:
            rec = self.engine.index_for(vault).files.get(rel_path)
        except CairnError:
            return None
        if rec is None or not self.scope.sees(vault, rel_path, rec.confidentiality):
            return None
        return rec

    def visible(self, vault: str, rel_path: str | None) -> bool:
        return rel_path is not None and self.record(vault, rel_path) is not None

    def _narrows(self) -> bool:
        return bool(self.scope.areas) or not self.scope.internal

    # -- search ------------------------------------------------------------------------

    def search(self, request: SearchRequest) -> SearchResponse:
        """The request with its vaults and folders cut to the scope, then its hits checked one by one."""
        filters = self._scoped_filters(request.filters)
        if filters is None:
            return SearchResponse(request.query, SearchMode(request.mode), SearchMode(request.mode), ())
        k = request.k
        wider = k * OVERFETCH if self._narrows() else k
        resp = self.engine.search(dataclasses.replace(request, filters=filters, k=wider))
        hits = tuple(self._kept(h) for h in resp.hits if self.visible(h.chunk.vault, h.chunk.rel_path))[:k]
        return dataclasses.replace(resp, hits=hits, keyword_candidates=(), vector_candidates=())

    def _kept(self, hit: Hit) -> Hit:
        return dataclasses.replace(hit, more=tuple(m for m in hit.more if self.visible(m.chunk.vault, m.chunk.rel_path)))

    def _scoped_filters(self, asked: SearchFilters) -> SearchFilters | None:
        """Vaults and folders both asked for and granted; None when nothing is left to search."""
        vaults = [v for v in self.vault_names if not asked.vaults or v in asked.vaults]
        if asked.vaults and any(v not in self.vault_names for v in asked.vaults):
            raise no_vault(next(v for v in asked.vaults if v not in self.vault_names))
        per_vault = {v: self.scope.folders_for(v) for v in vaults}
        folders: set[str] = set()
        whole = False
        for granted in per_vault.values():
            kept = _intersect(granted or (), asked.folders)
            if kept is None:
                continue
            whole = whole or not kept
            folders.update(kept)
        searched = [v for v in vaults if _intersect(per_vault[v] or (), asked.folders) is not None]
        if not searched:
            return None
        chosen = () if whole else tuple(sorted(folders))
        return dataclasses.replace(asked, vaults=tuple(searched), folders=chosen, allow_restricted=False)

    # -- single notes --------------------------------------------------------------------

    def fetch(self, ref: str) -> tuple[str, str]:
        """(text, ref) of one chunk; a reference outside the scope reads as a note that is gone."""
        addr = parse_ref(ref, self.vault_names)
        if self.record(addr.vault, addr.rel_path) is None:
            raise StaleReferenceError(addr.ref, "is not in the index: the note was moved, renamed or deleted")
        chunk = fetch_chunk(self.engine, ref, allow_restricted=False)
        return chunk.to_text(), chunk.ref

    def resolve(self, vault: str | None, note: str) -> tuple[str, str]:
        """(vault, rel_path) of a note named by path or link name, checked before anything else runs."""
        names = self.vault_names
        if vault is None:
            if len(names) != 1:
                raise UsageError("several vaults are indexed: pass 'vault' (see list_vaults)")
            vault = names[0]
        if vault not in names:
            raise no_vault(vault)
        try:
            rel = resolve_note(self.engine.index_for(vault), note)
        except UsageError:
            raise no_note(vault, note) from None
        if self.record(vault, rel) is None:
            raise no_note(vault, note)
        return vault, rel

    def links(self, vault: str | None, note: str, k: int) -> NoteLinks:
        """Links, backlinks, mentions and related notes, each one outside the scope left out."""
        name, rel = self.resolve(vault, note)
        result = self.engine.links(name, rel, k=k * OVERFETCH if self._narrows() else k, allow_restricted=False)
        shown = lambda other: self.visible(name, other)  # noqa: E731 - one short predicate, used four times
        return dataclasses.replace(
            result,
            outgoing=tuple(self._outlink(o, shown(o.rel_path)) for o in result.outgoing),
            backlinks=tuple(b for b in result.backlinks if shown(b.rel_path)),
            mentions=tuple(m for m in result.mentions if shown(m.rel_path)),
            related=tuple(r for r in result.related if shown(r.rel_path))[:k],
        )

    def _outlink(self, link: OutLink, shown: bool) -> OutLink:
        """A link written in a visible note stays (its text is the agent's to read), but where it
        leads is not said when that is outside the scope."""
        if shown:
            return link
        return dataclasses.replace(link, rel_path=None, title=None, attachment=link.attachment and not self.scope.areas)

    def note_text(self, vault: str, rel_path: str) -> str:
        """The whole note as indexed (chunks in order), secrets masked: an MCP resource's body."""
        rec = self.record(vault, rel_path)
        if rec is None:
            raise no_note(vault, rel_path)
        keyword = self.engine.index_for(vault).keyword
        from core.base.models import chunk_id

        stored = keyword.stored([chunk_id(vault, rel_path, c.ordinal) for c in rec.chunks])
        bodies = [s.body for s in sorted(stored.values(), key=lambda s: s.ordinal)]
        return mask_secrets("\n\n".join(bodies)).text

    def notes(self) -> Iterable[tuple[str, str, str]]:
        """(vault, rel_path, title) of every note this agent may see, at most MAX_RESOURCES."""
        count = 0
        for vault in self.vault_names:
            try:
                files = self.engine.index_for(vault).files
            except CairnError:
                continue
            for rel, rec in sorted(files.items()):
                if self.scope.sees(vault, rel, rec.confidentiality):
                    yield vault, rel, rec.title
                    count += 1
                    if count >= MAX_RESOURCES:
                        return

    def vault_lines(self) -> list[str]:
        """One line per vault in scope, counting only the notes this agent may see."""
        lines = []
        for vault in self.vault_names:
            try:
                files = self.engine.index_for(vault).files
            except CairnError as exc:
                lines.append(f"{vault}: {exc}")
                continue
            seen = sum(1 for rel, rec in files.items() if self.scope.sees(vault, rel, rec.confidentiality))
            where = ", ".join(a.folder for a in self.scope.areas if a.vault == vault and a.folder)
            lines.append(f"{vault}: {seen} notes" + (f" (folders: {where})" if where else ""))
        return lines

    # -- properties, tasks, Bases, check-up: computed over the visible notes only -------------

    def files_of(self, vault: str) -> dict[str, FileRecord]:
        """The indexed notes of one vault this agent may see (none while its index is not built)."""
        try:
            vi = self.engine.index_for(vault)
        except CairnError:
            return {}
        if not vi.is_built:
            return {}
        return {rel: rec for rel, rec in vi.files.items() if self.scope.sees(vault, rel, rec.confidentiality)}

    def _asked(self, vault: str | None) -> list[str]:
        if vault is None:
            return self.vault_names
        if vault not in self.vault_names:
            raise no_vault(vault)
        return [vault]

    def properties(self, key: str | None, vault: str | None) -> list[KeyStats]:
        """Keys, types and values with note counts, counting only the notes in scope."""
        merged = {f"{name}\x1f{rel}": rec for name in self._asked(vault) for rel, rec in self.files_of(name).items()}
        return property_stats(merged, key)

    def tasks(self, request: TaskQuery, vault: str | None) -> tuple[list[TaskHit], tuple[str, ...]]:
        """Task lines of the notes in scope, soonest due first."""
        hits: list[TaskHit] = []
        warnings: tuple[str, ...] = ()
        for name in self._asked(vault):
            found, warnings = find_tasks(name, self.files_of(name), request.query, state=request.state, due_before=request.due_before)
            hits.extend(found)
        hits.sort(key=lambda h: (h.task.due or "9999", h.vault, h.rel_path, h.task.line))
        return hits[: request.limit] if request.limit else hits, warnings

    def base(self, spec: str, view: str | None) -> tuple[str, BaseView]:
        """A Base named `VAULT/path.base` run over the notes in scope; a Base outside it is not found."""
        vault, rel = self._base_address(spec)
        root = Path(self.engine.vault(vault).root).resolve()
        path = (root / rel).resolve()
        if not path.is_file() or not path.is_relative_to(root):
            raise NotFoundError(f"no Base at {spec!r}")
        try:
            return vault, run_base(load_base(path), self.files_of(vault), base=rel, view=view, root=root)
        except BaseFileError as exc:
            raise UsageError(str(exc)) from None

    def _base_address(self, spec: str) -> tuple[str, str]:
        """(vault, rel) of a Base the scope covers; no file-system paths, no '..', nothing outside the areas."""
        text = spec.strip()
        for name in sorted(self.vault_names, key=len, reverse=True):
            if not text.startswith(name + "/"):
                continue
            rel = text[len(name) + 1 :]
            parts = PurePosixPath(rel).parts
            rec = self.engine.index_for(name).files.get(rel)
            safe = rel.endswith(".base") and "\\" not in rel and not rel.startswith("/") and not {"..", "."} & set(parts)
            if safe and self.scope.sees(name, rel, rec.confidentiality if rec is not None else "public"):
                return name, rel
        raise NotFoundError(f"no Base at {spec!r}")

    def checkup(self, vault: str | None) -> Checkup:
        """The vault check-up over the notes in scope: findings, pairs and counts never name another note."""
        names = self.vault_names
        if vault is None and len(names) != 1:
            raise UsageError("several vaults are indexed: pass 'vault' (see list_vaults)")
        name = self._asked(vault or names[0])[0]
        return vault_checkup(self.engine, name, only=self.files_of(name))

    # -- ask -----------------------------------------------------------------------------

    def ask(self, question: str, vault: str | None, folder: str | None) -> tuple[str, tuple[str, ...]]:
        from core.mcp_server import render_answer

        if vault is not None and vault not in self.vault_names:
            raise no_vault(vault)
        req = AskRequest(
            question,
            vaults=(vault,) if vault else tuple(self.vault_names),
            folders=(folder.strip("/"),) if folder and folder.strip("/") else (),
            allow_restricted=False,
        )
        resp = Answerer(self).ask(req)  # type: ignore[arg-type]  # duck-typed: searches go through self.search
        refs = tuple(chunk_ref(r.vault, r.rel_path, r.chunk_ordinal) for r in resp.references)
        return render_answer(resp), refs


def pack_refs(resp: SearchResponse) -> tuple[str, ...]:
    """The stable addresses of a search's hits (`vault/path#N`), as the audit log keeps them."""
    return tuple(chunk_ref(h.chunk.vault, h.chunk.rel_path, h.chunk.ordinal) for h in resp.hits)


def render_pack(resp: SearchResponse, max_chars: int) -> str:
    return build_llm_pack(resp).render(max_chars)


def _intersect(granted: tuple[str, ...], asked: tuple[str, ...]) -> tuple[str, ...] | None:
    """Folders both granted and asked for (() = the whole vault), or None when they do not meet."""
    if not asked:
        return granted
    if not granted:
        return asked
    kept: set[str] = set()
    for g in granted:
        for a in asked:
            a = a.strip("/")
            if a == g or a.startswith(g + "/"):
                kept.add(a)
            elif g.startswith(a + "/"):
                kept.add(g)
    return tuple(sorted(kept)) if kept else None
