"""How chat-server failures become codes and sentences the user can act on.

Pure functions, apart from reading a response's headers: which code an HTTP
status and error text deserve, how long to wait before a retry, and the
message for each code. Every message names the server address (without
credentials or query string) and the model.
"""

from __future__ import annotations

import email.utils
import time
from typing import Any

import httpx

from core.providers.llm.base import LLMErrorCode

BACKOFF_BASE_S = 0.5
MAX_WAIT_S = 30.0
DETAIL_CHARS = 200
#: Codes worth another try, as long as no text has reached the caller yet.
RETRYABLE: frozenset[str] = frozenset({"rate_limited", "server_error"})
# Phrases servers use when the prompt does not fit (OpenAI, llama.cpp, vLLM,
# Anthropic, Ollama). Bare "context" is only trusted on a 4xx (see classify).
_CONTEXT_PHRASES = (
    "context length",
    "context_length",
    "context window",
    "context size",
    "maximum context",
    "too long",
    "too many tokens",
    "exceeds the available context",
)
_MODEL_MISSING_PHRASES = ("not found", "does not exist", "no such", "unknown model", "model_not_found")


def describe(
    code: LLMErrorCode,
    *,
    where: str,
    model: str,
    status: int | None,
    detail: str,
    key_env_var: str | None = None,
    pull_hint: str = "",
) -> str:
    """The sentence for an error the server reported (HTTP status, or None inside a stream).

    Args:
        code: From `classify` or a provider's own mapping.
        where: The endpoint, already passed through `safe_url`.
        model: Model name as configured.
        status: HTTP status, None for an error event inside a 200 stream.
        detail: The server's own words; left out for "unauthorized" because
            some servers echo part of the key.
        key_env_var: Environment variable that can hold the key, for the advice.
        pull_hint: Extra remedy for a missing model, e.g. "run `ollama pull x`".
    """
    how = f"HTTP {status}" if status is not None else "error in the stream"
    said = f"{how}: {detail[:DETAIL_CHARS]}" if detail else how
    if code == "unauthorized":
        env = f" or the {key_env_var} environment variable" if key_env_var else ""
        return f"{where} rejected the request ({how}). Check the API key in Settings{env}."
    if code == "unknown_model":
        hint = f", or {pull_hint}" if pull_hint else ""
        return f"{where} does not know the model {model!r} ({said}). Check the model name{hint}."
    if code == "context_too_long":
        return (
            f"The prompt is too long for {model!r} at {where} ({said}). Ask about fewer notes, lower the "
            "context size in Settings, or use a model with a larger context window."
        )
    if code == "rate_limited":
        return f"{where} is limiting requests for {model!r} ({said}). Wait a moment and try again."
    if code == "server_error":
        return f"{where} failed while answering with {model!r} ({said}). Try again later."
    return f"{where} rejected the request for {model!r} ({said})."


def ended_early(
    where: str, model: str, *, yielded: bool, saw_line: bool, dropped: bool
) -> tuple[LLMErrorCode, str]:
    """Code and sentence for a stream that stopped without its end marker.

    Text already shown stays, but the caller must mark the answer incomplete.
    An empty 200 stream that ends cleanly is how llama.cpp reports a prompt
    longer than its context, so that case points at the prompt length; a
    connection that breaks before any line more likely means the server died.
    """
    if yielded:
        return "bad_response", (
            f"The answer from {model!r} at {where} was truncated: the stream ended before the server "
            "said it was finished."
        )
    if dropped and not saw_line:
        return "bad_response", (
            f"{where} closed the connection before sending any of the answer from {model!r}. The server "
            "may have crashed; check its log and try again."
        )
    if not saw_line:
        return "context_too_long", (
            f"{where} accepted the request but sent an empty answer stream for {model!r}. The prompt is "
            "probably longer than the model's context window (llama.cpp answers that way); ask about "
            "fewer notes or start the server with a larger context (--n_ctx)."
        )
    return "bad_response", f"The stream from {where} for {model!r} ended early, before any text arrived."


def classify(status: int | None, text: str) -> LLMErrorCode:
    """The error code for an HTTP status (None inside a stream) and the server's error text.

    Order matters: "maximum context length of this model" mentions the model
    but is a length problem, and a 404 is a missing model on a chat endpoint.
    """
    low = text.lower()
    if status in (401, 403):
        return "unauthorized"
    weak_context = status in (None, 400, 413, 422) and "context" in low
    if status == 413 or weak_context or any(p in low for p in _CONTEXT_PHRASES):
        return "context_too_long"
    if status == 404 or ("model" in low and any(p in low for p in _MODEL_MISSING_PHRASES)):
        return "unknown_model"
    if status == 429 or (status is None and "rate limit" in low):
        return "rate_limited"
    if status is None or status >= 500:
        return "server_error"
    return "bad_response"


def error_detail(body: Any) -> tuple[str, str]:
    """(message, kind) from the usual error bodies: {"error": {...}}, {"error": "..."}, {"detail": ...}."""
    if isinstance(body, str):
        return body.strip()[:DETAIL_CHARS], ""
    if not isinstance(body, dict):
        return "", ""
    error = body.get("error", body.get("detail"))
    if isinstance(error, dict):
        kind = error.get("code") or error.get("type") or ""
        return str(error.get("message") or "")[:DETAIL_CHARS], str(kind)
    return str(error or "")[:DETAIL_CHARS], ""


def retry_delay(retry_after: float | None, attempt: int) -> float:
    """Seconds to wait before try `attempt + 1`.

    The server's `Retry-After` wins when present, because rate limiters know
    their window; otherwise 0.5, 1, 2 s... Capped at 30 s so a misconfigured
    server cannot freeze the Ask pane.
    """
    delay = BACKOFF_BASE_S * 2 ** (attempt - 1) if retry_after is None else retry_after
    return min(max(delay, 0.0), MAX_WAIT_S)


def retry_after_seconds(response: httpx.Response) -> float | None:
    """The server's `Retry-After` in seconds (a number or an HTTP date), or None."""
    header = response.headers.get("Retry-After")
    if not header:
        return None
    try:
        delay = float(header)
    except ValueError:
        try:
            delay = email.utils.parsedate_to_datetime(header).timestamp() - time.time()
        except (TypeError, ValueError):
            return None
    return None if delay != delay else delay  # NaN
