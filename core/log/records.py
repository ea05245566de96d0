"""Decoding storage records into events: packed chunk rows, legacy shapes, synthesized envelopes."""

from __future__ import annotations

from itertools import accumulate, islice
from typing import Any

from core.log.validate import INVALID, MAX_COUNTER, as_time, problem
from core.log.vocabulary import PACKED_ROW_TYPES

# the integers a log's JSON holds (what orjson reads as an int, and writes back): a member's time must be one
TIME_RANGE = (-(1 << 63), (1 << 64) - 1)

_ROW_DELTA = {"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta"}


class RecordError(ValueError):
    """A storage record is malformed; the message says how."""


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def row_parts(row: dict[str, Any]) -> tuple[str, dict[str, Any], list[str], list[int], int, int, int]:
    """A packed row's type, ``data``, members, ``dt``, turn, step and the code points its members stream, once it
    is validated (RecordError names what is wrong)."""
    kind = row["type"]
    try:  # a row as a log holds it passes these checks, which ``_checked_row_parts`` makes one by one, at once
        data = row["data"]
        pieces = data["args" if kind == "tool-call-chunks" else "texts"]
        dt, turn, step, index = data["dt"], data["turn"], data["step"], data["index"]
        if (
            pieces.__class__ is list
            and pieces
            and dt.__class__ is list
            and len(dt) == len(pieces) - 1
            and [*map(type, dt)].count(int) == len(dt)
            and turn.__class__ is int
            and step.__class__ is int
            and index.__class__ is int
            and 0 <= turn <= MAX_COUNTER
            and 0 <= step <= MAX_COUNTER
            and ((name := data.get("name")) is None or name.__class__ is str)
        ):
            return kind, data, pieces, dt, turn, step, len("".join(pieces))  # a member that is no str raises
    except (KeyError, TypeError):  # a key missing, data no object, a member no string: ``_checked_row_parts`` tells
        pass
    return _checked_row_parts(row, kind)


def _checked_row_parts(row: dict[str, Any], kind: str) -> tuple[str, dict[str, Any], list[str], list[int], int, int, int]:
    """``row_parts``, check by check: the parts of a row of any shape that passes, else RecordError naming the first
    check it fails."""
    data = row.get("data")
    if not isinstance(data, dict):
        raise RecordError(f"malformed {kind} row: data is not an object")
    pieces = data.get("args" if kind == "tool-call-chunks" else "texts")
    dt = data.get("dt")
    try:  # join checks every member is a str in C (orjson gives exact str) and measures them at once
        chars = len("".join(pieces)) if isinstance(pieces, list) and pieces else -1
    except TypeError:
        chars = -1
    if chars < 0:
        raise RecordError(f"malformed {kind} row: members must be a non-empty list of strings")
    gaps = len(pieces) - 1
    # [*map(type, …)].count(int) checks a whole list in C: an exact int each (bool is an int subclass, no dt)
    if not isinstance(dt, list) or len(dt) != gaps or [*map(type, dt)].count(int) != gaps:
        raise RecordError(f"malformed {kind} row: dt must hold {gaps} integers")
    turn, step, index = data.get("turn"), data.get("step"), data.get("index")
    if not (  # exact ints first: the common case without a call
        (turn.__class__ is int and step.__class__ is int and index.__class__ is int
         and 0 <= turn <= MAX_COUNTER and 0 <= step <= MAX_COUNTER)
        or (_counter(turn) and _counter(step) and _int(index))
    ):  # fmt: skip
        raise RecordError(f"malformed {kind} row: turn, step and index must be integers from 0 to {MAX_COUNTER}")
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        raise RecordError(f"malformed {kind} row: name must be a string")
    return kind, data, pieces, dt, turn, step, chars


