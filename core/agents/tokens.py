"""Agents and their tokens: random, shown once, kept only as a hash in the data folder; revocable.

`agents/agents.json` in the data folder holds each agent's name, the SHA-256 of
its token and its scope. A token is 32 random bytes (256 bits): a fast hash is
enough, since nobody can guess the preimage, and looking one up stays cheap on
every request. The file is read-modify-written under a file lock so the app and
the CLI can both change it, and re-read whenever it changed on disk, so a token
revoked from the command line stops working on a running server at once.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from filelock import FileLock

from core.agents.scope import Scope
from core.base.atomic import make_private, read_json, write_json_atomic
from core.base.errors import UsageError
from core.base.paths import AppPaths

TOKEN_PREFIX = "cairn_"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")


@dataclass(frozen=True, slots=True)
class Agent:
    """One client the user let in; the token itself is never stored."""

    name: str
    token_hash: str
    created: str
    scope: Scope
    expires: str = ""  # ISO time after which the token no longer works; "" = never

    def expired(self, now: datetime | None = None) -> bool:
        if not self.expires:
            return False
        try:
            return (now or datetime.now(UTC)) >= datetime.fromisoformat(self.expires)
        except ValueError:
            return True  # unreadable: fail closed

    def to_json(self) -> dict[str, Any]:
        out = {"name": self.name, "token_sha256": self.token_hash, "created": self.created, "scope": self.scope.to_json()}
        return out | ({"expires": self.expires} if self.expires else {})

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Agent:
        scope = Scope.from_json(data.get("scope", {}))
        return cls(str(data["name"]), str(data["token_sha256"]), str(data.get("created", "")), scope, str(data.get("expires", "")))


def agents_dir(paths: AppPaths) -> Path:
    return paths.data_dir / "agents"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


class AgentStore:
    """The agents file, with look-ups by token that follow changes made by other processes."""

    def __init__(self, paths: AppPaths) -> None:
        self.file = agents_dir(paths) / "agents.json"
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._agents: dict[str, Agent] = {}

    def agents(self) -> list[Agent]:
        with self._lock:
            self._refresh()
            return sorted(self._agents.values(), key=lambda a: a.name)

    def get(self, name: str) -> Agent | None:
        with self._lock:
            self._refresh()
            return self._agents.get(name)

    def verify(self, token: str) -> Agent | None:
        """The agent this token belongs to, or None (unknown, revoked or malformed)."""
        if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
            return None
        digest = hash_token(token)
        with self._lock:
            try:
                self._refresh()
            except UsageError:
                return None
            found = None
            for agent in self._agents.values():  # compare every one: timing says nothing about which
                if hmac.compare_digest(agent.token_hash, digest):
                    found = agent
            return found if found is not None and not found.expired() else None

    def add(self, name: str, scope: Scope, *, valid_days: float | None = None) -> tuple[Agent, str]:
        """A new agent and its token (returned once; only its hash is kept), valid for `valid_days` if given."""
        if not NAME_RE.match(name):
            raise UsageError(f"agent name {name!r}: use 1-40 letters, digits, '.', '_' or '-'")
        if valid_days is not None and valid_days <= 0:
            raise UsageError("a token must be valid for more than 0 days")
        token = new_token()
        now = datetime.now(UTC)
        expires = (now + timedelta(days=valid_days)).isoformat(timespec="seconds") if valid_days is not None else ""
        agent = Agent(name, hash_token(token), now.isoformat(timespec="seconds"), scope, expires)

        def change(agents: dict[str, Agent]) -> None:
            if name in agents:
                raise UsageError(f"an agent named {name!r} exists; revoke it first or pick another name")
            agents[name] = agent

        self._modify(change)
        return agent, token

    def revoke(self, name: str) -> Agent:
        removed: list[Agent] = []

        def change(agents: dict[str, Agent]) -> None:
            if name not in agents:
                raise UsageError(f"no agent named {name!r} (see `cairn agents list`)")
            removed.append(agents.pop(name))

        self._modify(change)
        return removed[0]

    def _modify(self, change: Any) -> None:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        make_private(self.file.parent)
        with FileLock(str(self.file) + ".lock", timeout=10), self._lock:
            self._stamp = None
            self._refresh()
            agents = dict(self._agents)
            change(agents)
            write_json_atomic(self.file, {"version": 1, "agents": [a.to_json() for a in agents.values()]})
            make_private(self.file)
            self._stamp = None
            self._refresh()

    def _refresh(self) -> None:
        try:
            st = self.file.stat()
        except OSError:
            self._agents, self._stamp = {}, None
            return
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._stamp:
            return
        try:
            data = read_json(self.file)
            agents = [Agent.from_json(a) for a in data.get("agents", ())]
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            self._agents, self._stamp = {}, None  # fail closed: nobody is let in
            raise UsageError(f"{self.file} is damaged ({exc}); no agent is let in until it is fixed or removed") from exc
        self._agents = {a.name: a for a in agents}
        self._stamp = stamp
