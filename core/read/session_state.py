"""A ``Session``'s projection state as plain data and back: what the persistent index (``core.read.index``)
stores so that a reopen decodes only the bytes after it.

``encode`` gives a JSON-able tree and a few binary columns (the per-event arrays, handed over as the buffers the
session holds, not copied: the index packs them once); ``decode`` rebuilds a
``Session`` from them and checks every field's type and the counts that tie them together, raising
``StateError`` on anything else: the bytes come from a file anyone may have damaged. Every attribute a
``Session`` holds is listed in ``FIELDS``, and those of its parts in ``PARTS`` and ``STREAM_FIELDS``; a session
with one this module does not know is not encoded (``encode`` raises ``StateError``), so a new projection field
can never be silently left out of an index.
"""

from __future__ import annotations

import dataclasses
import struct
from array import array
from collections.abc import Callable
from itertools import chain, islice
from operator import attrgetter, is_, itemgetter
from pathlib import Path
from typing import Any, TypeAlias

from core.log.validate import problem
from core.read.runs import Runs
from core.read.session import Cut, Session, Step, ToolCall, Turn
from core.read.streams import StreamBlocks
from core.read.usage import UsageTally
from core.shared.diagnostics import Diagnostic

# Every attribute of a ``Session``; the first three are the caller's (the store, the path), never stored.
FIELDS = frozenset(
    {
        "header", "path", "events", "_retain", "next_seq", "compressed", "surface", "_live", "diagnostics",
        "turns", "usage_tally", "_max_turn", "tool_calls", "_calls", "results_by_step", "replaced_by",
        "shadowed", "_sources", "_chars", "_surface_types", "_turn_at", "_step_at", "_in_turn", "open_turn",
        "last_ended", "completed_through", "_current_turn", "_current_step", "_request_header",
        "request_header_seq", "counts", "surface_chars", "context_samples", "_request_due", "_system_chars",
        "aborted_finishes", "failed_sub_calls", "cuts", "streams",
    }
)  # fmt: skip
_STREAM_COLUMNS = ("starts", "ends", "_keys", "chars", "hidden_before", "heads")
# The fields of the parts it holds, as this module stores them: a part that grows a field is not encoded either.
PARTS: dict[type, tuple[str, ...]] = {
    Turn: ("number", "start_seq", "end_seq", "end_reason", "steps"),
    Step: ("turn", "step", "start_seq", "end_seq", "usage"),
    ToolCall: ("call_id", "name", "arguments", "turn", "step", "message_seq", "call_seq", "result_seq", "result_error"),
    Cut: ("seq", "kind", "nodes", "chars_removed", "turn"),
    UsageTally: ("hit", "miss", "output", "reporting", "used"),
    Diagnostic: ("code", "message", "offset", "seq", "severity"),
}
_CALL_FIELDS = attrgetter(*PARTS[ToolCall])  # a call as the index stores it: its fields in this order
_CALL_KEY = attrgetter("turn", "step", "call_id")  # what ``Session._calls`` files a call under
_ROW_KEY = itemgetter(3, 4, 0)  # the same, of a call's stored fields …
_ROW_ID = itemgetter(0)  # … and its id
_CALL_ID = attrgetter("call_id")
# the types of a stored call's fields (``int`` excludes ``bool``, as ``type`` tells them apart)
_SEQ = {int, None.__class__}
_CALL_TYPES = ({str}, {str}, {str}, {int}, {int}, _SEQ, _SEQ, _SEQ, {bool})
_OBJ = {dict, None.__class__}
_TURN_TYPES = ({int}, {int}, _SEQ, _OBJ, {list})  # number, start, end, end reason, steps
_STEP_TYPES = ({int}, {int}, {int}, {int}, _SEQ, _OBJ)  # key, turn, step, start, end, usage
_RESULTS_TYPES = ({int}, {int}, {list})  # turn, step, the results' seqs
STREAM_FIELDS = frozenset({*_STREAM_COLUMNS, "_end", "_turn", "_step"})
_SEVERITIES = frozenset({"error", "warning", "info"})
# a binary column: any buffer of its bytes, or ``Runs`` (its ``pieces`` are)
Column: TypeAlias = "bytes | bytearray | memoryview | array[int] | Runs"


