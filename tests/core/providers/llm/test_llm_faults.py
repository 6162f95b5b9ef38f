"""Faults: every failure becomes an LLMError with a code, a message naming the server, and no key."""

from __future__ import annotations

import threading
import time

import pytest

from core.providers.llm import ChatMessage, LLMError, OpenAIChat
from tests.core.providers.llm.fake_server import (
    KEY,
    Providers,
    Reply,
    ScriptedServer,
    anthropic_stream,
    json_reply,
    ollama_stream,
    openai_chunk,
    openai_stream,
    sse,
)

MESSAGES = [ChatMessage("user", "Where is the spare key?")]


def collect(deltas: object) -> tuple[list[str], LLMError]:
    """Read a stream that must fail; return what arrived before the error, and the error."""
    got: list[str] = []
    with pytest.raises(LLMError) as caught:
        for delta in deltas:  # type: ignore[attr-defined]
            got.append(delta)
    return got, caught.value


def test_401_is_unauthorized_and_the_message_never_contains_the_key(
    server: ScriptedServer, providers: Providers
) -> None:
    body = {"error": {"message": f"Incorrect API key provided: {KEY}", "code": "invalid_api_key"}}
    server.queue(json_reply(401, body))
    _, error = collect(providers.openai().stream(MESSAGES))
    assert error.code == "unauthorized"
    assert KEY not in str(error) and KEY not in repr(error)
    assert server.url in str(error) and "OPENAI_API_KEY" in str(error)
    assert providers.sleeps.waits == []  # a wrong key is not retried


def test_an_error_echoing_the_key_is_scrubbed(server: ScriptedServer, providers: Providers) -> None:
    server.queue(json_reply(400, {"error": {"message": f"bad header value {KEY}"}}))
    _, error = collect(providers.openai().stream(MESSAGES))
    assert error.code == "bad_response"
    assert KEY not in str(error) and "***" in str(error)


def test_404_is_unknown_model_naming_the_model(server: ScriptedServer, providers: Providers) -> None:
    body = {"error": {"message": "The model `smollm2` does not exist", "code": "model_not_found"}}
    server.queue(json_reply(404, body))
    _, error = collect(providers.openai().stream(MESSAGES))
    assert error.code == "unknown_model"
    assert "'smollm2'" in str(error) and server.url in str(error)


def test_ollama_model_not_found_suggests_pulling_it(server: ScriptedServer, providers: Providers) -> None:
    server.queue(json_reply(404, {"error": "model 'llama3.2' not found, try pulling it first"}))
    _, error = collect(providers.ollama().stream(MESSAGES))
    assert error.code == "unknown_model"
    assert "ollama pull llama3.2" in str(error)


def test_400_maximum_context_length_is_context_too_long(server: ScriptedServer, providers: Providers) -> None:
    message = "This model's maximum context length is 2048 tokens. However, you requested 3001 tokens."
    server.queue(json_reply(400, {"error": {"message": message, "code": "context_length_exceeded"}}))
    _, error = collect(providers.openai().stream(MESSAGES))
    assert error.code == "context_too_long"
    assert "2048 tokens" in str(error)


def test_429_waits_for_retry_after_then_succeeds(server: ScriptedServer, providers: Providers) -> None:
    server.queue(json_reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "7"}),
                 Reply(pieces=openai_stream("after ", "waiting")))
    assert "".join(providers.openai().stream(MESSAGES)) == "after waiting"
    assert providers.sleeps.waits == [7.0]
    assert len(server.requests) == 2


def test_retry_after_is_capped_at_30_seconds(server: ScriptedServer, providers: Providers) -> None:
    server.queue(json_reply(429, {}, {"Retry-After": "3600"}), Reply(pieces=openai_stream("ok")))
    assert list(providers.openai().stream(MESSAGES)) == ["ok"]
    assert providers.sleeps.waits == [30.0]


def test_500_then_success_backs_off_once(server: ScriptedServer, providers: Providers) -> None:
    server.queue(json_reply(500, {"error": "boom"}), Reply(pieces=ollama_stream("fine")))
    assert list(providers.ollama().stream(MESSAGES)) == ["fine"]
    assert providers.sleeps.waits == [0.5]


