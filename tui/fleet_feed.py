"""The fleet table's one follower: every log under the roots, local and remote, read from its new bytes by a worker
thread that runs as long as the app.

``FleetFeed`` is the app's alert feed when it shows a fleet (``tui.alerts.AlertFeed``, with a
``core.fleet.follow.Fleet`` in place of the alert follower): the alerts of every session, remote ones included,
go to the app's one delivery path (``AlertRaised``: the toast, the bell and notification, the alerts list) and the
configured actions are sent, whether or not the table is on screen. The local logs are looked at (a stat each)
only when something changed under their roots (``watchfiles``; every ``POLL_SECONDS`` where it cannot run),
remote ones every ``REMOTE_POLL_SECONDS``, and every session is ticked every ``CLOCK_SECONDS``, an eighth of them
at a time (a write never waits behind the whole tick): an idle fleet costs the tick, and a write is read within
``WAKE_MS`` of it. While it is (``showing``), each poll that
changed a row also posts ``FleetChanged`` with the cells of the rows that changed (all of them after a new session
or a new order). The UI thread only draws.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.message import Message

from core.alerts.engine import Alert
from core.control.config import PolicyConfig
from core.fleet.follow import REMOTE_POLL_SECONDS, Fleet
from core.fleet.row import FleetRow, cells
from core.log.pace import Pacer
from core.log.tail import changes_under
from core.remote.target import parse_remote
from core.shared.errors import TapedeckError
from tui.alerts import AlertFeed

CLOCK_SECONDS = 2.0  # how often every session is ticked (stalled, run rate, host state, the write-age column)
TICK_SLICES = 8  # the tick is spread over this many polls (a write is never queued behind every session's tick)
WAKE_MS = 50  # a burst of changes under a local root is gathered this long (at most) before the logs are looked at
POLL_SECONDS = 0.25  # without change notification (watchfiles cannot run): how often the local logs are looked at


@dataclass(frozen=True, slots=True)
class Shown:
    """One row as the UI holds it: its cells and what the filter and the actions need."""

    row: FleetRow
    cells: tuple[str, ...]

    @property
    def key(self) -> str:
        """The row's key (its log's path)."""
        return self.row.key


class FleetChanged(Message, bubble=False):
    """Rows changed (posted from the feed's thread): ``rows`` the whole table in order, else ``changed`` only."""

    def __init__(self, rows: list[Shown] | None, changed: list[Shown], skipped: list[str]) -> None:
        super().__init__()
        self.rows = rows
        self.changed = changed
        self.skipped = skipped


class FleetProblem(Message, bubble=False):
    """What keeps a root from being read (a refused host key), said once on the table's status line."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class FleetFeed(AlertFeed):
    """Follows the fleet's ``roots`` (see the module docstring) until ``stop``."""

    interval = POLL_SECONDS

    def __init__(self, roots: list[Path], config: PolicyConfig, post: Any) -> None:
        super().__init__(roots, config, post, follow=True)  # the table is live (`watch` refuses `--no-follow` here)
        self.showing = threading.Event()  # set while the table is on screen: rows are posted only then
        self._last: dict[str, tuple[str, ...]] | None = None  # the cells last posted (None: post the whole table)
        self._ticked = float("-inf")  # when the last slice of the tick was due
        self._slice = 0  # the slice of the sessions ticked next
        self._noticed = True  # the last wait ended on a change under a local root (the logs' sizes are looked at)
        self.wake = threading.Event()  # set when something changed under a local root, or the feed must act now
        self._remote = False  # a root is remote (told in ``run``: it may look for a local file of its name)

    def run(self) -> None:
        """Watch the local roots for changes (a thread each), then follow every log until ``stop``."""
        local = [Path(t) for t in self.targets if parse_remote(str(t)) is None]
        self._remote = len(local) < len(self.targets)
        for target in local:
            directory = target if target.is_dir() else target.parent
            threading.Thread(target=self._notice, args=(directory,), name=f"fleet-notice {directory}",
                             daemon=True).start()  # fmt: skip
        super().run()

    def _notice(self, directory: Path) -> None:
        for _ in changes_under(directory, self.stop_event, POLL_SECONDS, WAKE_MS):
            self.wake.set()

    def pause(self) -> bool:
        """Wait for a change under a local root, the next remote poll or the next slice of the tick."""
        due = CLOCK_SECONDS / TICK_SLICES - (time.monotonic() - self._ticked)
        self._noticed = self.wake.wait(max(min(due, REMOTE_POLL_SECONDS) if self._remote else due, 0.0))
        self.wake.clear()
        return self.stop_event.is_set()

    def show(self, showing: bool) -> None:
        """The table came on screen (its rows are posted at once) or went away."""
        if showing:
            self.showing.set()
            self.wake.set()
        else:
            self.showing.clear()

    def stop(self) -> None:
        """Ask ``run`` to return."""
        super().stop()
        self.wake.set()

    def follower(self) -> Fleet:
        """The fleet of every session under the roots (its reads paced for the UI)."""
        return Fleet(self.targets, self.config, pace=Pacer())

    def poll(self, follower: Any) -> list[Alert]:
        """Every changed log's new bytes, and the sessions of the tick's slice when it is due: the alerts raised
        (their actions sent)."""
        due: list[str] = []
        if time.monotonic() - self._ticked >= CLOCK_SECONDS / TICK_SLICES:
            self._ticked = time.monotonic()
            keys = list(follower.watches)
            due = keys[self._slice :: TICK_SLICES]
            self._slice = (self._slice + 1) % TICK_SLICES
        raised: list[Alert] = []
        try:
            follower.poll(clock=due, sweep=self._noticed, raised=raised)
        except TapedeckError as exc:  # a refused host key: said on the status line, the rest goes on
            self.post(FleetProblem(str(exc)))
        if self.config.alerts.acts:
            follower.act(raised, self.problems.append)
        return raised

    def watch_of(self, follower: Any, path: Path) -> Any:
        """The fleet's watch of the log at ``path``."""
        return follower.watches.get(str(path))

    def polled(self, follower: Any) -> None:
        """Post the rows that changed, while the table is on screen."""
        if not self.showing.is_set():
            self._last = None  # shown again: the whole table, as it is then
            return
        if self._last is not None and not follower.stale:
            return
        rows = follower.rows()
        last = self._last
        if last is None or [row.key for row in rows] != list(last):  # new rows or a new order: the whole table
            self._last = {row.key: cells(row) for row in rows}
            self.post(FleetChanged([Shown(row, self._last[row.key]) for row in rows], [], list(follower.skipped)))
            return
        changed = []  # same rows in the same order (so the same nesting): only the rows made again can differ
        for row in rows:
            if row.key in follower.remade and (now := cells(row)) != last[row.key]:
                last[row.key] = now
                changed.append(Shown(row, now))
        if changed:
            self.post(FleetChanged(None, changed, list(follower.skipped)))
