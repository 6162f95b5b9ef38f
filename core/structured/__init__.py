"""Obsidian's structured layer across a user's vaults: properties, tasks, Bases, the check-up.

The application layer's side of `core.index.property_stats`, `core.search.tasks`,
`core.search.bases` and `core.structured.checkup`: it picks the vaults, reads their
manifests through the `Engine` and gives the JSON shapes the CLI, MCP and app share.
"""
