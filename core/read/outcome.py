"""How a session stands: how many turns it ran and how the last one ended, folded from its events."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

TURN_OPEN = "turn open"  # a turn started and has not ended (the host may be running it, or it died in it)


class TurnOutcome:
    """A fold of events, in log order, into how the session stands: ``turns`` (the highest turn number seen) and
    ``outcome``: the last turn's end reason (``completed``, ``aborted``, ``blocked``, ``error`` …), ``turn open``,
    or ``-`` before any turn. Fed a log's new events as they arrive, it never reads the log again."""

    def __init__(self) -> None:
        self.turns: int | None = None
        self._outcome = "-"

    def feed(self, events: Iterable[dict[str, Any]]) -> None:
        """Fold more events."""
        for event in events:
            data = event.get("data")
            if not isinstance(data, dict):
                continue
            turn = data.get("turn")
            if isinstance(turn, int) and not isinstance(turn, bool):
                self.turns = turn if self.turns is None else max(self.turns, turn)
            etype = event.get("type")
            if etype == "turn/start":
                self._outcome = TURN_OPEN
            elif etype == "turn/end":
                reason = data.get("reason")
                kind = reason.get("kind") if isinstance(reason, dict) else None
                self._outcome = kind if isinstance(kind, str) and kind else "ended"

    def state(self) -> tuple[int | None, str]:
        """What the fold holds (``restore`` takes it back)."""
        return self.turns, self._outcome

    def restore(self, state: tuple[int | None, str]) -> None:
        """Take back what ``state`` gave."""
        self.turns, self._outcome = state

    @property
    def outcome(self) -> str:
        """How the last turn ended (a log, or a tail of one, that names a turn but no start or end: inside it)."""
        return TURN_OPEN if self._outcome == "-" and self.turns is not None else self._outcome