def test_500_forever_gives_up_with_server_error_after_max_retries(
    server: ScriptedServer, providers: Providers
) -> None:
    server.queue(*[json_reply(503, {"error": {"message": "overloaded"}}) for _ in range(4)])
    _, error = collect(providers.openai(max_retries=3).stream(MESSAGES))
    assert error.code == "server_error"
    assert len(server.requests) == 4
    assert providers.sleeps.waits == [0.5, 1.0, 2.0]
    assert "4 attempts" in str(error) and "HTTP 503" in str(error)


def test_429_forever_is_rate_limited_with_the_servers_wait(server: ScriptedServer, providers: Providers) -> None:
    server.queue(*[json_reply(429, {}, {"Retry-After": "2"}) for _ in range(2)])
    _, error = collect(providers.openai(max_retries=1).stream(MESSAGES))
    assert error.code == "rate_limited" and error.retry_after == 2.0


def test_anthropic_overloaded_event_before_any_text_is_retried(server: ScriptedServer, providers: Providers) -> None:
    overloaded = sse({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "error")
    server.queue(Reply(pieces=[overloaded]), Reply(pieces=anthropic_stream("second ", "try")))
    assert "".join(providers.anthropic().stream(MESSAGES)) == "second try"
    assert providers.sleeps.waits == [0.5]


@pytest.mark.parametrize(
    ("error_type", "message", "code"),
    [
        ("authentication_error", "invalid x-api-key", "unauthorized"),
        ("not_found_error", "model: claude-9", "unknown_model"),
        ("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", "context_too_long"),
    ],
)
def test_anthropic_error_types_map_to_codes(
    server: ScriptedServer, providers: Providers, error_type: str, message: str, code: str
) -> None:
    status = {"authentication_error": 401, "not_found_error": 404}.get(error_type, 400)
    server.queue(json_reply(status, {"type": "error", "error": {"type": error_type, "message": message}}))
    _, error = collect(providers.anthropic().stream(MESSAGES))
    assert error.code == code


def test_no_retry_once_text_has_been_yielded(server: ScriptedServer, providers: Providers) -> None:
    pieces = [openai_chunk("partial"), sse({"error": {"message": "upstream failed", "type": "server_error"}})]
    server.queue(Reply(pieces=pieces))
    got, error = collect(providers.openai().stream(MESSAGES))
    assert got == ["partial"] and error.code == "server_error"
    assert len(server.requests) == 1 and providers.sleeps.waits == []


def test_read_timeout_is_timeout(server: ScriptedServer, providers: Providers) -> None:
    server.queue(Reply(pieces=openai_stream("late"), delay_s=1.5))
    t0 = time.perf_counter()
    _, error = collect(providers.openai(timeout=0.5).stream(MESSAGES))
    assert error.code == "timeout"
    assert time.perf_counter() - t0 < 1.4
    assert "0.5 s" in str(error) and server.url in str(error)


def test_silence_mid_stream_is_timeout(server: ScriptedServer, providers: Providers) -> None:
    server.queue(Reply(pieces=[openai_chunk("a"), openai_chunk("b")], gap_s=0.8))
    _, error = collect(providers.openai(timeout=0.5).stream(MESSAGES))
    assert error.code == "timeout"


def test_connection_refused_names_the_url(providers: Providers, closed_port: int) -> None:
    url = f"http://127.0.0.1:{closed_port}"
    _, error = collect(providers.openai(url).stream(MESSAGES))
    assert error.code == "connection_refused"
    assert f"{url}/v1/chat/completions" in str(error)
    assert providers.sleeps.waits == []


def test_a_base_url_that_is_not_http_is_refused_up_front() -> None:
    with pytest.raises(LLMError) as caught:
        OpenAIChat("localhost:8080", "m")
    assert caught.value.code == "connection_refused"


def test_stream_cut_off_without_done_yields_the_text_then_reports_truncation(
    server: ScriptedServer, providers: Providers
) -> None:
    server.queue(Reply(pieces=openai_stream("half ", "an ", "answer", done=False)[:3], finish=False))
    got, error = collect(providers.openai().stream(MESSAGES))
    assert got == ["half ", "an "]
    assert error.code == "bad_response" and "truncated" in str(error)


def test_stream_that_ends_cleanly_but_without_done_is_truncated(server: ScriptedServer, providers: Providers) -> None:
    server.queue(Reply(pieces=openai_stream("all ", "of it", done=False)))
    got, error = collect(providers.openai().stream(MESSAGES))
    assert got == ["all ", "of it"] and error.code == "bad_response"


def test_stream_that_ends_before_any_text_is_bad_response(server: ScriptedServer, providers: Providers) -> None:
    server.queue(Reply(pieces=[openai_chunk(None, role="assistant")], finish=False))
    got, error = collect(providers.openai().stream(MESSAGES))
    assert got == [] and error.code == "bad_response" and "ended early" in str(error)


def test_ollama_stream_without_done_is_truncated(server: ScriptedServer, providers: Providers) -> None:
    server.queue(Reply(pieces=ollama_stream("one ", "two")[:-1]))
    got, error = collect(providers.ollama().stream(MESSAGES))
    assert got == ["one ", "two"] and error.code == "bad_response"


@pytest.mark.parametrize("line", [b"data: {not json\n\n", b"data: [1, 2]\n\n", b"garbage line\n"])
def test_malformed_line_is_bad_response(server: ScriptedServer, providers: Providers, line: bytes) -> None:
    server.queue(Reply(pieces=[openai_chunk("ok"), line, sse("[DONE]")]))
    got, error = collect(providers.openai().stream(MESSAGES))
    assert got == ["ok"] and error.code == "bad_response"


def test_malformed_ndjson_is_bad_response(server: ScriptedServer, providers: Providers) -> None:
    server.queue(Reply(pieces=[b'{"message": {"content": "a"}, "done": false}\n', b"{oops\n"]))
    got, error = collect(providers.ollama().stream(MESSAGES))
    assert got == ["a"] and error.code == "bad_response"


def test_empty_200_stream_suggests_the_prompt_is_too_long(server: ScriptedServer, providers: Providers) -> None:
    server.queue(Reply(pieces=[]))
    got, error = collect(providers.openai().stream(MESSAGES))
    assert got == []
    assert error.code == "context_too_long"
    assert "context" in str(error) and server.url in str(error)
    assert providers.sleeps.waits == []


def test_connection_dropped_before_any_line_blames_the_server_not_the_prompt(
    server: ScriptedServer, providers: Providers
) -> None:
    server.queue(Reply(pieces=[], finish=False))
    _, error = collect(providers.openai().stream(MESSAGES))
    assert error.code == "bad_response" and "crashed" in str(error)


def test_cancel_mid_stream_closes_the_connection_promptly(server: ScriptedServer, providers: Providers) -> None:
    server.queue(Reply(pieces=openai_stream(*[f"w{i} " for i in range(40)]), gap_s=0.05))
    cancel = threading.Event()
    got: list[str] = []
    with pytest.raises(LLMError) as caught:
        for delta in providers.openai().stream(MESSAGES, cancel=cancel):
            got.append(delta)
            if len(got) == 2:
                cancel.set()
                t_cancel = time.perf_counter()
    assert time.perf_counter() - t_cancel < 0.2
    assert caught.value.code == "cancelled"
    assert got == ["w0 ", "w1 "]
    assert server.client_hung_up.wait(3), "the server kept streaming into an open connection"
    assert server.pieces_sent < 20


def test_cancel_before_start_sends_nothing(server: ScriptedServer, providers: Providers) -> None:
    cancel = threading.Event()
    cancel.set()
    _, error = collect(providers.openai().stream(MESSAGES, cancel=cancel))
    assert error.code == "cancelled" and server.requests == []


def test_cancel_during_a_retry_wait_stops_without_another_request(server: ScriptedServer) -> None:
    server.queue(json_reply(503, {}, {"Retry-After": "10"}))
    cancel = threading.Event()

    def press_stop_once_the_request_was_answered() -> None:
        deadline = time.monotonic() + 5
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)
        cancel.set()

    with OpenAIChat(server.url, "m") as chat:  # real time.sleep: waits on the event instead
        threading.Thread(target=press_stop_once_the_request_was_answered, daemon=True).start()
        t0 = time.perf_counter()
        _, error = collect(chat.stream(MESSAGES, cancel=cancel))
    assert error.code == "cancelled"
    assert time.perf_counter() - t0 < 3  # not the 10 s the server asked for
    assert len(server.requests) == 1
