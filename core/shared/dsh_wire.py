"""DSH messages as DSH's own DeepSeek adapter (``@deepseek-ai/dsh-llm-deepseek``, rc.8) puts them on the wire.

A DSH log's requests are rebuilt with these rules, not with our host's (``core.shared.wire``):

- every message is converted on its own, in surface order; nothing is re-paired or moved;
- an assistant message is ``{role, content, reasoning_content?, tool_calls?}``: ``content`` is its text blocks
  concatenated (``""`` when it has none, also beside tool calls), ``reasoning_content`` its reasoning blocks
  concatenated whenever there are any (on final answers too), each tool call's fields as logged;
- any other message gives a ``user`` message of its text blocks concatenated (sent even when empty, unless the
  message carries tool results), then one ``tool`` message per tool result, whose text is ``(no output)`` when
  empty; a ``system`` message keeps its role;
- the body's keys come in the adapter's order, and optional fields are left out, never sent as null. The
  reasoning effort goes out as ``thinking: {"type": "enabled"}`` plus ``reasoning_effort``, or ``thinking:
  {"type": "disabled"}`` for ``off`` and for the session-title call.

Image blocks are not rebuilt: DSH resolves them from its attachment store, whose bytes are not in the log
(``image_note`` says so for a request that holds any).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

EFFORT_OFF = "off"  # DSH's DeepSeek adapter: off | low | high | max
NO_OUTPUT = "(no output)"


def _js_text(value: Any) -> str:
    """A block's ``text`` as JavaScript's ``Array.join`` turns it into a string."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def _blocks(value: Any) -> list[Mapping[str, Any]]:
    if not isinstance(value, list):
        return []
    return [b for b in value if b.__class__ is dict or isinstance(b, Mapping)]  # a dict without the ABC's check


def joined(blocks: Iterable[Mapping[str, Any]], kind: str = "text") -> str:
    """The ``text`` of the blocks of one type, concatenated with nothing between them."""
    texts = [t if (t := b.get("text")).__class__ is str else _js_text(t) for b in blocks if b.get("type") == kind]
    return texts[0] if len(texts) == 1 else "".join(texts)  # one text as it is (what ``join`` gives), no call


def _made(blocks: list[Mapping[str, Any]], kind: str, empty: bool = False) -> bool:
    """True when ``joined(blocks, kind)`` makes a string anew: the texts of several blocks, or a text that is not a
    string; with ``empty``, also when it is empty (a tool result's is then ``NO_OUTPUT``)."""
    text = None
    for b in blocks:
        if b.get("type") == kind and (text is not None or (text := b.get("text")).__class__ is not str):
            return True
    return empty and not text


def makes_text(message: Mapping[str, Any]) -> bool:
    """True when a string of ``dsh_wire(message)`` under ``content`` or ``reasoning_content`` is not one of
    ``message``'s own: ``joined`` of several blocks or of a text that is not a string, or ``NO_OUTPUT``. (Its other
    strings are always ``message``'s own, or a role or ``function`` under ``role`` and ``type``.)"""
    blocks = _blocks(message.get("content"))
    if _made(blocks, "text"):
        return True
    role = message.get("role")
    if role == "assistant":
        return _made(blocks, "reasoning")
    return role != "system" and any(_made(_blocks(b.get("content")), "text", True) for b in blocks
                                    if b.get("type") == "tool-result")  # fmt: skip


