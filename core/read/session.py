"""The incremental session projection: turns, steps, tool pairs, the surface, usage and diagnostics.

``Session.apply`` costs O(1) amortized per event (a replacement scans the surface from its end, where
replacements almost always land). The projection keeps only light metadata; event payloads live in
``Session.events``, an ``EventStore`` for in-memory sessions, a ``LineStore`` that reads events back from the
file for huge logs, or a ``KeptEvents`` that holds only what a pass asked to keep. All serve readers the validated view of each event (``core.log.validate.readable``): an
event the decoder flagged is opaque to every reader, and only ``events.raw(seq)`` shows it as it was logged.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, MutableSequence, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from core.log.records import PackedRow
from core.log.store import EventStore
from core.log.validate import INVALID, MAX_COUNTER
from core.log.vocabulary import SURFACE_TYPES
from core.read.streams import StreamBlocks, delta_chars
from core.read.usage import UsageTally
from core.shared.diagnostics import Diagnostic
from core.shared.records import record
from core.shared.text import number_runs, shown, tool_block_failed, tool_result_failed

TAPE_SOURCE_KIND = "plugin:slice:history"
RUNTIME_CONTEXT_PLUGIN = "@deepseek-ai/dsh-system-prompt"


@record(slots=True)
class Step:
    """One model call and its tool executions."""

    turn: int
    step: int
    start_seq: int
    end_seq: int | None = None
    usage: dict[str, int] | None = None


@record(slots=True)
class Turn:
    """One turn: from ``turn/start`` to ``turn/end``."""

    number: int
    start_seq: int
    end_seq: int | None = None
    end_reason: dict[str, Any] | None = None
    steps: dict[int, Step] = field(default_factory=dict)

    @property
    def status(self) -> str:
        """``open`` while running, else the end reason's kind (``completed``, ``error`` …)."""
        if self.end_seq is None:
            return "open"
        return str((self.end_reason or {}).get("kind", "unknown"))


def missing_turn_step(turns: Mapping[int, Turn], turn: int, step: int | None = None) -> str:
    """What ``turns`` (a session's) lack of turn ``turn`` (and its step ``step``), to follow a message naming them:
    ``": the session has no turn 9 (its turns: 1-3)"``, ``": turn 1 has no step 9 (its steps: 1-2)"``; "" when
    both are there."""
    if turn not in turns:
        return f": the session has no turn {turn} (its turns: {number_runs(turns) or 'none'})"
    steps = turns[turn].steps
    if step is None or step in steps:
        return ""
    return f": turn {turn} has no step {step} (its steps: {number_runs(steps) or 'none'})"


@record(slots=True)
class ToolCall:
    """A tool call and, once it lands, its result (paired by ``callId`` within the step)."""

    call_id: str
    name: str
    arguments: str
    turn: int
    step: int
    message_seq: int | None = None
    call_seq: int | None = None
    result_seq: int | None = None
    result_error: bool = False  # whether the result at ``result_seq`` reports a failure (``tool_result_failed``)


@record(frozen=True, slots=True)
class Cut:
    """A replacement that changed the surface: what kind, and how many chars it removed (negative = grew).

    ``turn`` is the turn in progress when it was made (between turns, the last one started; 0 before the
    first), not ``turn_of`` its event: a pruned or folded ``tool/result`` keeps the turn of the result it
    replaces in its data."""

    seq: int
    kind: str
    nodes: int
    chars_removed: int
    turn: int = 0


def op_span(op: Any) -> tuple[int, int] | None:
    """``(start, end)`` of a replace op in either spelling (``start/end`` or ``startSeq/endSeq``), else None."""
    if not isinstance(op, dict) or op.get("op") != "replace":
        return None
    start = op.get("start", op.get("startSeq"))
    end = op.get("end", op.get("endSeq"))
    if (
        isinstance(start, int)
        and isinstance(end, int)
        and not isinstance(start, bool)
        and not isinstance(end, bool)
    ):
        return start, end
    return None


def messages_of(events: Sequence[dict[str, Any]], seqs: Iterable[int]) -> list[dict[str, Any]]:
    """The model-visible messages of the events at ``seqs``, in that order (empty assistant messages project
    nothing and are skipped)."""
    return [message for seq in seqs if (message := derive_message(events[seq])) is not None]


def derive_message(event: dict[str, Any]) -> dict[str, Any] | None:
    """DSH ``deriveEventMessage``: the model-visible message a surface event projects, if any (never for an
    event validation marked invalid)."""
    if INVALID in event:  # ``is_invalid``, without a call: every surface event of a pass comes here
        return None
    etype = event.get("type")
    data = event.get("data") or {}
    if etype == "user/message":
        return data
    if etype in ("assistant/message", "tool/result"):
        message = data.get("message")
        if not isinstance(message, dict):
            return None
        if etype == "assistant/message" and not message.get("content"):
            return None
        return message
    return None