class StateError(ValueError):
    """The stored state is not one this module wrote: it is discarded."""


def encode(session: Session) -> tuple[dict[str, Any], dict[str, Column]]:
    """``session``'s state: a JSON-able tree and binary columns by name (the per-event ones are the session's own
    arrays or ``Runs``, not copies: on a 500 MB log the arrays are 26 MiB; they must not grow while the columns are
    in use)."""
    unknown = set(vars(session)) - FIELDS
    for part, names in PARTS.items():
        unknown.update(f"{part.__name__}.{f.name}" for f in dataclasses.fields(part) if f.name not in names)
    unknown.update(f"StreamBlocks.{name}" for name in set(vars(session.streams)) - STREAM_FIELDS)
    if unknown:
        raise StateError(f"the projection holds fields the index does not know: {sorted(unknown)}")
    s = session
    calls = list(s._calls.values())
    # each call's fields, read once (the calls lie all over the heap, long out of the CPU cache): the checks read
    # the stored rows, not the calls again
    rows = list(map(_CALL_FIELDS, calls))
    if list(s._calls) != list(map(_ROW_KEY, rows)):  # compared in C, as the lists below are built
        raise StateError("a tool call is filed under another key")
    listed = _listed(s, calls, list(map(_ROW_ID, rows)))
    if s._live != set(s.surface):  # what the surface holds, as a set: rebuilt from it, not stored
        raise StateError("the live nodes are not the surface's")
    nodes = list(s._chars)  # every node's seq, its chars and its type (``Session`` files the two together)
    if nodes != list(s._surface_types):
        raise StateError("node chars and types are filed under other seqs")
    names = list(dict.fromkeys(s._surface_types.values()))  # the node types, each once
    streams = s.streams
    tree = {
        "header": s.header,
        "count": s.next_seq,
        "compressed": s.compressed,
        "diagnostics": [[d.code, d.message, d.offset, d.seq, d.severity] for d in s.diagnostics],
        "turns": [
            [t.number, t.start_seq, t.end_seq, t.end_reason,
             [[k, p.turn, p.step, p.start_seq, p.end_seq, p.usage] for k, p in t.steps.items()]]
            for t in s.turns.values()
        ],  # fmt: skip
        "turnKeys": list(s.turns),
        "tally": [s.usage_tally.hit, s.usage_tally.miss, s.usage_tally.output, s.usage_tally.reporting,
                  s.usage_tally.used],  # fmt: skip
        "maxTurn": s._max_turn,
        "calls": rows,  # tuples, written as arrays (a C loop, not a list per call)
        "toolCalls": listed,
        "resultsByStep": [[t, p, seqs] for (t, p), seqs in s.results_by_step.items()],
        "replacedBy": [*chain.from_iterable(s.replaced_by.items())],
        "shadowed": [[seq, seqs] for seq, seqs in s.shadowed.items()],
        "sources": [[seq, seqs] for seq, seqs in s._sources.items()],
        "nodeTypeNames": names,
        "openTurn": s.open_turn,
        "lastEnded": s.last_ended,
        "completedThrough": s.completed_through,
        "currentTurn": s._current_turn,
        "currentStep": list(s._current_step) if s._current_step is not None else None,
        "requestHeader": s._request_header,
        "requestHeaderSeq": s.request_header_seq,
        "counts": list(s.counts.items()),
        "surfaceChars": s.surface_chars,
        "requestDue": s._request_due,
        "systemChars": s._system_chars,
        "abortedFinishes": s.aborted_finishes,
        "failedSubCalls": s.failed_sub_calls,
        "cuts": [[c.seq, c.kind, c.nodes, c.chars_removed, c.turn] for c in s.cuts],
        "streamLast": [streams._end, streams._turn, streams._step],
    }
    samples = [*chain.from_iterable(s.context_samples)]
    columns: dict[str, Column] = {
        "surface": array("Q", s.surface),  # seqs: an unsigned array takes a list of ints in C
        "turnAt": s._turn_at,
        "stepAt": s._step_at,
        "inTurn": s._in_turn,
        # signed (a sample's seq may be -1): packed as ``array("q")`` holds them, without its per-value parsing
        "samples": struct.pack(f"={len(samples)}q", *samples),
        "nodes": array("Q", nodes),
        "nodeChars": struct.pack(f"={len(nodes)}q", *s._chars.values()),
        "nodeTypes": array("I", map(_ids(names).__getitem__, s._surface_types.values())),
    }
    for name in _STREAM_COLUMNS:
        columns["streams." + name] = getattr(streams, name)
    return tree, columns


