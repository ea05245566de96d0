"""DSH messages, tool schemas and usage in OpenAI chat-completions shape (and usage back).

Chat completions insist that every assistant ``tool_calls`` entry is answered by a ``tool`` message right
after it, and that no ``tool`` message answers a call that is not pending. The surface of a long session can
break both (a rewind report replacing the calls, a fold, a crash), so ``to_openai_messages`` repairs the
pairing instead of sending a request the API rejects:

- tool results answer the pending calls of the latest assistant message, in the order they arrive;
- a user message that lands while calls are pending waits until they are answered;
- a call that is never answered gets a short error result saying so;
- a result whose call is not pending becomes user text that names the call.

Reasoning blocks are sent back as DeepSeek's ``reasoning_content`` only on assistant messages that carry tool
calls, which is where the API needs it; elsewhere they are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from core.shared.values import int_or_none

if TYPE_CHECKING:
    from core.shared.chat import ModelRequest

UNANSWERED_CALL = "Error: this tool call has no recorded result."


def _text(blocks: Iterable[Any] | None, kind: str = "text") -> str:
    parts: list[str] = []
    for block in blocks or ():
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == kind:
            parts.append(str(block.get("text", "")))
        elif kind == "text" and block.get("type") == "image":
            name = (block.get("attachment") or {}).get("name") or "image"
            parts.append(f"[{name} omitted: images are not sent to this model]")
    return "\n".join(p for p in parts if p)


def _assistant(message: Mapping[str, Any]) -> dict[str, Any] | None:
    blocks = [b for b in message.get("content") or () if isinstance(b, Mapping)]
    calls = [
        {
            "id": str(b.get("id", "")),
            "type": "function",
            "function": {"name": str(b.get("name", "")), "arguments": str(b.get("arguments") or "{}")},
        }
        for b in blocks
        if b.get("type") == "tool-call"
    ]
    text = _text(blocks)
    if not calls and not text:
        return None
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        out["tool_calls"] = calls
        reasoning = _text(blocks, "reasoning")
        if reasoning:
            out["reasoning_content"] = reasoning
    return out


class OpenAIMessages:
    """``to_openai_messages`` one DSH message at a time: ``add`` each, then ``result``. ``mark`` after any
    message and ``resume`` from it later convert a list that only grew after that message without converting
    the messages before it again (``core.rebuild.request`` rebuilds each request of a log so)."""

    __slots__ = ("out", "pending", "waiting")

    def __init__(self, system: str | None) -> None:
        self.out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        self.pending: list[str] = []
        self.waiting: list[dict[str, Any]] = []

    def mark(self) -> tuple[int, tuple[str, ...], tuple[dict[str, Any], ...]]:
        """Where the conversion stands: enough to ``resume`` from here."""
        return len(self.out), tuple(self.pending), tuple(self.waiting)

    @classmethod
    def resume(
        cls, out: list[dict[str, Any]], mark: tuple[int, tuple[str, ...], tuple[dict[str, Any], ...]]
    ) -> OpenAIMessages:
        """The conversion as it stood at ``mark``, taken while it produced ``out`` (or a list ``out`` extends)."""
        done = cls(None)
        size, pending, waiting = mark
        done.out, done.pending, done.waiting = out[:size], list(pending), list(waiting)
        return done

    def _settle(self, out: list[dict[str, Any]]) -> None:
        out.extend({"role": "tool", "tool_call_id": call_id, "content": UNANSWERED_CALL} for call_id in self.pending)
        self.pending.clear()
        out.extend(self.waiting)
        self.waiting.clear()

    def add(self, message: Mapping[str, Any]) -> None:
        """Convert the next message."""
        out, pending = self.out, self.pending
        role = message.get("role")
        if role == "assistant":
            self._settle(out)
            converted = _assistant(message)
            if converted:
                out.append(converted)
                pending.extend(c["id"] for c in converted.get("tool_calls", ()))
            return
        blocks = [b for b in message.get("content") or () if isinstance(b, Mapping)]
        loose: list[str] = []
        for block in blocks:
            if block.get("type") != "tool-result":
                continue
            call_id = str(block.get("toolCallId", ""))
            content = _text(block.get("content")) or "(empty result)"
            if call_id in pending:
                pending.remove(call_id)
                out.append({"role": "tool", "tool_call_id": call_id, "content": content})
            else:
                loose.append(f"[result of earlier tool call {call_id}]\n{content}")
        text = "\n\n".join([*loose, _text(blocks)]).strip()
        if text:
            converted = {"role": "system" if role == "system" else "user", "content": text}
            (self.waiting if pending else out).append(converted)
        if not pending and self.waiting:
            self._settle(out)

    def result(self) -> list[dict[str, Any]]:
        """The messages converted so far, every pending call answered (a new list: the conversion can go on)."""
        out = list(self.out)
        pending, waiting = list(self.pending), list(self.waiting)
        self._settle(out)
        self.pending, self.waiting = pending, waiting
        return out


def to_openai_messages(system: str | None, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The chat-completions ``messages`` for a system prompt and DSH messages, with tool pairing repaired."""
    conversion = OpenAIMessages(system)
    for message in messages:
        conversion.add(message)
    return conversion.result()


