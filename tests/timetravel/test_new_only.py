"""What a time-travel read costs on a long session: what is new since the last read, not everything before it.

``SurfaceTimeline.extend`` runs at every time-travel key on a live log, and ``request_at`` at every request view
(``R``, ``,``/``.`` there): each read the session's list of replacements or of route decisions whole, so a key cost
O(cuts) or O(routes) however little had changed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, SupportsIndex

from core.log.vocabulary import HOST_EVENT, ROUTE_EVENT
from core.read.session import Session
from core.read.timetravel import SurfaceTimeline
from core.rebuild.request import request_at, request_marks, request_points
from tests.log.helpers import HEADER, assistant, number, user


class _CountedDict(dict[int, list[int]]):
    """A session's ``shadowed`` that counts the entries read from it (iterated either way, or looked up)."""

    read = 0

    def _count(self, items: Iterator[Any]) -> Iterator[Any]:
        for item in items:
            _CountedDict.read += 1
            yield item

    def __iter__(self) -> Iterator[int]:
        return self._count(super().__iter__())

    def __reversed__(self) -> Iterator[int]:
        return self._count(super().__reversed__())

    def keys(self) -> Any:
        return list(self._count(iter(super().keys())))

    def values(self) -> Any:
        return list(self._count(iter(super().values())))

    def items(self) -> Any:
        return list(self._count(iter(super().items())))

    def __getitem__(self, key: int) -> list[int]:
        _CountedDict.read += 1
        return super().__getitem__(key)

    def get(self, key: int, default: Any = None) -> Any:
        _CountedDict.read += 1
        return super().get(key, default)


class _CountedList(list[int]):
    """A list of marks that counts the items read from it (iterated, indexed or sliced)."""

    read = 0

    def __iter__(self) -> Iterator[int]:
        for seq in super().__iter__():
            _CountedList.read += 1
            yield seq

    def __getitem__(self, at: SupportsIndex | slice) -> Any:
        got = super().__getitem__(at)
        _CountedList.read += len(got) if isinstance(at, slice) else 1
        return got


def _message(seq: int, fold: int | None = None) -> dict[str, Any]:
    """A user message at ``seq``, appended, or replacing the node at seq ``fold`` (a fold of one node)."""
    ev = user(f"m{seq}")
    if fold is not None:
        ev["surfaceOp"] = {"op": "replace", "start": fold, "end": fold}
        ev["sourceEventSeqs"] = [fold]
    return {**ev, "seq": seq, "time": seq}


def test_extending_reads_the_new_replacements_alone() -> None:
    """A session with 2,000 folds, then one more (or none) at each extend: the timeline read each of them again."""
    events = [_message(seq) for seq in range(2000)]
    events += [_message(2000 + k, fold=k) for k in range(2000)]
    session = Session.from_events(HEADER, events)
    assert len(session.shadowed) == 2000
    timeline = SurfaceTimeline.from_session(session)
    session.shadowed = _CountedDict(session.shadowed)
    seq = len(events)
    for fold in (None, 2000, None, 3999, None):  # an appended node, then a fold of an older replacement
        session.apply(_message(seq, fold))
        seq += 1
        _CountedDict.read = 0
        timeline.extend(session)
        assert _CountedDict.read <= 4, _CountedDict.read
    whole = SurfaceTimeline.from_session(session)
    for at in [*range(3990, seq), 0, 1999, 2500]:
        assert timeline.surface_at(at) == whole.surface_at(at)


def _routed(turns: int) -> list[dict[str, Any]]:
    """Our host's log of ``turns`` one-step turns, each routed before its request went out (a ``tapedeck/route``
    decision whose token cap is 100 + its turn)."""
    body: list[dict[str, Any]] = [
        {"type": "request/header", "data": {"header": {"system": "s", "config": {"model": "m"}}}},
        {"type": HOST_EVENT, "data": {}},
    ]
    for turn in range(1, turns + 1):
        at = {"turn": turn, "step": 1}
        body += [
            {"type": "turn/start", "data": {"turn": turn}},
            {"type": "step/start", "data": at},
            {"type": ROUTE_EVENT, "data": {**at, "caps": {"maxTokens": 100 + turn}}},
            user(f"t{turn}"),
            assistant(turn, 1, "ok"),
            {"type": "step/end", "data": at},
            {"type": "turn/end", "data": {"turn": turn, "reason": {"kind": "completed"}}},
        ]
    return number(body)


def test_a_request_rebuilt_reads_its_own_route_alone() -> None:
    """``request_at`` copied every route decision logged before the request (a slice of the marks) to find its
    step's: O(routes) a request view on a long routed session."""
    session = Session.from_events(HEADER, _routed(3000))
    timeline = SurfaceTimeline.from_session(session)
    points = request_points(session)
    marks = request_marks(session)
    whole = {
        point: request_at(session, timeline, point, marks) for point in (points[0], points[1500], points[-1])
    }
    marks[ROUTE_EVENT] = _CountedList(marks[ROUTE_EVENT])
    assert len(marks[ROUTE_EVENT]) == 3000
    for point, expected in whole.items():
        _CountedList.read = 0
        request = request_at(session, timeline, point, marks)
        assert _CountedList.read <= 16, _CountedList.read  # a bisect of 3,000 (12 reads), then its route
        assert (request.body, request.keys) == (expected.body, expected.keys)
        assert request.body["max_tokens"] == 100 + point.turn  # its own step's route