class PackedRow:
    """A validated packed chunk row standing for ``count`` ``assistant/chunk`` events from ``seq0`` on.

    Decoding keeps the row as it is: its members are counted and attributed to their turn and step without
    building a dict per delta (nearly every event of a log is one), and ``event(k)`` builds member ``k`` only
    when someone reads it.
    """

    __slots__ = ("seq0", "count", "turn", "step", "chars", "time0", "_kind", "_data", "_pieces", "_times")

    def __init__(self, row: dict[str, Any], seq0: int, time0: int) -> None:
        """Validate ``row`` (RecordError names what is wrong); its members get ``seq0``… and times from ``time0``."""
        kind, data, pieces, dt, turn, step, chars = row_parts(row)
        if not _times_fit(time0, dt):
            raise RecordError(
                f"malformed {kind} row: time0 plus the running sum of dt must stay from -2**63 to 2**64-1"
            )
        self.seq0 = seq0
        self.count = len(pieces)
        self.chars = chars  # code points of every member's delta (text or tool-call arguments)
        self.turn: int = turn
        self.step: int = step
        self.time0 = time0  # the first member's time
        self._kind = kind
        self._data = data
        self._pieces = pieces
        self._times: list[int] | tuple[int, list[int]] = (time0, dt)

    def times(self) -> list[int]:
        """Every member's time (``time0`` plus the running sum of ``dt``), computed once."""
        if isinstance(self._times, tuple):
            t, dt = self._times
            self._times = list(accumulate(dt, initial=t))
        return self._times

    def steady(self) -> tuple[int, int] | None:
        """The times of the second member and of the last, when each member after the second is dated no earlier
        than the one before it (its ``dt`` is not negative), else None (and for a row of one member): what a
        clock that only goes forward needs of the rest of the row, without ``times()``' list."""
        dt = self._data["dt"]
        if not dt or min(islice(dt, 1, None), default=0) < 0:
            return None
        return self.time0 + dt[0], self.time0 + sum(dt)

    def deltas(self) -> tuple[str, str | None, list[str]]:
        """What every member's chunk holds, as ``event(k)`` builds it: the chunk type (``text-delta``,
        ``reasoning-delta``, ``tool-call-delta``), the tool name of a tool-call row (None for a row without one,
        and for text), and each member's delta in order."""
        if self._kind == "tool-call-chunks":
            return "tool-call-delta", self._data.get("name"), self._pieces
        return _ROW_DELTA[self._kind], None, self._pieces

    def event(self, k: int) -> dict[str, Any]:
        """Member ``k`` (0-based) as a full ``assistant/chunk`` event."""
        data, index = self._data, self._data["index"]
        if self._kind == "tool-call-chunks":
            chunk: dict[str, Any] = {"type": "tool-call-delta", "index": index, "id": data.get("id")}
            if "name" in data:
                chunk["name"] = data["name"]
            chunk["argumentsDelta"] = self._pieces[k]
        else:
            chunk = {"type": _ROW_DELTA[self._kind], "index": index, "text": self._pieces[k]}
        return {
            "type": "assistant/chunk",
            "seq": self.seq0 + k,
            "time": self.times()[k],
            "data": {"turn": self.turn, "step": self.step, "chunk": chunk},
        }

    def events(self) -> list[dict[str, Any]]:
        """Every member as a full event."""
        return [self.event(k) for k in range(self.count)]


def decode_row(row: dict[str, Any], seq0: int, time0: int) -> tuple[PackedRow | list[dict[str, Any]], str | None]:
    """A packed row as a ``PackedRow`` and None; for a malformed row, ``row_member_count(row)`` placeholder events
    (the row's own type and data, marked ``validate.INVALID``) and the problem: a row's seqs are counted
    from its shape alone, so a bad row must still fill the seqs it claims."""
    try:
        return PackedRow(row, seq0, time0), None
    except RecordError as exc:
        problem = str(exc)
        return row_placeholders(row, seq0, time0, problem), problem


def row_placeholders(row: dict[str, Any], seq0: int, time0: int, problem: str) -> list[dict[str, Any]]:
    """The ``row_member_count(row)`` placeholder events of a malformed row: its own type and data, marked
    ``validate.INVALID`` with ``problem``."""
    data = row.get("data")
    return [
        {"type": row["type"], "seq": seq0 + k, "time": time0, "data": data, INVALID: problem}
        for k in range(row_member_count(row))
    ]


def expand_row(row: dict[str, Any], seq0: int, time0: int) -> tuple[list[dict[str, Any]], str | None]:
    """Expand a packed ``text-chunks``/``reasoning-chunks``/``tool-call-chunks`` row into chunk events.

    Returns the events and None, or the placeholder events of a malformed row and the problem (``decode_row``).
    """
    packed, problem = decode_row(row, seq0, time0)
    return (packed.events() if isinstance(packed, PackedRow) else packed), problem


def _times_fit(time0: int, dt: list[int]) -> bool:
    """Whether every member's time (``time0`` plus the running sum of ``dt``) lies in ``TIME_RANGE``: at once when
    the widest any run of ``dt`` could reach stays in it (the common case: small gaps), else member by member."""
    low, high = TIME_RANGE
    reach = len(dt) * max(-min(dt, default=0), max(dt, default=0))
    if low <= time0 - reach and time0 + reach <= high:
        return True
    times = list(accumulate(dt, initial=time0))
    return low <= min(times) and max(times) <= high


def _counter(value: Any) -> bool:
    return _int(value) and 0 <= value <= MAX_COUNTER


