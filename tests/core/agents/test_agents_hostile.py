"""Hostile callers against a real server on 127.0.0.1 with httpx: every request is answered or
refused with the right status and JSON-RPC code, and the server serves normally afterwards."""

from __future__ import annotations

import json
import socket
import time
from collections import Counter
from collections.abc import Iterator

import anyio
import httpx
import pytest

from core.agents.scope import Scope
from tests.core.agents.agent_helpers import Served

ACCEPT = "application/json, text/event-stream"
SEARCH = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_notes", "arguments": {"query": "garden plan", "k": 2}}}


def headers(token: str | None, **extra: str) -> dict[str, str]:
    h = {"Accept": ACCEPT, "Content-Type": "application/json", **extra}
    if token is not None:
        h["Authorization"] = f"Bearer {token}"
    return h


def post(served: Served, body: object, token: str | None, **extra: str) -> httpx.Response:
    content = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return httpx.post(served.url, content=content, headers=headers(token, **extra), timeout=20)


@pytest.fixture(autouse=True)
def fresh_backoff(served: Served) -> Iterator[None]:
    served.backoff.failures, served.backoff.locked_until = 0, 0.0
    yield
    served.backoff.failures, served.backoff.locked_until = 0, 0.0


def assert_still_serves(served: Served) -> None:
    r = post(served, SEARCH, served.tokens["full"])
    assert r.status_code == 200, r.text
    assert "work/Projects/Garden.md" in r.json()["result"]["content"][0]["text"]


@pytest.mark.parametrize("token", [None, "cairn_wrong", "not-even-a-cairn-token", "cairn_" + "A" * 500])
def test_a_missing_or_wrong_token_is_401_with_a_bearer_challenge(served: Served, token: str | None) -> None:
    r = post(served, SEARCH, token)
    assert r.status_code == 401
    assert r.headers["www-authenticate"].startswith("Bearer")
    assert r.json()["error"]["code"] == -32001
    assert "garden" not in r.text


def test_a_revoked_token_stops_working_at_once(served: Served) -> None:
    _, token = served.service.store.add("short-lived", Scope(internal=True, rate=0))
    assert post(served, SEARCH, token).status_code == 200
    served.service.store.revoke("short-lived")
    assert post(served, SEARCH, token).status_code == 401
    assert_still_serves(served)


def test_an_expired_token_is_refused_like_a_wrong_one(served: Served) -> None:
    _, token = served.service.store.add("brief", Scope(internal=True, rate=0), valid_days=1.5 / 86400)  # 1.5 s
    assert post(served, SEARCH, token).status_code == 200
    time.sleep(1.6)
    r = post(served, SEARCH, token)
    assert r.status_code == 401 and "garden" not in r.text
    served.service.store.revoke("brief")


def test_repeated_bad_tokens_lock_the_door_for_a_growing_while(served: Served) -> None:
    statuses = [post(served, SEARCH, f"cairn_guess{i}") for i in range(5)]
    assert [r.status_code for r in statuses] == [401] * 5
    assert "retry-after" in statuses[-1].headers
    locked = post(served, SEARCH, served.tokens["full"])  # even the right token waits out the lock
    assert locked.status_code == 401 and "too many bad tokens" in locked.text
    assert served.backoff.locked_until - time.monotonic() > 0.3  # grew past the base delay
    time.sleep(max(0.0, served.backoff.locked_until - time.monotonic()) + 0.05)
    assert_still_serves(served)


@pytest.mark.parametrize(
    ("extra", "status"),
    [
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "null"}, 403),
        ({"Origin": "http://127.0.0.1.evil.example"}, 403),
        ({"Host": "evil.example"}, 421),
        ({"Host": "attacker.example:80"}, 421),
    ],
)
def test_foreign_pages_are_refused_even_with_a_valid_token(served: Served, extra: dict[str, str], status: int) -> None:
    r = post(served, SEARCH, served.tokens["full"], **extra)
    assert r.status_code == status
    assert "access-control-allow-origin" not in r.headers
    assert served.backoff.failures == 0  # a web page cannot lock the owner out


