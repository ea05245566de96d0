"""The order ``Session.shadowed`` keeps (its docstring states it; ``SurfaceTimeline.extend`` relies on it): keys by
ascending seq, each run of shadowed nodes in surface order, which is not seq order once a replacement stands in it."""

from __future__ import annotations

from hypothesis import given, settings

from core.read.session import Session
from tests.log.helpers import HEADER, user
from tests.log.test_surface_props import op_sequences, reference_fold


def _replace(seq: int, start: int, end: int, cited: list[int]) -> dict:
    event = user(f"r{seq}", "plugin:slice:history")
    return {**event, "surfaceOp": {"op": "replace", "start": start, "end": end}, "sourceEventSeqs": cited, "seq": seq,
            "time": seq}  # fmt: skip


def _append(seq: int) -> dict:
    return {**user(f"m{seq}"), "seq": seq, "time": seq}


def test_a_run_is_in_surface_order_not_seq_order() -> None:
    # surface 0 1 2 3; 4 replaces 1..2: 0 4 3; 5 appended: 0 4 3 5; 6 replaces 4..3, which stand in that order
    events = [*map(_append, range(4)), _replace(4, 1, 2, [1, 2]), _append(5), _replace(6, 4, 3, [4, 3])]
    session = Session.from_events(HEADER, events)
    assert session.surface == [0, 6, 5]
    assert session.shadowed == {4: [1, 2], 6: [4, 3]}
    assert list(session.shadowed) == [4, 6]


@settings(max_examples=200, deadline=None)
@given(events=op_sequences())
def test_keys_ascend_and_each_run_is_the_span_of_the_surface_it_replaced(events: list[dict]) -> None:
    session = Session.from_events(HEADER, events)
    keys = list(session.shadowed)
    assert keys == sorted(keys)
    for seq, run in session.shadowed.items():  # the run as the surface held it right before the replacement
        before = reference_fold(events[:seq])
        assert before is not None
        op = events[seq]["surfaceOp"]
        start, end = op.get("start", op.get("startSeq")), op.get("end", op.get("endSeq"))
        assert run == before[before.index(start) : before.index(end) + 1]