def row_member_count(row: dict[str, Any]) -> int:
    """How many seqs a packed row fills: one per ``dt`` gap plus one, else one per member."""
    data = row.get("data")
    if not isinstance(data, dict):
        return 0
    dt = data.get("dt")
    if isinstance(dt, list):
        return len(dt) + 1
    pieces = data.get("args" if row.get("type") == "tool-call-chunks" else "texts")
    return len(pieces) if isinstance(pieces, list) else 0


def upgrade_legacy(event: dict[str, Any], session_id: str) -> bool:
    """Upgrade the legacy shapes DSH still accepts (spec §2.5) in place; return True if anything changed."""
    etype = event.get("type")
    data = event.get("data")
    if not isinstance(data, dict):
        return False
    seq = event.get("seq")
    if etype == "steering/message":
        event["type"] = etype = "user/message"
        _legacy_user(data, session_id, seq)
        return True
    if etype == "turn/start" and "trigger" in data:
        del data["trigger"]
        return True
    if etype == "user/message" and ("id" not in data or "role" not in data):
        _legacy_user(data, session_id, seq)
        return True
    if etype == "assistant/message" and "message" not in data and "content" in data:
        provenance = data.pop("provenance", None) or {}
        data["message"] = {
            "id": f"legacy-message:{session_id}:{seq}",
            "role": "assistant",
            "content": data.pop("content"),
            "source": {**provenance, "kind": "model"},
        }
        return True
    if etype == "tool/result" and "message" not in data and "callId" in data:
        call_id = data.pop("callId")
        block: dict[str, Any] = {
            "type": "tool-result",
            "toolCallId": call_id,
            "content": data.pop("content", []),
        }
        if "isError" in data:
            block["isError"] = data.pop("isError")
        data["message"] = {
            "id": f"legacy-message:{session_id}:{seq}",
            "role": "user",
            "content": [block],
            "source": {"kind": "tool", "callId": call_id},
        }
        return True
    if etype == "turn/end":
        return _legacy_turn_end(data)
    return False


def _legacy_user(data: dict[str, Any], session_id: str, seq: Any) -> None:
    data.setdefault("id", f"legacy-message:{session_id}:{seq}")
    data.setdefault("role", "user")
    data.setdefault("source", {"kind": "user"})


def _legacy_turn_end(data: dict[str, Any]) -> bool:
    reason = data.get("reason")
    if isinstance(reason, str):
        reason = data["reason"] = {"kind": reason}
        changed = True
    else:
        changed = False
    if not isinstance(reason, dict):
        return changed
    kind = reason.get("kind")
    if kind == "disposed":
        data["reason"] = {"kind": "aborted", "reason": {"kind": "disposed"}}
        return True
    if kind == "aborted" and "reason" not in reason:
        data["reason"] = {"kind": "aborted", "reason": {"kind": "legacy"}}
        return True
    if kind == "error" and "error" not in reason:
        failure = reason.get("failure") if isinstance(reason.get("failure"), dict) else reason
        data["reason"] = {
            "kind": "error",
            "error": {
                "message": str(failure.get("message", "")),
                "code": str(failure.get("code", "UNKNOWN")),
            },
        }
        return True
    return changed


def is_packed_row(obj: dict[str, Any]) -> bool:
    """True for a packed chunk row (its tag has no slash, so it cannot collide with an event type)."""
    etype = obj.get("type")
    return isinstance(etype, str) and etype in PACKED_ROW_TYPES


def complete_event(event: dict[str, Any], seq: int, session_id: str) -> bool:
    """Give a decoded event line its envelope (seq, integer time, data), upgrade its legacy shape and validate it.

    A missing or non-string type becomes ``"?"`` (returns True then); a bad field sets ``validate.INVALID``.
    Every decoding path (the decoder, read-backs, tail previews) finishes an event line here.
    """
    etype = event.get("type")
    untyped = not isinstance(etype, str) or not etype
    if untyped:
        event["type"] = etype = "?"
    event["seq"] = seq
    event["time"] = as_time(event.get("time"))
    if "data" not in event:
        event["data"] = {}
    if etype in _LEGACY_SHAPED:
        upgrade_legacy(event, session_id)
    found = problem(event)  # ``validate.mark``, without the call: every event line comes here
    if found is not None:
        event[INVALID] = found
    elif INVALID in event:
        del event[INVALID]
    return untyped


# The types ``upgrade_legacy`` may change: the rest skip the call.
_LEGACY_SHAPED = frozenset(
    {"steering/message", "turn/start", "user/message", "assistant/message", "tool/result", "turn/end"}
)