def _present(source: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """The keys ``source`` holds, in the order given (JSON leaves out what JavaScript holds as undefined)."""
    return {key: source[key] for key in keys if key in source}


def _assistant(blocks: list[Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant", "content": joined(blocks)}
    reasoning = joined(blocks, "reasoning")
    if reasoning:
        out["reasoning_content"] = reasoning
    calls = [
        {**_present(b, "id"), "type": "function", "function": _present(b, "name", "arguments")}
        for b in blocks
        if b.get("type") == "tool-call"
    ]
    if calls:
        out["tool_calls"] = calls
    return out


def _lone_result(message: Mapping[str, Any]) -> tuple[Mapping[str, Any], str] | None:
    """DSH's tool result (most surface nodes): its one result block and that block's one text, else None."""
    content = message.get("content")
    role = message.get("role")
    if content.__class__ is list and len(content) == 1 and role != "assistant" and role != "system":
        result = content[0]
        if result.__class__ is dict and result.get("type") == "tool-result":
            inner = result.get("content")
            if inner.__class__ is list and len(inner) == 1 and (block := inner[0]).__class__ is dict \
                    and block.get("type") == "text" and (text := block.get("text")).__class__ is str:  # fmt: skip
                return result, text
    return None


def dsh_wire(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The wire messages of one DSH message."""
    lone = _lone_result(message)
    if lone is not None:  # one tool message, built without the general walk below
        result, text = lone
        wire = {"role": "tool", "tool_call_id": result["toolCallId"]} if "toolCallId" in result else {"role": "tool"}
        wire["content"] = text or NO_OUTPUT
        return [wire]
    blocks = _blocks(message.get("content"))
    role = message.get("role")
    if role == "system":
        return [{"role": "system", "content": joined(blocks)}]
    if role == "assistant":
        return [_assistant(blocks)]
    results = [b for b in blocks if b.get("type") == "tool-result"]
    content = joined(blocks)
    out = [{"role": "user", "content": content}] if content or not results else []
    for result in results:
        text = joined(_blocks(result.get("content"))) or NO_OUTPUT
        call = {"tool_call_id": result["toolCallId"]} if "toolCallId" in result else {}
        out.append({"role": "tool", **call, "content": text})
    return out


# The bytes ``orjson.dumps`` writes around a wire message's values (``wire_digest``)
_SYSTEM, _USER, _ASSISTANT = len(b'{"role":"system","content":}'), len(b'{"role":"user","content":}'), len(b'{"role":"assistant","content":}')  # fmt: skip
_REASONING, _CALLS = len(b',"reasoning_content":'), len(b',"tool_calls":[]')
_CALL, _CALL_ID, _NAME, _ARGUMENTS = len(b'{"type":"function","function":{}}'), len(b'"id":,'), len(b'"name":'), len(b'"arguments":')  # fmt: skip
_TOOL, _TOOL_ID = len(b'{"role":"tool","content":}'), len(b'"tool_call_id":,')


def wire_digest(message: Mapping[str, Any]) -> tuple[int, int, int, int]:
    """``dsh_wire(message)`` measured without building it: the bytes its wire messages take as JSON (each as
    ``orjson.dumps`` writes it, summed), whether the message holds an image (``has_image``: 1 or 0), how many wire
    messages it gives, and the code points of their content, reasoning and tool-call arguments."""
    dumps = orjson.dumps
    lone = _lone_result(message)
    if lone is not None:
        result, text = lone
        text = text or NO_OUTPUT
        size = _TOOL + len(dumps(text))
        if "toolCallId" in result:
            size += _TOOL_ID + len(dumps(result["toolCallId"]))
        return size, 0, 1, len(text)
    role = message.get("role")
    content = message.get("content")
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[Mapping[str, Any]] = []
    results: list[tuple[Mapping[str, Any], list[Mapping[str, Any]]]] = []
    image = 0
    for b in _blocks(content):
        kind = b.get("type")
        if kind == "text":
            texts.append(t if (t := b.get("text")).__class__ is str else _js_text(t))
        elif kind == "reasoning":
            reasoning.append(t if (t := b.get("text")).__class__ is str else _js_text(t))
        elif kind == "tool-call":
            calls.append(b)
        elif kind == "tool-result":
            inner = _blocks(b.get("content"))
            results.append((b, inner))
            if not image and _holds_image(inner):
                image = 1
        elif kind == "image":
            image = 1
    content = texts[0] if len(texts) == 1 else "".join(texts)
    if role == "system":
        return _SYSTEM + len(dumps(content)), image, 1, len(content)
    if role == "assistant":
        size, chars = _ASSISTANT + len(dumps(content)), len(content)
        if reasoning:
            thought = reasoning[0] if len(reasoning) == 1 else "".join(reasoning)
            if thought:
                size += _REASONING + len(dumps(thought))
                chars += len(thought)
        if calls:
            size += _CALLS + len(calls) - 1
            for call in calls:
                size += _CALL + (_CALL_ID + len(dumps(call["id"])) if "id" in call else 0)
                fields = 0
                if "name" in call:
                    size += _NAME + len(dumps(call["name"]))
                    fields += 1
                if "arguments" in call:
                    size += _ARGUMENTS + len(dumps(arguments := call["arguments"]))
                    fields += 1
                    if isinstance(arguments, str):
                        chars += len(arguments)
                size += fields - 1 if fields else 0
        return size, image, 1, chars
    size = chars = count = 0
    if content or not results:
        size, chars, count = _USER + len(dumps(content)), len(content), 1
    for result, inner in results:
        text = joined(inner) or NO_OUTPUT
        size += _TOOL + len(dumps(text)) + (_TOOL_ID + len(dumps(result["toolCallId"])) if "toolCallId" in result else 0)
        chars += len(text)
        count += 1
    return size, image, count, chars


def _holds_image(blocks: list[Mapping[str, Any]]) -> bool:
    for b in blocks:
        kind = b.get("type")
        if kind == "image" or (kind == "tool-result" and _holds_image(_blocks(b.get("content")))):
            return True
    return False


def has_image(messages: Iterable[Mapping[str, Any]]) -> bool:
    """True when any message (or a tool result in it) holds an image block."""
    return any(_holds_image(_blocks(m.get("content"))) for m in messages)


IMAGE_NOTE = "image content (DSH reads it from its attachment store; its bytes are not in the log)"


class DshMessages:
    """DSH messages converted one at a time, with the interface of ``OpenAIMessages`` (``add``, ``mark``,
    ``resume``, ``result``) so ``core.rebuild.request.WireCache`` can resume either conversion."""

    __slots__ = ("out",)

    def __init__(self, system: str | None) -> None:
        self.out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []

    def mark(self) -> tuple[int, tuple[str, ...], tuple[dict[str, Any], ...]]:
        """Where the conversion stands (only its length: DSH keeps no state between messages)."""
        return len(self.out), (), ()

    @classmethod
    def resume(
        cls, out: list[dict[str, Any]], mark: tuple[int, tuple[str, ...], tuple[dict[str, Any], ...]]
    ) -> DshMessages:
        """The conversion as it stood at ``mark``, taken while it produced ``out``."""
        done = cls(None)
        done.out = out[: mark[0]]
        return done

    def add(self, message: Mapping[str, Any]) -> None:
        """Convert the next message."""
        self.out.extend(dsh_wire(message))

    def result(self) -> list[dict[str, Any]]:
        """The messages converted so far (a new list)."""
        return list(self.out)


def thinking_fields(effort: str | None, title: bool = False) -> dict[str, Any]:
    """The adapter's thinking fields: none when the effort is not known."""
    if title or effort == EFFORT_OFF:
        return {"thinking": {"type": "disabled"}}
    if effort is None:
        return {}
    return {"thinking": {"type": "enabled"}, "reasoning_effort": effort}


def dsh_tools(tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Tool schemas as the adapter sends them: each field as logged, none filled in."""
    return [{"type": "function", "function": _present(t, "name", "description", "parameters")} for t in tools]


def dsh_body(
    model: str,
    messages: list[dict[str, Any]],
    tools: list[Mapping[str, Any]],
    thinking: dict[str, Any],
    max_tokens: int | None = None,
    temperature: float | None = None,
    stop: str | list[str] | None = None,
) -> dict[str, Any]:
    """The chat-completions body in the adapter's key order (``messages``: wire messages, system first)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        **thinking,
    }
    if tools:
        body["tools"] = dsh_tools(tools)
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if stop is not None:
        body["stop"] = stop
    return body
