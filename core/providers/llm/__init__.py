"""Chat models for "Ask my notes": Ollama, OpenAI-compatible servers and Anthropic, behind one protocol.

Every provider streams text deltas, retries rate limits and server errors
before the first token only, honours a cancel event, and reports failures as
an `LLMError` whose `code` the UI maps to advice. Importing this package makes
no network call and never imports Qt.
"""

from __future__ import annotations

from core.providers.llm.anthropic import AnthropicChat
from core.providers.llm.base import LLM_ERROR_CODES, ChatMessage, ChatProvider, LLMError, LLMErrorCode
from core.providers.llm.ollama import OllamaChat
from core.providers.llm.openai import OpenAIChat
from core.providers.llm.registry import (
    LLMProviderInfo,
    create_chat_provider,
    default_llm_registry,
    list_models,
)

__all__ = [
    "LLM_ERROR_CODES",
    "AnthropicChat",
    "ChatMessage",
    "ChatProvider",
    "LLMError",
    "LLMErrorCode",
    "LLMProviderInfo",
    "OllamaChat",
    "OpenAIChat",
    "create_chat_provider",
    "default_llm_registry",
    "list_models",
]