def request_body(model: str, request: ModelRequest, messages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The chat-completions body for ``request`` (streamed, usage included), without provider extras.

    The host sends exactly this (plus a route's reasoning-effort fields); ``core.rebuild.request`` rebuilds logged
    requests with it, so the two cannot drift apart. ``messages``: ``to_openai_messages`` of the request's
    system prompt and messages, when the caller has already converted them.
    """
    body: dict[str, Any] = {
        "model": model,
        "messages": to_openai_messages(request.system, request.messages) if messages is None else messages,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        body["tools"] = to_openai_tools(request.tools)
        if request.tool_choice:
            body["tool_choice"] = request.tool_choice
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.stop is not None:
        body["stop"] = request.stop
    return body


def to_openai_tools(tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``{name, description, parameters}`` schemas as chat-completions ``function`` tools (a schema a log left its
    name out of, rebuilt, stays without one)."""
    return [
        {
            "type": "function",
            "function": {
                **({"name": t["name"]} if "name" in t else {}),
                "description": t.get("description", ""),
                "parameters": t.get("parameters") or {"type": "object", "properties": {}},
            },
        }
        for t in tools
    ]


def call_text(call: Mapping[str, Any]) -> str:
    """``→ name(arguments)`` of one wire tool call, for display; a name the log left out shows as ``?`` (a DSH
    request leaves out what the block did not hold, as DSH itself posts it)."""
    function = call.get("function")
    function = function if isinstance(function, Mapping) else {}
    return f"→ {function.get('name', '?')}({function.get('arguments', '')})"


def usage_from_openai(raw: Mapping[str, Any]) -> dict[str, int]:
    """DSH ``TokenUsage`` from a chat-completions ``usage`` object.

    ``inputTokens`` is the uncached input: cache hits (DeepSeek's ``prompt_cache_hit_tokens`` or OpenAI's
    ``prompt_tokens_details.cached_tokens``) are reported apart as ``cacheReadTokens``. A count that is no
    integer from 0 to 2**63 - 1 (what a log can hold) is read as absent: the server's bytes are not ours.
    """
    prompt = _count(raw.get("prompt_tokens")) or 0
    details = raw.get("prompt_tokens_details") or {}
    cached = _count(raw.get("prompt_cache_hit_tokens"))
    if cached is None and isinstance(details, Mapping):
        cached = _count(details.get("cached_tokens"))
    usage = {
        "inputTokens": max(prompt - (cached or 0), 0),
        "outputTokens": _count(raw.get("completion_tokens")) or 0,
    }
    if cached is not None:
        usage["cacheReadTokens"] = cached
    completion_details = raw.get("completion_tokens_details") or {}
    reasoning = _count(completion_details.get("reasoning_tokens")) if isinstance(completion_details, Mapping) else None
    if reasoning is not None:
        usage["reasoningTokens"] = reasoning
    return usage


def _count(value: Any) -> int | None:
    """``value`` when it is a token count a log can hold (an integer from 0 below 2**63), else None."""
    count = int_or_none(value)
    return count if count is not None and 0 <= count < 1 << 63 else None
