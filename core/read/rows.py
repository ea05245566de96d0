"""What an event list shows per event, shared by the TUI's list and the exports: the row of an event (glyph,
summary, size, error flag, replacement kind) and the row standing for a streamed block."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from core.log.vocabulary import SURFACE_TYPES
from core.read.facts import is_error
from core.read.session import TAPE_SOURCE_KIND, content_chars, cut_kind, derive_message
from core.read.streams import Block
from core.read.summary import GLYPHS, summarize
from core.shared.jsonout import dumps

SUMMARY_LIMIT = 240
SUMMARY_SOURCE_LIMIT = 20_000  # strings longer than this are cut before summarizing (regexes hold the GIL)
REPLACEMENT_GLYPHS = {"tape": "▤", "rewind": "↺", "compaction": "≡", "fold": "▣", "prune": "✂", "expand": "⊞"}

@dataclass(slots=True, unsafe_hash=True)  # not ``frozen``: a frozen init sets each field through a call, and rows
class Row:  # are made for every event a list or an export shows (none is changed once made; hashable as before)
    """What a row shows that never changes once the event is written."""

    seq: int
    type: str
    turn: int
    step: int | None
    glyph: str
    summary: str
    size: int
    error: bool
    replacement: str | None  # the cut kind when the event is a surface replacement
    surface_type: bool
    unit: str = "ch"  # what ``size`` counts: ``ch`` model-visible chars, ``B`` bytes of the event's JSON data
    interrupted: bool = False  # a stream cut off before it finished (its finish says ``aborted``)
    time: float | None = None  # the event's ``time`` (ms since the epoch) when it has one
    # turn is the event's own data.turn; the list shows Session.turn_of (DSH attribution) once projected


def event_time(event: dict[str, Any]) -> float | None:
    """The event's ``time`` in ms since the epoch, or None when it has none (or not a number, or not one a date
    can hold: years 1 to 9999)."""
    value = event.get("time")
    if not isinstance(value, _NUMBERS) or isinstance(value, bool) or not TIME_RANGE_MS[0] < value < TIME_RANGE_MS[1]:
        return None
    return float(value)


_NUMBERS = (int, float)  # a tuple: ``int | float`` would be made again at every call
# 0001-01-02 and 9999-12-30 in ms since the epoch: a date in any time zone of a time between them is in range
TIME_RANGE_MS = (-62_135_596_800_000 + 86_400_000, 253_402_300_799_999 - 86_400_000)


def _glyph(etype: str, source: Any, replacement: str | None) -> str:
    """The one-cell glyph of an event of type ``etype`` whose ``data.source`` is ``source``: its role, event kind,
    or replacement kind."""
    if replacement is not None:
        return REPLACEMENT_GLYPHS.get(replacement, "⇄")
    if etype == "user/message" and isinstance(source, dict) and source.get("kind") not in (None, "user"):
        return "✉"
    if etype.startswith("tapedeck/"):
        return "◇"
    return GLYPHS.get(etype, "?")


_SCALARS = frozenset({int, float, bool, type(None)})
LIST_SLICE = 32  # a long list (a file's lines) is measured this many items at a time


def _short(value: Any, limit: int) -> bool:
    """True when no string in the dict or list ``value`` is longer than ``limit`` (its JSON is no longer; one
    measure in C instead of a walk)."""
    try:
        return len(orjson.dumps(value)) <= limit
    except TypeError:  # not JSON: walked
        return False


def clip_strings(value: Any, limit: int, note: bool = False, measured: int | None = None) -> Any:
    """``value`` with every string longer than ``limit`` cut (``note`` appends how much was cut); a dict or list
    with no string to cut is returned as it is. ``measured``: the length of ``value``'s JSON, when known."""
    if (type(value) is dict or type(value) is list) and (
        measured <= limit if measured is not None else _short(value, limit)
    ):
        return value
    return _clipped(value, limit, note)


