"""A ChatModel for any OpenAI-compatible chat-completions endpoint, with DeepSeek as the default.

Requests stream (``stream_options.include_usage``); every delta is reported as a DSH ``StreamChunk``.
DeepSeek's ``reasoning_content`` deltas become reasoning blocks, and the usage's cache hits become
``cacheReadTokens`` (``inputTokens`` is the uncached rest). The ``openai`` client's own retries are off:
this provider retries rate limits, server errors, timeouts and dropped streams itself, so each retry can be
logged (see ``core.host.providers.retry``). Authentication failures (401/403) are never retried; they end the
call with finish ``error`` and code ``AUTH``. A failed attempt that will be retried still ends its own chunk
stream with a ``finish`` of kind ``error``, as DSH logs it.

Limits: ``limits`` is the model's context window and output limit, from ``core.shared.model_specs``' table unless given
(``None`` fields: unknown). The host combines them with the ``model`` config section.

Reasoning effort: ``efforts`` maps each effort id the route supports to the extra request-body fields that
select it (for example ``{"high": {"reasoning_effort": "high"}}``). ``reasoning_efforts()`` lists those ids;
a request for an effort that is not declared sends nothing extra.
"""

from __future__ import annotations

import contextlib
import email.utils
import os
import random
import re
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import urlparse

import openai

from core.host.providers.errors import (
    AUTH,
    BAD_REQUEST,
    CONTENT_FILTER,
    CONTEXT_WINDOW_EXCEEDED,
    RATE_LIMIT,
    RETRYABLE,
    SERVER,
    TIMEOUT,
    TRANSPORT,
    ProviderError,
    failure,
)
from core.host.providers.retry import RetryListener, RetryNotice, RetryPolicy
from core.host.providers.stream import BlockStream
from core.shared.chat import ChunkSink, Completion, ModelRequest
from core.shared.model_specs import Limits, limits_for
from core.shared.text import shown
from core.shared.wire import request_body, usage_from_openai

DEFAULT_BASE_URL = "https://api.deepseek.com"
DEFAULT_MODEL = "deepseek-v4-flash"  # the V4 name DSH's sessions use; deepseek-chat and -reasoner were retired 2026-07-24
API_KEY_VARIABLES = ("DEEPSEEK_API_KEY", "OPENAI_API_KEY")
DEFAULT_TIMEOUT = 600.0

FINISH_KINDS = {
    "stop": "stop",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "length": "max-tokens",
}
_CONTEXT_OVERFLOW = re.compile(r"context[ _-]?(length|window)|maximum context|too many tokens", re.IGNORECASE)


class _Failed(Exception):
    """One attempt failed with an LlmFailure; ``retry_after`` is the server's wish in seconds."""

    def __init__(self, record: dict[str, Any], retry_after: float | None = None) -> None:
        super().__init__(record["message"])
        self.record = record
        self.retry_after = retry_after


def provider_name(base_url: str) -> str:
    """The provider label logged for a base URL: ``deepseek`` for DeepSeek's API, else ``openai-compatible``."""
    host = (urlparse(base_url).hostname or "").lower()
    return "deepseek" if host == "deepseek.com" or host.endswith(".deepseek.com") else "openai-compatible"


def api_key_from_env(environ: Mapping[str, str] | None = None) -> str:
    """The API key from DEEPSEEK_API_KEY or OPENAI_API_KEY, or a ProviderError saying how to set one."""
    env = os.environ if environ is None else environ
    for name in API_KEY_VARIABLES:
        if env.get(name, "").strip():
            return env[name].strip()
    raise ProviderError(f"no API key for the openai provider: set {' or '.join(API_KEY_VARIABLES)}")


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(inner, str):
            return inner
    return exc.message


