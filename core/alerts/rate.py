"""Where the money is going: the run rate ($/h) and the cost projected to the end of the open turn.

The run rate is the spend of the last ``alerts.runRate.windowMinutes`` (the run-rate rule's own window) per hour,
at the session's newest event or at a given time. The projection assumes each step still allowed in the open
turn costs what the turn's steps cost on average so far (the session's average before the turn's first priced
step): the turn ends at the router's hard step budget at the latest, so ``turn cost + steps left × average`` is
what the turn costs if it runs to its budget. Without a router decision for the open turn (a DSH log) there is
no budget to project to.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from core.alerts.config import AlertsConfig
from core.alerts.engine import ModelBook
from core.alerts.rules import MIN_EPOCH_MS, Signals
from core.log.records import PackedRow
from core.log.validate import INVALID
from core.log.vocabulary import HOST_EVENT, ROUTE_EVENT
from core.shared.model_specs import ModelConfig

_CHUNK = "assistant/chunk"
# The event types whose rule handlers change what ``project`` reads (see ``RateFold``)
PROJECTED = frozenset({"turn/start", "turn/end", HOST_EVENT, "request/header", ROUTE_EVENT, "assistant/message"})


@dataclass(frozen=True, slots=True)
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
    priced = bool(signals.step_usd)
    at = now if now is not None else signals.last_time
    rate = signals.window_rate(at, window) if priced and at is not None else None
    turn = signals.open_turn
    route = signals.route_step if signals.route_step and signals.route_step[0] == turn else None
    turn_usd = projected = None
    if turn is not None and priced:
        steps = signals.turn_usd.get(turn, {})  # the open turn's steps alone: a poll never walks every step
        turn_usd = sum(steps.values())
        if route is not None:
            average = turn_usd / len(steps) if steps else signals.cost_usd / len(signals.step_usd)
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


class RateFold:
    """The signals a projection needs, folded while another pass reads the log (``observe`` takes each event
    dict or ``PackedRow`` in seq order, as ``core.read.load.load_session`` hands them to its observers).

    Only the events whose handlers move what ``project`` reads (``PROJECTED``: the open turn, its route, the model
    and the priced usage) go through the rules' fold; any other moves only the seq and the time
    (``Signals.skip``), as a stream delta does: a packed row is never expanded into events, and a tool call's
    arguments are never parsed for the loop rule, which no projection reads."""

    def __init__(self, models: ModelConfig | None, config: AlertsConfig) -> None:
        self.signals, self.book, self.window = Signals(), ModelBook(models), window_ms(config)

    def observe(self, item: Mapping[str, Any] | PackedRow) -> None:
        """Fold one decoded item."""
        if item.__class__ is PackedRow:
            times = item.times()  # type: ignore[union-attr]
            if min(times) >= MIN_EPOCH_MS:  # every member's time counts: the first and the last say it all
                self._tick(item.seq0 + item.count - 1, times[0], times[-1])  # type: ignore[union-attr]
            else:
                self.signals.skip(item.seq0 + item.count - 1, times, self.window)  # type: ignore[union-attr]
            return
        etype = item.get("type")  # type: ignore[union-attr]
        seq, when = item.get("seq"), item.get("time")  # type: ignore[union-attr]
        if etype == _CHUNK:  # a usage sample is folded; a delta moves only the seq and the time
            data = item.get("data")  # type: ignore[union-attr]
            chunk = data.get("chunk") if isinstance(data, dict) else None
            moves = not isinstance(chunk, dict) or chunk.get("type") == "usage" or INVALID in item
        else:
            moves = etype.__class__ is not str or etype in PROJECTED
        if moves or seq.__class__ is not int or when.__class__ is not int or when < MIN_EPOCH_MS:
            self.signals.observe(item, self.book, self.window)  # type: ignore[arg-type]
        else:
            self._tick(seq, when, when)

    def _tick(self, seq: int, first: int, last: int) -> None:
        """``Signals.skip`` of deltas up to ``seq`` whose times, ``first`` to ``last``, are all clock times (the
        causes it returns, which no projection reads, left out)."""
        signals = self.signals
        signals.seq, signals.last_time = seq, last
        if signals.first_time is None:
            signals.first_time = first

    def projection(self, now: int | None = None) -> Projection:
        """The projection of what was folded so far (``project``)."""
        return project(self.signals, self.window, now)