def surface_view(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` without what nothing that reads the surface needs: ``data.meta`` but its ``policy`` (a read
    result's ``meta.lines`` can hold more than the text itself). For passes that keep surface events."""
    data = event.get("data")
    if not isinstance(data, dict) or not isinstance(data.get("meta"), dict):
        return event
    slim = {key: value for key, value in data.items() if key != "meta"}
    if "policy" in data["meta"]:
        slim["meta"] = {"policy": data["meta"]["policy"]}
    return {**event, "data": slim}


def _earlier_seqs(sources: Any, seq: int) -> bool:
    """True for a list of ints (bools count, as ``isinstance`` says) in ``0..seq-1``; checked in C, since an
    assistant message names every chunk it was streamed from."""
    if not isinstance(sources, list):
        return False
    if not sources:
        return True
    try:  # ints (and bools) sum to an int: a float makes a float, a string, null, list or object raises
        if sum(sources).__class__ is not int:
            return False
        ordered = sorted(sources)  # a list already in order (as these are) is sorted by comparing ints in C
    except TypeError:
        return False
    return ordered[0] >= 0 and ordered[-1] < seq


# the events that name their own turn
_CHUNK = "assistant/chunk"
_OWN_TURN = frozenset({"assistant/message", "tool/result", "tool/call", "assistant/chunk"})
_TURN_ONES = [array("i", (0,))]  # ``apply_row``'s last one-item turn array, reused while rows keep their turn
_STEP_ONES = [array("i", (0,))]  # … and step array
NO_STEP = -1  # the step column's value for an event in no step
_NONE: list[int] = []  # no sources: what a fused path checks when an event names none (never changed)


class _NotKept:
    """A per-event column of a projection that keeps none (``Session(per_event=False)``): takes every value
    appended, holds none and answers no seq."""

    __slots__ = ()

    def append(self, value: int) -> None:
        """Take one event's value (dropped)."""

    def __iadd__(self, values: Any) -> _NotKept:
        return self

    def __getitem__(self, seq: int) -> int:
        raise LookupError("this projection keeps nothing per event (Session(per_event=False))")


def _plain_chars(blocks: Any) -> int | None:
    """``content_chars`` of a content block list that validation passes and the fused paths know: every block an
    object of type text or reasoning with a string text, tool-call with string arguments, or tool-result whose
    content is such a list. None for anything else (no list, an empty assistant message's None …)."""
    if blocks.__class__ is not list:
        return None
    total = 0
    for block in blocks:
        if block.__class__ is not dict:
            return None
        btype = block.get("type")
        if btype == "text" or btype == "reasoning":
            text = block.get("text")
        elif btype == "tool-call":
            text = block.get("arguments")
        elif btype == "tool-result":
            inner = _plain_chars(block.get("content"))
            if inner is None:
                return None
            total += inner
            continue
        else:
            return None
        if text.__class__ is not str:
            return None
        total += len(text)
    return total


def content_chars(blocks: Iterable[Any] | None, length: Callable[[str], int] = len) -> int:
    """Size of the model-visible text of content blocks (text, reasoning, tool-call args, tool results).

    ``length`` measures one string: code points by default, ``core.shared.text.utf16_len`` for JS ``.length``.
    """
    total = 0
    for block in blocks or ():
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype in ("text", "reasoning"):
            total += length(block.get("text") or "")
        elif btype == "tool-call":
            total += length(block.get("arguments") or "")
        elif btype == "tool-result":
            total += content_chars(block.get("content"), length)
    return total


def cut_kind(event: dict[str, Any]) -> str:
    """Classify a replacement event: tape, fold, prune, expand, rewind, compaction or replace.

    A ``tool/result`` replacement names its policy in ``data.meta`` (our host's); one without is DSH's prune, which
    cites only the result it shadows, or the DSH bridge's expand, which also cites the original it puts back from
    outside the range it replaces."""
    data = event.get("data")
    data = data if isinstance(data, dict) else {}  # a display reads raw events, flagged ones too
    if event.get("type") == "tool/result":
        policy = (data.get("meta") or {}).get("policy") if isinstance(data.get("meta"), dict) else None
        if policy in ("fold", "prune", "expand"):
            return str(policy)
        return "expand" if _cites_outside(event) else "prune"
    source = data.get("source")
    source = source if isinstance(source, dict) else {}
    if source.get("kind") == TAPE_SOURCE_KIND:
        return "tape"
    if source.get("kind") == "plugin" and source.get("plugin") == "rewind":
        return "rewind"
    if source.get("kind") == "plugin" and source.get("plugin") == "compact":
        return "compaction"
    return "replace"


def _cites_outside(event: dict[str, Any]) -> bool:
    """Whether a replacement cites a seq outside the range of nodes it replaces."""
    op, cited = event.get("surfaceOp"), event.get("sourceEventSeqs")
    if not isinstance(op, dict) or not isinstance(cited, list):
        return False
    start, end = op.get("start"), op.get("end")
    if type(start) is not int or type(end) is not int:
        return False
    return any(type(s) is int and not start <= s <= end for s in cited)


class Session:
    """The projection of one session log. See ``docs/contracts.md`` for the attribute contract.

    ``shadowed`` maps each replacement that took effect to the run of surface nodes it took off. Replacements are
    applied in log order, so its keys ascend by seq (``SurfaceTimeline.extend`` reads the newest from its end); each
    run is in surface (model) order, which is not ascending seq once a replacement stands in it before nodes
    appended after it was made."""

    def __init__(
        self,
        header: dict[str, Any],
        events: MutableSequence[dict[str, Any]] | Sequence[dict[str, Any]] | None = None,
        *,
        path: Path | None = None,
        retain: bool = True,
        per_event: bool = True,
    ) -> None:
        """Create an empty projection; with ``retain=False`` ``events`` is an external store that grows itself;
        with ``per_event=False`` nothing is kept per event (``turn_of``, ``step_of`` and ``in_turn`` cannot answer:
        for a pass that never asks them, as the alert engine's request pass, on a log of millions of stream
        deltas)."""
        self.header = header
        self.path = path
        self.events: Sequence[dict[str, Any]] = EventStore() if events is None else events
        self._retain = retain
        self.next_seq = 0  # the seq the next appended event receives (an attribute: a pass reads it per event)
        self.compressed = False
        self.surface: list[int] = []
        self._live: set[int] = set()
        self.diagnostics: list[Diagnostic] = []
        self.turns: dict[int, Turn] = {}
        self.usage_tally = UsageTally()  # the usage of every step in force, summed as samples arrive
        self._max_turn: int | None = None  # the highest turn number started so far: O(1) gap checks
        self.tool_calls: dict[str, ToolCall] = {}
        self._calls: dict[tuple[int, int, str], ToolCall] = {}
        self.results_by_step: dict[tuple[int, int], list[int]] = {}
        self.replaced_by: dict[int, int] = {}
        self.shadowed: dict[int, list[int]] = {}
        self._sources: dict[int, list[int]] = {}
        self._chars: dict[int, int] = {}
        self._surface_types: dict[int, str] = {}
        self._turn_at: array[int] | _NotKept = array("i") if per_event else _NotKept()
        self._step_at: array[int] | _NotKept = array("i") if per_event else _NotKept()  # NO_STEP: none
        self._in_turn: bytearray | _NotKept = bytearray() if per_event else _NotKept()
        self.open_turn: int | None = None
        self.last_ended: int | None = None
        self.completed_through = -1
        self._current_turn = 0
        self._current_step: tuple[int, int] | None = None
        self._request_header: dict[str, Any] | None = None
        self.request_header_seq: int | None = None
        self.counts: dict[str, int] = {}  # events by type (a plain dict: counting into it is a hot step)
        self.surface_chars = 0
        # per model request, when it went out: (the last seq before it, turn, step, system prompt + surface chars)
        self.context_samples: list[tuple[int, int, int, int]] = []
        self._request_due = False  # a step (or its retry) started and its request has not gone out yet
        self._system_chars = 0  # of the latest request header's system prompt
        self.aborted_finishes: list[int] = []  # seqs of stream finishes whose reason is ``aborted`` (cut off)
        self.failed_sub_calls = 0  # ``run_code`` sub-calls (``tool/code-dispatch``) that failed (``tool_block_failed``)
        self.cuts: list[Cut] = []
        self.streams = StreamBlocks()  # runs of stream deltas, one list row each (core.read.streams)

    # construction ---------------------------------------------------------------------------------------
    @classmethod
    def from_events(cls, header: dict[str, Any], events: Iterable[dict[str, Any]], **kw: Any) -> Session:
        """Project a list of events (seq == index)."""
        session = cls(header, **kw)
        for event in events:
            session.apply(event)
        return session

    # basic accessors --------------------------------------------------------------------------------------
    @property
    def id(self) -> str:
        """The session id from the header."""
        return str(self.header.get("id", ""))

    def request_header(self) -> dict[str, Any] | None:
        """The latest ``request/header`` ``data.header`` (system prompt, tools, config), or None."""
        return self._request_header

    def seqs_of(self, types: Collection[str], start: int = 0) -> Iterator[int]:
        """Seqs from ``start`` on of the projected events whose type is in ``types``, in log order.

        A session whose events a ``LineStore`` reads back answers from its type column, decoding nothing; one whose
        ``KeptEvents`` holds only what a pass kept, from those; a retained one scans its events.
        """
        end = self.next_seq
        indexed = getattr(self.events, "seqs_of_types", None)
        if indexed is not None:
            return (seq for seq in indexed(types, start) if seq < end)
        return (seq for seq in range(start, end) if self.events[seq].get("type") in types)

    def turn_of(self, seq: int) -> int:
        """The turn an event belongs to (DSH attribution; 0 before the first turn)."""
        return self._turn_at[seq]

    def step_of(self, seq: int) -> int | None:
        """The step an event belongs to: its own ``data.step``, else the step of its turn open when it was written
        (from that step's ``step/start`` to its ``step/end``); None for an event in no step."""
        step = self._step_at[seq]
        return None if step == NO_STEP else step

    def in_turn(self, seq: int) -> bool:
        """True when a turn was open at the event (its turn/start and turn/end included).

        An inbox splice or a /compact block between turns is outside every turn; ``turn_of`` still names the
        turn before it, as DSH attributes it.
        """
        return bool(self._in_turn[seq])

    def is_original(self, seq: int) -> bool:
        """True unless the event is a surface replacement."""
        return seq not in self._sources

    def is_replacement(self, seq: int) -> bool:
        """True for an event that carried a replace surface op."""
        return seq in self._sources

    def sources_of(self, seq: int) -> list[int]:
        """``sourceEventSeqs`` of a replacement (empty for other events)."""
        return self._sources.get(seq, [])

    def original_of(self, seq: int) -> int:
        """Follow ``sourceEventSeqs[0]`` through replacement chains to the append-origin event."""
        seen = set()
        while seq in self._sources and seq not in seen:
            seen.add(seq)
            sources = self._sources[seq]
            if not sources:
                break
            seq = sources[0]
        return seq

    def node_chars(self, seq: int) -> int:
        """Code points of the model-visible text of a surface event."""
        return self._chars.get(seq, 0)

    def surface_type(self, seq: int) -> str | None:
        """The event type of a seq that was ever on the surface (None for any other), without reading it."""
        return self._surface_types.get(seq)

    def on_surface(self, seq: int) -> bool:
        """True while ``seq`` is a current surface node."""
        return seq in self._live

    def tool_call_at(self, turn: int, step: int, call_id: str) -> ToolCall | None:
        """The call with ``call_id`` in that step, if any."""
        return self._calls.get((turn, step, call_id))

    def messages(self) -> list[dict[str, Any]]:
        """The model-visible message list derived from the surface (empty assistant messages skipped)."""
        return messages_of(self.events, self.surface)

    def usage_total(self) -> dict[str, int]:
        """Token usage summed over steps (a later sample for a step replaces an earlier one)."""
        total: Counter[str] = Counter()
        for turn in self.turns.values():
            for step in turn.steps.values():
                for key, value in (step.usage or {}).items():
                    if isinstance(value, int):
                        total[key] += value
        return dict(total)

    # the fold ---------------------------------------------------------------------------------------------
    def apply(self, event: dict[str, Any]) -> None:
        """Project one event; ``event["seq"]`` must equal ``next_seq``."""
        etype = event.get("type")
        if etype.__class__ is not str:
            etype = str(etype)
        seq = self._take(event.get("seq"), 1, etype)
        if self._retain:
            self.events.append(event)  # type: ignore[union-attr]
        # An invalid event keeps its per-seq entries but is left out of the projection (the decoder reported it).
        if INVALID in event:
            turn = self._attributed_turn(etype, {})
            self._turn_at.append(turn)
            self._step_at.append(self._attributed_step(turn, None))
            self._in_turn.append(self.open_turn is not None or etype == "turn/end")
            return
        data = event.get("data")
        if not isinstance(data, dict):
            data = {}
        handler = self._HANDLERS.get(etype)
        if handler is not None:
            handler(self, seq, data)
        turn = data.get("turn") if etype in _OWN_TURN else None  # the common case, without a call
        turn = turn if isinstance(turn, int) else self._attributed_turn(etype, data)
        self._turn_at.append(turn)
        self._step_at.append(self._attributed_step(turn, data.get("step")))
        self._in_turn.append(self.open_turn is not None or etype == "turn/end")
        op = event.get("surfaceOp")
        if etype in SURFACE_TYPES:
            self._surface(seq, etype, event, data, op)
        elif op is not None or "sourceEventSeqs" in event:
            self._diag(
                "surface-op-on-log-only",
                f"{etype} carries surfaceOp/sourceEventSeqs (only surface types may)",
                seq,
            )

    def apply_chunk(self, event: dict[str, Any], turn: int, step: int, chunk: dict[str, Any]) -> None:
        """Project a well-formed ``assistant/chunk`` event: ``apply(event)`` without the checks it cannot fail.

        Only for an event as ``Consumer.chunk`` gets it: valid, its envelope type, seq, time and data,
        ``turn`` and ``step`` its ``data``'s integers, ``chunk`` its ``data.chunk`` object.
        """
        seq = self.next_seq  # ``_take``, without the call: most lines of a log come here
        if event["seq"] != seq:
            self._take(event["seq"], 1, _CHUNK)
        else:
            self.next_seq = seq + 1
            counts = self.counts
            counts[_CHUNK] = counts.get(_CHUNK, 0) + 1
        if self._retain:
            self.events.append(event)  # type: ignore[union-attr]
        ctype = chunk.get("type")
        if ctype == "finish":  # a step's finish that is no error: its reason, as ``_delta`` reads it
            self._output(seq, chunk)
        elif self._request_due:  # ``_delta`` without the checks such a chunk passes
            self._request_out(seq)
        text = chunk.get("argumentsDelta") if ctype == "tool-call-delta" else chunk.get("text")
        self.streams.add(seq, turn, step, 1, len(text) if isinstance(text, str) else 0)
        if ctype == "usage" and isinstance(chunk.get("usage"), dict):
            self._usage_sample(turn, step, chunk["usage"])
        self._turn_at.append(turn)
        self._step_at.append(step)
        self._in_turn.append(self.open_turn is not None)

    def apply_row(self, row: PackedRow) -> None:
        """Project a packed chunk row: ``row.count`` ``assistant/chunk`` deltas from ``row.seq0`` on, unexpanded.

        The same as applying each member event (deltas carry no usage, belong to the row's turn and are never
        on the surface), in O(1) Python work per row.
        """
        if self._retain:
            self.events.append_row(row)  # type: ignore[attr-defined]
        self.apply_deltas(row.seq0, row.count, row.turn, row.step, row.chars)

    def apply_deltas(self, seq0: int, n: int, turn: int, step: int, chars: int) -> None:
        """Project ``n`` stream deltas from ``seq0`` on, of ``turn`` and ``step``, that stream ``chars`` chars in
        all: ``apply_chunk`` of each, in O(1) Python work (a run of well-formed ``assistant/chunk`` events that are
        no usage sample, as ``Consumer.deltas`` gets them, or a packed row's members). The events are not stored:
        only for a session that retains none."""
        seq = self.next_seq  # ``_take``, without the call: a log of stream rows has more of them than of events
        if seq0 != seq:
            self._take(seq0, n, _CHUNK)
        else:
            self.next_seq = seq + n
            counts = self.counts
            counts[_CHUNK] = counts.get(_CHUNK, 0) + n
        if self._request_due:
            self._request_out(seq)
        self.streams.add(seq, turn, step, n, chars)
        ones = _TURN_ONES[0]  # the one-item array of the last row's turn (of any session), repeated per member
        if ones[0] != turn:
            ones = _TURN_ONES[0] = array("i", (turn,))
        self._turn_at += ones * n
        ones = _STEP_ONES[0]
        if ones[0] != step:
            ones = _STEP_ONES[0] = array("i", (step,))
        self._step_at += ones * n
        self._in_turn += (b"\x00" if self.open_turn is None else b"\x01") * n

    # the fused paths -----------------------------------------------------------------------------------------
    def typed_sinks(self) -> dict[str, Callable[[dict[str, Any], dict[str, Any], int], bool]]:
        """The decoder's fused paths into this projection (``core.log.decoder.Consumer.typed``): for the event
        types most lines of a log are, validate and project an event line in one step.

        A sink takes an event with the plain envelope (its seq declared as the stream expects, an integer time, a
        ``data`` object, envelope keys only) and the seq it gets. When the event has exactly the shape its type
        usually has (every field it reads of the type it expects, which passes ``validate.problem``, and nothing
        the projection would report), it projects it as ``apply`` would, with the same effects, and returns
        True; otherwise it changes nothing and returns False: the event then takes the general path, which
        completes, validates, reports and projects it. ``tests/log/test_fused_paths.py`` checks the two agree.
        """
        return {
            "tool/result": self._fused_result,
            "assistant/message": self._fused_assistant,
            "user/message": self._fused_user,
            "tool/call": self._fused_call,
            "step/start": self._fused_step_start,
            "step/end": self._fused_step_end,
            "turn/start": self._fused_turn_start,
            "turn/end": self._fused_turn_end,
            "agent/inbox/spliced": self._fused_spliced,
        }

    def _fused_count(self, seq: int, etype: str, event: dict[str, Any], turn: int) -> None:
        """What every fused path does first, once the event is known to fit: ``_take``, the store, the turn and
        the step."""
        self.next_seq = seq + 1
        counts = self.counts
        counts[etype] = counts.get(etype, 0) + 1
        if self._retain:
            self.events.append(event)  # type: ignore[union-attr]
        self._turn_at.append(turn)
        self._step_at.append(self._attributed_step(turn, event["data"].get("step")))
        self._in_turn.append(self.open_turn is not None)

    def _fused_node(self, seq: int, etype: str, chars: int) -> None:
        """An appended surface node of ``chars`` chars (``_surface`` for an ``append`` op with no sources)."""
        self._chars[seq] = chars
        self._surface_types[seq] = etype
        self.surface.append(seq)
        self._live.add(seq)
        self.surface_chars += chars

    def _fused_step_start(self, event: dict[str, Any], data: dict[str, Any], seq: int) -> bool:
        turn_no, step_no = data.get("turn"), data.get("step")
        if (
            seq != self.next_seq
            or turn_no.__class__ is not int
            or step_no.__class__ is not int
            or not 0 <= step_no <= MAX_COUNTER
            or (turn := self.turns.get(turn_no)) is None  # a turn's number is a counter
            or step_no in turn.steps
            or "surfaceOp" in event
            or "sourceEventSeqs" in event
        ):
            return False
        turn.steps[step_no] = Step(turn.number, step_no, seq)
        self._current_step = (turn.number, step_no)
        self._request_due = True
        self._fused_count(seq, "step/start", event, self._current_turn)
        return True

    def _fused_step_end(self, event: dict[str, Any], data: dict[str, Any], seq: int) -> bool:
        turn_no, step_no = data.get("turn"), data.get("step")
        if (
            seq != self.next_seq
            or turn_no.__class__ is not int
            or step_no.__class__ is not int
            or (turn := self.turns.get(turn_no)) is None
            or (step := turn.steps.get(step_no)) is None  # both counters: a known step's are
            or "surfaceOp" in event
            or "sourceEventSeqs" in event
        ):
            return False
        step.end_seq = seq
        self._current_step = None
        self._request_due = False
        self._fused_count(seq, "step/end", event, self._current_turn)
        return True

    def _fused_call(self, event: dict[str, Any], data: dict[str, Any], seq: int) -> bool:
        turn, step = data.get("turn"), data.get("step")
        call_id, name = data.get("callId"), data.get("name")
        if (
            seq != self.next_seq
            or turn.__class__ is not int
            or step.__class__ is not int
            or not (0 <= turn <= MAX_COUNTER and 0 <= step <= MAX_COUNTER)
            or call_id.__class__ is not str
            or name.__class__ is not str
            or "surfaceOp" in event
            or "sourceEventSeqs" in event
        ):
            return False
        call = self._register_call(call_id, name, data.get("arguments"), turn, step)
        call.call_seq = seq
        call.name = name
        self._fused_count(seq, "tool/call", event, turn)
        return True

    def _fused_result(self, event: dict[str, Any], data: dict[str, Any], seq: int) -> bool:
        turn, step, message = data.get("turn"), data.get("step"), data.get("message")
        if (
            seq != self.next_seq
            or turn.__class__ is not int
            or step.__class__ is not int
            or not (0 <= turn <= MAX_COUNTER and 0 <= step <= MAX_COUNTER)
            or message.__class__ is not dict
            or message.get("role").__class__ is not str
            or (source := message.get("source")).__class__ is not dict
            or (call_id := source.get("callId")).__class__ is not str
            or (call := self._calls.get((turn, step, call_id))) is None
            or call.call_seq is None  # else an orphan to report
            or event.get("surfaceOp") != "append"
            or not _earlier_seqs(event.get("sourceEventSeqs", _NONE), seq)
            or (chars := _plain_chars(message.get("content"))) is None
        ):
            return False
        call.result_seq = seq
        call.result_error = False  # ``tool_result_failed``: what the first tool-result block reports
        for block in message["content"]:
            if block["type"] == "tool-result":
                call.result_error = tool_block_failed(block)
                break
        key = (turn, step)
        found = self.results_by_step.get(key)
        if found is None:
            self.results_by_step[key] = [seq]
        else:
            found.append(seq)
        self._fused_count(seq, "tool/result", event, turn)
        self._fused_node(seq, "tool/result", chars)
        return True

    def _fused_assistant(self, event: dict[str, Any], data: dict[str, Any], seq: int) -> bool:
        turn, step, message, usage = data.get("turn"), data.get("step"), data.get("message"), data.get("usage")
        if (
            seq != self.next_seq
            or turn.__class__ is not int
            or step.__class__ is not int
            or not (0 <= turn <= MAX_COUNTER and 0 <= step <= MAX_COUNTER)
            or not (usage is None or usage.__class__ is dict)
            or message.__class__ is not dict
            or message.get("role").__class__ is not str
            or not ((source := message.get("source")) is None or source.__class__ is dict)
            or not (source is None or (call_id := source.get("callId")) is None or call_id.__class__ is str)
            or event.get("surfaceOp") != "append"
            or not _earlier_seqs(event.get("sourceEventSeqs", _NONE), seq)
            or (chars := _plain_chars(content := message.get("content"))) is None
        ):
            return False
        if self._request_due:
            self._request_out(seq)
        if usage is not None:
            found = self._step(data)
            if found is not None:
                self._set_usage(found, usage)
        for block in content:
            if block["type"] == "tool-call":
                call = self._register_call(str(block.get("id")), str(block.get("name")), block["arguments"], turn, step)
                if call.message_seq is None:
                    call.message_seq = seq
        self._fused_count(seq, "assistant/message", event, turn)
        self._fused_node(seq, "assistant/message", chars)
        return True

    def _fused_spliced(self, event: dict[str, Any], data: dict[str, Any], seq: int) -> bool:
        turn, step, inserted = data.get("turn"), data.get("step"), data.get("inserted")
        if (
            seq != self.next_seq
            or not (turn is None or (turn.__class__ is int and 0 <= turn <= MAX_COUNTER))
            or not (step is None or (step.__class__ is int and 0 <= step <= MAX_COUNTER))
            or not (inserted is None or inserted.__class__ is list)
            or "surfaceOp" in event
            or "sourceEventSeqs" in event
        ):
            return False
        self._fused_count(seq, "agent/inbox/spliced", event, self._current_turn)
        return True

    def _fused_turn_start(self, event: dict[str, Any], data: dict[str, Any], seq: int) -> bool:
        number, step = data.get("turn"), data.get("step")
        if (
            seq != self.next_seq
            or number.__class__ is not int
            or number != (0 if self._max_turn is None else self._max_turn) + 1  # else a gap to warn of
            or number > MAX_COUNTER
            or not (step is None or (step.__class__ is int and 0 <= step <= MAX_COUNTER))
            or self.open_turn is not None  # else an overlap to warn of
            or number in self.turns
            or "trigger" in data  # a legacy shape to upgrade
            or "surfaceOp" in event
            or "sourceEventSeqs" in event
        ):
            return False
        self.turns[number] = Turn(number, seq)
        self._max_turn = self.open_turn = self._current_turn = number
        self._current_step = None
        self._request_due = False
        self._fused_count(seq, "turn/start", event, number)
        return True

    def _fused_turn_end(self, event: dict[str, Any], data: dict[str, Any], seq: int) -> bool:
        number, step, reason = data.get("turn"), data.get("step"), data.get("reason")
        if (
            number != self.open_turn  # the open turn ends (a started turn's number is a counter)
            or number.__class__ is not int
            or seq != self.next_seq
            or (turn := self.turns.get(number)) is None
            or turn.end_seq is not None
            or not (step is None or (step.__class__ is int and 0 <= step <= MAX_COUNTER))
            or reason.__class__ is not dict
            or (kind := reason.get("kind")).__class__ is not str
            or not ((inner := reason.get("reason")) is None or inner.__class__ is dict)
            or not ((error := reason.get("error")) is None or error.__class__ is dict)
            or kind == "disposed"  # legacy shapes to upgrade
            or (kind == "aborted" and "reason" not in reason)
            or (kind == "error" and "error" not in reason)
            or "surfaceOp" in event
            or "sourceEventSeqs" in event
        ):
            return False
        self._fused_count(seq, "turn/end", event, self._current_turn)  # inside the turn, which is still open
        turn.end_seq = seq
        turn.end_reason = reason
        self.last_ended = number
        self.completed_through = seq
        self._request_due = False
        self.open_turn = None
        return True

    def _fused_user(self, event: dict[str, Any], data: dict[str, Any], seq: int) -> bool:
        turn, step = data.get("turn"), data.get("step")
        if (
            seq != self.next_seq
            or not (turn is None or (turn.__class__ is int and 0 <= turn <= MAX_COUNTER))
            or not (step is None or (step.__class__ is int and 0 <= step <= MAX_COUNTER))
            or "id" not in data  # else a legacy shape to upgrade
            or data.get("role").__class__ is not str
            or not ((source := data.get("source")) is None or source.__class__ is dict)
            or not (source is None or (call_id := source.get("callId")) is None or call_id.__class__ is str)
            or event.get("surfaceOp") != "append"
            or not _earlier_seqs(event.get("sourceEventSeqs", _NONE), seq)
            or (chars := _plain_chars(data.get("content"))) is None
        ):
            return False
        owner = self.open_turn if self.open_turn is not None else self.last_ended
        self._fused_count(seq, "user/message", event, owner or 0)
        self._fused_node(seq, "user/message", chars)
        return True

    def _take(self, declared: Any, n: int, etype: str) -> int:
        """The bookkeeping every entry point does first: ``n`` events of type ``etype`` are projected, the first
        of them (which says it is ``declared``) at ``next_seq``; their seq is returned, and counted."""
        seq = self.next_seq
        if declared != seq:
            self._diag("seq-mismatch", f"projection expected seq {seq}, got {shown(declared)}", seq)
        self.next_seq = seq + n
        counts = self.counts
        counts[etype] = counts.get(etype, 0) + n
        return seq

    def _attributed_turn(self, etype: str, data: dict[str, Any]) -> int:
        if etype in _OWN_TURN:
            turn = data.get("turn")
            if isinstance(turn, int):
                return turn
        if etype == "user/message":
            owner = self.open_turn if self.open_turn is not None else self.last_ended
            return owner or 0
        return self._current_turn

    def _attributed_step(self, turn: int, step: Any) -> int:
        """The step column's value for an event of ``turn`` that names ``step``: that step when it is a counter,
        else the step of ``turn`` open now, else ``NO_STEP``."""
        if step.__class__ is int and 0 <= step <= MAX_COUNTER:
            return step  # type: ignore[no-any-return]
        current = self._current_step
        return current[1] if current is not None and current[0] == turn else NO_STEP

    def _diag(self, code: str, message: str, seq: int | None, severity: str = "error") -> None:
        self.diagnostics.append(Diagnostic(code, message, None, seq, severity))  # type: ignore[arg-type]

    def _on_turn_start(self, seq: int, data: dict[str, Any]) -> None:
        number = data.get("turn")
        if not isinstance(number, int):
            self._diag("bad-turn", "turn/start without an integer turn", seq)
            return
        expected = (0 if self._max_turn is None else self._max_turn) + 1
        if number != expected:
            self._diag("turn-gap", f"turn/start {number} where turn {expected} was expected", seq, "warning")
        if self.open_turn is not None:
            self._diag(
                "turn-overlap",
                f"turn {number} starts while turn {self.open_turn} is still open",
                seq,
                "warning",
            )
        replaced = self.turns.get(number)
        if replaced is not None:
            for step in replaced.steps.values():
                self.usage_tally.add(step.usage, -1)
        self.turns[number] = Turn(number, seq)
        self._max_turn = number if self._max_turn is None else max(self._max_turn, number)
        self.open_turn = self._current_turn = number
        self._current_step = None
        self._request_due = False

    def _on_turn_end(self, seq: int, data: dict[str, Any]) -> None:
        number = data.get("turn")
        turn = self.turns.get(number) if isinstance(number, int) else None
        if turn is None or turn.end_seq is not None:
            self._diag(
                "turn-end-unmatched", f"turn/end for turn {shown(number)}, which is not open", seq, "warning"
            )
            return
        turn.end_seq = seq
        turn.end_reason = data.get("reason") if isinstance(data.get("reason"), dict) else {"kind": "unknown"}
        self.last_ended = number
        self.completed_through = seq
        self._request_due = False
        if self.open_turn == number:
            self.open_turn = None

    def _on_step_start(self, seq: int, data: dict[str, Any]) -> None:
        turn = self.turns.get(data.get("turn"))  # type: ignore[arg-type]
        step_no = data.get("step")
        if turn is None or not isinstance(step_no, int):
            self._diag("step-outside-turn", f"step/start {shown(step_no)} outside an open turn", seq, "warning")
            return
        replaced = turn.steps.get(step_no)
        if replaced is not None:
            self.usage_tally.add(replaced.usage, -1)
        turn.steps[step_no] = Step(turn.number, step_no, seq)
        self._current_step = (turn.number, step_no)
        self._request_due = True

    def _on_step_end(self, seq: int, data: dict[str, Any]) -> None:
        step = self._step(data)
        if step is None:
            self._diag(
                "step-end-unmatched",
                f"step/end for turn {shown(data.get('turn'))} step {shown(data.get('step'))}",
                seq,
                "warning",
            )
            return
        step.end_seq = seq
        self._current_step = None
        self._request_due = False

    def _on_sub_call(self, seq: int, data: dict[str, Any]) -> None:
        if tool_block_failed(data):  # its data holds a tool-result block's fields
            self.failed_sub_calls += 1

    def _on_retry(self, seq: int, data: dict[str, Any]) -> None:
        if self._current_step is not None and (data.get("turn"), data.get("step")) == self._current_step:
            self._request_due = True

    def _request_out(self, seq: int) -> None:
        """The step's first model output is at ``seq``: its request went out right before it (a chart sample,
        taken as ``core.rebuild.request.RequestClock`` tells requests apart)."""
        self._request_due = False
        turn, step = self._current_step or (self._current_turn, 0)
        self.context_samples.append((seq - 1, turn, step, self._system_chars + self.surface_chars))

    def _step(self, data: dict[str, Any]) -> Step | None:
        turn = self.turns.get(data.get("turn"))  # type: ignore[arg-type]
        return turn.steps.get(data.get("step")) if turn else None  # type: ignore[arg-type]

    def _on_chunk(self, seq: int, data: dict[str, Any]) -> None:
        self._delta(seq, data.get("turn"), data.get("step"), data.get("chunk"))

    def _delta(self, seq: int, turn: Any, step: Any, chunk: Any) -> None:
        """A stream delta (``assistant/chunk``) of ``turn`` and ``step``: output, its stream, a usage sample."""
        self._output(seq, chunk)
        self.streams.add(seq, turn, step, 1, delta_chars(chunk))
        if isinstance(chunk, dict) and chunk.get("type") == "usage" and isinstance(chunk.get("usage"), dict):
            self._usage_sample(turn, step, chunk["usage"])

    def _usage_sample(self, turn: Any, step: Any, usage: dict[str, Any]) -> None:
        """A usage chunk of ``turn`` and ``step``: the step's latest sample, when the step is known."""
        owner = self.turns.get(turn)
        found = owner.steps.get(step) if owner else None
        if found is not None:
            self._set_usage(found, usage)

    def _set_usage(self, step: Step, usage: dict[str, Any]) -> None:
        """``usage`` is ``step``'s latest sample: it replaces the last one in the tally too."""
        tally = self.usage_tally
        if step.usage is not None:  # a step's first sample replaces none: nothing to take out
            tally.add(step.usage, -1)
        step.usage = usage
        tally.add(usage)

    def _output(self, seq: int, chunk: Any) -> None:
        """A stream delta: the first output of a request; a failed attempt's finish means another goes out."""
        if self._request_due:
            self._request_out(seq)
        if chunk.__class__ is dict and chunk.get("type") == "finish":
            reason = chunk.get("reason")
            kind = reason.get("kind") if reason.__class__ is dict else None
            if kind == "aborted":
                self.aborted_finishes.append(seq)
            self._request_due = kind == "error" and self._current_step is not None

    def _on_assistant(self, seq: int, data: dict[str, Any]) -> None:
        if self._request_due:
            self._request_out(seq)
        turn, step_no = data.get("turn"), data.get("step")
        if isinstance(data.get("usage"), dict):
            step = self._step(data)
            if step is not None:
                self._set_usage(step, data["usage"])
        message = data.get("message") if isinstance(data.get("message"), dict) else {}
        for block in message.get("content") or ():
            if isinstance(block, dict) and block.get("type") == "tool-call" and isinstance(turn, int):
                call = self._register_call(
                    str(block.get("id")), str(block.get("name")), block.get("arguments"), turn, step_no
                )
                call.message_seq = call.message_seq if call.message_seq is not None else seq

    def _register_call(self, call_id: str, name: str, arguments: Any, turn: int, step: Any) -> ToolCall:
        key = (turn, step if isinstance(step, int) else 0, call_id)
        call = self._calls.get(key)
        if call is None:
            call = ToolCall(call_id, name, arguments if isinstance(arguments, str) else "", key[0], key[1])
            self._calls[key] = call
            self.tool_calls[call_id] = call
        return call

    def _on_tool_call(self, seq: int, data: dict[str, Any]) -> None:
        turn = data.get("turn")
        if not isinstance(turn, int):
            self._diag("bad-tool-call", "tool/call without an integer turn", seq)
            return
        call = self._register_call(
            str(data.get("callId")), str(data.get("name")), data.get("arguments"), turn, data.get("step")
        )
        call.call_seq = seq
        call.name = str(data.get("name"))

    def _on_request_header(self, seq: int, data: dict[str, Any]) -> None:
        header = data.get("header")
        if isinstance(header, dict):
            self._request_header = header
            system = header.get("system")
            self._system_chars = len(system) if isinstance(system, str) else 0
            self.request_header_seq = seq

    def _on_result_pairing(self, seq: int, event: dict[str, Any], data: dict[str, Any]) -> None:
        message = data.get("message") if isinstance(data.get("message"), dict) else {}
        source = message.get("source") if isinstance(message.get("source"), dict) else {}
        call_id = source.get("callId")
        turn, step = data.get("turn"), data.get("step")
        call = (
            self._calls.get((turn, step, call_id))
            if isinstance(turn, int) and isinstance(step, int)
            else None
        )  # type: ignore[arg-type]
        error = data.get("error") if isinstance(data.get("error"), dict) else {}
        if call is None or call.call_seq is None:
            if error.get("code") != "TOOL_NOT_STARTED":
                self._diag(
                    "orphan-result",
                    f"tool/result for call {shown(call_id)} has no tool/call in turn {turn} step {step}",
                    seq,
                )
            if call is None and isinstance(turn, int) and isinstance(step, int) and call_id is not None:
                call = self._register_call(str(call_id), "tool", "", turn, step)
        if call is not None:
            call.result_seq = seq
            call.result_error = tool_result_failed(message)
        if isinstance(turn, int) and isinstance(step, int):
            self.results_by_step.setdefault((turn, step), []).append(seq)

    def _surface(self, seq: int, etype: str, event: dict[str, Any], data: dict[str, Any], op: Any) -> None:
        message = derive_message(event)
        chars = content_chars(message.get("content")) if message else 0
        self._chars[seq] = chars
        self._surface_types[seq] = etype
        sources = event.get("sourceEventSeqs")
        if sources is not None and not _earlier_seqs(sources, seq):
            self._diag("bad-provenance", "sourceEventSeqs must be earlier event seqs", seq)
            sources = (
                [s for s in sources if isinstance(s, int) and 0 <= s < seq]
                if isinstance(sources, list)
                else []
            )
        if op is None:
            self._diag("missing-surface-op", f"{etype} has no surfaceOp; treated as append", seq)
            op = "append"
        if op == "append":
            if etype == "tool/result":
                self._on_result_pairing(seq, event, data)
            self.surface.append(seq)
            self._live.add(seq)
            self.surface_chars += chars
            return
        span = op_span(op)
        self._sources[seq] = list(sources or [])
        if span is None:
            self._diag("bad-surface-op", f'surfaceOp {shown(op)} is neither "append" nor a replace op', seq)
            return
        start, end = span
        i, j = self._position(start), self._position(end)
        if i is None or j is None or i > j:
            missing = start if i is None else end
            msg = (
                f"replace names seq {missing}, which is not on the surface"
                if i is None or j is None
                else f"replace span {start}..{end} is reversed on the surface"
            )
            self._diag("replace-missing-node", msg + "; op skipped", seq)
            return
        shadowed = self.surface[i : j + 1]
        cited = set(self._sources[seq])
        uncited = [s for s in shadowed if s not in cited]
        if uncited:
            self._diag(
                "replace-uncited", f"replacement does not cite shadowed node(s) {uncited}", seq, "warning"
            )
        if etype == "tool/result" and (
            len(shadowed) != 1 or self._surface_types.get(shadowed[0]) != "tool/result"
        ):
            self._diag(
                "tool-result-rewrite",
                "a tool/result replacement must shadow exactly one tool/result",
                seq,
                "warning",
            )
        self.surface[i : j + 1] = [seq]
        removed = sum(self._chars.get(s, 0) for s in shadowed)
        self.surface_chars += chars - removed
        self.shadowed[seq] = shadowed
        self._live.add(seq)
        for s in shadowed:
            self.replaced_by[s] = seq
            self._live.discard(s)
        self.cuts.append(Cut(seq, cut_kind(event), len(shadowed), removed - chars, self._current_turn))

    def _position(self, seq: int) -> int | None:
        nodes = self.surface
        for k in range(len(nodes) - 1, -1, -1):
            if nodes[k] == seq:
                return k
        return None

    _HANDLERS: dict[str, Any] = {
        "turn/start": _on_turn_start,
        "turn/end": _on_turn_end,
        "step/start": _on_step_start,
        "step/end": _on_step_end,
        "assistant/chunk": _on_chunk,
        "assistant/message": _on_assistant,
        "tool/call": _on_tool_call,
        "request/header": _on_request_header,
        "llm/retry": _on_retry,
        "tool/code-dispatch": _on_sub_call,
    }
