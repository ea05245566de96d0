"""Alerts in the TUI: the rules run in core (``core.alerts.follow``) on a worker thread; this module only carries
their alerts to the UI thread and keeps what the screens show.

``AlertFeed.run`` is the body of a thread worker: it follows the fleet's roots with the same ``AlertFollower`` as
``tapedeck alerts --follow``, or the one log the app opened through a ``FedWatch`` that the log's ``LiveSession``
feeds (the log is read once, for the view and the rules), sends the configured actions, and posts ``AlertRaised``
for each alert. ``AlertBoard`` is the UI thread's list of alerts and the marks they put on event rows.
"""

from __future__ import annotations

import bisect
import math
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.message import Message

from core.alerts.engine import Alert
from core.alerts.follow import AlertFollower, FedWatch, Recall, Titles, now_ms
from core.alerts.rate import Projection
from core.control.config import PolicyConfig
from core.log.layout import resolve_log_path
from core.log.pace import Pacer
from core.shared.errors import TapedeckError
from core.shared.text import printable, short_session
from tui.cells import cut

FEED_INTERVAL = 0.1  # seconds between polls of the followed logs: alerts reach the screen within ~0.2 s
BURST_GAP = 2.0  # alerts less than this many seconds apart make one burst …
BURST_ONE_BY_ONE = 3  # … whose first few each get a toast, the bell and a notification; the rest one toast
SEVERITY_ORDER = ("info", "warning", "critical")
SESSION_MAX = 24  # a session's title is cut to this many cells: a long one leaves an alert's reason its room


def log_key(path: str | Path) -> str:
    """``path`` resolved (symlinks followed): what the alert marks of a log are kept by. A system call: workers
    call it, never the app's thread."""
    return str(Path(path).resolve())


class AlertRaised(Message, bubble=False):
    """An alert fired (posted from the feed's thread)."""

    def __init__(self, alert: Alert, key: str, replayed: bool = False, title: str | None = None) -> None:
        """``key``: its log's ``log_key``; ``replayed``: the log's history raised it, read as the log was loaded
        (not an event appended since); ``title``: its session's title as the feed had read it then (None: none)."""
        super().__init__()
        self.alert = alert
        self.key = key
        self.replayed = replayed
        self.title = title


class SessionRenamed(Message, bubble=False):
    """The session whose log is at ``path`` and whose id is ``session``, which raised alerts listed before, is titled
    ``title`` now (posted from the feed's thread)."""

    def __init__(self, path: str, session: str, title: str) -> None:
        super().__init__()
        self.path = path
        self.session = session
        self.title = title


class HistoryRecalled(Message, bubble=False):
    """The logs were loaded: of the alerts their histories raised, those still worth telling (posted from the
    feed's thread)."""

    def __init__(self, alerts: list[Alert]) -> None:
        super().__init__()
        self.alerts = alerts


class SpendProjected(Message, bubble=False):
    """The open log's run rate or turn projection changed (posted from the feed's thread)."""


class AlertFeed:
    """Follows ``targets`` (logs, session directories, sessions roots) for alerts off the UI thread until ``stop``."""

    def __init__(self, targets: list[Path], config: PolicyConfig, post: Callable[[Message], Any],
                 follow: bool = True, fed: FedWatch | None = None) -> None:  # fmt: skip
        """``fed`` is the engine of the log the app opened, fed by its ``LiveSession`` (not read again here)."""
        self.targets = targets
        self.fed = fed
        self.config = config
        self.post = post
        self.follow = follow
        self.stop_event = threading.Event()
        self.problems: list[str] = []
        self.focus: Path | None = None  # the log the main screen shows (as opened): its run rate and projection are kept
        self._focus_log: tuple[Path, Path] | None = None  # the focus and its log, found in the worker (``_focused``)
        self.projections: dict[Path, Projection] = {}

    def spend_label(self, path: Path) -> str:
        """``$1.20/h · turn → $0.42`` for the log at ``path`` once the feed has projected it, else empty."""
        found = self.projections.get(path)
        return found.summary() if found is not None else ""

    interval = FEED_INTERVAL  # seconds between polls

    final = False  # the last poll was the last one (without ``follow``)

    def follower(self) -> Any:
        """What follows the targets: an ``AlertFollower`` (its actions sent, its reads paced for the UI), with the
        fed watch of the log the view reads."""
        return AlertFollower(self.targets, self.config, act=self.config.alerts.acts, warn=self.problems.append,
                             pace=Pacer(),  # the worker leaves the GIL to the UI between slices
                             fed=[self.fed] if self.fed is not None else [])  # fmt: skip

    def poll(self, follower: Any) -> list[Alert]:
        """One poll of the follower: the alerts it raised. Without ``follow`` the last one reads the logs to their
        end, once the view handed its log over whole."""
        self.final = not self.follow and follower.settled
        return follower.poll(final=self.final)  # type: ignore[no-any-return]

    def watch_of(self, follower: Any, path: Path) -> Any:
        """The follower's watch of the log at ``path`` (None: not followed)."""
        return follower.watch_of(path)

    def polled(self, follower: Any) -> None:
        """Called after each poll (a subclass hands on more of what the poll read)."""

    def run(self) -> None:
        """Post every alert the targets raise (once, without ``follow``), and keep the open log's projection."""
        follower = self.follower()
        recall = Recall(follower.watch_for)  # what the logs' histories raised, told once they are loaded
        titles = Titles(follower.watch_for)  # the titles the alerts' sessions have now
        while True:
            keys: dict[str, str] = {}  # each path of this poll's alerts resolved once, here; again at the next poll,
            for alert in self.poll(follower):  # which may find it a link to another log now
                key = keys.get(alert.path)
                if key is None:
                    key = keys[alert.path] = log_key(alert.path)
                self.post(AlertRaised(alert, key, recall.replayed(alert), titles.named(alert)))
            for alert, title in titles.renamed(follower.retitled.take()):
                self.post(SessionRenamed(alert.path, alert.session, title))
            if (recalled := recall.recalled()) is not None:
                self.post(HistoryRecalled(recalled))
            focus = self._focused()
            watch = self.watch_of(follower, focus) if focus is not None else None
            if watch is not None:
                projection = watch.projection(now_ms())
                before = self.projections.get(focus)
                changed = before is None or before.summary() != projection.summary()  # what the header shows
                self.projections[focus] = projection
                if changed:
                    self.post(SpendProjected())
            self.polled(follower)
            if self.final or self.pause():
                return

    def _focused(self) -> Path | None:
        """The log of ``focus`` (a session directory's log), looked up here in the worker, not on the app's thread,
        and once found kept until the focus changes (None while there is none: a log not born yet)."""
        focus, found = self.focus, self._focus_log
        if focus is None:
            return None
        if found is None or found[0] != focus:
            try:
                found = self._focus_log = (focus, resolve_log_path(focus))
            except (TapedeckError, OSError):
                return None
        return found[1]

    def pause(self) -> bool:
        """Wait until the next poll is due; True when the feed was stopped meanwhile."""
        return self.stop_event.wait(self.interval)

    def stop(self) -> None:
        """Ask ``run`` to return."""
        self.stop_event.set()


