"""The pure mapping from HTTP status and server text to an error code, and the retry wait."""

from __future__ import annotations

import pytest

from core.providers.llm.faults import classify, retry_delay
from core.providers.net import safe_url


@pytest.mark.parametrize(
    ("status", "text", "code"),
    [
        (401, "invalid api key", "unauthorized"),
        (403, "", "unauthorized"),
        (404, "page not found", "unknown_model"),
        (400, "The model `gpt-9` does not exist", "unknown_model"),
        (400, "This model's maximum context length is 8192 tokens", "context_too_long"),
        (400, "the request exceeds the available context size", "context_too_long"),
        (400, "prompt is too long", "context_too_long"),
        (413, "Payload Too Large", "context_too_long"),
        (500, "input is too long for the context window", "context_too_long"),
        (429, "slow down", "rate_limited"),
        (500, "boom", "server_error"),
        (503, "", "server_error"),
        (400, "temperature must be between 0 and 2", "bad_response"),
        (None, "upstream failed", "server_error"),
        (None, "Rate limit reached", "rate_limited"),
    ],
)
def test_classify(status: int | None, text: str, code: str) -> None:
    assert classify(status, text) == code


def test_retry_delay_doubles_from_half_a_second_and_honours_the_server_up_to_30_s() -> None:
    assert [retry_delay(None, attempt) for attempt in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, 4.0]
    assert retry_delay(7.0, 1) == 7.0
    assert retry_delay(3600.0, 1) == 30.0
    assert retry_delay(-5.0, 1) == 0.0


def test_safe_url_drops_credentials_and_query() -> None:
    assert safe_url("https://bob:s3cret@proxy.example/v1?key=abc") == "https://proxy.example/v1"