def run_columns(session: Session) -> None:
    """Keep ``session``'s per-event turn, step and in-turn columns as ``Runs`` from now on (the TUI's view of a big
    log: 26 MiB as arrays on a 500 MB log, under 1 MiB as runs); what the session answers and the index it writes
    stay the same."""
    session._turn_at = Runs.of(session._turn_at)  # type: ignore[arg-type]
    session._step_at = Runs.of(session._step_at)  # type: ignore[arg-type]
    session._in_turn = Runs.of(session._in_turn)  # type: ignore[arg-type]


def decode(tree: Any, columns: dict[str, Column], events: Any, path: Path, *, runs: bool = False) -> Session:
    """The ``Session`` ``encode`` described, reading its events from ``events`` (a ``LineStore``); with ``runs``,
    its per-event columns made ``Runs`` straight from their sections (as ``run_columns`` would leave them); raises
    ``StateError`` when any field is not of its type or the counts do not agree."""
    try:
        return _decode(_obj(tree), columns, events, path, runs)
    except (TypeError, ValueError, KeyError, IndexError, OverflowError, AttributeError) as exc:
        if isinstance(exc, StateError):
            raise
        raise StateError(f"{type(exc).__name__}: {exc}") from exc


def _decode(t: dict[str, Any], columns: dict[str, Column], events: Any, path: Path, runs: bool) -> Session:
    s = Session(_obj(t["header"]), events, path=path, retain=False)
    count = s.next_seq = _int(t["count"])
    s.compressed = _bool(t["compressed"])
    s.surface = _column(columns, "surface", "Q").tolist()
    s._live = set(s.surface)
    s.diagnostics = [_diagnostic(d) for d in _list(t["diagnostics"])]
    turns = _turns(t["turns"])
    keys = _ints(t["turnKeys"])
    if len(keys) != len(turns):
        raise StateError("turn keys and turns differ in number")
    s.turns = dict(zip(keys, turns, strict=True))
    tally = [_int(x) for x in _list(t["tally"])]
    s.usage_tally = UsageTally(*tally) if len(tally) == 5 else _fail("usage tally")
    s._max_turn = _opt(_int, t["maxTurn"])
    calls = _calls(t["calls"])
    s._calls = dict(zip(map(_CALL_KEY, calls), calls, strict=True))
    if t["toolCalls"] is None:  # each id's latest call, where its first one is (``_listed``)
        s.tool_calls = dict(zip(map(_CALL_ID, calls), calls, strict=True))
    else:
        ids, listed = _pair(t["toolCalls"])
        ids, listed = _list(ids), _ints(listed)
        if listed and not 0 <= min(listed) <= max(listed) < len(calls):
            raise StateError("a tool call beyond the calls")
        if len(ids) != len(listed) or not set(map(type, ids)) <= {str}:
            raise StateError("tool call ids and calls differ")
        s.tool_calls = dict(zip(ids, map(calls.__getitem__, listed), strict=True))
    turn_nos, step_nos, results = _rows(t["resultsByStep"], _RESULTS_TYPES, "step's results")
    if not _all_ints(chain.from_iterable(results)):
        raise StateError("expected a list of integers")
    s.results_by_step = dict(zip(zip(turn_nos, step_nos, strict=True), results, strict=True))
    s.replaced_by = _int_map(t["replacedBy"], int)
    s.shadowed = {_int(k): _ints(v) for k, v in map(_pair, _list(t["shadowed"]))}
    s._sources = {_int(k): _ints(v) for k, v in map(_pair, _list(t["sources"]))}
    nodes = _column(columns, "nodes", "Q").tolist()
    chars, kinds = _column(columns, "nodeChars", "q").tolist(), _column(columns, "nodeTypes", "I")
    names = _list(t["nodeTypeNames"])
    if not set(map(type, names)) <= {str} or not len(chars) == len(kinds) == len(nodes):
        raise StateError("bad surface nodes")
    if kinds and max(kinds) >= len(names):
        raise StateError("a node of no type")
    s._chars = dict(zip(nodes, chars, strict=True))
    s._surface_types = dict(zip(nodes, map(names.__getitem__, kinds), strict=True))
    if runs:  # never whole in memory: 26 MiB as arrays on a 500 MB log, beside the index's bytes
        s._turn_at = Runs.from_bytes("i", columns["turnAt"])  # type: ignore[arg-type]
        s._step_at = Runs.from_bytes("i", columns["stepAt"])  # type: ignore[arg-type]
        s._in_turn = Runs.from_bytes("B", columns["inTurn"])  # type: ignore[arg-type]
    else:
        s._turn_at = _column(columns, "turnAt", "i")
        s._step_at = _column(columns, "stepAt", "i")
        s._in_turn = bytearray(columns["inTurn"])
    s.open_turn = _opt(_int, t["openTurn"])
    s.last_ended = _opt(_int, t["lastEnded"])
    s.completed_through = _int(t["completedThrough"])
    s._current_turn = _int(t["currentTurn"])
    step = t["currentStep"]
    s._current_step = None if step is None else tuple(_int(x) for x in _pair(step))  # type: ignore[assignment]
    s._request_header = _opt(_request_header, t["requestHeader"])
    s.request_header_seq = _opt(_int, t["requestHeaderSeq"])
    s.counts = {}
    for name, n in map(_pair, _list(t["counts"])):
        s.counts[_str(name)] = _int(n)
    s.surface_chars = _int(t["surfaceChars"])
    flat = _column(columns, "samples", "q")
    if len(flat) % 4:
        raise StateError("context samples are not whole")
    quads = [iter(flat)] * 4
    s.context_samples = list(zip(*quads, strict=True))  # type: ignore[arg-type]
    s._request_due = _bool(t["requestDue"])
    s._system_chars = _int(t["systemChars"])
    s.aborted_finishes = _ints(t["abortedFinishes"])
    s.failed_sub_calls = _int(t["failedSubCalls"])
    s.cuts = [_cut(c) for c in _list(t["cuts"])]
    s.streams = _streams(columns, t["streamLast"])
    if not len(s._turn_at) == len(s._step_at) == len(s._in_turn) == count:
        raise StateError("per-event columns do not match the event count")
    if (s.surface and max(s.surface) >= count) or (s.streams.ends and max(s.streams.ends) > count):
        raise StateError("a seq beyond the events")
    return s


