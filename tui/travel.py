"""Time travel in the TUI: the live session at any earlier moment, and the request of any step.

``TimeTravel`` wraps the core pieces (``core.read.timetravel.SurfaceTimeline``, ``core.rebuild.request.request_points`` and
``request_at``, ``core.rebuild.request_diff``) for one ``LiveSession``. Every method that reads the log runs in a
worker thread; the screens only hand it seqs and show what comes back.
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


@dataclass(frozen=True)
class Stop:
    """One moment to show: the surface after ``moment.seq`` and the request in flight then, if any."""

    moment: Moment
    surface: list[int]
    point: int | None  # index into ``TimeTravel.points``
    view: SessionAt  # the session as it stood, for the rows' badges (on/off surface, what replaced a node)


@dataclass(frozen=True)
class RequestView:
    """A rebuilt request and its diff against the one before it."""

    index: int
    request: Request
    diff: RequestDiff


class TimeTravel:
    """The moments of one live session (see the module docstring)."""

    def __init__(self, live: LiveSession) -> None:
        self.live = live
        self._session: Session | None = None
        self.timeline = SurfaceTimeline()
        self.points: list[Point] = []
        self.marks: dict[str, list[int]] = {etype: [] for etype in MARK_TYPES}
        self._points_upto = 0  # points and marks cover the events below this seq
        self._clock = RequestClock()
        self._sync_lock = threading.Lock()

    def sync(self) -> Session:
        """Catch up with what the live session projected since the last call (worker thread)."""
        with self._sync_lock:
            session = self.live.session
            if session is not self._session:  # a reload or a replaced file: start over
                self._session, self.timeline, self.points, self._points_upto = session, SurfaceTimeline(), [], 0
                self._clock = RequestClock()
                self.marks = {etype: [] for etype in MARK_TYPES}
            self.timeline.extend(session, self.live.lock)
            seen = self.timeline.seen
            if self._points_upto != seen:  # only what arrived since the last call is read
                self.points.extend(request_points(session, self._points_upto, seen, self._clock))
                for etype, seqs in request_marks(session, self._points_upto).items():
                    self.marks[etype].extend(s for s in seqs if s < seen)
                self._points_upto = seen
            return session

    def point_at(self, seq: int) -> int | None:
        """The request in flight at ``seq``: the last one that went out at or before it."""
        i = bisect.bisect_right([p.seq for p in self.points], seq) - 1
        return i if i >= 0 else None

    def stop_at(self, seq: int) -> Stop:
        """The moment right after ``seq`` (worker thread)."""
        session = self.sync()
        seq = max(0, min(seq, self.timeline.seen - 1))
        with self.live.lock:
            when = moment(session, seq)
            view = SessionAt(session, self.timeline, seq, self.marks["request/header"])
        return Stop(when, view.surface, self.point_at(seq), view)

    def stop_at_request(self, index: int) -> Stop:
        """The moment request ``index`` went out (worker thread)."""
        self.sync()
        index = max(0, min(index, len(self.points) - 1))
        return self.stop_at(self.points[index].seq)

    def request(self, index: int) -> RequestView:
        """Request ``index`` rebuilt, with its diff against the request before it (worker thread); the last one
        when the log now holds fewer (a log replaced since the index was picked)."""
        session = self.sync()
        if not self.points:
            raise TapedeckError("the log holds no model request now (it was replaced or truncated)")
        index = min(index, len(self.points) - 1)
        with self.live.lock:
            request = request_at(session, self.timeline, self.points[index], self.marks)
            before = request_at(session, self.timeline, self.points[index - 1], self.marks) if index else None
            diff = diff_requests(before, request, session)
        return RequestView(index, request, diff)
