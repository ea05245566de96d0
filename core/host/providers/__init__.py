"""Model providers for the host, both implementing ``core.shared.chat.ChatModel``.

- ``openai``: any OpenAI-compatible chat-completions endpoint, streaming, DeepSeek by default
  (``core.host.providers.openai_provider``).
- ``scripted:FILE``: a deterministic JSON script of model responses (``core.host.providers.scripted``).

``make_provider`` turns a spec string from the command line into one of them.
"""

from __future__ import annotations

from typing import Any

from core.host.providers.errors import ProviderError
from core.host.providers.retry import RetryNotice, RetryPolicy
from core.host.providers.scripted import ScriptedModel
from core.shared.chat import ChatModel

SPECS = ("openai", "scripted:FILE")


def make_provider(
    spec: str, *, model: str | None = None, base_url: str | None = None, api_key: str | None = None
) -> ChatModel:
    """The ChatModel a provider spec names: ``openai`` or ``scripted:FILE``.

    For ``openai``, ``model`` and ``base_url`` default to DeepSeek's and ``api_key`` to DEEPSEEK_API_KEY or
    OPENAI_API_KEY. For ``scripted:FILE``, ``model`` overrides the name the script gives itself.
    """
    kind, sep, rest = spec.partition(":")
    if kind == "openai" and not sep:
        from core.host.providers.openai_provider import (
            DEFAULT_BASE_URL,
            DEFAULT_MODEL,
            OpenAIProvider,
            api_key_from_env,
        )

        return OpenAIProvider(
            api_key=api_key or api_key_from_env(),
            model=model or DEFAULT_MODEL,
            base_url=base_url or DEFAULT_BASE_URL,
        )
    if kind == "scripted" and rest.strip():
        if base_url or api_key:
            raise ProviderError("the scripted provider takes no base URL or API key")
        return ScriptedModel(rest.strip(), model=model)
    if kind == "scripted":
        raise ProviderError("the scripted provider needs a file: scripted:FILE")
    raise ProviderError(f"unknown provider {spec!r}; use one of: {', '.join(SPECS)}")


def __getattr__(name: str) -> Any:
    """``OpenAIProvider`` is imported on first use: the openai package takes ~30 MB and over a second to import,
    and what only rebuilds requests (``core.shared.wire``) never needs it."""
    if name == "OpenAIProvider":
        from core.host.providers.openai_provider import OpenAIProvider

        return OpenAIProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "SPECS",
    "OpenAIProvider",
    "ProviderError",
    "RetryNotice",
    "RetryPolicy",
    "ScriptedModel",
    "make_provider",
]
