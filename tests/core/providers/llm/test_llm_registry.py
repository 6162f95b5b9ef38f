"""The provider registry, `create_chat_provider`, and `list_models` for "Test connection"."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

import pytest

from core.providers.llm import (
    AnthropicChat,
    ChatMessage,
    LLMError,
    LLMProviderInfo,
    OllamaChat,
    OpenAIChat,
    create_chat_provider,
    default_llm_registry,
    list_models,
)
from tests.core.providers.llm.fake_server import KEY, ScriptedServer, json_reply


def test_default_registry_lists_the_three_providers_with_keys_and_defaults() -> None:
    registry = default_llm_registry()
    assert list(registry) == ["ollama", "openai", "anthropic"]
    ollama, openai, anthropic = registry.values()
    assert (ollama.needs_key, ollama.key_env_var, ollama.remote) == (False, None, True)
    assert ollama.default_base_url == "http://127.0.0.1:11434"
    assert (openai.needs_key, openai.key_env_var, openai.remote) == (True, "OPENAI_API_KEY", True)
    assert (openai.default_base_url, openai.default_model) == ("https://api.openai.com", "gpt-4o-mini")
    assert (anthropic.needs_key, anthropic.key_env_var) == (True, "ANTHROPIC_API_KEY")
    assert anthropic.default_model == "claude-3-5-haiku-latest"
    assert default_llm_registry() is not registry  # built per call, never shared


def test_create_chat_provider_fills_in_defaults_and_passes_options() -> None:
    with create_chat_provider("ollama") as chat:  # type: ignore[attr-defined]
        assert isinstance(chat, OllamaChat)
        assert (chat.id, chat.model, chat.remote) == ("ollama", "llama3.2", True)
        assert chat.chat_url == "http://127.0.0.1:11434/api/chat"
    with create_chat_provider("openai", model="", base_url="http://127.0.0.1:8080/v1/", timeout=3) as chat:  # type: ignore[attr-defined]
        assert isinstance(chat, OpenAIChat)
        assert chat.model == "gpt-4o-mini"
        assert chat.chat_url == "http://127.0.0.1:8080/v1/chat/completions"
    with create_chat_provider("anthropic", model="claude-x", api_key=KEY) as chat:  # type: ignore[attr-defined]
        assert isinstance(chat, AnthropicChat)
        assert chat.chat_url == "https://api.anthropic.com/v1/messages"
        assert KEY not in repr(chat)


def test_unknown_provider_names_the_choices() -> None:
    with pytest.raises(ValueError, match="anthropic, ollama, openai"):
        create_chat_provider("gpt5")


class EchoChat:
    """A provider a test registers: answers by echoing the last user message."""

    id = "echo"
    remote = False

    def __init__(self, model: str) -> None:
        self.model = model

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        temperature: float = 0.2,
        max_tokens: int | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[str]:
        yield from messages[-1].content.split()


def test_a_test_can_register_its_own_provider() -> None:
    info = LLMProviderInfo("echo", "Echo", False, None, False, lambda **kw: EchoChat(kw["model"]), "parrot", "")
    registry = {"echo": info}
    chat = create_chat_provider("echo", registry=registry)
    assert chat.model == "parrot"
    assert list(chat.stream([ChatMessage("user", "hello there")])) == ["hello", "there"]
    with pytest.raises(LLMError) as caught:
        list_models("echo", None, None, registry=registry)
    assert caught.value.code == "bad_response"


def test_list_models_openai(server: ScriptedServer) -> None:
    server.queue(json_reply(200, {"object": "list", "data": [{"id": "smollm2", "object": "model"}, {"id": "other"}]}))
    assert list_models("openai", server.url + "/v1", KEY) == ["smollm2", "other"]
    request = server.requests[0]
    assert (request.method, request.path) == ("GET", "/v1/models")
    assert request.headers["Authorization"] == f"Bearer {KEY}"


def test_list_models_ollama(server: ScriptedServer) -> None:
    server.queue(json_reply(200, {"models": [{"name": "llama3.2:latest", "model": "llama3.2:latest"},
                                             {"name": "qwen2.5:7b", "model": "qwen2.5:7b"}]}))
    assert list_models("ollama", server.url, None) == ["llama3.2:latest", "qwen2.5:7b"]
    assert server.requests[0].path == "/api/tags"


def test_list_models_anthropic(server: ScriptedServer) -> None:
    server.queue(json_reply(200, {"data": [{"id": "claude-3-5-haiku-20241022", "type": "model"}], "has_more": False}))
    assert list_models("anthropic", server.url, KEY) == ["claude-3-5-haiku-20241022"]
    request = server.requests[0]
    assert request.path.startswith("/v1/models")
    assert request.headers["x-api-key"] == KEY and request.headers["anthropic-version"] == "2023-06-01"


def test_list_models_wrong_key_is_unauthorized_without_retrying(server: ScriptedServer) -> None:
    server.queue(json_reply(401, {"error": {"message": f"bad key {KEY}"}}))
    with pytest.raises(LLMError) as caught:
        list_models("openai", server.url, KEY)
    assert caught.value.code == "unauthorized" and KEY not in str(caught.value)
    assert len(server.requests) == 1


def test_list_models_on_a_server_of_another_kind_is_bad_response(server: ScriptedServer) -> None:
    server.queue(json_reply(404, {"detail": "Not Found"}), json_reply(200, {"unexpected": True}))
    with pytest.raises(LLMError) as caught:
        list_models("ollama", server.url, None)
    assert caught.value.code == "bad_response" and "/api/tags" in str(caught.value)
    with pytest.raises(LLMError) as caught:
        list_models("openai", server.url, None)
    assert caught.value.code == "bad_response" and "OpenAI-compatible" in str(caught.value)


def test_list_models_connection_refused(closed_port: int) -> None:
    with pytest.raises(LLMError) as caught:
        list_models("ollama", f"http://127.0.0.1:{closed_port}", None, timeout=2)
    assert caught.value.code == "connection_refused"
    assert f"127.0.0.1:{closed_port}" in str(caught.value)
