"""Anthropic's Messages API.

Unlike OpenAI, the system prompt is a top-level field rather than a message,
`max_tokens` is required, and the stream is a sequence of typed events
(`message_start`, `content_block_delta`, ..., `message_stop`). Errors carry a
`type` ("overloaded_error", "not_found_error", ...) that says more than the
HTTP status, so it is mapped first.
"""

from __future__ import annotations

from typing import Any

from core.providers.llm.base import ChatMessage, LLMErrorCode
from core.providers.llm.faults import classify, error_detail
from core.providers.llm.http_stream import HTTPChatProvider, StreamState, strip_suffix

ANTHROPIC_DEFAULT_URL = "https://api.anthropic.com"
ANTHROPIC_DEFAULT_MODEL = "claude-3-5-haiku-latest"
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 1024
_ERROR_TYPES: dict[str, LLMErrorCode] = {
    "authentication_error": "unauthorized",
    "permission_error": "unauthorized",
    "not_found_error": "unknown_model",
    "rate_limit_error": "rate_limited",
    "overloaded_error": "server_error",
    "api_error": "server_error",
}


class AnthropicChat(HTTPChatProvider):
    """Streams `POST {base}/v1/messages` from Anthropic's API.

    Args:
        base_url: API root; Anthropic's own unless given (a proxy, for example).
        model: Model name or alias, e.g. "claude-3-5-haiku-latest".
        api_key: Sent as `x-api-key`; without one the API answers 401.
        timeout: Longest silence in seconds before the answer starts or between pieces.
        connect_timeout: Seconds to wait for the TCP connection.
        max_retries: Extra tries on HTTP 429/5xx/529 or an early `overloaded_error`.
        sleep: Waits between retries; tests pass a recorder.
        transport: httpx transport override, for tests (keyword only).
    """

    id = "anthropic"
    server_name = "Anthropic"
    key_env_var = "ANTHROPIC_API_KEY"

    default_base_url = ANTHROPIC_DEFAULT_URL
    default_model = ANTHROPIC_DEFAULT_MODEL

    @property
    def chat_url(self) -> str:
        """`{root}/v1/messages`."""
        return f"{strip_suffix(self.base_url, '/v1')}/v1/messages"

    @property
    def models_url(self) -> str:
        """`{root}/v1/models`, first 1000 entries (there are far fewer)."""
        return f"{strip_suffix(self.base_url, '/v1')}/v1/models?limit=1000"

    def _auth_headers(self) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def _payload(
        self, messages: list[ChatMessage], temperature: float, max_tokens: int | None
    ) -> dict[str, Any]:
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        turns: list[dict[str, str]] = []
        for m in messages:
            if m.role == "system":
                continue
            # Consecutive turns of one role are merged: the API wants them alternating.
            if turns and turns[-1]["role"] == m.role:
                turns[-1]["content"] += "\n\n" + m.content
            else:
                turns.append({"role": m.role, "content": m.content})
        if not turns:
            raise ValueError("Anthropic needs at least one user message besides the system prompt")
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": turns,
            "max_tokens": max_tokens if max_tokens is not None else DEFAULT_MAX_TOKENS,
            "temperature": temperature,
            "stream": True,
        }
        if system:
            payload["system"] = system
        return payload

    def _feed(self, line: str, state: StreamState) -> str | None:
        field, _, value = line.partition(":")
        if field != "data":
            return None  # `event:` repeats the data's own "type"; `:` lines are comments
        event = self._json(value.strip())
        kind = event.get("type")
        if kind == "content_block_delta":
            delta = event.get("delta")
            if isinstance(delta, dict) and delta.get("type") == "text_delta":
                text = delta.get("text")
                return text if isinstance(text, str) and text else None
            return None
        if kind == "message_stop":
            state.done = True
        elif kind == "error":
            raise self._stream_error(event)
        return None

    def _classify(self, status: int | None, body: Any) -> tuple[LLMErrorCode, str]:
        detail, kind = error_detail(body)
        low = detail.lower()
        if kind == "invalid_request_error" and ("too long" in low or "context" in low):
            return "context_too_long", detail
        if kind in _ERROR_TYPES:
            return _ERROR_TYPES[kind], detail
        return classify(status, f"{detail} {kind}"), detail

    def _model_names(self, body: Any) -> list[str]:
        return [item["id"] for item in body["data"]]
