"""The ``rewind`` config section (seed 001 keys verbatim) and its validator."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlparse

from core.shared.errors import ConfigError, unknown_config_key
from core.shared.text import shown
from core.shared.values import MAX_SAFE_INTEGER, whole_number

REPORT_LANGUAGES = ("en", "zh")
KEYS = (
    "toolName",
    "maxTokens",
    "maxSummarizationRetries",
    "summarizationProvider",
    "summarizationModel",
    "summarizationBaseUrl",
    "summarizationApiKeyEnv",
    "reportLanguage",
)
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # the function names chat-completions APIs accept


@dataclass(frozen=True, slots=True)
class RewindConfig:
    """Validated rewind settings; the defaults are the seed's."""

    tool_name: str = "rewind"
    max_tokens: int = 1024
    max_summarization_retries: int = 2
    summarization_provider: str | None = None
    summarization_model: str | None = None
    summarization_base_url: str | None = None
    summarization_api_key_env: str | None = None
    report_language: str = "en"

    def to_dict(self) -> dict[str, object]:
        """The effective values under the seed's key names."""
        return {
            "toolName": self.tool_name,
            "maxTokens": self.max_tokens,
            "maxSummarizationRetries": self.max_summarization_retries,
            "summarizationProvider": self.summarization_provider,
            "summarizationModel": self.summarization_model,
            "summarizationBaseUrl": self.summarization_base_url,
            "summarizationApiKeyEnv": self.summarization_api_key_env,
            "reportLanguage": self.report_language,
        }

    def summarization_route(self) -> tuple[str, str] | None:
        """``(provider, model)`` when the overrides are set (validation allows both or neither), else None."""
        if self.summarization_provider and self.summarization_model:
            return self.summarization_provider, self.summarization_model
        return None

    def summarization_endpoint(self) -> tuple[str, str] | None:
        """``(base URL, API-key variable name)`` when the report has an endpoint of its own, else None (the
        agent's endpoint)."""
        if self.summarization_base_url and self.summarization_api_key_env:
            return self.summarization_base_url, self.summarization_api_key_env
        return None


def _int_in(raw: Mapping[str, object], key: str, low: int, high: int, default: int) -> int:
    value = raw.get(key, default)
    number = whole_number(value)
    if number is None or not low <= number <= high:
        raise ConfigError(f"rewind.{key} must be an integer from {low} to {high} (got {shown(value)})")
    return number


def check_keys(section: str, raw: object, keys: Sequence[str]) -> None:
    """Raise ConfigError unless ``raw`` is a mapping whose keys are all in ``keys``."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{section} config must be a mapping (got {shown(raw)})")
    unknown = [key for key in raw if key not in keys]
    if unknown:
        raise unknown_config_key(unknown[0], keys, section)


def _text(raw: Mapping[str, object], key: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"rewind.{key} must be a string (got {shown(value)})")
    return value


def _endpoint(raw: Mapping[str, object], routed: bool) -> tuple[str | None, str | None]:
    """The report's own endpoint keys: a base URL needs a named route and the variable holding its key (the
    agent's key is never sent to another endpoint); the variable alone means nothing."""
    base_url, key_env = _text(raw, "summarizationBaseUrl"), _text(raw, "summarizationApiKeyEnv")
    if base_url is None:
        if key_env is not None:
            raise ConfigError(
                "rewind.summarizationApiKeyEnv is only for rewind.summarizationBaseUrl: on the agent's endpoint "
                "the report uses the agent's key"
            )
        return None, None
    try:
        url = urlparse(base_url)
        usable = url.scheme in ("http", "https") and bool(url.hostname)
    except ValueError:  # an unclosed IPv6 bracket, say
        usable = False
    if not usable:
        raise ConfigError(f"rewind.summarizationBaseUrl must be an http:// or https:// URL with a host (got {shown(base_url)})")
    if not routed:
        raise ConfigError(
            "rewind.summarizationBaseUrl needs rewind.summarizationProvider and rewind.summarizationModel: "
            "name the route the other endpoint serves"
        )
    if key_env is None:
        raise ConfigError(
            "rewind.summarizationBaseUrl needs rewind.summarizationApiKeyEnv, the environment variable holding "
            "that endpoint's key (the agent's key is never sent to another endpoint)"
        )
    if not ENV_NAME.fullmatch(key_env):
        raise ConfigError(
            f"rewind.summarizationApiKeyEnv must be an environment variable name such as REPORT_API_KEY "
            f"(got {shown(key_env)})"
        )
    return base_url, key_env


def validate(raw: Mapping[str, object]) -> RewindConfig:
    """Check a raw ``rewind`` mapping and return the frozen config; raises ConfigError naming the key."""
    check_keys("rewind", raw, KEYS)
    tool_name = _text(raw, "toolName")
    tool_name = "rewind" if tool_name is None else tool_name
    if not tool_name.strip() or tool_name != tool_name.strip():
        raise ConfigError(
            f"rewind.toolName must be a non-empty name without surrounding spaces (got {shown(tool_name)})"
        )
    if not TOOL_NAME.fullmatch(tool_name):
        raise ConfigError(
            f"rewind.toolName must be 1 to 64 letters, digits, '_' or '-', as chat-completions APIs require of a "
            f"tool's name (got {shown(tool_name)})"
        )
    provider, model = _text(raw, "summarizationProvider"), _text(raw, "summarizationModel")
    if (provider is None) != (model is None):
        given, missing = ("summarizationProvider", "summarizationModel")[:: 1 if model is None else -1]
        raise ConfigError(
            f"rewind.{given} is set but rewind.{missing} is not: a report route needs both keys, or neither "
            "(the agent's own route)"
        )
    base_url, key_env = _endpoint(raw, routed=provider is not None)
    language = raw.get("reportLanguage", "en")
    if language not in REPORT_LANGUAGES:
        raise ConfigError(f"rewind.reportLanguage must be one of en, zh (got {shown(language)})")
    return RewindConfig(
        tool_name=tool_name,
        max_tokens=_int_in(raw, "maxTokens", 1, MAX_SAFE_INTEGER, 1024),
        max_summarization_retries=_int_in(raw, "maxSummarizationRetries", 0, 8, 2),
        summarization_provider=provider,
        summarization_model=model,
        summarization_base_url=base_url,
        summarization_api_key_env=key_env,
        report_language=str(language),
    )
