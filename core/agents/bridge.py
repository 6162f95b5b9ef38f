"""`cairn mcp` as a bridge: a stdio MCP server whose every request is answered by the running
HTTP server, so a stdio-only client shares the app's engine instead of loading its own.

Built from the SDK on both sides — its low-level `Server` on stdio (on the
checked wire of `core.mcp_wire`) and its Streamable HTTP client — and forwarding
requests as they are: tools, resources and resource templates. The bridge
calls under the local token from the server's state file, whose scope is the
user's own client: every vault and tool, internal notes, never restricted ones.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx2
from mcp import ClientSession
from mcp import types as t
from mcp.client.streamable_http import streamable_http_client
from mcp.server.lowlevel import Server

from core.agents.runner import RunningServer
from core.mcp_wire import serve_lowlevel_stdio

log = logging.getLogger("cairn.mcp")


def bridge_server(client: ClientSession, init: t.InitializeResult) -> Server[Any]:
    """A stdio server that forwards each request to `client` and hands back its answer."""

    async def list_tools(ctx: Any, params: t.PaginatedRequestParams | None) -> t.ListToolsResult:
        return await client.list_tools(params=params)

    async def call_tool(ctx: Any, params: t.CallToolRequestParams) -> t.CallToolResult:
        return await client.call_tool(params.name, params.arguments or {})

    async def list_resources(ctx: Any, params: t.PaginatedRequestParams | None) -> t.ListResourcesResult:
        return await client.list_resources(params=params)

    async def list_templates(ctx: Any, params: t.PaginatedRequestParams | None) -> t.ListResourceTemplatesResult:
        return await client.list_resource_templates(params=params)

    async def read_resource(ctx: Any, params: t.ReadResourceRequestParams) -> t.ReadResourceResult:
        return await client.read_resource(params.uri)

    return Server(
        "cairn",
        version=init.server_info.version,
        instructions=init.instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


async def serve_bridge(server: RunningServer, token: str | None = None) -> None:
    """Bridge stdio to `server` until the stdio client hangs up."""
    headers = {"Authorization": f"Bearer {token or server.bridge_token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60.0)) as http:
        async with streamable_http_client(server.url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as client:
                init = await client.initialize()
                await serve_lowlevel_stdio(bridge_server(client, init))