def _clipped(value: Any, limit: int, note: bool) -> Any:
    """``clip_strings`` below its first measure: a long list is measured a slice at a time, the rest walked."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        return value[:limit] + (f"… (+{len(value) - limit} chars)" if note else "")
    if isinstance(value, dict):
        return {k: _clipped(v, limit, note) for k, v in value.items()}
    if isinstance(value, list):
        if set(map(type, value)) <= _SCALARS:  # a list of seqs: nothing to clip (checked in C)
            return value
        if len(value) <= LIST_SLICE:
            return [_clipped(v, limit, note) for v in value]
        out: list[Any] = []
        for i in range(0, len(value), LIST_SLICE):
            part = value[i : i + LIST_SLICE]
            out.extend(part if _short(part, limit) else (_clipped(v, limit, note) for v in part))
        return out
    return value


def event_size(event: dict[str, Any]) -> int:
    """Model-visible chars for surface events, else bytes of the event's JSON data."""
    return _size(event, event.get("type") in SURFACE_TYPES)


def _size(event: dict[str, Any], surface: bool) -> int:
    """``event_size`` of an event whose type is a surface type or not (``surface``)."""
    if surface:
        message = derive_message(event)
        return content_chars(message.get("content")) if message else 0
    try:
        return len(orjson.dumps(event.get("data")))
    except orjson.JSONEncodeError:  # nested deeper than orjson writes
        return len(dumps(event.get("data")))


def build_row(event: dict[str, Any], measured: int | None = None, head: bool = False) -> Row:
    """Compute a row from a decoded event alone (worker side: summarizing a huge payload takes time);
    ``measured`` is the length of the event's JSON when the caller has it. ``head``: the row only heads a
    streamed block (``block_row`` gives the block its own summary and size), so its summary is "" and its size 0.

    Everything here is fixed once the event is written, so a row stays valid while the projection grows.
    """
    seq = int(event.get("seq", -1))
    data = event.get("data")
    if not isinstance(data, dict):
        data = {}
    etype = event.get("type")
    surface = etype in SURFACE_TYPES
    replacement = cut_kind(event) if surface and event.get("surfaceOp") not in (None, "append") else None
    turn = data.get("turn", 0)
    step = data.get("step")
    source = data.get("source")
    is_tape = isinstance(source, dict) and source.get("kind") == TAPE_SOURCE_KIND  # its summary counts chars
    name = str(etype)
    # fields set one by one on a new row: the dataclass's ``__init__``, called with 13 keywords, costs about as
    # much again as the rest of a short event's row (rows are made for every event a list or an export shows)
    row = _new(Row)
    row.seq = seq
    row.type = name
    row.turn = turn if isinstance(turn, int) else 0
    row.step = step if isinstance(step, int) else None
    row.glyph = _glyph(name, source, replacement)
    if head:
        row.summary, row.size = "", 0
    else:
        row.summary = summarize(
            event if is_tape else clip_strings(event, SUMMARY_SOURCE_LIMIT, measured=measured), SUMMARY_LIMIT
        )
        row.size = _size(event, surface)
    row.error = is_error(event, etype, data)
    row.replacement = replacement
    row.surface_type = surface
    row.unit = "ch" if surface else "B"
    row.interrupted = False
    row.time = event_time(event)
    return row


_new = object.__new__


BLOCK_GLYPH = "●"  # a streamed block: the answer (text, reasoning, tool-call arguments) as it streamed


def block_row(head: Row, block: Block, streaming: bool, error: bool, interrupted: bool = False) -> Row:
    """The row standing for a streamed block: its first delta's row with the block's size and a summary."""
    verb = "streaming…" if streaming else "streamed"
    deltas = f"{block.deltas} delta{'' if block.deltas == 1 else 's'}"
    # the head with a new glyph, summary, size, unit, error and interruption, set field by field (as ``build_row``)
    row = _new(Row)
    row.seq, row.type, row.turn, row.step, row.glyph = head.seq, head.type, head.turn, head.step, BLOCK_GLYPH
    row.summary, row.size, row.error = f"{verb} {block.chars} chars · {deltas}", block.chars, error
    row.replacement, row.surface_type, row.unit = head.replacement, head.surface_type, "ch"
    row.interrupted, row.time = interrupted, head.time
    return row


