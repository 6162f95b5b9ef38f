"""Ollama's native chat API.

`POST /api/chat` with `"stream": true` answers with one JSON object per line
(NDJSON): `{"message": {"content": "..."}, "done": false}` pieces and a final
`{"done": true, ...}`. Errors come as `{"error": "..."}`, with an HTTP status
before the stream starts or as a line inside it.
"""

from __future__ import annotations

from typing import Any

from core.providers.llm.base import ChatMessage
from core.providers.llm.http_stream import HTTPChatProvider, StreamState, strip_suffix

OLLAMA_DEFAULT_URL = "http://127.0.0.1:11434"
OLLAMA_DEFAULT_MODEL = "llama3.2"


class OllamaChat(HTTPChatProvider):
    """Streams `POST {base}/api/chat` from an Ollama server.

    Args:
        base_url: Server root; Ollama's default port on this machine unless given.
        model: Model tag, e.g. "llama3.2" or "qwen2.5:7b".
        api_key: Sent as a Bearer token when given, for Ollama behind an
            authenticating proxy; plain Ollama needs none.
        timeout: Longest silence in seconds; Ollama may first load the model.
        connect_timeout: Seconds to wait for the TCP connection.
        max_retries: Extra tries on HTTP 429/5xx before any text arrived.
        sleep: Waits between retries; tests pass a recorder.
        transport: httpx transport override, for tests (keyword only).
    """

    id = "ollama"
    server_name = "Ollama"
    key_env_var = None

    default_base_url = OLLAMA_DEFAULT_URL
    default_model = OLLAMA_DEFAULT_MODEL

    @property
    def chat_url(self) -> str:
        """`{root}/api/chat`."""
        return f"{strip_suffix(self.base_url, '/api')}/api/chat"

    @property
    def models_url(self) -> str:
        """`{root}/api/tags`, the list of pulled models."""
        return f"{strip_suffix(self.base_url, '/api')}/api/tags"

    def _payload(
        self, messages: list[ChatMessage], temperature: float, max_tokens: int | None
    ) -> dict[str, Any]:
        options: dict[str, Any] = {"temperature": temperature}
        if max_tokens is not None:
            options["num_predict"] = max_tokens
        return {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "stream": True,
            "options": options,
        }

    def _feed(self, line: str, state: StreamState) -> str | None:
        chunk = self._json(line)
        if chunk.get("error"):
            raise self._stream_error(chunk)
        message = chunk.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if chunk.get("done") is True:
            state.done = True
        return content if isinstance(content, str) and content else None

    def _model_names(self, body: Any) -> list[str]:
        return [item.get("name") or item["model"] for item in body["models"]]
