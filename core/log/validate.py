"""Event validation at the decoding boundary: the typed fields readers rely on, checked once per event.

Every reader (the projection, summaries, the CLI, the TUI, the policies) reads a few fields of each event with
``dict.get`` and uses them as the DSH spec types them: a turn as a dict key, a content list to iterate, a text
to join. ``problem`` checks exactly those fields, and only when present (a missing field is the readers' own
business), so a hostile value cannot reach them; of every event, whatever its type, ``data`` must be an object
and ``data.turn``/``data.step`` counters. The decoders call ``mark`` on each event they produce: a bad
event keeps its place and its payload, gets ``event[INVALID]`` set to the problem, and is shown but never
projected (``core.read.session.Session.apply`` and ``derive_message`` treat it as opaque), and every other reader
gets it through ``readable``, the validated view the event stores serve: an opaque stand-in without its
payload. Packed chunk rows are validated by ``core.log.records.expand_row`` instead.

The checks are plain ``isinstance`` tests dispatched on the event type, over dicts orjson already built. A
typed decoder (msgspec) was measured as well: its typed decode alone costs about what orjson's decode does,
but every reader works on dicts and a bad event must be kept as it is, so it would decode each line twice.
``bench/fuzz.py`` reports what the checks cost next to the JSON parse of the same lines.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

INVALID = "invalid"  # key set on an event whose fields would break a reader; holds the problem

_KINDS = {
    dict: "an object",
    list: "a list",
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


def kind_of(value: Any) -> str:
    """What kind of JSON value ``value`` is, as a message names it (``a list``, ``an integer``, ``null``)."""
    return _KINDS.get(type(value), type(value).__name__)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _want(where: str, value: Any, expected: str) -> str:
    return f"{where} is {kind_of(value)}, expected {expected}"


MAX_COUNTER = (1 << 31) - 1  # turn and step numbers beyond this fit no reader's table


def time_problem(value: Any, key: str) -> str | None:
    """What is wrong with an event's ``time`` or a row's ``time0`` (``key``): None when it is an integer or absent
    (orjson reads an integer past 64 bits as a float: a number)."""
    if value is None or value.__class__ is int:
        return None
    return _want(key, value, "an integer")


def as_time(value: Any) -> int:
    """An event's ``time`` or a row's ``time0`` as readers take it: itself when an integer, else 0 (``time_problem``
    says why)."""
    return value if value.__class__ is int else 0


def _ints(data: dict[str, Any], *keys: str) -> str | None:
    """Turn/step counters: integers from 0 to MAX_COUNTER."""
    for key in keys:
        value = data.get(key)
        if value is None or (type(value) is int and 0 <= value <= MAX_COUNTER):  # the common case, fast
            continue
        if not (_is_int(value) and 0 <= value <= MAX_COUNTER):
            expected = f"an integer from 0 to {MAX_COUNTER}"
            if _is_int(value):
                return f"data.{key} {value} is out of range, expected {expected}"
            return _want(f"data.{key}", value, expected)
    return None


def _objects(data: dict[str, Any], where: str, *keys: str) -> str | None:
    for key in keys:
        value = data.get(key)
        if value is not None and not isinstance(value, dict):
            return _want(f"{where}.{key}", value, "an object")
    return None


def _sub(data: dict[str, Any], key: str, where: str) -> tuple[dict[str, Any] | None, str | None]:
    """``data[key]`` when it is an object (None when absent), or the problem when it is something else."""
    value = data.get(key)
    if value is None or isinstance(value, dict):
        return value, None
    return None, _want(f"{where}.{key}", value, "an object")


def _numbers(data: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = data.get(key)
        if value is not None and not isinstance(value, (int, float)):
            return _want(f"data.{key}", value, "a number")
    return None


def _blocks(blocks: Any) -> str | None:
    """Content blocks: a list; text/reasoning text a string, tool-call arguments a string, nested results too.

    The problem is told from the blocks on (`` is a string, …`` or ``[2].text is a list, …``): the caller puts
    where they are in front of it, so the common case builds no string."""
    if blocks is None:
        return None
    if not isinstance(blocks, list):
        return _want("", blocks, "a list of content blocks")
    for i, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue  # readers skip non-object blocks
        btype = block.get("type")
        if btype == "text" or btype == "reasoning":
            if "text" in block and not isinstance(block["text"], str):
                return _want(f"[{i}].text", block["text"], "a string")
        elif btype == "tool-call":
            args = block.get("arguments")
            if args is not None and not isinstance(args, str):
                return _want(f"[{i}].arguments", args, "a JSON string")
        elif btype == "tool-result":
            inner = _blocks(block.get("content"))
            if inner:
                return f"[{i}].content{inner}"
    return None


def _message(message: Any, where: str) -> str | None:
    """A model-visible message: a string role, a content block list, a source object with a string callId."""
    if not isinstance(message, dict):
        return _want(where, message, "an object")
    role = message.get("role")
    if not isinstance(role, str):
        return f"{where}.role is missing" if role is None else _want(f"{where}.role", role, "a string")
    problem = _blocks(message.get("content"))
    if problem:
        return f"{where}.content{problem}"
    source = message.get("source")
    if source is None:
        return None
    if not isinstance(source, dict):
        return _want(f"{where}.source", source, "an object")
    call_id = source.get("callId")
    if call_id is not None and not isinstance(call_id, str):
        return _want(f"{where}.source.callId", call_id, "a string")
    return None


def _step_scoped(data: dict[str, Any]) -> str | None:
    turn, step = data.get("turn"), data.get("step")
    if (turn is None or (turn.__class__ is int and 0 <= turn <= MAX_COUNTER)) and (
        step is None or (step.__class__ is int and 0 <= step <= MAX_COUNTER)
    ):
        return None  # the common case, without the general loop
    return _ints(data, "turn", "step")


def _user_message(data: dict[str, Any]) -> str | None:
    return _message(data, "data")


def _assistant_message(data: dict[str, Any]) -> str | None:
    problem = _step_scoped(data) or _objects(data, "data", "usage")
    if problem or data.get("message") is None:
        return problem
    return _message(data["message"], "data.message")


def _tool_result(data: dict[str, Any]) -> str | None:
    problem = _step_scoped(data)
    if problem or data.get("message") is None:
        return problem
    return _message(data["message"], "data.message")


def _counted(data: dict[str, Any]) -> tuple[int, int, dict[str, Any]] | None:
    """``(turn, step, chunk)`` when the ``data`` of an ``assistant/chunk`` event gives both counters in range and an
    object chunk; None otherwise."""
    try:  # subscripts cost less than ``get``; a missing key is no delta either
        turn, step, chunk = data["turn"], data["step"], data["chunk"]
    except KeyError:
        return None
    if (
        turn.__class__ is int
        and step.__class__ is int
        and 0 <= turn <= MAX_COUNTER
        and 0 <= step <= MAX_COUNTER
        and chunk.__class__ is dict
    ):
        return turn, step, chunk
    return None


def delta_of(data: dict[str, Any]) -> tuple[int, int, dict[str, Any]] | None:
    """``(turn, step, chunk)`` when the ``data`` of an ``assistant/chunk`` event gives both counters and passes
    ``chunk_problem`` and its chunk is not a step's ``finish``: a stream delta or usage sample, which the decoder's
    fast path takes with nothing left to check. None otherwise (``chunk_problem`` says what is wrong, if anything)."""
    counted = _counted(data)
    if counted is not None:
        chunk = counted[2]
        ctype = chunk.get("type")
        # a usage chunk's usage an object or absent (``_objects``, without the call)
        if ctype != "finish" and (ctype != "usage" or (usage := chunk.get("usage")) is None or isinstance(usage, dict)):
            return counted
    return None


def finish_of(data: dict[str, Any]) -> tuple[int, int, dict[str, Any]] | None:
    """``(turn, step, chunk)`` when the ``data`` of an ``assistant/chunk`` event gives both counters and its chunk is
    a step's ``finish`` with a reason object and no ``failure`` in it, which ``chunk_problem`` passes. None
    otherwise (``chunk_problem`` says what is wrong, if anything)."""
    counted = _counted(data)
    if (
        counted is not None
        and counted[2].get("type") == "finish"
        and (reason := counted[2].get("reason")).__class__ is dict
        and reason.get("failure") is None
    ):
        return counted
    return None


def chunk_problem(data: dict[str, Any]) -> str | None:
    """What makes the ``data`` of an ``assistant/chunk`` event unsafe to read, or None (``delta_of`` passes the
    common case)."""
    if delta_of(data) is not None:
        return None
    problem = _step_scoped(data)
    if problem:
        return problem
    chunk = data.get("chunk")
    if chunk.__class__ is not dict:
        return _sub(data, "chunk", "data")[1]
    ctype = chunk.get("type")
    if ctype == "usage":
        return _objects(chunk, "data.chunk", "usage")
    if ctype == "finish":
        reason, problem = _sub(chunk, "reason", "data.chunk")
        return problem if reason is None else _objects(reason, "data.chunk.reason", "failure")
    return None


def _turn_end(data: dict[str, Any]) -> str | None:
    reason, problem = _sub(data, "reason", "data")
    if reason is None:
        return problem
    kind = reason.get("kind")
    if kind is not None and not isinstance(kind, str):
        return _want("data.reason.kind", kind, "a string")
    return _objects(reason, "data.reason", "error", "reason")


def _request_header(data: dict[str, Any]) -> str | None:
    header, problem = _sub(data, "header", "data")
    return problem if header is None else _objects(header, "data.header", "config")


def _spliced(data: dict[str, Any]) -> str | None:
    inserted = data.get("inserted")
    if inserted is not None and not isinstance(inserted, list):
        return _want("data.inserted", inserted, "a list")
    return None


def _strings(data: dict[str, Any], *keys: str) -> str | None:
    """Names and ids readers compare and look up: strings when present."""
    for key in keys:
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            return _want(f"data.{key}", value, "a string")
    return None


def _code_dispatch(data: dict[str, Any]) -> str | None:
    problem = _strings(data, "name", "rootCallId")
    if problem:
        return problem
    problem = _blocks(data.get("content"))
    return f"data.content{problem}" if problem else None


def _retry(data: dict[str, Any]) -> str | None:
    return _objects(data, "data", "failure")


def _route(data: dict[str, Any]) -> str | None:
    return _objects(data, "data", "risk") or _numbers(data, "charsRemoved")


def _rewind(data: dict[str, Any]) -> str | None:
    return _numbers(data, "foldedChars", "reportChars")


def _config(data: dict[str, Any]) -> str | None:
    changes, problem = _sub(data, "changes", "data")
    if changes is None:
        return problem
    for key, change in changes.items():  # each one is read as {old, new}
        if not isinstance(change, dict):
            return _want(f"data.changes.{key}", change, "an object")
    return None


def _scoped(check: Callable[[dict[str, Any]], str | None]) -> Callable[[dict[str, Any]], str | None]:
    """``check`` after the turn/step counters every event type shares."""
    return lambda data: _step_scoped(data) or check(data)


# Each type's check; every other type gets the shared one: its data an object, its turn and step counters.
_CHECKS: dict[str, Callable[[dict[str, Any]], str | None]] = {
    "turn/start": _step_scoped,
    "turn/end": _scoped(_turn_end),
    "step/start": _step_scoped,
    "step/end": _step_scoped,
    "tool/call": _step_scoped,
    "user/message": _scoped(_user_message),
    "assistant/message": _assistant_message,
    "tool/result": _tool_result,
    "assistant/chunk": chunk_problem,
    "request/header": _scoped(_request_header),
    "agent/inbox/spliced": _scoped(_spliced),
    "tool/code-dispatch": _scoped(_code_dispatch),
    "llm/retry": _scoped(_retry),
    "tapedeck/route": _scoped(_route),
    "tapedeck/rewind": _scoped(_rewind),
    "tapedeck/config": _scoped(_config),
}


def problem(event: dict[str, Any]) -> str | None:
    """What makes ``event`` unsafe to read (``data.turn is a list, expected an integer`` …), or None."""
    sources = event.get("sourceEventSeqs")
    if sources is not None and not isinstance(sources, list):  # its items are the projection's to check
        return _want("sourceEventSeqs", sources, "a list of seqs")
    data = event.get("data")
    if data.__class__ is not dict:
        return _want("data", data, "an object")
    return _CHECKS.get(event.get("type"), _step_scoped)(data)  # type: ignore[arg-type]


def mark(event: dict[str, Any]) -> str | None:
    """Validate ``event`` in place: set ``event[INVALID]`` to its problem (or clear a stale one); return it."""
    found = problem(event)
    if found is not None:
        event[INVALID] = found
    elif INVALID in event:
        del event[INVALID]
    return found


def is_invalid(event: dict[str, Any]) -> bool:
    """True for an event ``mark`` found unsafe to read."""
    return INVALID in event


def readable(event: dict[str, Any]) -> dict[str, Any]:
    """The validated view of ``event``: itself when it is safe to read, else an opaque stand-in.

    The stand-in keeps the event's type, seq, time and problem (``INVALID``) and has empty ``data`` and no
    surface fields, so a reader that dispatches on the type finds nothing to read. The session's event stores
    serve every event through this; only what displays an event asks for the raw one.
    """
    if INVALID not in event:
        return event
    return {"type": event.get("type"), "seq": event.get("seq"), "time": event.get("time"), "data": {},
            INVALID: event[INVALID]}  # fmt: skip
