"""How a session stands, from the end of its log: how many turns it ran and how the last one ended."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from core.log.tail import tail_events

TURN_OPEN = "turn open"  # a turn started and has not ended (the host may be running it, or it died in it)
TAIL_EVENTS = 200  # how many events from the end are read (a turn's number is on nearly every event)


def outcome_of(events: Iterable[dict[str, Any]]) -> tuple[int | None, str]:
    """``(turns, outcome)`` from a log's last events: the highest turn number they name, and the last turn's
    end reason (``completed``, ``aborted``, ``blocked``, ``error`` …), ``turn open``, or ``-`` before any turn."""
    turns: int | None = None
    outcome = "-"
    for event in events:
        data = event.get("data")
        if not isinstance(data, dict):
            continue
        turn = data.get("turn")
        if isinstance(turn, int) and not isinstance(turn, bool):
            turns = turn if turns is None else max(turns, turn)
        etype = event.get("type")
        if etype == "turn/start":
            outcome = TURN_OPEN
        elif etype == "turn/end":
            reason = data.get("reason")
            kind = reason.get("kind") if isinstance(reason, dict) else None
            outcome = kind if isinstance(kind, str) and kind else "ended"
    if outcome == "-" and turns is not None:
        outcome = TURN_OPEN  # the tail lies inside one long turn
    return turns, outcome


def session_outcome(path: str | os.PathLike[str]) -> tuple[int | None, str]:
    """``outcome_of`` the last ``TAIL_EVENTS`` events of the log at ``path`` (read from its end)."""
    return outcome_of(tail_events(path, TAIL_EVENTS))
