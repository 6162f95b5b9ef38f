"""OpenAI's chat completions API, or any server that copies it.

llama.cpp's server, llama-cpp-python, vLLM, LM Studio and OpenAI itself all
stream `/v1/chat/completions` as server-sent events: `data: {json}` lines and
a final `data: [DONE]`. The final marker is what tells a complete answer from
one cut off by a dropped connection, so its absence is an error.
"""

from __future__ import annotations

from typing import Any

from core.providers.llm.base import ChatMessage
from core.providers.llm.http_stream import HTTPChatProvider, StreamState, strip_suffix

OPENAI_DEFAULT_URL = "https://api.openai.com"
OPENAI_DEFAULT_MODEL = "gpt-4o-mini"
_SSE_FIELDS = frozenset({"event", "id", "retry"})


class OpenAIChat(HTTPChatProvider):
    """Streams `POST {base}/v1/chat/completions`; the base URL may or may not end in /v1.

    Args:
        base_url: Server root, e.g. "http://127.0.0.1:8080" or "https://api.openai.com/v1".
        model: Model name; servers with a single model often ignore it.
        api_key: Sent as a Bearer token when given; local servers need none.
        timeout: Longest silence in seconds before the answer starts or between pieces.
        connect_timeout: Seconds to wait for the TCP connection.
        max_retries: Extra tries on HTTP 429/5xx before any text arrived.
        sleep: Waits between retries; tests pass a recorder.
        transport: httpx transport override, for tests (keyword only).
    """

    id = "openai"
    server_name = "OpenAI-compatible"
    key_env_var = "OPENAI_API_KEY"

    @property
    def chat_url(self) -> str:
        """`{root}/v1/chat/completions`."""
        return f"{strip_suffix(self.base_url, '/v1')}/v1/chat/completions"

    @property
    def models_url(self) -> str:
        """`{root}/v1/models`."""
        return f"{strip_suffix(self.base_url, '/v1')}/v1/models"

    def _payload(
        self, messages: list[ChatMessage], temperature: float, max_tokens: int | None
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": temperature,
            "stream": True,
        }
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        return payload

    def _feed(self, line: str, state: StreamState) -> str | None:
        if line.startswith(":"):
            return None  # SSE comment, used as a keep-alive
        field, colon, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if not colon:
            return self._plain_line(line)
        if field == "error":  # llama.cpp's server has used a bare `error:` field
            raise self._stream_error(self._json(value))
        if field in _SSE_FIELDS:
            return None
        if field != "data":
            return self._plain_line(line)
        if value.strip() == "[DONE]":
            state.done = True
            return None
        chunk = self._json(value)
        if "error" in chunk:
            raise self._stream_error(chunk)
        choices = chunk.get("choices")
        if not choices:
            return None  # usage-only or prompt-filter chunks carry no text
        if not isinstance(choices, list) or not isinstance(choices[0], dict):
            raise self._bad_line("'choices' is not a list of objects")
        delta = choices[0].get("delta")
        # The first chunk often has `"content": null` or only a role.
        content = delta.get("content") if isinstance(delta, dict) else None
        return content if isinstance(content, str) and content else None

    def _plain_line(self, line: str) -> str | None:
        """A line outside SSE framing: a JSON error body is reported, anything else is a protocol fault."""
        body = self._json(line)
        if "error" in body:
            raise self._stream_error(body)
        raise self._bad_line("not a server-sent event")

    def _model_names(self, body: Any) -> list[str]:
        return [item["id"] for item in body["data"]]
