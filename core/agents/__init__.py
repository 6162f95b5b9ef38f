"""Cairn for many AI agents at once: one MCP server over Streamable HTTP, per-client scopes, an audit log.

The stdio server in `core.mcp_server` serves one client with the user's own
rights. This package serves many, each with a named token and a scope (which
vaults and folders, which tools, whether `internal` notes), checked before the
engine is asked anything, and writes down what each one read.
"""
