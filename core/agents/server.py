"""The MCP server many agents share: Cairn's tools, each call checked against its caller's scope,
rate-limited, bounded in time and written to the audit log.

Who is calling comes from the HTTP layer (`core.agents.http` puts the agent whose
token matched into the request's ASGI scope); a call that arrives without one is
refused. The engine work runs in worker threads, at most `max_parallel` at once
(the engine's own admission control answers "busy, retry after" beyond its
bound), and a call that runs past `call_timeout` is answered with a timeout.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import ListResourcesResult, ListToolsResult, Resource
from pydantic import Field

from core.agents.access import NotFoundError, ScopedEngine, pack_refs, render_pack
from core.agents.audit import AuditEntry, AuditLog
from core.agents.scope import Tool
from core.agents.tokens import Agent
from core.answer.evidence import truncate
from core.answer.fetch import StaleReferenceError
from core.answer.search_text import search_text
from core.base.errors import BusyError, CairnError
from core.base.models import SearchFilters, SearchMode
from core.base.python_turns import python_turns
from core.base.thread_priority import lower_this_thread
from core.engine import Engine
from core.mcp_server import (
    BASE_DOC,
    CHECKUP_DOC,
    INSTRUCTIONS,
    MAX_CHARS,
    PROPERTIES_DOC,
    READ_ONLY,
    TASKS_DOC,
    AsTypedArg,
    BaseArg,
    BaseQueryArg,
    BaseViewArg,
    DueBeforeArg,
    FolderArg,
    FusionArg,
    KeywordWeightArg,
    OneVaultArg,
    PassagesArg,
    PropertyKeyArg,
    QueryArg,
    TagsArg,
    TaskLimitArg,
    TaskQueryArg,
    VaultArg,
    WhereArg,
    _version,
    links_text,
    search_filters,
)
from core.search.guardrails import mask_secrets
from core.search.search import SearchRequest
from core.serialize import links_json
from core.structured.bases import base_json
from core.structured.checkup import checkup_json
from core.structured.listing import TaskQuery, properties_json, task_json

AGENT_KEY = "cairn.agent"  # where the HTTP layer leaves the caller in the ASGI scope
Work = Callable[[ScopedEngine], tuple[str, tuple[str, ...]]]


@dataclass(frozen=True, slots=True)
class CallLimits:
    call_timeout: float = 30.0  # seconds a tool may run
    max_parallel: int = 2  # engine calls at once across all agents: the engine's work holds the GIL, more threads only contend
    # > 0: the server's threads this much nicer than the app's UI thread (Linux; core.base.thread_priority). Off: a
    # nicer thread that holds the GIL (a GC pass: 103 ms wall for 36 ms CPU) keeps the UI thread waiting longer.
    thread_nice: int = 0
    take_turns: bool = True  # tool workers run Python one at a time (core.base.python_turns): no GIL convoy against the UI thread
    max_chars: int = MAX_CHARS


class RateLimiter:
    """Calls per minute per agent, over a sliding window."""

    def __init__(self) -> None:
        self._calls: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def retry_after(self, agent: Agent, now: float | None = None) -> float:
        """0 if the call may go ahead (and it is counted), else seconds until it may."""
        if agent.scope.rate <= 0:
            return 0.0
        now = time.monotonic() if now is None else now
        with self._lock:
            calls = self._calls.setdefault(agent.name, deque())
            while calls and now - calls[0] >= 60.0:
                calls.popleft()
            if len(calls) >= agent.scope.rate:
                return round(60.0 - (now - calls[0]), 1)
            calls.append(now)
            return 0.0


class AgentServer(MCPServer):
    """`MCPServer` whose tool and resource lists are the caller's own (its scope's tools and notes)."""

    async def _handle_list_tools(self, ctx: Any, params: Any) -> ListToolsResult:
        agent = _agent_of_request(getattr(ctx, "request", None))
        tools = [t for t in await self.list_tools() if agent is not None and agent.scope.may_call(t.name)]
        return ListToolsResult(tools=tools)

    async def _handle_list_resources(self, ctx: Any, params: Any) -> ListResourcesResult:
        agent = _agent_of_request(getattr(ctx, "request", None))
        if agent is None or Tool.FETCH not in agent.scope.tools:
            return ListResourcesResult(resources=[])
        engine = self.engine_source()
        view = ScopedEngine(engine, agent.scope)
        notes = await anyio.to_thread.run_sync(lambda: list(view.notes()))
        return ListResourcesResult(
            resources=[Resource(uri=note_uri(v, r), name=f"{v}/{r}", title=t, mime_type="text/markdown") for v, r, t in notes]
        )

    engine_source: Callable[[], Engine]


def note_uri(vault: str, rel_path: str) -> str:
    return f"cairn://{vault}/{rel_path}"


def _agent_of_request(request: Any) -> Agent | None:
    scope = getattr(request, "scope", None)
    agent = scope.get(AGENT_KEY) if isinstance(scope, dict) else None
    return agent if isinstance(agent, Agent) else None


class Calls:
    """Runs one tool call for one agent: permission, rate, time limit, errors, audit."""

    def __init__(self, engine_source: Callable[[], Engine], audit: AuditLog, limits: CallLimits) -> None:
        self.engine_source = engine_source
        self.audit = audit
        self.limits = limits
        self.rates = RateLimiter()
        self._limiter = anyio.CapacityLimiter(limits.max_parallel)

    async def run(self, ctx: Context, tool: str, query: str, work: Work) -> str:
        agent = _agent_of_request(ctx.request_context.request)
        if agent is None:
            raise ToolError("not authenticated")
        started = time.perf_counter()

        def log(outcome: str, refs: tuple[str, ...] = (), detail: str = "") -> None:
            ms = round((time.perf_counter() - started) * 1000, 1)
            self.audit.append(AuditEntry(agent.name, tool, outcome, query[:500], refs, ms, detail[:300]))

        if not agent.scope.may_call(tool):
            log("refused", detail="tool not in scope")
            raise ToolError(f"this agent may not call {tool} (its scope allows: {', '.join(sorted(agent.scope.tools)) or 'nothing'})")
        wait = self.rates.retry_after(agent)
        if wait:
            log("rate limited")
            raise ToolError(f"rate limit of {agent.scope.rate} calls a minute reached; retry after {wait} s")
        view = ScopedEngine(self.engine_source(), agent.scope)
        try:
            with anyio.fail_after(self.limits.call_timeout):
                text, refs = await anyio.to_thread.run_sync(lambda: self._work(work, view), limiter=self._limiter, abandon_on_cancel=True)
        except TimeoutError:
            log("timeout")
            raise ToolError(f"timed out after {self.limits.call_timeout:g} s; narrow the request or retry later") from None
        except BusyError as exc:
            log("busy")
            raise ToolError(f"busy, retry after {exc.retry_after_seconds:g} s") from None
        except (NotFoundError, StaleReferenceError) as exc:
            log("not found", detail=str(exc))
            raise ToolError(str(exc)) from None
        except (CairnError, ValueError, KeyError) as exc:
            log("error", detail=str(exc))
            raise ToolError(str(exc.args[0]) if exc.args else type(exc).__name__) from None
        log("ok", refs)
        return truncate(text, self.limits.max_chars)


    def _work(self, work: Work, view: ScopedEngine) -> tuple[str, tuple[str, ...]]:
        lower_this_thread(self.limits.thread_nice)  # once per pooled worker thread
        if not self.limits.take_turns:
            return work(view)
        with python_turns().turn():  # the other worker waits off the GIL; both overlap only in model inference
            return work(view)


def build_agent_server(engine_source: Callable[[], Engine], audit: AuditLog, limits: CallLimits | None = None) -> AgentServer:
    """The shared server: the tools of `cairn mcp`, plus related notes and notes as resources."""
    limits = limits or CallLimits()
    calls = Calls(engine_source, audit, limits)
    server = AgentServer("cairn", instructions=INSTRUCTIONS, version=_version(), log_level="WARNING")
    server.engine_source = engine_source
    _add_search_tools(server, calls)
    _add_note_tools(server, calls)
    _add_structured_tools(server, calls)
    _add_resources(server, calls)
    return server


def _add_search_tools(server: AgentServer, calls: Calls) -> None:
    @server.tool(name="search_notes", description=SEARCH_DOC, annotations=READ_ONLY, structured_output=False)
    async def search_notes(
        ctx: Context,
        query: QueryArg,
        vault: VaultArg = None,
        folder: FolderArg = None,
        tags: TagsArg = None,
        mode: SearchMode = SearchMode.HYBRID,
        k: PassagesArg = 8,
        fusion: FusionArg = None,
        keyword_weight: KeywordWeightArg = None,
        where: WhereArg = None,
        as_typed: AsTypedArg = False,
    ) -> str:
        if not query.strip():
            raise ToolError("query must not be empty")

        def work(view: ScopedEngine) -> tuple[str, tuple[str, ...]]:
            filters = search_filters(vault, folder, tags, where)
            request = SearchRequest(
                query, mode=mode, k=k, filters=filters, fusion=fusion, keyword_share=keyword_weight, grouped=True, spelling=not as_typed
            )
            resp = view.search(request)
            return search_text(resp, calls.limits.max_chars), pack_refs(resp)

        return await calls.run(ctx, "search_notes", query, work)

    @server.tool(name="ask_notes", description=ASK_DOC, annotations=READ_ONLY, structured_output=False)
    async def ask_notes(
        ctx: Context,
        question: Annotated[str, Field(min_length=1)],
        vault: Annotated[str | None, Field(description="only this vault")] = None,
        folder: Annotated[str | None, Field(description="only notes below this folder")] = None,
    ) -> str:
        if not question.strip():
            raise ToolError("question must not be empty")
        return await calls.run(ctx, "ask_notes", question, lambda view: view.ask(question, vault, folder))

    @server.tool(name="list_vaults", description="The vaults this agent may read (names to pass as 'vault').", annotations=READ_ONLY, structured_output=False)
    async def list_vaults(ctx: Context) -> str:
        def work(view: ScopedEngine) -> tuple[str, tuple[str, ...]]:
            lines = view.vault_lines()
            return ("\n".join(lines) if lines else "no vaults are open to this agent"), tuple(view.vault_names)

        return await calls.run(ctx, "list_vaults", "", work)


def _add_note_tools(server: AgentServer, calls: Calls) -> None:
    @server.tool(name="fetch_note_chunk", description=FETCH_DOC, annotations=READ_ONLY, structured_output=False)
    async def fetch_note_chunk(ctx: Context, ref: Annotated[str, Field(min_length=3, description="vault/path/to/note.md#N")]) -> str:
        def work(view: ScopedEngine) -> tuple[str, tuple[str, ...]]:
            text, stable = view.fetch(ref)
            return text, (stable,)

        return await calls.run(ctx, "fetch_note_chunk", ref, work)

    @server.tool(name="note_links", description=LINKS_DOC, annotations=READ_ONLY, structured_output=False)
    async def note_links(
        ctx: Context,
        note: Annotated[str, Field(min_length=1, description="path inside the vault (Projects/Plan.md) or a note name as a [[link]] says it")],
        vault: Annotated[str | None, Field(description="the vault (needed when several are open to this agent)")] = None,
        k: Annotated[int, Field(ge=1, le=30, description="number of related notes")] = 10,
    ) -> str:
        def work(view: ScopedEngine) -> tuple[str, tuple[str, ...]]:
            result = view.links(vault, note, k)
            refs = (f"{result.vault}/{result.rel_path}",) + tuple(f"{result.vault}/{b.rel_path}" for b in result.backlinks)
            return links_text(links_json(result), calls.limits.max_chars), refs

        return await calls.run(ctx, "note_links", note, work)

    @server.tool(name="related_notes", description=RELATED_DOC, annotations=READ_ONLY, structured_output=False)
    async def related_notes(
        ctx: Context,
        note: Annotated[str, Field(min_length=1, description="path inside the vault or a note name")],
        vault: Annotated[str | None, Field(description="the vault (needed when several are open to this agent)")] = None,
        k: Annotated[int, Field(ge=1, le=30)] = 10,
    ) -> str:
        def work(view: ScopedEngine) -> tuple[str, tuple[str, ...]]:
            result = view.links(vault, note, k)
            lines = [f"{result.vault}/{r.rel_path}  {r.title}  ({'; '.join(r.reasons)})" for r in result.related]
            text = "\n".join(lines) if lines else "no related notes"
            if result.semantic_note:
                text += f"\nnote: {result.semantic_note}"
            return text, tuple(f"{result.vault}/{r.rel_path}" for r in result.related)

        return await calls.run(ctx, "related_notes", note, work)


def _add_structured_tools(server: AgentServer, calls: Calls) -> None:
    """Properties, tasks and Bases (permission `search`) and the check-up (`checkup`), all over the notes in scope."""

    @server.tool(name="list_properties", description=PROPERTIES_DOC, annotations=READ_ONLY, structured_output=False)
    async def list_properties(ctx: Context, key: PropertyKeyArg = None, vault: VaultArg = None) -> str:
        def work(view: ScopedEngine) -> tuple[str, tuple[str, ...]]:
            return _json(properties_json(view.properties(key, vault))), ()

        return await calls.run(ctx, "list_properties", key or "", work)

    @server.tool(name="list_tasks", description=TASKS_DOC, annotations=READ_ONLY, structured_output=False)
    async def list_tasks(
        ctx: Context,
        query: TaskQueryArg = "",
        state: Literal["open", "done"] | None = None,
        due_before: DueBeforeArg = None,
        vault: VaultArg = None,
        k: TaskLimitArg = 50,
    ) -> str:
        def work(view: ScopedEngine) -> tuple[str, tuple[str, ...]]:
            hits, warnings = view.tasks(TaskQuery(query, state, due_before, limit=k), vault)
            tasks = [task_json(h) for h in hits]
            return _json({"count": len(hits), "warnings": list(warnings), "tasks": tasks}), tuple(t["ref"] for t in tasks)

        return await calls.run(ctx, "list_tasks", query, work)

    @server.tool(name="base_rows", description=BASE_DOC, annotations=READ_ONLY, structured_output=False)
    async def base_rows(ctx: Context, base: BaseArg, query: BaseQueryArg = "", view: BaseViewArg = None) -> str:
        def work(scoped: ScopedEngine) -> tuple[str, tuple[str, ...]]:
            name, found = scoped.base(base, view)
            payload = base_json(name, found)
            if not query.strip():
                return _json(payload), tuple(f"{name}/{r.rel_path}" for r in found.rows)
            filters = SearchFilters(vaults=(name,), paths=found.paths)
            resp = scoped.search(SearchRequest(query, mode=SearchMode.HYBRID, k=20, filters=filters))
            return _json({**payload, "rows": None}) + "\n" + render_pack(resp, calls.limits.max_chars), pack_refs(resp)

        return await calls.run(ctx, "base_rows", f"{base} {query}".strip(), work)

    @server.tool(name="vault_checkup", description=CHECKUP_DOC, annotations=READ_ONLY, structured_output=False)
    async def vault_checkup(ctx: Context, vault: OneVaultArg = None) -> str:
        def work(view: ScopedEngine) -> tuple[str, tuple[str, ...]]:
            result = view.checkup(vault)
            return _json(checkup_json(result)), tuple(dict.fromkeys(f"{result.vault}/{i.rel_path}" for i in result.items))

        return await calls.run(ctx, "vault_checkup", vault or "", work)


def _json(payload: Any) -> str:
    """Compact JSON with every string secret-masked (property values, task lines and passages are note text)."""
    return json.dumps(_masked(payload), ensure_ascii=False)


def _masked(value: Any) -> Any:
    if isinstance(value, str):
        return mask_secrets(value).text
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def _add_resources(server: AgentServer, calls: Calls) -> None:
    @server.resource("cairn://{vault}/{+path}", name="note", description="A whole note, secrets masked (cairn://VAULT/PATH).", mime_type="text/markdown")
    async def note_resource(vault: str, path: str, ctx: Context) -> str:
        def work(view: ScopedEngine) -> tuple[str, tuple[str, ...]]:
            return view.note_text(vault, path), (f"{vault}/{path}",)

        try:
            return await calls.run(ctx, "read_resource", note_uri(vault, path), work)
        except ToolError as exc:
            raise ResourceNotFoundError(str(exc)) from None


SEARCH_DOC = (
    "Search the user's notes (hybrid keyword + meaning). Returns an evidence pack: a source table "
    "(S1 = vault/path) and items 'S1#3 score: snippet'. 'vault/path#3' is the passage's stable address: "
    "pass it to fetch_note_chunk for the full passage, now or in a later call."
)
FETCH_DOC = (
    "Read one passage of a note in full by its reference 'vault/path/to/note.md#N' (N = chunk number "
    "from search_notes). Fails with 'stale reference' if the note changed since it was indexed."
)
LINKS_DOC = (
    "A note's links, backlinks with the linking line, unlinked mentions of its title or aliases, "
    "and related notes with a reason each (JSON)."
)
ASK_DOC = "Answer a question from the user's notes, with numbered references to the passages used."
RELATED_DOC = "Notes related to one note (by meaning, links and shared tags), one per line with the reasons."
