"""Alerts of many logs at once: log files, session directories and sessions roots, read once or followed.

``AlertWatch`` follows one log with the same reader the TUI uses (``core.log.tail.Tailer``) and feeds what each
poll decoded to the log's ``AlertEngine``; after each poll it ticks the engine with the time, the host's state
(``core.control.host_state``) and the file's last change. A log that is truncated or replaced starts a new engine.
``AlertFollower`` holds one watch per log and looks for new sessions under the roots it was given.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from core.alerts.actions import send_action
from core.alerts.engine import Alert, AlertEngine
from core.control.config import PolicyConfig
from core.control.host_state import HostState, read_host_state
from core.control.inbox import inbox_path
from core.log.layout import resolve_log_path
from core.log.sessions import discover_sessions
from core.log.tail import Tailer
from core.shared.errors import TapedeckError

RESCAN_SECONDS = 1.0  # how often the roots are listed again for new sessions
SLICE = 1 << 18  # bytes read and fed per step of a poll (packed rows expand to many events each)


def now_ms() -> int:
    """The wall clock in epoch milliseconds."""
    return int(time.time() * 1000)


def is_root(path: Path) -> bool:
    """True for a directory of sessions (not a log file or a session directory)."""
    return path.is_dir() and not any((path / name).is_file() for name in ("session.jsonl", "session.jsonl.zstd"))


def logs_of(targets: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The session logs the targets name: each log file or session directory, and every session under a root."""
    found: list[Path] = []
    for target in targets:
        path = Path(target).expanduser()
        if is_root(path):
            found.extend(ref.path for ref in discover_sessions(path))
        else:
            found.append(resolve_log_path(path))
    return list(dict.fromkeys(found))


class AlertWatch:
    """One followed log and its engine."""

    def __init__(
        self, path: Path, config: PolicyConfig, *, live: bool = True, pace: Callable[[], None] | None = None
    ) -> None:
        """Watch ``path``; with ``live`` the host's state is read at each tick (a lock probe and a small file);
        ``pace`` is called after each slice a poll feeds (``core.log.pace``: a reader sharing the GIL with a UI)."""
        self.path = path
        self.pace = pace
        self.config = config
        self.live = live
        self.tailer = Tailer(path)
        self.engine = self._engine()
        self.problems: list[str] = []
        self.host: HostState | None = None  # the host's state at the last tick (with ``live``)

    def _engine(self) -> AlertEngine:
        return AlertEngine(self.config.alerts, self.config.model, path=str(self.path))

    def poll(self, now: int, final: bool = False) -> list[Alert]:
        """Read what was appended, feed it, tick; ``final`` treats the end of the file as the end of the log.

        The file is read ``SLICE`` bytes at a time, each slice's events fed before the next is decoded, so a big
        log never sits in memory decoded whole (the rules see each event alone, so slices change nothing).
        """
        out: list[Alert] = []
        while True:
            before = self.tailer.offset
            update = self.tailer.poll(max_bytes=SLICE)
            if update.reset:
                self.engine = self._engine()
            if update.header is not None:
                self.engine.start(update.header)
            if update.fatal:
                self.problems.append(update.fatal)
            self._feed(update.events, now, out)
            if self.tailer.offset == before or update.fatal:
                break
            if self.pace is not None:
                self.pace()
        if final:
            self._feed(self.tailer.finish().events, now, out)
        out.extend(self.tick(now))
        return out

    def _feed(self, events: list[dict[str, Any]], now: int, out: list[Alert]) -> None:
        if events:
            self.seen(events)
            out.extend(self.engine.feed(events, now))

    def seen(self, events: list[dict[str, Any]]) -> None:
        """Called with each poll's events before the engine folds them (a subclass folds more from them)."""

    def tick(self, now: int) -> list[Alert]:
        """Tick the engine with the time, the host's state and the file's last change."""
        if self.live:
            self.host = self.read_host()
        return self.engine.tick(now, self.host.state if self.host is not None else None, self.last_write())

    def last_write(self) -> int | None:
        """When the log last changed (epoch ms; None: unknown)."""
        try:
            return int(os.stat(self.path).st_mtime * 1000)
        except OSError:
            return None

    def read_host(self) -> HostState:
        """The host's state now (a lock probe and a small file)."""
        return read_host_state(self.path)

    def send_action(self, alert: Alert) -> None:
        """Send the alert's action when a live host that does not act on it itself runs the session (a
        ``TapedeckError`` when the request cannot be written)."""
        if alert.cause in self.engine.host_guards or not read_host_state(self.path).live:
            return
        send_action(alert, self.config.alerts, inbox_path(self.path))


class AlertFollower:
    """Every log under ``targets``: ``poll`` returns the alerts raised since the last poll, in log order per log."""

    def __init__(
        self,
        targets: Sequence[str | os.PathLike[str]],
        config: PolicyConfig,
        *,
        act: bool = False,
        warn: Callable[[str], None] = lambda message: None,
        pace: Callable[[], None] | None = None,
    ) -> None:
        """With ``act`` the configured actions are sent to live hosts that do not act on them themselves; ``pace``
        as for ``AlertWatch``."""
        self.pace = pace
        self.targets = [Path(t).expanduser() for t in targets]
        self.config = config
        self.act = act
        self.warn = warn
        self.watches: dict[Path, AlertWatch] = {}
        self._scanned = 0.0
        for log in logs_of(self.targets):
            self.watches[log] = AlertWatch(log, config, pace=pace)

    def rescan(self) -> None:
        """Start watching the sessions that appeared under the roots."""
        self._scanned = time.monotonic()
        for root in self.targets:
            if is_root(root):
                for ref in discover_sessions(root):
                    if ref.path not in self.watches:
                        self.watches[ref.path] = AlertWatch(ref.path, self.config, pace=self.pace)

    def poll(self, now: int | None = None, final: bool = False) -> list[Alert]:
        """The alerts every log raised since the last poll."""
        if time.monotonic() - self._scanned >= RESCAN_SECONDS:
            self.rescan()
        now = now_ms() if now is None else now
        out: list[Alert] = []
        for watch in list(self.watches.values()):
            raised = watch.poll(now, final)
            for problem in watch.problems:
                self.warn(problem)
            watch.problems.clear()
            if self.act:
                for alert in raised:
                    act(watch, alert, self.warn)
            out.extend(raised)
        return out

    def follow(self, stop: threading.Event, interval: float = 0.1) -> Iterator[Alert]:
        """Yield alerts as the logs grow, until ``stop`` is set (checked every ``interval`` seconds)."""
        while True:
            yield from self.poll()
            if stop.wait(interval):
                return


def act(watch: AlertWatch, alert: Alert, warn: Callable[[str], None]) -> None:
    """Send ``alert``'s action through ``watch`` (``AlertWatch.send_action``); a request that could not be written
    is reported to ``warn``."""
    try:
        watch.send_action(alert)
    except TapedeckError as exc:
        warn(f"{watch.path}: the {alert.cause} action was not sent: {exc}")