def test_no_cors_headers_on_preflight_or_answers(served: Served) -> None:
    pre = httpx.options(served.url, headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
    ok = post(served, SEARCH, served.tokens["full"])
    assert pre.status_code in (401, 403, 405)
    assert not any(h.startswith("access-control-") for h in pre.headers) and not any(h.startswith("access-control-") for h in ok.headers)


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ("{not json", 400, -32700),
        ("", 400, -32700),
        ("[]", 400, -32600),
        (json.dumps([SEARCH]), 400, -32600),
        ('"a string"', 400, -32600),
        (json.dumps({"jsonrpc": "1.0", "id": 1, "method": "tools/list"}), 400, -32600),
        (json.dumps({"jsonrpc": "2.0", "id": 1}), 400, -32600),
        (json.dumps({"jsonrpc": "2.0", "id": {"x": 1}, "method": "tools/list"}), 400, -32600),
        (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "oops"}), 400, -32602),
        (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "no/such/method"}), 200, -32601),
    ],
)
def test_malformed_json_rpc_gets_its_error_code(served: Served, body: str, status: int, code: int) -> None:
    r = post(served, body, served.tokens["full"])
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code


def test_an_invalid_notification_gets_no_reply_and_bad_arguments_a_tool_error(served: Served) -> None:
    note = post(served, {"jsonrpc": "2.0", "method": "notifications/x", "params": "oops"}, served.tokens["full"])
    assert note.status_code == 202 and not note.content
    bad = post(served, {**SEARCH, "params": {"name": "search_notes", "arguments": {"k": 0}}}, served.tokens["full"])
    assert bad.status_code == 200 and bad.json()["result"]["isError"] is True


def test_oversize_bodies_are_refused_413(served: Served) -> None:
    big = json.dumps({**SEARCH, "params": {"name": "search_notes", "arguments": {"query": "x" * 100_000}}})
    assert post(served, big, served.tokens["full"]).status_code == 413

    def chunks() -> Iterator[bytes]:  # no Content-Length: the size is only known while reading
        for _ in range(100):
            yield b" " * 1024

    r = httpx.post(served.url, content=chunks(), headers=headers(served.tokens["full"]), timeout=20)
    assert r.status_code == 413
    assert_still_serves(served)


def test_get_and_delete_are_405(served: Served) -> None:
    for method in ("GET", "DELETE"):
        r = httpx.request(method, served.url, headers=headers(served.tokens["full"]), timeout=5)
        assert r.status_code == 405 and r.headers["allow"] == "POST"


def test_a_slow_client_does_not_hold_up_the_others(served: Served) -> None:
    port = served.service.port
    with socket.create_connection(("127.0.0.1", port)) as slow:
        head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {served.tokens['full']}\r\n"
        slow.sendall((head + f"Content-Type: application/json\r\nAccept: {ACCEPT}\r\nContent-Length: 5000\r\n\r\n{{").encode())
        started = time.perf_counter()
        assert_still_serves(served)
        assert time.perf_counter() - started < 5
        slow.sendall(b'"jsonrpc"')  # still trickling: the others are served meanwhile
        slow.settimeout(10)
        answer = slow.recv(4096).decode()  # ... until its time for the body is up
        assert answer.startswith("HTTP/1.1 408") and time.perf_counter() - started < 8


def test_rate_limit_answers_retry_after(served: Served) -> None:
    token = served.tokens["slow-rate"]  # 2 calls a minute
    texts = [post(served, SEARCH, token).json()["result"] for _ in range(3)]
    assert [t.get("isError", False) for t in texts] == [False, False, True]
    assert "rate limit of 2 calls a minute" in texts[2]["content"][0]["text"] and "retry after" in texts[2]["content"][0]["text"]


def test_a_burst_of_200_requests_is_answered_or_refused_and_the_server_survives(served: Served) -> None:
    async def burst() -> Counter[str]:
        outcomes: Counter[str] = Counter()
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=0)
        async with httpx.AsyncClient(timeout=60, limits=limits) as client:

            async def one(i: int) -> None:
                body = {**SEARCH, "id": i}
                try:
                    r = await client.post(served.url, json=body, headers=headers(served.tokens["full"]))
                except httpx.HTTPError as exc:
                    outcomes[f"transport {type(exc).__name__}"] += 1
                    return
                if r.status_code == 200:
                    res = r.json()["result"]
                    text = res["content"][0]["text"]
                    outcomes["ok" if not res.get("isError") else ("busy" if "busy, retry after" in text else f"tool error {text[:60]}")] += 1
                else:
                    outcomes[str(r.status_code)] += 1

            async with anyio.create_task_group() as tg:
                for i in range(200):
                    tg.start_soon(one, i)
        return outcomes

    outcomes = anyio.run(burst)
    assert sum(outcomes.values()) == 200
    assert set(outcomes) <= {"ok", "busy", "503"}, outcomes
    assert outcomes["ok"] > 0, outcomes
    assert_still_serves(served)
