"""Embedders that call a server: OpenAI-compatible APIs and Ollama.

Both share one HTTP loop: batches of 64, retries with exponential backoff on
429 and 5xx (honouring `Retry-After`), and every failure turned into an
`EmbedderUnavailable` with a reason code and a message the user can act on.
The API key goes only into the Authorization header; it is never logged,
never put in an error message and never shown by `repr`.
"""

from __future__ import annotations

import email.utils
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, Self

import httpx
import numpy as np

from core.providers.embedding.base import (
    EmbedderUnavailable,
    EmbeddingCancelled,
    ProgressCallback,
    l2_normalise,
)
from core.providers.net import http_client, safe_url

BATCH_SIZE = 64
MAX_ATTEMPTS = 4
BACKOFF_BASE_S = 0.5
MAX_WAIT_S = 30.0
# Servers rarely say; 512 is the limit of most local embedding models, and
# chunkers aim well below it anyway.
DEFAULT_MAX_TOKENS = 512
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class _RemoteEmbedder(ABC):
    """The HTTP loop both remote embedders share; subclasses shape the JSON."""

    provider: str = ""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 30.0,
        dims: int | None = None,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        batch_size: int = BATCH_SIZE,
        max_attempts: int = MAX_ATTEMPTS,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        """Prepare a client; no request is made until texts are embedded.

        Args:
            base_url: Server root, e.g. "http://127.0.0.1:11434".
            model: Model name as the server knows it.
            api_key: Sent as a Bearer token when given.
            timeout: Seconds to wait for connect and for each response.
            dims: Expected vector length; discovered from the first response
                when None.
            max_tokens: Longest input the model reads, for chunkers.
            batch_size: Texts per request.
            max_attempts: Tries per batch on 429/5xx, including the first.
            sleep: Waits between retries; tests pass a recorder.
            transport: httpx transport override, for tests.
        """
        if not model:
            raise ValueError("An embedding model name is required")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.model_id = model
        self.model_hash = f"{self.provider}:{safe_url(self.base_url)}:{model}"  # stored with the vectors: no credentials
        self.max_tokens = max_tokens
        self._api_key = api_key or None
        self._dims = dims
        self._timeout = timeout
        self._batch_size = batch_size
        self._max_attempts = max(1, max_attempts)
        self._sleep = sleep
        headers = {"Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        self._client = http_client(self.base_url, headers, timeout, transport=transport)
        self._dims_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={safe_url(self.base_url)!r}, model={self.model!r})"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Release pooled connections."""
        self._client.close()

    @property
    @abstractmethod
    def endpoint(self) -> str:
        """The URL embeddings are POSTed to."""

    @property
    def dims(self) -> int:
        """Vector length; asks the server with a one-word probe if not yet known.

        The vector index must know its width before the first document is
        embedded, and servers do not advertise it.
        """
        if self._dims is None:
            self.embed_query("dimension probe")
        assert self._dims is not None
        return self._dims

    def embed_documents(
        self,
        texts: Sequence[str],
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> np.ndarray:
        """Embed texts in requests of up to 64, in order.

        Args:
            texts: Texts to embed.
            progress: Called after each request with (done, total).
            cancel: Checked before each request.

        Returns:
            float32 array (len(texts), dims), rows unit length.

        Raises:
            EmbedderUnavailable: The server refused, failed or answered oddly.
            EmbeddingCancelled: `cancel` was set.
        """
        texts = list(texts)
        total = len(texts)
        if total == 0:
            return np.zeros((0, self._dims or 0), dtype=np.float32)
        parts: list[np.ndarray] = []
        done = 0
        for start in range(0, total, self._batch_size):
            if cancel is not None and cancel.is_set():
                raise EmbeddingCancelled(f"Embedding cancelled after {done} of {total} texts")
            batch = texts[start : start + self._batch_size]
            parts.append(self._embed_batch(batch))
            done += len(batch)
            if progress is not None:
                progress(done, total)
        return np.concatenate(parts, axis=0)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query, shape (dims,)."""
        return self.embed_documents([text])[0]

    @abstractmethod
    def _payload(self, texts: list[str]) -> dict[str, Any]:
        ...

    @abstractmethod
    def _vectors(self, body: Any) -> list[list[float]]:
        ...

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        try:
            return self._embed_batch_unchecked(texts)
        except EmbedderUnavailable as exc:
            exc.model_hash = self.model_hash  # which embedder failed, for the engine to set it aside
            raise

    def _embed_batch_unchecked(self, texts: list[str]) -> np.ndarray:
        body = self._post(self._payload(texts))
        try:
            vectors = np.asarray(self._vectors(body), dtype=np.float32)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise self._bad_response("its JSON has no embeddings in the expected place") from exc
        if vectors.ndim != 2 or vectors.shape[0] != len(texts) or vectors.shape[1] == 0:
            raise self._bad_response(
                f"expected {len(texts)} vectors, got an array of shape {vectors.shape}"
            )
        with self._dims_lock:
            if self._dims is None:
                self._dims = int(vectors.shape[1])
        if vectors.shape[1] != self._dims:
            raise self._bad_response(
                f"vectors have {vectors.shape[1]} dimensions, expected {self._dims}"
            )
        return l2_normalise(vectors)

    def _post(self, payload: dict[str, Any]) -> Any:
        url, shown = self.endpoint, safe_url(self.endpoint)  # messages never carry user:password@
        for attempt in range(1, self._max_attempts + 1):
            try:
                response = self._client.post(url, json=payload)
            except httpx.TimeoutException as exc:
                raise EmbedderUnavailable(
                    "timeout",
                    f"{shown} did not answer within {self._timeout:g} s. The server may be "
                    "overloaded or still loading the model; try again or raise the timeout.",
                ) from exc
            except httpx.ConnectError as exc:
                raise EmbedderUnavailable(
                    "connection_refused",
                    f"Cannot connect to {shown}. Is the {self._server_name()} server running "
                    "at that address?",
                ) from exc
            except httpx.HTTPError as exc:
                raise EmbedderUnavailable(
                    "http_error", f"Request to {shown} failed: {self._redact(str(exc))}"
                ) from exc
            status = response.status_code
            if status in _RETRY_STATUSES and attempt < self._max_attempts:
                self._sleep(_retry_delay(response, attempt))
                continue
            if status >= 400:
                raise self._status_error(response)
            try:
                return response.json()
            except ValueError as exc:
                raise self._bad_response("it is not valid JSON") from exc
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _status_error(self, response: httpx.Response) -> EmbedderUnavailable:
        url, status = safe_url(self.endpoint), response.status_code
        if status in (401, 403):
            # The body is deliberately left out: some servers echo part of the key.
            return EmbedderUnavailable(
                "unauthorized",
                f"{url} rejected the request (HTTP {status}). Check the API key in Settings.",
            )
        detail = self._redact(_error_detail(response))
        lowered = detail.lower()
        model_error = "model" in lowered and ("not found" in lowered or "does not exist" in lowered)
        if status == 404 or model_error:
            return EmbedderUnavailable(
                "unknown_model",
                f"{url} does not know the model {self.model!r} (HTTP {status}"
                + (f": {detail}" if detail else "")
                + "). Check the model name"
                + (", or pull it with `ollama pull`." if self.provider == "ollama" else "."),
            )
        return EmbedderUnavailable(
            "http_error",
            f"{url} answered HTTP {status}" + (f": {detail}" if detail else "") + ".",
        )

    def _bad_response(self, why: str) -> EmbedderUnavailable:
        return EmbedderUnavailable(
            "http_error",
            f"{safe_url(self.endpoint)} returned an unexpected response: {why}. Is this an "
            f"{self._server_name()} embeddings endpoint?",
        )

    def _redact(self, text: str) -> str:
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text

    def _server_name(self) -> str:
        return "Ollama" if self.provider == "ollama" else "OpenAI-compatible"


class OpenAIEmbedder(_RemoteEmbedder):
    """OpenAI's `/v1/embeddings`, or any server that copies it (llama.cpp, vLLM, LM Studio)."""

    provider = "openai"

    @property
    def endpoint(self) -> str:
        """`{base_url}/v1/embeddings`, accepting a base URL that already ends in /v1."""
        root = self.base_url
        if root.endswith("/v1"):
            root = root[: -len("/v1")]
        return f"{root}/v1/embeddings"

    def _payload(self, texts: list[str]) -> dict[str, Any]:
        return {"model": self.model, "input": texts, "encoding_format": "float"}

    def _vectors(self, body: Any) -> list[list[float]]:
        # The spec allows items out of order; `index` says where each belongs.
        items = sorted(body["data"], key=lambda item: item.get("index", 0))
        return [item["embedding"] for item in items]


class OllamaEmbedder(_RemoteEmbedder):
    """Ollama's batch endpoint `/api/embed` (Ollama 0.3.4 and later)."""

    provider = "ollama"

    @property
    def endpoint(self) -> str:
        """`{base_url}/api/embed`."""
        return f"{self.base_url}/api/embed"

    def _payload(self, texts: list[str]) -> dict[str, Any]:
        return {"model": self.model, "input": texts}

    def _vectors(self, body: Any) -> list[list[float]]:
        return list(body["embeddings"])


def _retry_delay(response: httpx.Response, attempt: int) -> float:
    """Seconds to wait before try `attempt + 1`.

    `Retry-After` (seconds or an HTTP date) wins when present, because rate
    limiters know their window; otherwise 0.5, 1, 2 s. Capped at 30 s so a
    misconfigured server cannot freeze indexing.
    """
    header = response.headers.get("Retry-After")
    delay: float | None = None
    if header:
        try:
            delay = float(header)
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(header)
                delay = when.timestamp() - time.time()
            except (TypeError, ValueError):
                delay = None
    if delay is None or delay != delay:  # missing, unparsable or NaN
        delay = BACKOFF_BASE_S * 2 ** (attempt - 1)
    return min(max(delay, 0.0), MAX_WAIT_S)


def _error_detail(response: httpx.Response) -> str:
    """The server's own error text, short enough for a status line."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:200]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        error = error.get("message")
    return str(error or "")[:200]