def _retry_after(headers: Mapping[str, str]) -> float | None:
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _classify(exc: Exception) -> _Failed:
    """The LlmFailure an exception from the client stands for."""
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = _server_message(exc)
        retry_after = _retry_after(exc.response.headers)
        after_ms = None if retry_after is None else int(retry_after * 1000)
        if status in (401, 403):
            code, text = AUTH, f"authentication failed (HTTP {status}): {message}"
        elif status == 429:
            code, text = RATE_LIMIT, f"rate limited (HTTP 429): {message}"
        elif status >= 500:
            code, text = SERVER, f"server error (HTTP {status}): {message}"
        elif _CONTEXT_OVERFLOW.search(message):
            code, text = CONTEXT_WINDOW_EXCEEDED, f"the request exceeds the model's context window: {message}"
        else:
            code, text = BAD_REQUEST, f"request refused (HTTP {status}): {message}"
        return _Failed(failure(text, code, status, after_ms), retry_after)
    if isinstance(exc, openai.APITimeoutError):
        return _Failed(failure("the request timed out", TIMEOUT))
    if isinstance(exc, openai.APIConnectionError):
        return _Failed(failure(f"could not reach the model endpoint: {exc.message}", TRANSPORT))
    if isinstance(exc, openai.APIError):
        return _Failed(failure(f"the stream reported an error: {exc.message}", SERVER))
    return _Failed(failure(f"the stream broke off: {type(exc).__name__}: {exc}", TRANSPORT))