def _listed(s: Session, calls: list[ToolCall], ids: list[str]) -> list[Any] | None:
    """How ``s.tool_calls`` is stored: None when it is what ``Session`` makes of ``calls`` (whose ids are ``ids``:
    each id's latest call, listed where the first call of that id was: a dict made of the calls by id, in order),
    else the ids and where each one's call is in ``calls``."""
    made = dict(zip(ids, calls, strict=True))
    if list(made) == list(s.tool_calls) and all(map(is_, made.values(), s.tool_calls.values())):
        return None
    where = dict(zip(map(id, calls), range(len(calls)), strict=True))
    try:
        return [list(s.tool_calls), list(map(where.__getitem__, map(id, s.tool_calls.values())))]
    except KeyError:
        raise StateError("a tool call is listed without its key") from None


def _ids(names: list[str]) -> dict[str, int]:
    """Each of ``names`` by where it is in the list."""
    return dict(zip(names, range(len(names)), strict=True))


def _fail(what: str) -> Any:
    raise StateError(f"bad {what}")


def _int(v: Any) -> int:
    if type(v) is not int:
        raise StateError(f"expected an integer, found {type(v).__name__}")
    return v


def _bool(v: Any) -> bool:
    if type(v) is not bool:
        raise StateError(f"expected a boolean, found {type(v).__name__}")
    return v


def _str(v: Any) -> str:
    if type(v) is not str:
        raise StateError(f"expected a string, found {type(v).__name__}")
    return v


def _obj(v: Any) -> dict[str, Any]:
    if type(v) is not dict:
        raise StateError(f"expected an object, found {type(v).__name__}")
    return v


