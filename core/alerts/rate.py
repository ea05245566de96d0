"""Where the money is going: the run rate ($/h) and the cost projected to the end of the open turn.

The run rate is the spend of the last ``alerts.runRate.windowMinutes`` (the run-rate rule's own window) per hour,
at the session's newest event or at a given time. The projection assumes each step still allowed in the open
turn costs what the turn's steps cost on average so far (the session's average before the turn's first priced
step): the turn ends at the router's hard step budget at the latest, so ``turn cost + steps left × average`` is
what the turn costs if it runs to its budget. Without a router decision for the open turn (a DSH log) there is
no budget to project to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from core.alerts.config import AlertsConfig
from core.alerts.engine import ModelBook
from core.alerts.rules import MIN_EPOCH_MS, Signals
from core.log.vocabulary import HOST_EVENT, ROUTE_EVENT
from core.shared.model_specs import ModelConfig
from core.shared.records import record

_CHUNK = "assistant/chunk"
# The event types whose rule handlers change what ``project`` reads (see ``RateFold``)
PROJECTED = frozenset({"turn/start", "turn/end", HOST_EVENT, "request/header", ROUTE_EVENT, "assistant/message",
                       "compaction/summary"})  # fmt: skip
ReadBack = Callable[[int, int], Iterable[Mapping[str, Any]]]  # the events of seqs start..stop-1, read back


@record(frozen=True, slots=True)
class Projection:
    """The run rate and the open turn's projected cost (None where unknown)."""

    usd: float | None  # the session so far
    usd_per_hour: float | None
    turn: int | None  # the open turn
    step: int | None  # the step it is at
    hard_budget: int | None  # its hard step budget
    turn_usd: float | None  # what the open turn cost so far
    projected_turn_usd: float | None  # … and at its hard step budget

    def to_dict(self) -> dict[str, Any]:
        """The ``cost --json`` ``projection`` object."""
        return {
            "usd": self.usd,
            "usdPerHour": self.usd_per_hour,
            "turn": self.turn,
            "step": self.step,
            "hardStepBudget": self.hard_budget,
            "turnUsd": self.turn_usd,
            "projectedTurnUsd": self.projected_turn_usd,
        }

    def summary(self) -> str:
        """``$1.20/h · turn → $0.42`` (each part only when known)."""
        parts = []
        if self.usd_per_hour is not None:
            parts.append(f"${self.usd_per_hour:.2f}/h")
        if self.projected_turn_usd is not None:
            parts.append(f"turn → ${self.projected_turn_usd:.2f}")
        return " · ".join(parts)


def window_ms(config: AlertsConfig) -> int:
    """The run rate's window: the run-rate rule's ``windowMinutes``."""
    return int(config.rule("run-rate")["windowMinutes"] * 60_000)


def fold(events: Iterable[Mapping[str, Any]], models: ModelConfig | None, window: int) -> Signals:
    """The signals of ``events`` (what a projection needs, without running any rule)."""
    signals, book = Signals(), ModelBook(models)
    for event in events:
        signals.observe(event, book, window)
    return signals


def project(signals: Signals, window: int, now: int | None = None) -> Projection:
    """The run rate at ``now`` (default: the newest event's time) and the open turn's projected cost."""
    priced = bool(signals.priced_steps)
    at = now if now is not None else signals.last_time
    rate = signals.window_rate(at, window, prune=False) if priced and at is not None else None  # a look: no change
    turn = signals.open_turn
    route = signals.route_step if signals.route_step and signals.route_step[0] == turn else None
    turn_usd = projected = None
    if turn is not None and priced:
        steps = signals.turn_usd.get(turn, {})  # the open turn's steps alone: a poll never walks every step
        turn_usd = sum(steps.values())
        if route is not None:
            average = turn_usd / len(steps) if steps else signals.cost_usd / signals.priced_steps
            left = max(0, route[2] - max(steps, default=0))
            projected = turn_usd + left * average
    return Projection(
        signals.cost_usd if priced else None,
        rate,
        turn,
        route[1] if route else None,
        route[2] if route else None,
        turn_usd,
        projected,
    )


def _usage_of(event: Mapping[str, Any], etype: Any) -> dict[str, Any] | None:
    """The usage object of a usage sample, a chunk's or an assistant message's (what ``Signals`` prices), else None."""
    data = event.get("data")
    if not isinstance(data, dict):
        return None
    if etype == _CHUNK:
        chunk = data.get("chunk")
        usage = chunk.get("usage") if isinstance(chunk, dict) and chunk.get("type") == "usage" else None
    else:
        usage = data.get("usage") if etype == "assistant/message" else None
    return usage if isinstance(usage, dict) else None


class RateFold:
    """The signals a projection needs, folded while another pass reads the log.

    It is shown only the events whose rule handlers move what ``project`` reads (``TYPES``: the open turn, its
    route, the model, and the priced usage of assistant messages and usage chunks), each with its seq, in seq
    order. Every other event (stream deltas and packed rows above all, which are most of a log) only moves the
    clock, the time of the first and of the newest event: the fold reads those back (``ReadBack``) where it
    needs them, which a log whose events carry their times never makes it do but at the end. Before an event
    without a time of its own, and before the first timed one, it reads the times of the seqs it was not shown
    since the last event it was; ``finish`` reads those after the last. Each seq's time is read back at most
    once, so a log without times is read once more, and one with times a line or two.
    """

    TYPES = PROJECTED | {_CHUNK}  # of the chunks, only usage samples move it: a pass may leave out the others

    def __init__(self, models: ModelConfig | None, config: AlertsConfig) -> None:
        self.signals, self.book, self.window = Signals(), ModelBook(models), window_ms(config)
        self.known = -1  # the clock (first and newest time) is the fold's of every seq up to here

    def observe(self, seq: int, event: Mapping[str, Any], read: ReadBack) -> None:
        """Fold event ``seq``, one of ``TYPES`` (of other types only the clock is taken); ``read`` reads the
        events before it back."""
        etype = event.get("type")
        usage = _usage_of(event, etype)
        if usage is None and etype == _CHUNK:  # a stream's finish: only the clock, as unseen
            return
        signals = self.signals
        when = event.get("time")
        if when.__class__ is not int or when < MIN_EPOCH_MS or signals.first_time is None:
            self._catch_up(seq, read)
        signals.seq = seq - 1  # what its own seq falls back on, when it has none
        signals.observe(event, self.book, self.window, usage)  # a usage sample: only its price, which is read
        signals.seq = self.known = seq

    def finish(self, end: int, read: ReadBack) -> None:
        """The log's seqs end before ``end``: take the clock of those after the last event shown."""
        self._catch_up(end, read)
        self.signals.seq = end - 1

    def _catch_up(self, seq: int, read: ReadBack) -> None:
        """Take the clock of seqs ``known+1``..``seq-1`` (which the fold was not shown)."""
        start, self.known = self.known + 1, seq - 1
        if start >= seq:
            return
        clock = [t for event in read(start, seq) if (t := event.get("time")).__class__ is int and t >= MIN_EPOCH_MS]
        if clock:
            signals = self.signals
            signals.last_time = clock[-1]
            if signals.first_time is None:
                signals.first_time = clock[0]

    def projection(self, now: int | None = None) -> Projection:
        """The projection of what was folded so far (``project``)."""
        return project(self.signals, self.window, now)