class OpenAIProvider:
    """Streaming chat completions against an OpenAI-compatible endpoint."""

    writes_reports = True

    def __init__(
        self,
        *,
        api_key: str,
        model: str = DEFAULT_MODEL,
        base_url: str = DEFAULT_BASE_URL,
        provider: str | None = None,
        efforts: Mapping[str, Mapping[str, Any]] | None = None,
        retry: RetryPolicy | None = None,
        on_retry: RetryListener | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rand: Callable[[], float] = random.random,
        timeout: float = DEFAULT_TIMEOUT,
        limits: Limits | None = None,
    ) -> None:
        self.model = model
        # The model's context window and output limit (DeepSeek's table unless given); the host reads them
        # for the adaptive pressure trigger and to keep output caps within what the model accepts.
        self.limits = limits or limits_for(model)
        self.base_url = base_url
        self.provider = provider or provider_name(base_url)
        self.efforts = {k: dict(v) for k, v in (efforts or {}).items()}
        self.retry = retry or RetryPolicy()
        self.on_retry = on_retry
        self._sleep = sleep
        self._rand = rand
        self._api_key = api_key
        self._timeout = timeout
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)
        self._response: Any = None

    def abort(self) -> None:
        """Close the response being streamed, if any (thread-safe; the host calls it when ``stop`` arrives)."""
        response = self._response
        if response is not None:
            with contextlib.suppress(Exception):
                response.close()

    def restore(self, state: Mapping[str, Any]) -> None:
        """Nothing to restore: each request carries the whole conversation."""

    def for_route(
        self, provider: str, model: str, *, base_url: str | None = None, api_key: str | None = None
    ) -> OpenAIProvider:
        """A client for another provider/model, with this one's retries and timeout: on this endpoint with
        this key, or on ``base_url`` with ``api_key`` (both given together).

        The rewind report uses it when ``rewind.summarizationProvider``/``summarizationModel`` name another
        route than the agent's own (and ``summarizationBaseUrl`` another endpoint).
        """
        if (base_url is None) != (api_key is None):
            raise ValueError("for_route takes base_url and api_key together")
        return OpenAIProvider(
            api_key=api_key or self._api_key,
            model=model,
            base_url=base_url or self.base_url,
            provider=provider,
            retry=self.retry,
            on_retry=self.on_retry,
            sleep=self._sleep,
            rand=self._rand,
            timeout=self._timeout,
        )

    def reasoning_efforts(self) -> list[str]:
        """The effort ids this route was configured with."""
        return list(self.efforts)

    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` for ``request``."""
        params = request_body(self.model, request)
        extra = self.efforts.get(request.reasoning_effort or "")
        if extra:
            params["extra_body"] = dict(extra)
        return params

    def complete(self, request: ModelRequest, on_chunk: ChunkSink | None = None) -> Completion:
        """Stream one request, retrying retryable failures; never raises for a provider failure."""
        params = self.request_params(request)
        retry_id = f"retry-{uuid.uuid4().hex[:12]}"
        retry = 0
        while True:
            stream = BlockStream(on_chunk)
            try:
                return self._attempt(params, stream)
            except _Failed as failed:
                completion = stream.close("error", failed.record)
                if failed.record["code"] not in RETRYABLE or retry >= self.retry.max_retries:
                    return completion
                retry += 1
                delay = self.retry.delay(retry, failed.retry_after, self._rand)
                notice = RetryNotice(
                    retry_id=retry_id,
                    provider=self.provider,
                    policy_key=self.provider,
                    retry=retry,
                    max_retries=self.retry.max_retries,
                    delay_ms=round(delay * 1000),
                    failure=failed.record,
                )
                self._notify(notice)
                self._sleep(delay)
                self._notify(replace(notice, started=True))

    def _notify(self, notice: RetryNotice) -> None:
        if self.on_retry is not None:
            self.on_retry(notice)

    def _attempt(self, params: dict[str, Any], stream: BlockStream) -> Completion:
        try:
            response = self._client.chat.completions.create(**params)
        except Exception as exc:  # noqa: BLE001 - every client failure becomes an LlmFailure
            raise _classify(exc) from exc
        self._response = response
        finish_reason: str | None = None
        with response:
            chunks = iter(response)
            while True:
                try:
                    chunk = next(chunks, None)
                except Exception as exc:  # noqa: BLE001 - a broken stream surfaces as the HTTP library's errors
                    raise _classify(exc) from exc
                if chunk is None:
                    break
                finish_reason = _take(chunk, stream) or finish_reason
        if finish_reason is None:
            raise _Failed(failure("the stream ended before the model finished its answer", TRANSPORT))
        if finish_reason == "content_filter":
            raise _Failed(failure("the provider's content filter stopped the answer", CONTENT_FILTER))
        if finish_reason == "insufficient_system_resource":
            raise _Failed(failure("the provider ran out of capacity for this answer", SERVER))
        kind = FINISH_KINDS.get(finish_reason, "stop")
        if kind == "stop" and stream.has_tool_calls:
            kind = "tool-calls"
        return stream.close(kind)


def _take(chunk: Any, stream: BlockStream) -> str | None:
    """Feed one ``ChatCompletionChunk`` to the stream; its finish reason, if it carries one. The client does not
    check a chunk's types: one whose fields are not what the API gives (a server's or a proxy's bug) is a SERVER
    failure, and nothing of it is fed."""
    try:
        usage, deltas, finish_reason = _read_chunk(chunk)
    except TypeError as exc:  # a value of another type where text or an index belongs (``_text``)
        raise _Failed(failure(f"the stream sent a malformed chunk ({exc})", SERVER)) from exc
    except AttributeError as exc:  # a value where an object belongs: the one Python looked a field up in
        raise _Failed(failure(f"the stream sent a malformed chunk ({shown(exc.obj)} where an object belongs)", SERVER)) from exc
    if usage is not None:
        stream.usage = usage
    for reasoning, text, calls in deltas:
        stream.reasoning(reasoning)
        stream.text(text)
        for index, call_id, name, arguments in calls:
            stream.tool_call(index, call_id=call_id, name=name, arguments=arguments)
    return finish_reason


def _read_chunk(chunk: Any) -> tuple[dict[str, int] | None, list[tuple[Any, ...]], str | None]:
    """A chunk's usage, its deltas (reasoning, text, tool calls) and finish reason, each of its type (TypeError or
    AttributeError when one is not)."""
    usage = None if chunk.usage is None else usage_from_openai(chunk.usage.model_dump())
    deltas: list[tuple[Any, ...]] = []
    finish_reason = None
    for choice in chunk.choices or ():
        delta = choice.delta
        if delta is not None:
            calls = []
            for call in delta.tool_calls or ():
                if call.index is not None and type(call.index) is not int:
                    raise TypeError(f"{shown(call.index)} where a tool call's index belongs")
                fn = call.function
                name, arguments = (fn.name, fn.arguments) if fn else (None, None)
                calls.append((call.index, _text(call.id), _text(name), _text(arguments)))
            reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
            deltas.append((_text(reasoning), _text(delta.content), calls))
        finish_reason = _text(choice.finish_reason) or finish_reason
    return usage, deltas, finish_reason


def _text(value: Any) -> str | None:
    """``value`` when it is text or absent; TypeError otherwise."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{shown(value)} where text belongs")
    return value
