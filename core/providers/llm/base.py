"""What every chat model promises, and the one error it may raise.

The answer pipeline, the CLI and the desktop Ask pane talk to a
`ChatProvider`; none of them cares whether the text comes from Ollama, an
OpenAI-compatible server or Anthropic. Keeping the contract in one small
module lets tests register a fake provider without importing httpx.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, get_args

#: Why a model could not answer. The UI maps each code to advice the user can act on.
LLMErrorCode = Literal[
    "connection_refused",
    "unauthorized",
    "unknown_model",
    "context_too_long",
    "rate_limited",
    "server_error",
    "timeout",
    "bad_response",
    "cancelled",
]

LLM_ERROR_CODES: frozenset[str] = frozenset(get_args(LLMErrorCode))

Role = Literal["system", "user", "assistant"]
ROLES: frozenset[str] = frozenset(get_args(Role))


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One turn of a conversation, in the shape every chat API shares.

    Attributes:
        role: "system", "user" or "assistant". Checked on creation, because a
            typo would otherwise surface as an opaque HTTP 400 from the server.
        content: The text of the turn.
    """

    role: str
    content: str

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {sorted(ROLES)}, not {self.role!r}")


class LLMError(Exception):
    """A model could not (fully) answer, for a reason the user can act on.

    Attributes:
        code: Machine-readable reason (see `LLMErrorCode`), so the CLI can pick
            an exit code and the app a remedy without parsing text.
        message: A sentence for the user naming the server address and the
            model. Never contains the API key.
        retry_after: Seconds the server asked us to wait (HTTP `Retry-After`),
            when it said; the UI can show "try again in N s".
    """

    def __init__(self, code: LLMErrorCode, message: str, *, retry_after: float | None = None) -> None:
        if code not in LLM_ERROR_CODES:
            raise ValueError(f"unknown LLMError code {code!r}")
        super().__init__(message)
        self.code: LLMErrorCode = code
        self.message = message
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"LLMError(code={self.code!r}, message={self.message!r})"


class ChatProvider(Protocol):
    """Streams a chat completion as text deltas.

    Attributes:
        id: Registry key of the provider ("ollama", "openai", "anthropic").
        model: Model name as the server knows it; shown next to answers.
        remote: Whether note text leaves this process. True for every server,
            even one on this machine, so restricted notes are never sent.
    """

    id: str
    model: str
    remote: bool

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        temperature: float = 0.2,
        max_tokens: int | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[str]:
        """Yield the answer's text in pieces, as the server sends them.

        Nothing is sent until the iterator is first advanced. Retries (on rate
        limits and server errors) happen only before the first piece, so a
        caller never sees text twice.

        Args:
            messages: The conversation, oldest first.
            temperature: Sampling temperature; low keeps answers close to the notes.
            max_tokens: Longest answer in tokens; the server's default when None.
            cancel: Checked between received lines; when set, the connection is
                closed and `LLMError("cancelled")` raised.

        Raises:
            LLMError: The server refused, failed, stopped early or answered
                oddly, or `cancel` was set. Text already yielded stays valid
                but incomplete.
        """
        ...
