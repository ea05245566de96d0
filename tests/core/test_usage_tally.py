"""The session's running usage totals: equal to summing every step's usage in force, and read without a walk."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.read.session import Session, Turn
from core.read.usage import usage_tokens
from core.rebuild.cost import cost_summary, session_cost
from tests.log.helpers import HEADER, assistant

REQUEST_HEADER = {"type": "request/header", "data": {"header": {"config": {"provider": "deepseek", "model": "deepseek-chat"}}}}

usages = st.fixed_dictionaries(
    {"inputTokens": st.integers(0, 10_000), "outputTokens": st.integers(0, 1_000)},
    optional={"cacheReadTokens": st.integers(0, 10_000), "cacheWriteTokens": st.integers(0, 100)},
)
# (kind, turn, step, usage): turns and steps restart under numbers already used, samples replace earlier ones
ops = st.lists(
    st.tuples(st.sampled_from(["turn", "step", "message", "chunk"]), st.integers(1, 3), st.integers(1, 3), usages),
    max_size=40,
)


def _body(kind: str, turn: int, step: int, usage: dict[str, int]) -> dict[str, Any]:
    if kind == "turn":
        return {"type": "turn/start", "data": {"turn": turn}}
    if kind == "step":
        return {"type": "step/start", "data": {"turn": turn, "step": step}}
    if kind == "message":
        message = assistant(turn, step, "answer")
        message["data"]["usage"] = usage
        return message
    return {"type": "assistant/chunk", "data": {"turn": turn, "step": step, "chunk": {"type": "usage", "usage": usage}}}


def _apply(session: Session, *bodies: dict[str, Any]) -> None:
    for body in bodies:
        session.apply({**body, "seq": session.next_seq, "time": session.next_seq})


def _walked(session: Session) -> tuple[int, int, int, bool, bool]:
    """The totals by the definition: every step's usage in force, summed."""
    hit = miss = output = 0
    reporting = used = False
    for turn in session.turns.values():
        for step in turn.steps.values():
            tokens = usage_tokens(step.usage)
            if tokens is not None:
                used, reporting = True, reporting or tokens[0] is not None
                hit, miss, output = hit + (tokens[0] or 0), miss + tokens[1], output + tokens[2]
    return hit, miss, output, reporting, used


@settings(max_examples=200, deadline=None)
@given(ops)
def test_the_tally_is_the_sum_over_every_steps_usage_in_force(script: list[tuple[str, int, int, dict[str, int]]]) -> None:
    session = Session(HEADER)
    _apply(session, REQUEST_HEADER)
    for op in script:
        _apply(session, _body(*op))
        tally = session.usage_tally
        assert (tally.hit, tally.miss, tally.output, tally.reporting > 0, tally.used > 0) == _walked(session)


class _CountingTurns(dict[int, Turn]):
    """The session's turns, counting the steps anything walks through them."""

    visited = 0

    def values(self) -> Iterator[Turn]:  # type: ignore[override]
        for turn in super().values():
            _CountingTurns.visited += len(turn.steps)
            yield turn


def _steps_visited_by_the_header_after_an_append(turns: int) -> int:
    session = Session(HEADER)
    _apply(session, REQUEST_HEADER)
    for n in range(1, turns + 1):
        _apply(session, _body("turn", n, 1, {}), _body("step", n, 1, {}))
        _apply(session, _body("message", n, 1, {"inputTokens": 100, "cacheReadTokens": 900, "outputTokens": 10}))
        _apply(session, {"type": "turn/end", "data": {"turn": n, "reason": {"kind": "completed"}}})
    session.turns = _CountingTurns(session.turns)
    _CountingTurns.visited = 0
    _apply(session, _body("turn", turns + 1, 1, {}), _body("step", turns + 1, 1, {}))
    _apply(session, _body("chunk", turns + 1, 1, {"inputTokens": 50, "outputTokens": 5}))
    assert cost_summary(session).startswith("$")
    return _CountingTurns.visited


def test_the_headers_cost_after_an_append_does_not_walk_the_earlier_steps() -> None:
    assert _steps_visited_by_the_header_after_an_append(2000) == _steps_visited_by_the_header_after_an_append(10)
    session = Session(HEADER)
    _apply(session, REQUEST_HEADER, _body("turn", 1, 1, {}), _body("step", 1, 1, {}))
    _apply(session, _body("message", 1, 1, {"inputTokens": 100, "cacheReadTokens": 300, "outputTokens": 10}))
    assert session_cost(session)[1] == 0.75
