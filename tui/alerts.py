"""Alerts in the TUI: the rules run in core (``core.alerts.follow``) on a worker thread; this module only carries
their alerts to the UI thread and keeps what the screens show.

``AlertFeed.run`` is the body of a thread worker: it follows the app's target (a log or a sessions root, or the fleet's roots) with the
same ``AlertFollower`` as ``tapedeck alerts --follow``, sends the configured actions, and posts ``AlertRaised``
for each alert. ``AlertBoard`` is the UI thread's list of alerts and the marks they put on event rows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.message import Message

from core.alerts.engine import Alert
from core.alerts.follow import AlertFollower
from core.control.config import PolicyConfig

FEED_INTERVAL = 0.1  # seconds between polls of the followed logs: alerts reach the screen within ~0.2 s


class AlertRaised(Message, bubble=False):
    """An alert fired (posted from the feed's thread)."""

    def __init__(self, alert: Alert) -> None:
        super().__init__()
        self.alert = alert


class AlertFeed:
    """Follows ``targets`` (logs, session directories, sessions roots) for alerts off the UI thread until ``stop``."""

    def __init__(self, targets: list[Path], config: PolicyConfig, post: Callable[[Message], Any],
                 follow: bool = True) -> None:  # fmt: skip
        self.targets = targets
        self.config = config
        self.post = post
        self.follow = follow
        self.stop_event = threading.Event()
        self.problems: list[str] = []

    def run(self) -> None:
        """Post every alert the target raises (once, without ``follow``)."""
        follower = AlertFollower(self.targets, self.config, act=self.config.alerts.acts, warn=self.problems.append)
        alerts = follower.follow(self.stop_event, FEED_INTERVAL) if self.follow else follower.poll(final=True)
        for alert in alerts:
            self.post(AlertRaised(alert))

    def stop(self) -> None:
        """Ask ``run`` to return."""
        self.stop_event.set()


class AlertBoard:
    """The alerts so far (newest last) and the event-row marks of one log."""

    def __init__(self) -> None:
        self.alerts: list[Alert] = []
        self.marks: dict[str, dict[int, tuple[str, ...]]] = {}  # log path -> seq -> causes

    def add(self, alert: Alert) -> None:
        """Record an alert and mark its event."""
        self.alerts.append(alert)
        marks = self.marks.setdefault(str(Path(alert.path).resolve()), {})
        marks[alert.seq] = (*marks.get(alert.seq, ()), f"⚑ {alert.cause}")

    def marks_for(self, path: Path | None) -> dict[int, tuple[str, ...]]:
        """The marks on the events of the log at ``path``."""
        return self.marks.get(str(path.resolve()), {}) if path is not None else {}
