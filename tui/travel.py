"""Time travel in the TUI: the live session at any earlier moment, and the request of any step.

``TimeTravel`` wraps the core pieces (``core.read.timetravel.SurfaceTimeline``, ``core.rebuild.request.request_points`` and
``request_at``, ``core.rebuild.request_diff``) for one ``LiveSession``. ``TimeTravel.sync`` catches up and hands back
the ``Moments`` it saw, which every read then answers from; both run in a worker thread, the screens only hand them seqs
and show what comes back.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Generic, TypeVar, overload

from core.read.session import Session
from core.read.timetravel import Moment, SessionAt, SurfaceTimeline, moment
from core.rebuild.request import (
    MARK_TYPES,
    Point,
    Request,
    RequestClock,
    request_at,
    request_marks,
    request_points,
)
from core.rebuild.request_diff import RequestDiff, diff_requests
from core.shared.errors import TapedeckError
from tui.live import LiveSession

T = TypeVar("T")


class Seen(Sequence[T], Generic[T]):
    """The first ``count`` items of ``items``, then ``last`` when there is one: what one sync saw of a list that the
    later syncs only append to, read without copying it (a copy on each key press cost O(requests) a key)."""

    def __init__(self, items: list[T], count: int, last: T | None = None) -> None:
        self._items = items
        self._count = count
        self._last = last
        self._len = count if last is None else count + 1

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):  # copied as a list's slice is (``request_at`` slices the marks)
            whole = self._items[: self._count]
            if self._last is not None:
                whole.append(self._last)
            return whole[index]
        k = index + self._len if index < 0 else index
        if not 0 <= k < self._len:
            raise IndexError(index)
        return self._items[k] if k < self._count else self._last  # type: ignore[return-value]

    def __iter__(self) -> Iterator[T]:
        yield from islice(self._items, self._count)
        if self._last is not None:
            yield self._last


@dataclass(frozen=True)
class Stop:
    """One moment to show: the surface after ``moment.seq`` and the request in flight then, if any."""

    moment: Moment
    surface: list[int]
    point: int | None  # index into ``TimeTravel.points``
    view: SessionAt  # the session as it stood, for the rows' badges (on/off surface, what replaced a node)
    unfinished: bool  # the request in flight then has no answer in the log (``Point.unfinished``)


@dataclass(frozen=True)
class RequestView:
    """A rebuilt request and its diff against the one before it."""

    index: int
    total: int  # the requests the log held then
    request: Request
    diff: RequestDiff


@dataclass(frozen=True)
class Moments:
    """The moments one ``TimeTravel.sync`` saw. A later sync never changes them, not even one that starts over on
    a replaced log, so every read of one answers from one log (worker thread)."""

    live: LiveSession
    session: Session
    timeline: SurfaceTimeline  # a later sync of the same session only adds edits past ``seen``
    seen: int  # the events taken in: seqs below this
    points: Sequence[Point]
    seqs: Sequence[int]  # the seq of each of ``points`` (ascending), kept as requests arrive
    marks: dict[str, Sequence[int]]
    steps: Mapping[tuple[int, int], int]  # (turn, step) -> its first request; a later sync adds more

    def step_request(self, turn: int, step: int) -> int | None:
        """The first request of step ``step`` of turn ``turn`` (None: none went out)."""
        points = self.points
        first = self.steps.get((turn, step))
        if first is None or first >= len(points):  # none this sync kept: the one in flight may be its first
            first = len(points) - 1
        return first if first >= 0 and (points[first].turn, points[first].step) == (turn, step) else None

    def point_at(self, seq: int) -> int | None:
        """The request in flight at ``seq``: the last one that went out at or before it."""
        i = bisect.bisect_right(self.seqs, seq) - 1
        return i if i >= 0 else None

    def stop_at(self, seq: int) -> Stop:
        """The moment right after ``seq``."""
        seq = max(0, min(seq, self.seen - 1))
        with self.live.lock:
            when = moment(self.session, seq, self.timeline.turns)
            view = SessionAt(self.session, self.timeline, seq, self.marks["request/header"])
        point = self.point_at(seq)
        unfinished = point is not None and self.points[point].unfinished
        return Stop(when, view.surface, point, view, unfinished)

    def stop_at_request(self, index: int) -> Stop:
        """The moment request ``index`` went out."""
        index = max(0, min(index, len(self.points) - 1))
        return self.stop_at(self.points[index].seq)

    def request(self, index: int) -> RequestView:
        """Request ``index`` rebuilt, with its diff against the request before it; the last one when the log now
        holds fewer (a log replaced since the index was picked)."""
        if not self.points:
            raise TapedeckError("the log holds no model request now (it was replaced or truncated)")
        index = min(index, len(self.points) - 1)
        with self.live.lock:
            request = request_at(self.session, self.timeline, self.points[index], self.marks)
            before = (
                request_at(self.session, self.timeline, self.points[index - 1], self.marks) if index else None
            )
            diff = diff_requests(before, request, self.session)
        return RequestView(index, len(self.points), request, diff)


class TimeTravel:
    """The moments of one live session (see the module docstring)."""

    def __init__(self, live: LiveSession) -> None:
        self.live = live
        self._session: Session | None = None
        self._timeline = SurfaceTimeline()
        self._points: list[Point] = []
        self._seqs: list[int] = []  # the seq of each of ``_points``
        self._steps: dict[tuple[int, int], int] = {}  # (turn, step) -> the index in ``_points`` of its first
        self._marks: dict[str, list[int]] = {etype: [] for etype in MARK_TYPES}
        self._points_upto = 0  # points and marks cover the events below this seq
        self._clock = RequestClock()
        self._sync_lock = threading.Lock()

    def sync(self) -> Moments:
        """Catch up with what the live session projected since the last call (worker thread). A ``Moments`` holds
        views (``Seen``) of the lists kept here, which later syncs only append to, so what it holds never changes
        and no key press copies them; starting over makes new lists."""
        with self._sync_lock:
            session = self.live.session
            if session is not self._session:  # a reload or a replaced file: start over
                self._session, self._timeline, self._points, self._points_upto = (
                    session,
                    SurfaceTimeline(),
                    [],
                    0,
                )
                self._seqs = []
                self._steps = {}
                self._clock = RequestClock()
                self._marks = {etype: [] for etype in MARK_TYPES}
            self._timeline.extend(session, self.live.lock)
            seen = self._timeline.seen
            if self._points_upto != seen:  # only what arrived since the last call is read
                arrived = request_points(session, self._points_upto, seen, self._clock)
                for index, point in enumerate(arrived, len(self._points)):
                    self._steps.setdefault((point.turn, point.step), index)
                self._points.extend(arrived)
                self._seqs.extend(point.seq for point in arrived)
                for etype, found in request_marks(session, self._points_upto).items():
                    self._marks[etype].extend(s for s in found if s < seen)
                self._points_upto = seen
            in_flight = self._clock.in_flight(seen)  # went out after the last event: listed, not kept
            kept = len(self._points)
            points = Seen(self._points, kept, in_flight)
            seqs = Seen(self._seqs, kept, None if in_flight is None else in_flight.seq)
            marks: dict[str, Sequence[int]] = {
                etype: Seen(found, len(found)) for etype, found in self._marks.items()
            }
            return Moments(self.live, session, self._timeline, seen, points, seqs, marks, self._steps)
