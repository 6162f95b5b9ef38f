"""Happy paths: each provider streams text deltas, in order, from a real HTTP server."""

from __future__ import annotations

import time

import pytest

from core.providers.llm import ChatMessage
from tests.core.providers.llm.fake_server import (
    KEY,
    Providers,
    Reply,
    ScriptedServer,
    anthropic_stream,
    ollama_stream,
    openai_chunk,
    openai_stream,
    sse,
)

MESSAGES = [
    ChatMessage("system", "Answer from the notes only."),
    ChatMessage("user", "Where is the spare key?"),
]


def test_openai_yields_each_delta_as_it_arrives_and_they_join_into_the_answer(
    server: ScriptedServer, providers: Providers
) -> None:
    server.queue(Reply(pieces=openai_stream("Under ", "the ", "blue ", "pot [1]."), gap_s=0.05))
    chat = providers.openai(server.url + "/v1")
    arrivals: list[tuple[str, float]] = []
    t0 = time.perf_counter()
    for delta in chat.stream(MESSAGES, temperature=0.1, max_tokens=64):
        arrivals.append((delta, time.perf_counter() - t0))
    assert [d for d, _ in arrivals] == ["Under ", "the ", "blue ", "pot [1]."]
    # Streamed, not buffered: the first delta came well before the last.
    assert arrivals[-1][1] - arrivals[0][1] > 0.1
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.body == {
        "model": "smollm2",
        "messages": [{"role": "system", "content": "Answer from the notes only."},
                     {"role": "user", "content": "Where is the spare key?"}],
        "temperature": 0.1,
        "stream": True,
        "max_tokens": 64,
    }


def test_openai_base_url_without_v1_gets_it_added(server: ScriptedServer, providers: Providers) -> None:
    server.queue(Reply(pieces=openai_stream("ok")))
    assert "".join(providers.openai(server.url + "/").stream(MESSAGES)) == "ok"
    assert server.requests[0].path == "/v1/chat/completions"
    assert "max_tokens" not in server.requests[0].body


def test_openai_tolerates_null_and_missing_content_and_role_only_chunks(
    server: ScriptedServer, providers: Providers
) -> None:
    pieces = [
        openai_chunk(None, role="assistant"),  # "content": null
        openai_chunk(role="assistant", omit=True),  # no "content" key at all
        b": keep-alive comment\n\n",
        sse({"id": "c1", "choices": [], "usage": {"prompt_tokens": 3}}),  # usage-only chunk
        openai_chunk("Hello"),
        openai_chunk(""),
        openai_chunk(" world"),
        sse("[DONE]"),
    ]
    server.queue(Reply(pieces=pieces))
    assert list(providers.openai().stream(MESSAGES)) == ["Hello", " world"]


def test_openai_stops_at_done_even_if_the_server_keeps_the_connection_open(
    server: ScriptedServer, providers: Providers
) -> None:
    server.queue(Reply(pieces=[*openai_stream("fin"), openai_chunk("ignored after DONE")]))
    assert list(providers.openai().stream(MESSAGES)) == ["fin"]


def test_ollama_streams_ndjson_until_done(server: ScriptedServer, providers: Providers) -> None:
    server.queue(Reply(pieces=ollama_stream("The ", "key ", "is ", "here."), content_type="application/x-ndjson"))
    chat = providers.ollama()
    assert list(chat.stream(MESSAGES, temperature=0.3, max_tokens=20)) == ["The ", "key ", "is ", "here."]
    request = server.requests[0]
    assert request.path == "/api/chat"
    assert "Authorization" not in request.headers
    assert request.body["stream"] is True and request.body["model"] == "llama3.2"
    assert request.body["options"] == {"temperature": 0.3, "num_predict": 20}
    assert request.body["messages"][0] == {"role": "system", "content": "Answer from the notes only."}


def test_anthropic_streams_text_deltas_and_sends_the_system_prompt_apart(
    server: ScriptedServer, providers: Providers
) -> None:
    server.queue(Reply(pieces=anthropic_stream("Under ", "the pot.")))
    chat = providers.anthropic()
    messages = [*MESSAGES, ChatMessage("user", "Be brief.")]
    assert list(chat.stream(messages)) == ["Under ", "the pot."]
    request = server.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert "Authorization" not in request.headers
    assert request.body == {
        "model": "claude-3-5-haiku-latest",
        "system": "Answer from the notes only.",
        # Consecutive user turns merged: the API wants roles alternating.
        "messages": [{"role": "user", "content": "Where is the spare key?\n\nBe brief."}],
        "max_tokens": 1024,
        "temperature": 0.2,
        "stream": True,
    }


def test_nothing_is_sent_until_the_stream_is_read(server: ScriptedServer, providers: Providers) -> None:
    server.queue(Reply(pieces=openai_stream("x")))
    deltas = providers.openai().stream(MESSAGES)
    time.sleep(0.05)
    assert server.requests == []
    assert list(deltas) == ["x"]


def test_chat_message_rejects_an_unknown_role() -> None:
    with pytest.raises(ValueError, match="role"):
        ChatMessage("bot", "hi")


def test_repr_never_shows_the_key(providers: Providers) -> None:
    chat = providers.openai("http://user:pw@127.0.0.1:9/v1?token=abc")
    assert KEY not in repr(chat)
    assert "pw" not in repr(chat) and "abc" not in repr(chat)
