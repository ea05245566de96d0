"""What a screen needs of a session beyond its projection: turn and step starts, errors, control outcomes, the
host and router's latest word, the title. Gathered as events are projected (``SessionFacts.observe`` for the
events of ``FACT_TYPES``), and kept in the log's persistent index (``state``/``from_state``) with the
projection's state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from core.log.decoder import CHUNK
from core.log.validate import INVALID, is_invalid
from core.log.vocabulary import CONTROL_EVENT, HOST_EVENT, ROUTE_EVENT
from core.shared.records import record
from core.shared.text import tool_block_failed, tool_result_failed

if TYPE_CHECKING:
    from core.read.session import Session


def is_error_event(event: dict[str, Any]) -> bool:
    """True for failed tool results and code-mode sub-calls, error turn ends, failed stream attempts, retries and rejected requests."""
    data = event.get("data")
    return is_error(event, event.get("type"), data if isinstance(data, dict) else {})


def is_error(event: dict[str, Any], etype: Any, data: dict[str, Any]) -> bool:
    """``is_error_event`` of ``event``, whose type is ``etype`` and data ``data`` (``{}`` when not an object), for a
    caller that has read both already."""
    if INVALID in event:  # ``is_invalid``, without a call
        return False
    if etype == "tool/result":
        return tool_result_failed(data.get("message") if isinstance(data.get("message"), dict) else None)
    if etype == "tool/code-dispatch":  # a ``run_code`` sub-call: its data holds a tool-result block's fields
        return tool_block_failed(data)
    if etype == "turn/end":
        return (data.get("reason") or {}).get("kind") == "error"
    if etype == "assistant/chunk":
        chunk = data.get("chunk") or {}
        return chunk.get("type") == "finish" and (chunk.get("reason") or {}).get("kind") == "error"
    if etype == CONTROL_EVENT:
        return data.get("outcome") == "rejected"
    if etype == "compaction/end":
        return bool(data.get("error"))
    return etype == "llm/retry"


@record()
class SessionFacts:
    """What the TUI needs beyond the projection, gathered while events are applied (append-only lists)."""

    turn_starts: list[int]
    step_starts: list[int]
    errors: list[int]
    outcomes: dict[str, dict[str, Any]]
    host: dict[str, Any] | None = None
    route: dict[str, Any] | None = None
    title: str | None = None
    turn: int = 0
    step: int = 0

    @classmethod
    def empty(cls) -> SessionFacts:
        """Facts of a session with no events."""
        return cls([], [], [], {})

    def state(self) -> dict[str, Any]:
        """The facts as plain data (``from_state`` takes them back)."""
        return {"turnStarts": self.turn_starts, "stepStarts": self.step_starts, "errors": self.errors,
                "outcomes": self.outcomes, "host": self.host, "route": self.route, "title": self.title,
                "turn": self.turn, "step": self.step}  # fmt: skip

    @classmethod
    def from_state(cls, state: Any) -> SessionFacts:
        """The facts ``state()`` gave; ValueError when ``state`` is not such a description."""
        if type(state) is not dict:
            raise ValueError("facts are not an object")
        lists = [state.get(key) for key in ("turnStarts", "stepStarts", "errors")]
        outcomes, host, route, title = (state.get(key) for key in ("outcomes", "host", "route", "title"))
        turn, step = state.get("turn"), state.get("step")
        if (
            not all(type(seqs) is list and all(type(seq) is int for seq in seqs) for seqs in lists)
            or type(outcomes) is not dict
            or not all(type(value) is dict for value in outcomes.values())
            or not all(value is None or type(value) is dict for value in (host, route))
            or not (title is None or type(title) is str)
            or type(turn) is not int
            or type(step) is not int
        ):
            raise ValueError("not a description of facts")
        return cls(lists[0], lists[1], lists[2], outcomes, host, route, title, turn, step)

    def observe(self, event: dict[str, Any]) -> None:
        """Record what ``event`` adds (called in seq order); an event validation marked invalid adds nothing."""
        etype = event.get("type")
        if etype.__class__ is not str or etype not in FACT_TYPES:  # most events: nothing to record
            return
        if etype == CHUNK:  # only a failed stream's finish chunk is a fact (an error)
            data = event.get("data")
            chunk = data.get("chunk") if data.__class__ is dict else None
            if chunk.__class__ is not dict or chunk.get("type") != "finish":
                return
            reason = chunk.get("reason")
            if reason.__class__ is not dict or reason.get("kind") != "error":
                return  # a stream that did not fail (``is_error_event``): most finish chunks
        if is_invalid(event):
            return
        seq = int(event.get("seq", 0))
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        if etype == "turn/start":  # the first four are never errors
            self.turn_starts.append(seq)
            self.turn, self.step = _int(data.get("turn"), self.turn), 0
            return
        if etype == "step/start":
            self.step_starts.append(seq)
            self.step = _int(data.get("step"), self.step)
            return
        if etype == HOST_EVENT:
            if self.host is None:  # the first host's
                self.host = data
            return
        if etype == ROUTE_EVENT:
            self.route = data
            return
        if etype == "session/title" and isinstance(data.get("title"), str):
            self.title = data["title"]
        elif etype == CONTROL_EVENT and isinstance(data.get("requestId"), str):
            self.outcomes[data["requestId"]] = data
        if is_error_event(event):
            self.errors.append(seq)


    def general_observers(self) -> dict[str, Callable[[dict[str, Any]], None]]:
        """``observe`` by fact type, for the events the decoder's general path projects (``Consumer.told``; rows
        and well-formed stream deltas, which are never a fact, take other paths, as in the TUI's loader)."""
        observers = dict.fromkeys(FACT_TYPES, self.observe)
        observers[CHUNK] = self._chunk
        return observers

    def _chunk(self, event: dict[str, Any]) -> None:
        """``observe`` for a chunk event: a failed stream's finish is an error, other chunks are no fact (most
        chunks the general path takes are usage samples and finishes that did not fail)."""
        data = event.get("data")
        chunk = data.get("chunk") if data.__class__ is dict else None
        if chunk.__class__ is dict and chunk.get("type") == "finish":
            reason = chunk.get("reason")
            if reason.__class__ is dict and reason.get("kind") == "error":
                self.observe(event)

    def typed_observers(self, session: Session) -> dict[str, Callable[[dict[str, Any]], None]]:
        """``observe`` for the fact types the decoder's fused paths into ``session`` take (``Session.typed_sinks``),
        for an event such a path took: valid, numbered, its ``data`` an object and a tool result's ``message`` one
        too, so without the checks it passed."""
        call_at = session.tool_call_at

        def result(event: dict[str, Any]) -> None:
            # ``is_error_event``: the fused path filed on the result's call what its first tool-result block reports
            # (``tool_block_failed``), so the block is not read again
            data = event["data"]
            if call_at(data["turn"], data["step"], data["message"]["source"]["callId"]).result_error:  # type: ignore[union-attr]
                self.errors.append(event["seq"])

        return {"step/start": self._step_started, "tool/result": result}

    def _step_started(self, event: dict[str, Any]) -> None:
        self.step_starts.append(event["seq"])
        step = event["data"].get("step")
        if step.__class__ is int:  # ``_int``: a fused path's data is as orjson made it, so no int subclass
            self.step = step


# the types ``SessionFacts.observe`` records something for (``is_error_event`` included)
FACT_TYPES = frozenset(
    {
        "turn/start", "step/start", HOST_EVENT, ROUTE_EVENT, "session/title", CONTROL_EVENT,
        "tool/result", "tool/code-dispatch", "turn/end", CHUNK, "compaction/end", "llm/retry",
    }
)  # fmt: skip


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