def _when(alert: Alert) -> float:
    """Where ``alert`` goes in the list: its time, or after every timed one."""
    return math.inf if alert.at is None else alert.at


class AlertBoard:
    """The alerts so far (newest last) and the event-row marks of one log."""

    def __init__(self) -> None:
        self.alerts: list[Alert] = []
        self.marks: dict[str, dict[int, tuple[str, ...]]] = {}  # log key -> seq -> causes
        self.keys: dict[int, str] = {}  # id of a listed alert -> its log's ``log_key`` (found by the feed's worker)
        self.titles: dict[tuple[str, str], str] = {}  # (path, session) of a listed alert -> its newest title
        self.replaced: set[int] = set()  # ids of the listed alerts whose log was replaced since (their event is gone)

    def add(self, alert: Alert, key: str, title: str | None = None) -> None:
        """Record an alert of the log of ``log_key`` ``key`` (its session titled ``title``) in time order (a fleet
        reads its sessions' histories one session at a time; an alert of the same time goes after those before it,
        one without a time last) and mark its event."""
        self.alerts.insert(bisect.bisect_right(self.alerts, _when(alert), key=_when), alert)
        self.keys[id(alert)] = key
        if title:
            self.titles[alert.path, alert.session] = title
        marks = self.marks.setdefault(key, {})
        marks[alert.seq] = (*marks.get(alert.seq, ()), f"⚑ {alert.cause}")

    def rename(self, path: str, session: str, title: str) -> bool:
        """The session ``session`` of the log at ``path`` is titled ``title`` now: its alerts are named so from here
        on. Whether any alert listed is of that session (its rows need drawing again)."""
        self.titles[path, session] = title
        return any(alert.path == path and alert.session == session for alert in self.alerts)

    def session_name(self, alert: Alert) -> str:
        """How a listed alert names its session: its title on one line, cut to ``SESSION_MAX`` cells; the id's head
        (or the log's path) for a session with no title."""
        title = self.titles.get((alert.path, alert.session))
        if title:
            return cut(printable(title.replace("\n", " ")), SESSION_MAX)
        return printable(short_session(alert.session) or alert.path)

    def forget_marks(self, key: str) -> None:
        """Drop the marks on the events of the log of ``log_key`` ``key`` (another log replaced it: its seqs mean
        other events now); the alerts stay listed, known as about a replaced log."""
        self.marks.pop(key, None)
        self.replaced.update(id(a) for a in self.alerts if self.keys[id(a)] == key)

    def marks_for(self, key: str | None) -> dict[int, tuple[str, ...]]:
        """The marks on the events of the log of ``log_key`` ``key`` (None: not known yet)."""
        return self.marks.get(key, {}) if key is not None else {}


class Burst:
    """Which live alerts are delivered one by one. Dozens raised at once (many sessions of a fleet going wrong
    together) would otherwise ring and notify dozens of times and stack a toast per alert; the first
    ``BURST_ONE_BY_ONE`` of a burst are delivered alone and the rest are held for one toast that counts them (the
    alerts list and the row marks always get every alert)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.last = float("-inf")  # when the latest alert came
        self.count = 0  # alerts in the current burst
        self.held: list[Alert] = []

    def alone(self, alert: Alert) -> bool:
        """Whether ``alert`` gets its own toast, bell and notification (False: it is held for the summary)."""
        now = self.clock()
        if now - self.last >= BURST_GAP:
            self.count = 0
        self.last, self.count = now, self.count + 1
        if self.count <= BURST_ONE_BY_ONE:
            return True
        self.held.append(alert)
        return False

    def over(self) -> bool:
        """Whether the burst has ended (no alert for ``BURST_GAP`` seconds)."""
        return self.clock() - self.last >= BURST_GAP

    def summary(self, key: str) -> tuple[str, str] | None:
        """The held alerts as one toast's text (``key`` is the alerts list's key) and the worst severity among
        them, and none held any more."""
        held, self.held = self.held, []
        if not held:
            return None
        worst = max((a.severity for a in held), key=lambda s: SEVERITY_ORDER.index(s) if s in SEVERITY_ORDER else 0)
        causes = sorted({a.cause for a in held})
        text = f"{len(held)} more alert{'' if len(held) == 1 else 's'} ({', '.join(causes)}): {key} lists them all"
        return text, worst
