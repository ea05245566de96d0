"""The projection's work per event does not grow with the log: operations are counted, never timed.

Work is counted two ways while events are applied: Python function calls (``sys.setprofile``) and keys yielded
by iterating the projection's turn table (a C-level ``max(self.turns)`` is one call but N steps). Doubling the
log must about double both.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from types import FrameType
from typing import Any

from core.read.session import Session, Turn


class CountingTurns(dict[int, Turn]):
    """A turn table that counts every key handed out by iteration."""

    iterated = 0

    def __iter__(self) -> Iterator[int]:
        for key in super().__iter__():
            CountingTurns.iterated += 1
            yield key


def short_turns(turns: int) -> list[dict[str, Any]]:
    """A log of ``turns`` one-step turns, each with a user message, a tool call and its result."""
    events: list[dict[str, Any]] = []

    def add(etype: str, data: dict[str, Any], **extra: Any) -> None:
        events.append({"type": etype, "seq": len(events), "time": 0, "data": data, **extra})

    for t in range(1, turns + 1):
        add("turn/start", {"turn": t})
        add("user/message", {"id": f"u{t}", "role": "user", "content": [{"type": "text", "text": "go"}],
                             "source": {"kind": "user"}}, surfaceOp="append")  # fmt: skip
        add("step/start", {"turn": t, "step": 1})
        call = {"type": "tool-call", "id": f"c{t}", "name": "read", "arguments": "{}"}
        add("assistant/message", {"turn": t, "step": 1, "message": {"role": "assistant", "content": [call]}},
            surfaceOp="append")  # fmt: skip
        add("tool/call", {"turn": t, "step": 1, "callId": f"c{t}", "name": "read", "arguments": "{}"})
        result = {"role": "user", "source": {"kind": "tool", "callId": f"c{t}"},
                  "content": [{"type": "tool-result", "toolCallId": f"c{t}", "content": []}]}  # fmt: skip
        add("tool/result", {"turn": t, "step": 1, "message": result}, surfaceOp="append")
        add("step/end", {"turn": t, "step": 1})
        add("turn/end", {"turn": t, "reason": {"kind": "completed"}})
    return events


def work(turns: int) -> int:
    """Function calls plus turn-table keys iterated while projecting a log of ``turns`` turns."""
    events = short_turns(turns)
    session = Session({"type": "session", "id": "s", "version": 0})
    session.turns = CountingTurns()
    CountingTurns.iterated = 0
    calls = 0

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(profile)
    try:
        for event in events:
            session.apply(event)
    finally:
        sys.setprofile(None)
    assert len(session.turns) == turns and not session.diagnostics
    return calls + CountingTurns.iterated


def test_projection_work_grows_linearly_with_the_number_of_turns() -> None:
    small, large = work(500), work(2000)
    assert large <= 4.2 * small, (small, large)
