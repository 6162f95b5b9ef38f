"""The streaming HTTP loop every chat provider shares.

OpenAI-compatible servers, Ollama and Anthropic differ only in the JSON they
take and the lines they stream back; connecting, retrying, cancelling and
turning failures into an `LLMError` the user can act on is the same for all
three, so it lives here once. A subclass supplies the endpoint, the request
body and a line parser.

The API key goes only into a request header; it is never logged, never put in
an error message (server text is scrubbed of it too) and never shown by `repr`.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Self
from urllib.parse import urlsplit

import httpx

from core.providers.llm.base import ChatMessage, LLMError, LLMErrorCode
from core.providers.llm.faults import (
    RETRYABLE,
    classify,
    describe,
    ended_early,
    error_detail,
    retry_after_seconds,
    retry_delay,
)
from core.providers.net import http_client, safe_url


@dataclass(slots=True)
class StreamState:
    """What one response's parser has seen so far.

    Attributes:
        done: The server sent its end-of-stream marker.
        saw_line: Any non-blank line arrived; an empty 200 stream is how
            llama.cpp reports a prompt longer than its context.
        yielded: Some text reached the caller, so retrying would repeat it.
        dropped: The connection broke mid-body (a crash, a proxy cut-off)
            rather than the body ending cleanly.
    """

    done: bool = False
    saw_line: bool = False
    yielded: bool = False
    dropped: bool = False


class HTTPChatProvider(ABC):
    """Base for chat providers that stream over HTTP; subclasses shape the JSON.

    Attributes:
        id: Registry key, set by each subclass.
        model: Model name as the server knows it.
        remote: Always True: even a server on this machine is another process.
        base_url: Server root as given, without a trailing slash.
    """

    id: str = ""
    server_name: str = "chat"
    key_env_var: str | None = None
    remote: bool = True
    default_base_url: str | None = None  # subclasses with a well-known server set these
    default_model: str | None = None

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        connect_timeout: float = 5.0,
        max_retries: int = 3,
        sleep: Callable[[float], None] = time.sleep,
        *,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        """Prepare a client; nothing is contacted until a stream is read.

        Args:
            base_url: Server root, e.g. "http://127.0.0.1:11434".
            model: Model name as the server knows it.
            api_key: Sent in the provider's auth header when given.
            timeout: Longest silence, in seconds, while waiting for the answer
                to start or for its next piece. Generous by default because a
                local model may first have to load.
            connect_timeout: Seconds to wait for the TCP connection, short so a
                wrong address fails fast.
            max_retries: Extra tries on HTTP 429/5xx before any text arrived.
            sleep: Waits between retries; tests pass a recorder. With the
                default, a set cancel event also cuts the wait short.
            transport: httpx transport override, for tests.

        Raises:
            LLMError: "connection_refused" when `base_url` is not an http(s) address.
        """
        base_url = base_url or self.default_base_url or ""
        model = model or self.default_model
        if not model:
            raise ValueError("A model name is required")
        parts = urlsplit(base_url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise LLMError(
                "connection_refused",
                f"{safe_url(base_url)!r} is not a server address; it should look like "
                "http://127.0.0.1:11434 or https://api.example.com",
            )
        self.base_url = base_url.strip().rstrip("/")
        self.model = model
        self._api_key = api_key or None
        self._timeout = timeout
        self._max_retries = max(0, max_retries)
        self._sleep = sleep
        self._client = http_client(self.base_url, self._auth_headers(), timeout, connect_timeout=connect_timeout, transport=transport)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={safe_url(self.base_url)!r}, model={self.model!r})"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Release pooled connections."""
        self._client.close()

    # -- what subclasses supply -------------------------------------------------

    @property
    @abstractmethod
    def chat_url(self) -> str:
        """The URL chat requests are POSTed to."""

    @property
    @abstractmethod
    def models_url(self) -> str:
        """The URL that lists the server's models."""

    def _auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    @abstractmethod
    def _payload(
        self, messages: list[ChatMessage], temperature: float, max_tokens: int | None
    ) -> dict[str, Any]:
        ...

    @abstractmethod
    def _feed(self, line: str, state: StreamState) -> str | None:
        """Parse one non-blank line; return a text delta or None, set `state.done` at the end."""

    @abstractmethod
    def _model_names(self, body: Any) -> list[str]:
        ...

    def _classify(self, status: int | None, body: Any) -> tuple[LLMErrorCode, str]:
        """Map an error (HTTP status, or None inside a stream) to a code and the server's words."""
        detail, kind = error_detail(body)
        return classify(status, f"{detail} {kind}"), detail

    # -- public API ---------------------------------------------------------------

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        temperature: float = 0.2,
        max_tokens: int | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[str]:
        """Yield the answer's text as it arrives; see `ChatProvider.stream`."""
        messages = list(messages)
        if not messages:
            raise ValueError("At least one message is required")
        payload = self._payload(messages, temperature, max_tokens)
        return self._run(payload, cancel)

    def list_models(self) -> list[str]:
        """Ask the server which models it offers, for a "Test connection" button.

        Raises:
            LLMError: The server cannot be reached, refuses the key or does not
                answer like this kind of server.
        """
        url = self.models_url
        with self._transport_errors(url):
            response = self._client.get(url, headers={"Accept": "application/json"})
        if response.status_code == 404:
            raise self._error(
                "bad_response",
                f"{safe_url(url)} has no model list (HTTP 404). Is this an {self.server_name} "
                "server, and is the address right?",
            )
        if response.status_code >= 400:
            raise self._status_error(response)
        try:
            return [str(name) for name in self._model_names(response.json())]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise self._error(
                "bad_response",
                f"{safe_url(url)} did not return a model list. Is this an {self.server_name} server?",
            ) from exc

    # -- the loop -------------------------------------------------------------------

    def _run(self, payload: dict[str, Any], cancel: threading.Event | None) -> Iterator[str]:
        attempt = 0
        while True:
            self._check_cancel(cancel)
            attempt += 1
            state = StreamState()
            try:
                yield from self._attempt(payload, cancel, state)
                return
            except LLMError as exc:
                if exc.code not in RETRYABLE or state.yielded:
                    raise
                if attempt > self._max_retries:
                    if attempt == 1:
                        raise
                    raise LLMError(
                        exc.code, f"{exc.message} Gave up after {attempt} attempts.", retry_after=exc.retry_after
                    ) from exc
                self._wait(retry_delay(exc.retry_after, attempt), cancel)

    def _attempt(
        self, payload: dict[str, Any], cancel: threading.Event | None, state: StreamState
    ) -> Iterator[str]:
        url = self.chat_url
        with self._transport_errors(url), self._client.stream("POST", url, json=payload) as response:
            if response.status_code >= 400:
                response.read()
                raise self._status_error(response)
            for line in self._lines(response, cancel, state):
                state.saw_line = True
                delta = self._feed(line, state)
                if delta:
                    state.yielded = True
                    yield delta
                if state.done:
                    return
        raise self._ended_early(state)

    def _lines(
        self, response: httpx.Response, cancel: threading.Event | None, state: StreamState
    ) -> Iterator[str]:
        """Non-blank lines of the body; checks `cancel` before and after each read."""
        lines = response.iter_lines()
        while True:
            self._check_cancel(cancel)
            try:
                line = next(lines)
            except StopIteration:
                return
            except httpx.TimeoutException as exc:
                raise self._timeout_error() from exc
            except httpx.TransportError:
                state.dropped = True  # the caller reports an early end
                return
            self._check_cancel(cancel)
            if line.strip():
                yield line

    @contextlib.contextmanager
    def _transport_errors(self, url: str) -> Iterator[None]:
        """Turn httpx's connection-level exceptions into `LLMError`s naming the URL."""
        try:
            yield
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise self._error(
                "connection_refused",
                f"Cannot connect to {safe_url(url)}. Is the {self.server_name} server running at that address?",
            ) from exc
        except httpx.TimeoutException as exc:
            raise self._timeout_error() from exc
        except httpx.HTTPError as exc:
            raise self._error(
                "bad_response", f"{safe_url(url)} closed the connection without answering ({type(exc).__name__})."
            ) from exc

    def _wait(self, seconds: float, cancel: threading.Event | None) -> None:
        if cancel is not None and self._sleep is time.sleep:
            cancel.wait(seconds)  # wakes at once when the user presses Stop
        else:
            self._sleep(seconds)
        self._check_cancel(cancel)

    # -- errors ---------------------------------------------------------------------

    def _check_cancel(self, cancel: threading.Event | None) -> None:
        if cancel is not None and cancel.is_set():
            raise self._error("cancelled", f"Stopped waiting for {self.model!r} at {self._where}.")

    @property
    def _where(self) -> str:
        return safe_url(self.chat_url)

    def _error(self, code: LLMErrorCode, message: str, retry_after: float | None = None) -> LLMError:
        if self._api_key:
            message = message.replace(self._api_key, "***")
        return LLMError(code, message, retry_after=retry_after)

    def _timeout_error(self) -> LLMError:
        return self._error(
            "timeout",
            f"{self._where} sent nothing for {self._timeout:g} s while answering with {self.model!r}. "
            "The model may still be loading or the machine is busy; try again or raise the timeout.",
        )

    def _status_error(self, response: httpx.Response) -> LLMError:
        status = response.status_code
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text
        code, detail = self._classify(status, body)
        return self._coded_error(code, status, detail, retry_after_seconds(response))

    def _stream_error(self, body: Any) -> LLMError:
        """An error the server reported inside a 200 stream."""
        code, detail = self._classify(None, body)
        return self._coded_error(code, None, detail, None)

    def _coded_error(
        self, code: LLMErrorCode, status: int | None, detail: str, retry_after: float | None
    ) -> LLMError:
        message = describe(
            code,
            where=self._where,
            model=self.model,
            status=status,
            detail=detail,
            key_env_var=self.key_env_var,
            pull_hint=f"run `ollama pull {self.model}`" if self.id == "ollama" else "",
        )
        return self._error(code, message, retry_after)

    def _ended_early(self, state: StreamState) -> LLMError:
        return self._error(
            *ended_early(
                self._where, self.model, yielded=state.yielded, saw_line=state.saw_line, dropped=state.dropped
            )
        )

    def _bad_line(self, why: str) -> LLMError:
        return self._error(
            "bad_response",
            f"{self._where} sent a line that is not valid {self.server_name} streaming output ({why}).",
        )

    def _json(self, text: str) -> dict[str, Any]:
        """Decode one streamed JSON object, or raise `bad_response`."""
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise self._bad_line(f"malformed JSON: {text[:60]!r}") from exc
        if not isinstance(value, dict):
            raise self._bad_line(f"expected a JSON object, got {type(value).__name__}")
        return value


def strip_suffix(url: str, *suffixes: str) -> str:
    """`url` without a trailing slash and without the first matching suffix (e.g. "/v1")."""
    url = url.rstrip("/")
    for suffix in suffixes:
        if url.endswith(suffix):
            return url[: -len(suffix)]
    return url
