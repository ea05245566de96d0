"""A moment's turns, open turn, step, replacements and typed seqs, found through the timeline's indexes, are what
the linear scans that came before them found (kept here alone, as the oracle), on generated sessions: well-formed
ones (the indexes' bisections) and ones whose turns and steps overlap, restart or end twice (their ordered walk);
on a whole session and on one followed as it grows."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.read.session import Session, Turn
from core.read.timetravel import SessionAt, SurfaceTimeline, moment
from tests.log.helpers import HEADER, user

TYPES = ("user/message", "turn/start", "step/end")


def linear_turns(session: Session, seq: int) -> tuple[dict[int, Turn], int | None]:
    """The turns as they stood right after ``seq`` and the one open then, walking every turn and step."""
    turns: dict[int, Turn] = {}
    open_turn = None
    for number, turn in session.turns.items():
        if turn.start_seq > seq:
            continue
        ended = turn.end_seq is not None and turn.end_seq <= seq
        steps = {n: st for n, st in turn.steps.items() if st.start_seq <= seq}
        turns[number] = Turn(number, turn.start_seq, turn.end_seq if ended else None,
                             turn.end_reason if ended else None, steps)  # fmt: skip
        if not ended:
            open_turn = number
    return turns, open_turn


def linear_step(session: Session, seq: int) -> int:
    """The step in progress at ``seq``, walking the steps of its turn."""
    info = session.turns.get(session.turn_of(seq))
    step = 0
    if info is not None:
        for number, s in info.steps.items():
            if s.start_seq <= seq and (s.end_seq is None or seq <= s.end_seq):
                step = number
    return step


def linear_replaced_by(session: Session, seq: int) -> dict[int, int]:
    """``Session.replaced_by`` as it stood right after ``seq``, filtering every replacement."""
    return {s: r for s, r in session.replaced_by.items() if r <= seq}


def _fields(turn: Turn) -> tuple[Any, ...]:
    return turn.number, turn.start_seq, turn.end_seq, turn.end_reason, turn.steps


@st.composite
def sessions(draw: st.DrawFn) -> list[dict[str, Any]]:
    """The events of a session: turns and steps in order (``tidy``) or in any order, between appended and replacing
    messages and other events."""
    tidy = draw(st.booleans())
    events: list[dict[str, Any]] = []
    nodes: list[int] = []
    turn, step, open_turn, open_step = 0, 0, False, False
    for seq in range(draw(st.integers(1, 60))):
        kind = draw(st.sampled_from(["turn", "step", "message", "replace", "other"]))
        if kind == "turn" and tidy:
            data = {"turn": turn, "reason": {"kind": "completed"}} if open_turn else {"turn": turn + 1}
            if open_turn and open_step:
                event = {"type": "step/end", "data": {"turn": turn, "step": step}}
                open_step = False
            elif open_turn:
                event = {"type": "turn/end", "data": data}
                open_turn = False
            else:
                turn, step, open_turn = turn + 1, 0, True
                event = {"type": "turn/start", "data": data}
        elif kind == "step" and tidy:
            if not open_turn:
                turn, step, open_turn = turn + 1, 0, True
                event = {"type": "turn/start", "data": {"turn": turn}}
            elif open_step:
                event = {"type": "step/end", "data": {"turn": turn, "step": step}}
                open_step = False
            else:
                step, open_step = step + 1, True
                event = {"type": "step/start", "data": {"turn": turn, "step": step}}
        elif kind in ("turn", "step"):
            etype = draw(st.sampled_from(["turn/start", "turn/end", "step/start", "step/end"]))
            data = {
                "turn": draw(st.integers(1, 2)),
                "step": draw(st.integers(1, 3)),
                "reason": {"kind": "completed"},
            }
            event = {"type": etype, "data": data}
        elif kind == "replace" and nodes:
            i = draw(st.integers(0, len(nodes) - 1))
            j = draw(st.integers(i, len(nodes) - 1))
            event = {**user(f"r{seq}", "plugin:slice:history"), "surfaceOp": {"op": "replace", "start": nodes[i],
                     "end": nodes[j]}, "sourceEventSeqs": nodes[i : j + 1]}  # fmt: skip
            nodes[i : j + 1] = [seq]
        elif kind in ("message", "replace"):
            event = user(f"m{seq}")
            nodes.append(seq)
        else:
            event = {"type": "session/title", "data": {"title": "x"}}
        events.append({**event, "seq": seq, "time": seq})
    return events


def _same_answers(session: Session, timeline: SurfaceTimeline) -> None:
    """Every moment the timeline has taken in answers as the linear scans do."""
    for seq in range(timeline.seen):
        view = SessionAt(session, timeline, seq)
        turns, open_turn = linear_turns(session, seq)
        assert {n: _fields(t) for n, t in view.turns.items()} == {n: _fields(t) for n, t in turns.items()}, (
            seq
        )
        assert list(view.turns) == list(turns) and len(view.turns) == len(turns)
        assert all(_fields(view.turns[n]) == _fields(t) for n, t in turns.items())
        assert view.open_turn == open_turn, seq
        replaced = linear_replaced_by(session, seq)
        assert list(view.replaced_by.items()) == list(replaced.items()) and len(view.replaced_by) == len(
            replaced
        )
        assert all(view.replaced_by.get(s) == replaced.get(s) for s in range(session.next_seq))
        for start in (0, seq // 2):
            assert list(view.seqs_of(TYPES, start)) == [s for s in session.seqs_of(TYPES, start) if s <= seq]
        assert moment(session, seq, timeline.turns).step == linear_step(session, seq), seq


@settings(max_examples=300, deadline=None)
@given(events=sessions())
def test_a_whole_session_answers_as_the_scans_did(events: list[dict[str, Any]]) -> None:
    session = Session.from_events(HEADER, events)
    _same_answers(session, SurfaceTimeline.from_session(session, every=4))


@settings(max_examples=150, deadline=None)
@given(events=sessions(), data=st.data())
def test_a_followed_session_answers_as_the_scans_did_at_every_sync(
    events: list[dict[str, Any]], data: st.DataObject
) -> None:
    session = Session(HEADER)
    timeline = SurfaceTimeline(every=3)
    done = 0
    while done < len(events):
        size = data.draw(st.integers(1, 12))
        for event in events[done : done + size]:
            session.apply(event)
        done += size
        timeline.extend(session)
        _same_answers(session, timeline)
