"""The shared server and SDK session fixtures (defined in `agent_helpers`)."""

from tests.core.agents.agent_helpers import served, session  # noqa: F401 - fixtures
