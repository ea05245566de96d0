"""Time travel in the TUI: the live session at any earlier moment, and the request of any step.

``TimeTravel`` wraps the core pieces (``core.read.timetravel.SurfaceTimeline``, ``core.rebuild.request.request_points`` and
``request_at``, ``core.rebuild.request_diff``) for one ``LiveSession``. ``TimeTravel.sync`` catches up and hands back
the ``Moments`` it saw, which every read then answers from; both run in a worker thread, the screens only hand them seqs
and show what comes back.
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass

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


def point_seqs(points: list[Point]) -> list[int]:
    """The seq each request went out after, in the order of ``points``."""
    return [point.seq for point in points]


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
    points: list[Point]
    seqs: list[int]  # the seq of each of ``points`` (ascending), kept as requests arrive
    marks: dict[str, list[int]]

    def point_at(self, seq: int) -> int | None:
        """The request in flight at ``seq``: the last one that went out at or before it."""
        i = bisect.bisect_right(self.seqs, seq) - 1
        return i if i >= 0 else None

    def stop_at(self, seq: int) -> Stop:
        """The moment right after ``seq``."""
        seq = max(0, min(seq, self.seen - 1))
        with self.live.lock:
            when = moment(self.session, seq)
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
        self._marks: dict[str, list[int]] = {etype: [] for etype in MARK_TYPES}
        self._points_upto = 0  # points and marks cover the events below this seq
        self._clock = RequestClock()
        self._sync_lock = threading.Lock()

    def sync(self) -> Moments:
        """Catch up with what the live session projected since the last call (worker thread). The lists a
        ``Moments`` holds are never extended: what arrives later goes into new ones."""
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
                self._clock = RequestClock()
                self._marks = {etype: [] for etype in MARK_TYPES}
            self._timeline.extend(session, self.live.lock)
            seen = self._timeline.seen
            if self._points_upto != seen:  # only what arrived since the last call is read
                arrived = request_points(session, self._points_upto, seen, self._clock)
                self._points = self._points + arrived
                self._seqs = self._seqs + point_seqs(arrived)
                marks = request_marks(session, self._points_upto)
                self._marks = {
                    etype: self._marks[etype] + [s for s in marks[etype] if s < seen] for etype in marks
                }
                self._points_upto = seen
            in_flight = self._clock.in_flight(seen)  # went out after the last event: listed, not kept
            points, seqs = self._points, self._seqs
            if in_flight is not None:
                points, seqs = [*points, in_flight], [*seqs, in_flight.seq]
            return Moments(self.live, session, self._timeline, seen, points, seqs, self._marks)
