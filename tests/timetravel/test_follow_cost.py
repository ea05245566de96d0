"""What ``SurfaceTimeline.extend`` reads of a followed session: what came since its last call, not the whole surface.

The TUI extends the timeline at every time-travel key (``tui.travel.TimeTravel.sync``) holding the lock the follower
applies events under, so a pass over the whole surface there made each key on a live log cost O(surface nodes) and
held the follower back as long."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, SupportsIndex

from core.read.session import Session
from core.read.timetravel import SurfaceTimeline
from tests.log.helpers import HEADER, user


class _Counted(list[int]):
    """A session's surface that counts the nodes read from it (iterated or indexed)."""

    read = 0

    def __iter__(self) -> Iterator[int]:
        for seq in super().__iter__():
            _Counted.read += 1
            yield seq

    def __getitem__(self, at: SupportsIndex | slice) -> Any:
        got = super().__getitem__(at)
        _Counted.read += len(got) if isinstance(at, slice) else 1
        return got


def _event(seq: int, nodes: list[int], replace: bool = False) -> dict[str, Any]:
    """A user message at ``seq``, appended, or replacing the first of ``nodes`` (a fold of one node)."""
    ev = user(f"m{seq}")
    if replace:
        ev["surfaceOp"] = {"op": "replace", "start": nodes[0], "end": nodes[0]}
        ev["sourceEventSeqs"] = [nodes[0]]
    return {**ev, "seq": seq, "time": seq}


def test_extending_reads_the_new_nodes_alone_and_answers_as_a_whole_pass() -> None:
    nodes = list(range(5000))
    session = Session.from_events(HEADER, [_event(seq, nodes) for seq in nodes])
    timeline = SurfaceTimeline.from_session(session)
    session.surface = _Counted(session.surface)
    seq = len(nodes)
    for replace in (False, True, False, False, True):  # new nodes at the end, and folds of the oldest node
        session.apply(_event(seq, session.surface, replace))
        seq += 1
        _Counted.read = 0
        timeline.extend(session)
        assert _Counted.read <= 8, _Counted.read
    whole = SurfaceTimeline.from_session(session)
    for at in [*range(4990, seq), 0, 2500]:
        assert timeline.surface_at(at) == whole.surface_at(at)