def _list(v: Any) -> list[Any]:
    if type(v) is not list:
        raise StateError(f"expected a list, found {type(v).__name__}")
    return v


def _opt(check: Callable[[Any], Any], v: Any) -> Any:
    return None if v is None else check(v)


def _ints(v: Any) -> list[int]:
    items = _list(v)
    if not _all_ints(items):
        raise StateError("expected a list of integers")
    return items


def _all_ints(values: Any) -> bool:
    """True when every one of ``values`` is an int (not a bool), checked without a Python call per value."""
    return set(map(type, values)) <= {int}


def _pair(v: Any) -> tuple[Any, Any]:
    items = _list(v)
    if len(items) != 2:
        raise StateError("expected a pair")
    return items[0], items[1]


def _int_map(v: Any, kind: type) -> dict[int, Any]:
    """The map whose keys and values (of ``kind``) alternate in the flat list ``v``."""
    flat = _list(v)
    keys, values = flat[0::2], flat[1::2]
    if len(keys) != len(values) or not _all_ints(keys) or not set(map(type, values)) <= {kind}:
        raise StateError("a map of odd length or of other types")
    return dict(zip(keys, values, strict=True))


def _column(columns: dict[str, Column], name: str, code: str) -> array[int]:
    data = columns[name]
    column = array(code)
    if len(data) % column.itemsize:
        raise StateError(f"column {name} is not whole")
    column.frombytes(data)
    return column


def _request_header(v: Any) -> dict[str, Any]:
    """A request header as a read keeps one: what validation lets through as a ``request/header``'s."""
    if problem({"type": "request/header", "data": {"header": _obj(v)}}) is not None:
        raise StateError("bad request header")
    return v


def _diagnostic(v: Any) -> Diagnostic:
    code, message, offset, seq, severity = _list(v)
    if severity not in _SEVERITIES:
        raise StateError("bad severity")
    return Diagnostic(_str(code), _str(message), _opt(_int, offset), _opt(_int, seq), severity)


def _rows(v: Any, types: tuple[set[type], ...], what: str) -> list[tuple[Any, ...]]:
    """The columns of ``v``, a list of lists of ``len(types)`` fields, every field's type checked a column at a
    time in C: a reopen of a long session rebuilds tens of thousands of steps and calls."""
    rows = _list(v)
    if not set(map(type, rows)) <= {list} or not set(map(len, rows)) <= {len(types)}:
        raise StateError(f"a {what} is not a list of its fields")
    columns = list(zip(*rows, strict=True)) or [()] * len(types)
    for column, kinds in zip(columns, types, strict=True):
        if not set(map(type, column)) <= kinds:
            raise StateError(f"a {what}'s field is not of its type")
    return columns


def _turns(v: Any) -> list[Turn]:
    """The stored turns, each with its steps (a list of each step's key and fields)."""
    numbers, starts, ends, reasons, steps = _rows(v, _TURN_TYPES, "turn")
    keys, *fields = _rows(list(chain.from_iterable(steps)), _STEP_TYPES, "step")
    made = zip(keys, map(Step, *fields), strict=True)
    turns = list(map(Turn, numbers, starts, ends, reasons))
    for turn, n in zip(turns, map(len, steps), strict=True):
        turn.steps = dict(islice(made, n))
    return turns


def _calls(v: Any) -> list[ToolCall]:
    """The stored calls (each a list of a call's fields, in ``PARTS[ToolCall]``'s order)."""
    return list(map(ToolCall, *_rows(v, _CALL_TYPES, "tool call")))


def _cut(v: Any) -> Cut:
    seq, kind, nodes, removed, turn = _list(v)
    return Cut(_int(seq), _str(kind), _int(nodes), _int(removed), _int(turn))


def _streams(columns: dict[str, bytes], last: Any) -> StreamBlocks:
    streams = StreamBlocks()
    for name in _STREAM_COLUMNS:
        setattr(streams, name, _column(columns, "streams." + name, "q"))
    n = len(streams.starts)
    if any(len(getattr(streams, name)) != n for name in _STREAM_COLUMNS):
        raise StateError("stream columns differ in length")
    end, turn, step = _list(last)
    streams._end = _int(end)
    streams._turn, streams._step = turn, step  # as ``add`` was given them: any JSON value
    return streams
