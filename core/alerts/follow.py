"""Alerts of many logs at once: log files, session directories and sessions roots, read once or followed.

``AlertWatch`` follows one log with the same reader the TUI uses (``core.log.tail.Tailer``) and feeds what each
poll decoded to the log's ``AlertEngine``; after each poll it ticks the engine with the time, the host's state
(``core.control.host_state``) and the file's last change. A followed log that is truncated, replaced or removed
starts a new engine when it is read again (a one-off read, ``final``, of one truncated, replaced or removed
fails); an alert it raised before (same session, cause and event) is not raised twice.
``FedWatch`` is the engine of a log that another reader already reads (the TUI's view of it): that reader hands
it what it decoded, so the log is read and decoded once, and the cache-break watcher reads events back through
the reader's store (``core.log.store.BorrowedEvents``) instead of keeping the surface decoded. ``AlertFollower`` holds one watch per log and looks for
new sessions under the roots it was given.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from core.alerts.actions import send_action
from core.alerts.engine import STATE_CAUSES, Alert, AlertEngine
from core.alerts.rate import Projection, project, window_ms
from core.bridge.files import HEARTBEAT_FRESH_MS
from core.control.config import PolicyConfig
from core.control.host_state import HostState, read_host_state
from core.control.inbox import ControlError, inbox_path
from core.log.decoder import Consumer
from core.log.layout import is_sessions_root, resolve_log_path
from core.log.linestore import LineStore
from core.log.reader import read_log_header
from core.log.records import PackedRow
from core.log.sessions import discover_sessions
from core.log.store import BorrowedEvents, ValidatedEvents
from core.log.tail import Tailer
from core.shared.errors import LogFormatError, TapedeckError
from core.shared.text import quoted_path

RESCAN_SECONDS = 1.0  # how often the roots are listed again for new sessions
# how long a reading that the host exited waits for the log's last bytes to be taken in (a torn line never is)
EXIT_WAIT_MS = 3_000
SLICE = 1 << 18  # bytes read and fed per step of a poll (packed rows expand to many events each)


def now_ms() -> int:
    """The wall clock in epoch milliseconds."""
    return int(time.time() * 1000)


@dataclasses.dataclass(frozen=True, slots=True)
class Restored:
    """The log a checkpoint stood for: its ``_stamp`` then, and the hashes of its first and last bytes
    (``core.read.index.ends``)."""

    stamp: tuple[int, int, int, int]
    ends: tuple[str, str]


class _ReadOn(NamedTuple):
    """A ``FedWatch``'s reader handed over the log up to byte ``end`` while the engine read the log itself: the
    engine reads those bytes on with its own reader instead of holding what the reader decoded."""

    end: int


class _PassEnd(NamedTuple):
    """A reader's pass over a ``FedWatch``'s log ended: the bytes it read, up to a line's end (None: not so), and the
    file as it was then (None: no checkpoint is kept of it)."""

    offset: int | None
    seen: Restored | None


def _stamp(path: Path) -> tuple[int, int, int, int] | None:
    """A log's size, modification time, device and inode (None: it cannot be read)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_dev, st.st_ino


def _key(alert: Alert) -> tuple[str, str, int]:
    """What tells one alert from another: its session, cause and event."""
    return alert.session, alert.cause, alert.seq


_Name = TypeVar("_Name")  # a name of a log: a local path, or one on another machine (``FileNames.first``)
_LookUp = Callable[[list[_Name]], list[str]]  # the real paths of names, all at once (``FileNames.look_up``)


class FileNames:
    """The one name a log file is watched under when the targets reach it by several (a root given relative and
    absolute, or through a symbolic link, a log given beside its root), so that one file is one session, with one row
    and one report of each alert: the name it is watched under already, else the first one listed (a new name of a
    watched file, however it sorts, never takes its row over). A name is its log's ``str``: a local path, or
    ``[user@]host:PATH`` on another machine, whose real path the far side gives (a POSIX path there, never resolved
    here). The real path behind a name is looked up when it is first listed, and again when its file may have
    changed (``look_up``): a name that then reaches another file is a new name of it, which keeps no row."""

    def __init__(self) -> None:
        self._real: dict[str, str] = {}
        # a local name's file (device, inode) when it was looked up
        self._ids: dict[str, tuple[int, ...] | None] = {}
        self._moved: set[str] = set()  # the names found reaching another file since the last ``first``

    def real(self, name: str) -> str | None:
        """The real path of the file the log named ``name`` reached when it was last looked up (``look_up``): a
        local path, or ``[user@]host:PATH``; None when it never was."""
        return self._real.get(name)

    def look_up(
        self, logs: Iterable[_Name], look_up: _LookUp[_Name] | None = None, again: Collection[str] = ()
    ) -> None:
        """Record the real paths of the names of ``logs`` not looked up yet, and of those whose file may have
        changed since: ``look_up`` gives them all at once (another machine's logs: one round trip), for the new names
        and those in ``again`` (reached through a symbolic link, which may have been made to name another file);
        without it, the names are local paths, looked up here, again where a stat of the name finds another file
        than at its last look-up (its device and inode: one stat a name, no look-up)."""
        logs = list(logs)
        if look_up is None:
            ids = {str(log): stamp[2:] if (stamp := _stamp(Path(str(log)))) else None for log in logs}
            asked = [log for log in logs if self._ids.get(str(log), False) != ids[str(log)]]
            found = [os.path.realpath(str(log)) for log in asked]
            self._ids.update((str(log), ids[str(log)]) for log in asked)
        else:
            asked = [log for log in logs if str(log) not in self._real or str(log) in again]
            found = look_up(asked) if asked else []
        for log, real in zip(asked, found, strict=True):
            if self._real.setdefault(str(log), real) != real:
                self._moved.add(str(log))
                self._real[str(log)] = real

    def first(self, logs: Iterable[_Name], seen: set[str], watched: Collection[str] = ()) -> list[_Name]:
        """``logs`` (in their order, each looked up: ``look_up``) but one name of each file, the one of them in
        ``watched`` (followed already, and reaching the file it reached) else the first, and none of a file whose real
        path is in ``seen`` (``seen`` takes the files of those kept)."""
        logs = list(logs)
        moved, self._moved = self._moved, set()
        kept: set[str] = set()
        # (stable) the watched names first
        for log in sorted(logs, key=lambda log: str(log) not in watched or str(log) in moved):
            if (real := self._real[str(log)]) not in seen:
                seen.add(real)
                kept.add(str(log))
        return [log for log in logs if str(log) in kept]


def logs_of(
    targets: Sequence[str | os.PathLike[str]],
    skipped: list[str] | None = None,
    names: FileNames | None = None,
) -> list[Path]:
    """The session logs the targets name, each file once (``FileNames``; ``names`` keeps what it looked up): each log
    file or session directory, and every session under a root (what a root holds that cannot be read is noted in
    ``skipped`` when given: ``discover_sessions``)."""
    found: list[Path] = []
    for target in targets:
        path = Path(target).expanduser()
        if is_sessions_root(path):
            found.extend(ref.path for ref in discover_sessions(path, skipped))
        else:
            found.append(resolve_log_path(path))
    names = names or FileNames()
    names.look_up(found)
    return names.first(found, set())


class AlertWatch:
    """One followed log and its engine."""

    reads_file = True  # its own tailer reads the log, so the engine can read events back from the file

    def __init__(
        self, path: Path, config: PolicyConfig, *, live: bool = True, pace: Callable[[], None] | None = None
    ) -> None:
        """Watch ``path``; with ``live`` the host's state is read at each tick (a lock probe and a small file);
        ``pace`` is called after each slice a poll feeds (``core.log.pace``: a reader sharing the GIL with a UI)."""
        self.path = path
        self.pace = pace
        self.config = config
        self.live = live
        self.tailer, self.lines = self._reader()
        self.engine = self._engine()
        self.problems: list[str] = []
        self.unreadable: str | None = None  # why a follower's last poll could not read the log through (``poll_one``)
        self.host: HostState | None = None  # the host's state at the last tick (with ``live``)
        self.reading: HostState | None = None  # the last reading of it, believed (``host``) or not yet (``_settled``)
        self._exit_read: int | None = None  # when a reading that the host exited first waited for the log (epoch ms)
        self._stale_read: int | None = None  # when a heartbeat first read stale after a live reading (epoch ms)
        self._reported: set[tuple[str, str, int]] = set()  # (session, cause, seq) of every alert raised
        self._replaying: set[tuple[str, str, int]] = set()  # those raised before the last reset, not raised since
        self._restored: Restored | None = None  # the log a checkpoint stood for
        # (session, cause, seq) of the alerts the log's history raised, read at the watch's first look at the file:
        # shown, never acted on (``act``)
        self.history: set[tuple[str, str, int]] = set()
        self._looked = False  # the first look at the file is over
        self.title_polled: str | None = None  # its title after its last poll (``Retitled``)

    def born_watched(self) -> None:
        """Take the log as one that appeared while its follower ran (a session started under a watched root): what
        it raised before the first look happened while it was watched, so none of it is history (``act``)."""
        self._looked = True

    def _reader(self) -> tuple[Tailer, LineStore | None]:
        """A tailer from the file's start, and the table of where its lines are: the cache-break watcher reads the
        surface back from the file this watch reads (a subclass fed by another reader keeps the events it needs
        instead). Packed rows reach the engine as rows (it folds one without building its members) unless a
        subclass folds more from the events it sees and does not say that it takes rows (``sees_rows``)."""
        rows = type(self).seen is AlertWatch.seen or self.sees_rows
        tailer = Tailer(self.path, consumer=Consumer(packed_rows=True)) if rows else Tailer(self.path)
        return tailer, LineStore(self.path, tailer) if self.reads_file else None

    def _engine(self) -> AlertEngine:
        return AlertEngine(self.config.alerts, self.config.model, path=str(self.path), lines=self.lines)

    def poll(self, now: int, final: bool = False) -> list[Alert]:
        """Read what was appended, feed it, tick; ``final`` treats the end of the file as the end of the log.

        The file is read ``SLICE`` bytes at a time, each slice's events fed before the next is decoded, so a big
        log never sits in memory decoded whole (the rules see each event alone, so slices change nothing). What
        the first poll of a file tells is the log's history (``history``).
        """
        told = self._poll(now, final)
        if not self._looked:
            self._looked = True
            self.history.update(_key(alert) for alert in told)
        return told

    @property
    def loading(self) -> bool:
        """Whether the first look at the file (its history) is still under way."""
        return not self._looked

    def replayed(self, alert: Alert) -> bool:
        """Whether ``alert`` was raised by the log's history (``history``), not by what was appended since."""
        return _key(alert) in self.history

    def recalled(self, alerts: list[Alert]) -> list[Alert]:
        """Of ``alerts``, raised by the log's history, those still worth telling once it was read: all but the
        alerts of a state of the run (``STATE_CAUSES``: paused, stalled …) that no longer holds."""
        active = self.engine.active
        return [alert for alert in alerts if alert.cause not in STATE_CAUSES or active.get(alert.cause) == alert]

    def _poll(self, now: int, final: bool) -> list[Alert]:
        if self._restored is not None:  # a checkpoint stood for the log: unless it changed since, it still does
            if self._restored.stamp == _stamp(self.path):
                return self.once(self.tick(now, final))
            self._resume(now)
        whole = self.checkpoints and self.tailer.decoder is None  # a first read, of the whole log as it is now
        if whole and (state := self._checkpoint(now)) is not None:
            out = list(state.raised)
            out.extend(self.tick(now, final))
            return self.once(out)
        told: list[Alert] = []  # what files this poll found replaced raised: told as it is
        out: list[Alert] = []
        while True:
            before = self.tailer.offset
            update = self.tailer.poll(max_bytes=SLICE)
            if final and update.changed is not None:  # a one-off read of a log changed under it
                raise update.changed
            if update.reset:  # read the new file from its start with a reader of its own, its lines noted afresh
                told += self.once(out)  # before the reset: the new file's read does not raise them again
                out = []
                self._restart()
                self._looked = False
                whole = False
                continue
            if update.header is not None:
                self.engine.start(update.header)
            if update.fatal:
                self.problems.append(update.fatal)
            self._feed_read(update.events, now, out, final)
            if self.lines is not None:
                self.lines.take_notes()  # into the table's columns: the notes would pile up as Python ints
            if self.tailer.offset == before or update.fatal:
                break
            if self.pace is not None:
                self.pace()
        if whole:
            self._keep(out)
        if final:
            self._feed_read(self.tailer.finish().events, now, out, final)
            decoder = self.tailer.decoder
            if self.reads_file and (decoder is None or decoder.header is None):
                read_log_header(self.path)  # no session header: it raises why, as the reading commands say it
        out.extend(self.tick(now, final))
        return told + self.once(out)

    def _feed_read(self, events: list[dict[str, Any] | PackedRow], now: int, out: list[Alert], final: bool) -> None:
        """``_feed`` the events a poll read; in a one-off read (``final``) a line the rules read back that a
        truncation or replacement of the log took away fails as the change it is."""
        try:
            self._feed(events, now, out)
        except LogFormatError as exc:
            if final and (changed := self.tailer.poll(max_bytes=0).changed) is not None:
                raise changed from exc
            raise

    checkpoints = True  # a first read of a local log keeps its state for the next one (core.alerts.checkpoint)
    CHECKPOINT = "alerts"  # the name of the kind of watch whose checkpoint it is (a subclass keeps more)
    FOLD_TYPES: dict[str, Any] = {}  # a subclass's own columns, kept beside the engine's state: name -> type

    def fold_state(self) -> dict[str, Any]:
        """A subclass's own columns, as ``FOLD_TYPES`` types them (kept in a checkpoint)."""
        return {}

    def restore_fold(self, fold: dict[str, Any]) -> None:
        """Take back the columns ``fold_state`` gave (from a checkpoint)."""

    @property
    def title(self) -> str | None:
        """The session's newest title as the events read so far give it (None: it has none yet)."""
        return self.engine.signals.title

    @property
    def consumed(self) -> int:
        """Bytes of the log read so far (or that a checkpoint stood for)."""
        return self.tailer.offset if self._restored is None else self._restored.stamp[0]

    def _restart(self) -> None:
        """Read the log from its start with a new reader and engine (an alert raised before is not raised again)."""
        self.tailer, self.lines = self._reader()
        self.engine = self._engine()
        self._replaying = set(self._reported)
        self._restored = None

    def _keep(self, raised: list[Alert]) -> None:
        """Write the state a first read of the whole log left, before the clock rules run (when it ended at a
        line's end: what a final read does with a torn last line a later append may still complete)."""
        decoder = self.tailer.decoder
        if decoder is not None and decoder.at_boundary:
            self._write_checkpoint(self.tailer.offset, raised)

    def _write_checkpoint(self, offset: int, raised: list[Alert], seen: Restored | None = None) -> None:
        """Write the engine's state as the checkpoint of the log's first ``offset`` bytes, read from its start with
        no tick of the clock rules; ``raised``: what that read raised; ``seen``: the file as the read left it (none
        is written when the log is no longer that file)."""
        from core.alerts import checkpoint

        engine = self.engine
        undated = {id(alert) for alert in engine.undated}
        state = checkpoint.WatchState(offset, engine.session, engine.signals, engine.active, engine.fired,
                                      [k for k, alert in enumerate(engine.fired) if id(alert) in undated],
                                      engine.transitions, engine.host_guards, raised, self.problems, self.fold_state())  # fmt: skip
        checkpoint.write(self.path, self.CHECKPOINT, self.config, state, self.FOLD_TYPES,
                         seen=None if seen is None else (seen.stamp, seen.ends))  # fmt: skip

    def _checkpoint(self, now: int, least: int = 0) -> Any:
        """The state a checkpoint of the log as it is now holds, taken into this watch (None: there is none, or the
        log is shorter than ``least`` bytes); an alert an event raised before any event had a time is dated
        ``now``, as a read now would date it."""
        from core.alerts import checkpoint

        stamp = _stamp(self.path)  # taken first: a change after it shows at the next poll
        if stamp is None or stamp[0] < least:
            return None
        found = checkpoint.read(self.path, self.CHECKPOINT, self.config, self.FOLD_TYPES)
        if found is None or stamp[0] != found[0].offset:
            return None
        state, ends = found
        # the same alert in ``fired``, ``active`` and ``raised`` (equal values: the checkpoint holds copies)
        dated = {state.fired[k]: dataclasses.replace(state.fired[k], at=now) for k in state.undated}
        engine = self.engine
        engine.session, engine.signals, engine.transitions = state.session, state.signals, state.transitions
        engine.active = {cause: dated.get(alert, alert) for cause, alert in state.active.items()}
        engine.fired = [dated.get(alert, alert) for alert in state.fired]
        engine.undated, engine.host_guards = list(dated.values()), state.host_guards
        state.raised = [dated.get(alert, alert) for alert in state.raised]
        self.problems.extend(state.problems)
        self.restore_fold(state.fold)
        self._restored = Restored(stamp, ends)
        return state

    def _resume(self, now: int) -> None:
        """The log changed since a checkpoint stood for its first bytes. When they are still there (an append),
        read them again with a new reader and engine, for the projection alone (which a checkpoint does not hold:
        the cache-break rule needs it), and give the engine back what this watch's engine holds (signals, alerts, as the
        clock rules left them): it goes on as if it had read them itself. Otherwise (rewritten, truncated,
        replaced) read the new file from its start, as after a reset."""
        from core.alerts import checkpoint

        restored, old, replaying = self._restored, self.engine, self._replaying
        self._restart()
        assert restored is not None
        size = restored.stamp[0]
        if not checkpoint.holds(self.path, restored.stamp, restored.ends):
            self._looked = False  # another file, read from its start
            return
        while self.tailer.offset < size:  # what the engine raises reading them again, the old engine raised
            before = self.tailer.offset
            update = self.tailer.poll(max_bytes=min(SLICE, size - self.tailer.offset))
            if update.reset:
                self._looked = False
                return self._restart()
            if update.header is not None:
                self.engine.start(update.header)
            if update.events:  # the engine's projection alone: its signals and alerts are the old engine's
                self.seen(update.events)
                self.engine.project(update.events)
            if self.lines is not None:
                self.lines.take_notes()
            if update.fatal:  # the restored problems told it: the rest of the log is not read
                break
            if self.tailer.offset == before:
                return self._restart()
            if self.pace is not None:
                self.pace()
        self._transplant(old)
        self._replaying = replaying

    def _transplant(self, old: AlertEngine) -> None:
        """Give the engine, which read again what ``old`` had read (its projection rebuilt), what ``old`` holds:
        signals and alerts, as the clock rules left them; it goes on as if it had been ``old`` all along."""
        engine = self.engine
        engine.session, engine.signals, engine.transitions = old.session, old.signals, old.transitions
        engine.active, engine.fired, engine.undated, engine.host_guards = old.active, old.fired, old.undated, old.host_guards

    def once(self, alerts: list[Alert]) -> list[Alert]:
        """``alerts`` less those a log read again after a reset raises a second time for the same events (each
        alert raised before the reset is left out once; one that fires again later is kept)."""
        fresh = []
        for alert in alerts:
            key = _key(alert)
            if key in self._replaying:
                self._replaying.discard(key)
                continue
            self._reported.add(key)
            fresh.append(alert)
        return fresh

    def _feed(self, events: list[dict[str, Any] | PackedRow], now: int, out: list[Alert]) -> None:
        if events:
            self.seen(events)
            out.extend(self.engine.feed(events, now))

    sees_rows = False  # a subclass's ``seen`` takes packed rows as they are: they reach it and the engine as rows

    def seen(self, events: list[dict[str, Any]]) -> None:
        """Called with each poll's events before the engine folds them (a subclass folds more from them, and then
        gets every packed row as its member events, unless it ``sees_rows``)."""

    def tick(self, now: int, final: bool = False) -> list[Alert]:
        """Tick the engine with the time, the host's state and the file's last change (``final``: in a one-off
        report, whose reading of the host is the only one)."""
        reading = self.read_host() if self.live else None
        if reading is not None:  # (None: it could not be read now; what was read and believed before stands)
            self.reading = reading
            self.host = self._settled(reading, now, final)
        host = self.host
        return self.engine.tick(now, host.state if host is not None else None, self.last_write(),
                                host.since if host is not None else None)  # fmt: skip

    def _settled(self, host: HostState, now: int, final: bool) -> HostState | None:
        """``host``, unless it says the host exited while the log holds bytes the engine has not taken in: a host
        writes its last events (its turn's end) and then that it exited, so the engine would judge a turn open
        that the log closes. The reading before it then stands, for ``EXIT_WAIT_MS`` at most. Nor is a live
        bridge's heartbeat, read stale where its process cannot be looked for (``unseen``: another machine's, as
        on NFS, whose cache can serve a read seconds behind), believed at once: the live reading before it stands
        until the readings have said so for ``HEARTBEAT_FRESH_MS``, and a follower's first reading waits alike (none
        stands meanwhile: the host's state is unknown); a fresh one in between ends the wait. A one-off report
        (``final``) has no later reading to wait for."""
        if host is self.host:  # no new reading (the fleet reads a live host's state once a second)
            return host
        ahead = not final if self.host is None else self.host.live  # a live reading, or none yet, stands
        if host.state != "exited" or not (host.bridge or {}).get("unseen") or not ahead:
            self._stale_read = None
        else:
            self._stale_read = now if self._stale_read is None else self._stale_read
            if now - self._stale_read < HEARTBEAT_FRESH_MS:
                return self.host
        if host.state != "exited" or not self._behind():
            self._exit_read = None
            return host
        if self._exit_read is None:
            self._exit_read = now
        return host if now - self._exit_read >= EXIT_WAIT_MS else self.host

    def _behind(self) -> bool:
        """Whether the log holds bytes past those the engine took in (False when its size is not known)."""
        size = self.log_size()
        return size is not None and size > self.taken_in

    def log_size(self) -> int | None:
        """The log's size now (None: the file cannot be read)."""
        try:
            return os.stat(self.path).st_size
        except OSError:
            return None

    @property
    def taken_in(self) -> int:
        """Bytes of the log the engine has taken in."""
        return self.consumed

    def last_write(self) -> int | None:
        """When the log last changed (epoch ms; None: unknown)."""
        try:
            return int(os.stat(self.path).st_mtime * 1000)
        except OSError:
            return None

    def read_host(self) -> HostState | None:
        """The host's state now (a lock probe and a small file; a follower of another machine's log has None while
        it cannot be read); whether a tapedeck host ever ran the log is the engine's to say (a watch ticks once it has
        taken in the log as it stands, or a checkpoint stood for it): the log's start is not read again at every
        tick."""
        return read_host_state(self.path, self.engine.signals.hosted)

    def lost(self) -> str | None:
        """Why the machine that holds the log did not answer the last poll (None: it did; a local log's always
        does)."""
        return None

    def send_action(self, alert: Alert) -> None:
        """Send the alert's action when a live host that does not act on it itself runs the session (a
        ``TapedeckError`` when the request cannot be written)."""
        if alert.cause in self.engine.host_guards or not read_host_state(self.path).live:
            return
        send_action(alert, self.config.alerts, inbox_path(self.path), check=self._still_live)

    def _still_live(self) -> None:
        """Refuse the write when the host exited since ``send_action`` looked (asked under the inbox's lock, which
        an exiting host holds from its last read until it has released its log)."""
        if not read_host_state(self.path).live:
            raise ControlError("its host exited just now; nothing was sent")

    def projection(self, now: int) -> Projection:
        """The log's run rate and open turn's projected cost at ``now``."""
        return project(self.engine.signals, window_ms(self.config.alerts), now)


class FedWatch(AlertWatch):
    """The engine of a log another reader reads: the reader calls ``begin`` at the start of each pass over the
    file and ``take`` with every item it decoded (events, packed rows), in log order, from its own thread.
    ``poll`` (the follower's thread) feeds what was handed over since, then returns the alerts raised and ticks:
    the rules run beside the reader, not in its way, unless more than ``HELD`` items (or ``HELD_BYTES`` of the
    log) wait, when the reader feeds
    them itself (what it decoded is never held twice over). A pass over the same file again (the reader reopened
    it) hands over what the engine has already seen: it is skipped, so nothing fires twice; a new file
    (``reset``, or one the engine's own read of the log found) starts a new engine, which raises again only the
    alerts not raised before (``once``). Only the reader that began last is listened to. ``done`` is set by a reader
    that does not follow once it handed over the whole log. The engine reads events back through the store of the
    reader that began last (``begin``'s ``events``), so it keeps none decoded but the open turn's routes.

    The clock rules wait for the end of each pass (``loaded``), so the engine's state after a first pass is a
    whole read's: it is kept as the log's checkpoint (``core.alerts.checkpoint``, as ``tapedeck alerts`` keeps
    one). A reader that goes on from its index leaves the log's start to the engine: an unchanged log's checkpoint
    answers for it, and the start is read only once the log grows (the cache-break rule's projection is rebuilt
    then, folding nothing else; with that rule off, not at all), or when no checkpoint fits."""

    reads_file = False  # fed by another reader: the engine reads events back through that reader's store

    HELD = 1 << 16  # items handed over and not fed yet before the reader feeds them itself
    # … or bytes of the log they were decoded from: on a log of big tool results a few thousand items are megabytes
    # (by items alone, a 30 MB ``dsh-plain`` log peaked 70 MB higher with the engine than without)
    HELD_BYTES = 1 << 20
    FOLD = 256  # items the engine folds between two calls of ``pace`` (a few ms of work)

    def __init__(self, config: PolicyConfig, *, live: bool = True, pace: Callable[[], None] | None = None) -> None:
        """``pace`` is called between bounded units of the engine's work in ``poll`` (the feed's own thread, never
        the reader's): the start of the log read back here after an index (minutes of CPU on a 1 GB log) then
        leaves the GIL to a UI thread that needs it, instead of holding it in 5 ms turns."""
        self._events: BorrowedEvents | None = None  # what the engine reads events back through (from ``begin``)
        super().__init__(Path(), config, live=live, pace=pace)
        self._lock = threading.Lock()  # the hand-over: what waits, the reader, the raised alerts
        self._feeding = threading.Lock()  # the engine: fed, ticked or replaced by one thread at a time
        # batches with the bytes they came from and where the reader stood after them, and each pass's end
        # (``_PassEnd``, 0, None) and bytes to read on (``_ReadOn``, 0, None) in their place among them
        self._waiting: deque[tuple[list[dict[str, Any] | PackedRow] | _PassEnd | _ReadOn, int, int | None]] = deque()
        self._held = 0
        self._held_bytes = 0
        self._raised: list[Alert] = []
        self._told: list[Alert] = []  # alerts to tell at the next poll that ``once`` already let through
        self._reader: object = None
        self._next = 0  # the seq the engine takes next
        self._unread = 0  # bytes of the log's start to be read here (the reader's index stood for them)
        self._header: dict[str, Any] = {}
        self._passing = False  # a reader's pass is under way: the clock rules wait for its end
        # what the engine raised from its start, until its first pass ended (no tick before: ``_passing`` held them)
        self._first: list[Alert] | None = None
        self._covered = 0  # bytes of the log's start the engine has taken in (read, restored, or handed over and fed)
        self.start_bytes = 0  # bytes of the log's start the engine read itself, when no checkpoint stood for them
        self._reading = False  # the engine's thread reads the log itself: what the reader hands over may wait there
        self._stop = False  # a reader's ``begin`` waits: the engine's own read stops at its next slice
        self._replaced = False  # the engine's own reader found the log another file: it takes in nothing more
        self._own: Tailer | None = None  # the engine's own reader, where its last read of the log stopped
        self._unfed: list[dict[str, Any] | PackedRow] = []  # what ``_own`` decoded that a stop left unfed
        self.done = threading.Event()

    def begin(
        self,
        reader: object,
        path: Path,
        header: dict[str, Any],
        events: ValidatedEvents,
        reset: bool = False,
        unread: int = 0,
    ) -> None:
        """``reader`` starts a pass over the log at ``path`` (whose header is ``header``); ``events`` is its store,
        holding (or reading back) every event by the time it hands it over, and the first ``unread`` bytes' events
        already: those it will not hand over (its index stood for them), the engine reads itself, at the next
        feed. A read of the log the engine's thread is making meanwhile stops at its next slice instead of holding
        this up (it goes on from there with this pass)."""
        with self._lock:
            self._stop = True
        with self._feeding, self._lock:
            self._stop = False
            self._reader = reader
            self._waiting.clear()
            self._held = self._held_bytes = 0
            if (
                reset
                or self._replaced
                or self._events is None
                or path != self.path
                or self.engine.session != header.get("id", self.engine.session)
            ):
                self.path = path
                self._events = BorrowedEvents(events)
                self.engine = self._engine()
                # what the old engine raised and no poll told yet is told as it is: the new engine's raising it again is not
                self._told.extend(self.once(self._raised))
                self._raised = []
                self._replaying = set(self._reported)
                self._next = 0
                self._first, self._restored, self._covered, self._looked = [], None, 0, False
                self._own, self._unfed, self._replaced = None, [], False
            else:  # the same log read again: the engine goes on (skipping what it saw), reading through the new store
                self._events.source = events
            self.engine.start(header)
            self._header, self._unread, self._passing = header, unread, True

    def loaded(self, reader: object, offset: int | None) -> None:
        """``reader`` handed over all its pass decoded: the log's first ``offset`` bytes, up to a line's end (None:
        not a whole local log, nothing to keep). The clock rules run again from the next poll. The file's identity
        is taken now (the engine may take the pass's end seconds later, when the file may be another)."""
        seen = None
        if offset is not None and self.checkpoints and (stamp := _stamp(self.path)) is not None and stamp[0] == offset:
            from core.read.index import ends

            try:
                seen = Restored(stamp, ends(self.path, offset))
            except OSError:
                seen = None
        with self._lock:
            if reader is self._reader:
                self._waiting.append((_PassEnd(offset, seen), 0, None))

    def _engine(self) -> AlertEngine:
        return AlertEngine(self.config.alerts, self.config.model, path=str(self.path), lines=self._events)

    def take(self, reader: object, items: list[dict[str, Any] | PackedRow], nbytes: int = 0, end: int | None = None) -> None:
        """Hand over the items ``reader`` decoded (a copy of the list is kept) from ``nbytes`` bytes of the log (0:
        not counted), after which it stood at byte ``end`` of the log (None: not told)."""
        with self._lock:
            if reader is not self._reader or not items:
                return
            self._waiting.append((list(items), nbytes, end))
            self._held += len(items)
            self._held_bytes += nbytes
            behind = self._held > self.HELD or self._held_bytes > self.HELD_BYTES
            if behind and self._long_ahead():  # the engine reads the log for minutes first: it reads these bytes too
                behind = self._spill()
        if behind:
            self._feed_waiting(now_ms(), None)  # the reader's thread: never paced

    def _long_ahead(self) -> bool:
        """The engine's thread reads the log itself, or will before it feeds what waits (under ``_lock``): the log's
        start, the start a checkpoint stood for again (a restored engine that keeps a projection: without the
        cache-break rule it goes on as it is), or bytes dropped before; or it takes in nothing until the next pass
        (its own reader found the log another file). The reader then never feeds what waits
        itself: it would wait for that read, or make it in its own thread, unpaced. What it reads that the engine's
        thread writes outside ``_lock`` only turns False there (or while ``_reading``)."""
        return (
            self._reading
            or self._replaced
            or self._covered < self._unread
            or (self._restored is not None and self.engine.projects)
            or any(type(batch) is _ReadOn for batch, _, _ in self._waiting)
        )

    def _spill(self) -> bool:
        """Drop the batches waiting whose bytes the engine can read itself (the reader said where it stood after
        them), each run of them one ``_ReadOn`` in its place (under ``_lock``); True when too much waits still."""
        kept: deque[tuple[list[dict[str, Any] | PackedRow] | _PassEnd | _ReadOn, int, int | None]] = deque()
        for batch, nbytes, end in self._waiting:
            if type(batch) is list and end is not None:
                self._held -= len(batch)
                self._held_bytes -= nbytes
                if kept and type(kept[-1][0]) is _ReadOn:
                    kept.pop()
                kept.append((_ReadOn(end), 0, None))
            else:
                kept.append((batch, nbytes, end))
        self._waiting = kept
        return self._held > self.HELD or self._held_bytes > self.HELD_BYTES

    def _feed_waiting(self, now: int, pace: Callable[[], None] | None) -> None:
        """Feed every batch handed over, in order (what the engine saw already is skipped), seen at ``now``; first
        the log's start, when the reader did not hand it over; ``pace`` between units of work."""
        with self._feeding:
            if self._replaced:  # its own reader found another file: the next pass (a reset) starts a new engine
                return
            if self._covered < self._unread:  # not taken in already (a new view of the same log may find it was)
                self._long(self._take_start, now, pace)
                if self._stop or self._replaced:  # stopped for a new pass (it says what is unread), or another file
                    return
            self._unread = 0
            while True:
                with self._lock:
                    if self._stop or self._replaced or not self._waiting:  # a new pass drops what waits
                        return
                    batch, nbytes, end = self._waiting.popleft()
                    if type(batch) is _ReadOn:  # read on below: a take from now on drops its batches
                        self._reading = True
                    if type(batch) is list:  # what take counted (a pass's end and bytes to read on: nothing)
                        self._held -= len(batch)
                        self._held_bytes -= nbytes
                if type(batch) is _PassEnd:
                    self._pass_ended(batch)
                    continue
                if type(batch) is _ReadOn:
                    self._long(self._read_on, now, pace, batch.end)
                    continue
                items = self._unseen(batch)  # type: ignore[arg-type]
                if items and self._restored is not None:  # the log grew past its checkpoint: the projection is needed
                    self._long(self._rebuild, now, pace)
                if not self._fold(items, now, pace):
                    return
                if end is not None:  # taken in up to there (a line cut there comes whole with the next view's bytes)
                    self._covered = max(self._covered, end)

    def _long(self, read: Callable[..., None], *args: Any) -> None:
        """Run ``read``, a read of the log by the engine itself, while the reader hands over without waiting."""
        with self._lock:
            self._reading = True
        try:
            read(*args)
        finally:
            with self._lock:
                self._reading = False

    def _read_on(self, now: int, pace: Callable[[], None] | None, end: int) -> None:
        """Read the log on to byte ``end`` (the reader handed those bytes over while the engine read, and they were
        dropped), with the engine's own reader from where it stopped: a restored engine rebuilds its projection
        first."""
        if end <= self._covered:  # taken in already: a checkpoint restored meanwhile stood for them
            return
        if self._restored is not None:
            self._rebuild(now, pace, end)
        else:
            self._read_start(now, pace, end, tailer=self._own)

    def _take_start(self, now: int, pace: Callable[[], None] | None) -> None:
        """Take in the log's first ``_unread`` bytes, which the reader does not hand over and the engine did not take
        in yet: the checkpoint of at least those bytes when the engine has seen nothing yet and there is one, else
        read them here (a restored engine rebuilding its projection first)."""
        if self._next == 0 and self.checkpoints and self._restore(now):
            return
        if self._restored is not None:
            self._rebuild(now, pace, self._unread)
        else:
            self._read_start(now, pace, self._unread, tailer=self._own)

    def _restore(self, now: int) -> bool:
        """Take the engine's state from the log's checkpoint, when it has one that stands for the whole file and at
        least its first ``_unread`` bytes (the reader hands over the rest, which the engine then skips as seen): its
        alerts are raised again, as reading them would raise them."""
        state = self._checkpoint(now, self._unread)
        if state is None:
            return False
        self._next = self.engine.signals.seq + 1
        self._covered = state.offset
        with self._lock:
            self._raised.extend(state.raised)
        self._in_first(state.raised)
        return True

    def _in_first(self, raised: list[Alert]) -> None:
        """Note alerts raised during the view's first pass (``_first``): the log's history (``history``)."""
        if self._first is not None:
            self._first.extend(raised)
            self.history.update(map(_key, raised))

    def _rebuild(self, now: int, pace: Callable[[], None] | None, upto: int = 0) -> None:
        """Read the start a checkpoint stood for with a new engine, so that its projection is whole, then give it
        the restored engine's signals and alerts (what it raises reading them again was raised already); then read
        on to ``upto`` bytes, if that is further. Stopped for a new pass (or by a reader that found another file),
        the restored engine stays as it was. An engine that keeps no projection (the cache-break rule is off) goes
        on as it is."""
        old, restored = self.engine, self._restored
        size = restored.stamp[0]  # type: ignore[union-attr]
        self._restored = None
        if not old.projects:
            if upto > size:
                self._read_start(now, pace, upto, tailer=self._own)
            return
        self.engine = self._engine()
        self.engine.start(self._header)
        self._next = 0
        self._read_start(now, pace, size, keep=False)
        if self._stop or self._replaced:
            self.engine, self._restored, self._next = old, restored, old.signals.seq + 1
            self._own, self._unfed = None, []  # the new engine's reader: read again from the start next time
            return
        self._transplant(old)
        self._next = old.signals.seq + 1
        if upto > size:
            self._read_start(now, pace, upto, tailer=self._own)

    def _pass_ended(self, end: _PassEnd) -> None:
        """A reader's pass ended (``loaded``): the engine took in the log up to where it read. After the engine's
        first pass over a whole local log (no tick since its start, nothing restored that the pass left as it was),
        keep its state as the log's checkpoint."""
        first, self._first, self._passing = self._first, None, False
        if end.offset is not None:
            self._covered = max(self._covered, end.offset)
        if end.seen is not None and first is not None and self._restored is None:
            self._write_checkpoint(end.seen.stamp[0], first, end.seen)

    def _fold(
        self, items: list[dict[str, Any] | PackedRow], now: int, pace: Callable[[], None] | None, keep: bool = True
    ) -> bool:
        """Feed the engine ``FOLD`` items at a time, calling ``pace`` after each (the caller holds ``_feeding``),
        and keep what it raised for the next poll (unless not ``keep``: a start read again, of which only the
        projection is wanted). False when it stopped before the end for a new pass (``_stop``, as a reader's
        ``begin`` waits), or for good once the engine's own reader found the log another file (``_replaced``)."""
        for start in range(0, len(items), self.FOLD):
            if self._stop or self._replaced:
                return False
            if keep:
                raised = self.engine.feed(items[start : start + self.FOLD], now)
                with self._lock:
                    self._raised.extend(raised)
                self._in_first(raised)
            else:
                self.engine.project(items[start : start + self.FOLD])
            self._next = self.engine.signals.seq + 1
            if pace is not None:
                pace()
        return True

    def _read_start(
        self, now: int, pace: Callable[[], None] | None, size: int, keep: bool = True, tailer: Tailer | None = None
    ) -> None:
        """Read the log's first ``size`` bytes with a new reader of the engine's own (or on with ``tailer``, which
        read the first ones), feeding what the engine has not seen; the reader hands over the rest (so the engine
        never runs ahead of the reader's store). That reader is kept (``_own``), to read on from there (first feeding
        what it decoded that a stop left unfed). A reader that finds the log another file feeds none of it: the
        engine takes in nothing more (``_replaced``) until a pass begins, with a new engine."""
        if tailer is None:
            tailer, self._unfed = Tailer(self.path, pace=pace, consumer=Consumer(packed_rows=True)), []
        self._own = tailer
        unfed, self._unfed = self._unfed, []
        if unfed and not self._fold(self._unseen(unfed), now, pace, keep):  # what it decoded before a stop
            self._unfed = unfed
            return
        while tailer.offset < size and not self._stop:
            before = tailer.offset
            update = tailer.poll(max_bytes=min(SLICE, size - tailer.offset))
            if update.reset:  # another file: none of it is this engine's (the view's pass over it starts a new one)
                self._replaced, self._own, self._unfed = True, None, []
                return
            self.start_bytes += tailer.offset - before
            if update.header is not None:
                self.engine.start(update.header)
            items = self._unseen(update.events)  # type: ignore[arg-type]
            if not self._fold(items, now, pace, keep):  # stopped: the next read feeds what it did not, then goes on
                self._unfed = items
                return
            if tailer.offset == before or update.fatal:
                break
        self._covered = max(self._covered, tailer.offset)

    def _unseen(self, batch: list[dict[str, Any] | PackedRow]) -> list[dict[str, Any] | PackedRow]:
        out: list[dict[str, Any] | PackedRow] = []
        for item in batch:
            if type(item) is PackedRow:
                if item.seq0 >= self._next:
                    out.append(item)
                elif item.seq0 + item.count > self._next:  # partly seen: its members not seen yet
                    out.extend(e for e in item.events() if e["seq"] >= self._next)
            elif not isinstance(seq := item.get("seq"), int) or seq >= self._next:  # type: ignore[union-attr]
                out.append(item)
        return out

    def poll(self, now: int, final: bool = False) -> list[Alert]:
        """Feed what was handed over (paced); the alerts an engine a reset replaced raised that no poll told yet,
        then those raised since the last poll, then the tick's."""
        self._feed_waiting(now, self.pace)
        with self._feeding:
            with self._lock:
                told, out, self._told, self._raised = self._told, self._raised, [], []
            if self._reader is not None and not self._passing:
                ticked = self.tick(now, final)
                out.extend(ticked)
                if not self._looked:  # the first tick after the first pass ends the first look: history too
                    self._looked = True
                    self.history.update(map(_key, ticked))
            return told + self.once(out)  # under ``_feeding``, as a ``begin`` that resets calls ``once`` too

    @property
    def taken_in(self) -> int:
        """Bytes of the log the engine has taken in: read itself, restored, or handed over and fed."""
        return self._covered

    def projection(self, now: int) -> Projection:
        """As ``AlertWatch.projection``, while no thread feeds the engine."""
        with self._feeding:
            return super().projection(now)


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
        fed: Sequence[FedWatch] = (),
    ) -> None:
        """With ``act`` the configured actions are sent to live hosts that do not act on them themselves; ``pace``
        as for ``AlertWatch``; ``fed`` are the watches of logs another reader feeds (polled after the others)."""
        self.fed = list(fed)
        self.pace = pace
        self.targets = [Path(t).expanduser() for t in targets]
        self.config = config
        self.act = act
        self.warn = warn
        self.watches: dict[Path, AlertWatch] = {}
        self.unread: list[str] = []  # why each log a one-off read could not read through (``poll_one``)
        self.alongside = False  # other logs are read with these (``core.fleet.alerts.AlertSources``' remote ones)
        self._scanned = 0.0
        self.skipped: list[str] = []  # what the last listing of the roots could not read, and why (warned once)
        self.retitled = Retitled()  # the watches whose session's title a poll changed
        self.names = FileNames()
        skipped: list[str] = []
        for log in logs_of(self.targets, skipped, self.names):
            self.watches[log] = AlertWatch(log, config, pace=pace)
        self.skipped = warn_new(skipped, self.skipped, warn)

    def rescan(self) -> None:
        """Start watching the sessions that appeared under the roots (since the first listing: from their birth)."""
        self._scanned = time.monotonic()
        skipped: list[str] = []
        roots = [root for root in self.targets if is_sessions_root(root)]
        found = [ref.path for root in roots for ref in discover_sessions(root, skipped)]
        # every watched log keeps its name (one given, not under a root, too): a new name of its file is left out
        watched = {str(path) for path in self.watches}
        self.names.look_up([*self.watches, *found])
        for path in self.names.first([*self.watches, *found], set(), watched=watched):
            if path not in self.watches:
                self.watches[path] = watch = AlertWatch(path, self.config, pace=self.pace)
                watch.born_watched()  # not there when the roots were first listed
        self.skipped = warn_new(skipped, self.skipped, self.warn)

    def poll(self, now: int | None = None, final: bool = False) -> list[Alert]:
        """The alerts every log raised since the last poll."""
        if time.monotonic() - self._scanned >= RESCAN_SECONDS:
            self.rescan()
        now = now_ms() if now is None else now
        out: list[Alert] = []
        watches = [*self.watches.values(), *self.fed]
        for watch in watches:
            raised = poll_one(watch, now, final, len(watches) > 1 or self.alongside, self.unread)
            if raised is None:
                self.warn(self.unread[-1])
                self.watches.pop(watch.path, None)  # read afresh if polled again
                continue
            self.retitled.note(watch)
            for problem in watch.problems:
                self.warn(problem)
            watch.problems.clear()
            if self.act:
                for alert in raised:
                    act(watch, alert, self.warn)
            out.extend(raised)
        return out

    def watch_of(self, path: Path) -> AlertWatch | None:
        """The watch of the log at ``path``, if it is followed."""
        return self.watches.get(path) or next((w for w in self.fed if w.path == path), None)

    def watch_for(self, alert: Alert) -> AlertWatch | None:
        """The watch of the log that raised ``alert``, if it is followed."""
        return self.watch_of(Path(alert.path))

    @property
    def settled(self) -> bool:
        """True once every fed watch was handed its whole log (always, without fed watches)."""
        return all(watch.done.is_set() for watch in self.fed)

    def follow(self, stop: threading.Event, interval: float = 0.1) -> Iterator[Alert]:
        """Yield alerts as the logs grow, until ``stop`` is set (checked every ``interval`` seconds)."""
        while True:
            yield from self.poll()
            if stop.wait(interval):
                return


class Recall:
    """What a viewer delivers one by one and what it sums up. The alerts a follower's polls raise that their log's
    history raised (``AlertWatch.history``: read at the watch's first look at the file) are held, and given back
    together once none of their logs is loading any more, less the alerts of a state of the run that no longer
    holds then (``AlertWatch.recalled``); the others are live. ``watch_for`` finds the watch of the log that raised
    an alert (``AlertFollower.watch_for``, ``core.fleet.follow.Fleet.watch_for``)."""

    def __init__(self, watch_for: Callable[[Alert], AlertWatch | None]) -> None:
        self.watch_for = watch_for
        self._held: dict[int, tuple[AlertWatch, list[Alert]]] = {}  # id of a watch -> it and its history's alerts

    def replayed(self, alert: Alert) -> bool:
        """Whether ``alert``, raised by a poll, was raised by its log's history (then it is held for ``recalled``)."""
        watch = self.watch_for(alert)
        if watch is None or not watch.replayed(alert):
            return False
        self._held.setdefault(id(watch), (watch, []))[1].append(alert)
        return True

    def recalled(self) -> list[Alert] | None:
        """The history held, once none of its logs is loading, less what no longer holds (None: nothing to give
        back now); it is no longer held."""
        held = list(self._held.values())
        if not held or any(watch.loading for watch, _ in held):
            return None
        self._held = {}
        return [alert for watch, alerts in held for alert in watch.recalled(alerts)]


class Retitled:
    """The watches whose session's title changed since ``take`` was last called: a follower notes each watch it
    polls, so ``Titles.renamed`` looks at these alone, not at every session with an alert."""

    def __init__(self) -> None:
        self._watches: dict[int, AlertWatch] = {}  # id of a watch -> it: once however often its title changed

    def note(self, watch: AlertWatch) -> None:
        """``watch`` was just polled: kept if its title is another than after its last poll."""
        title = watch.title
        if title != watch.title_polled:
            watch.title_polled = title
            self._watches[id(watch)] = watch

    def take(self) -> list[AlertWatch]:
        """The watches noted since the last call."""
        taken, self._watches = list(self._watches.values()), {}
        return taken


class Titles:
    """The titles of the sessions a viewer lists alerts of, as new as their watches have read. ``named`` gives the
    title of an alert's session when the alert is raised; ``renamed`` the sessions whose watch has read another title
    since it was last given: a DSH session's title logged after its first events, a session renamed. A title is
    told for the session that raised the alert, never for another one a replaced log holds now (the watch's engine
    names its session, as it names its alerts'), and a watch that knows no title (one reading its log again) takes
    back none told. ``watch_for`` as for ``Recall``."""

    def __init__(self, watch_for: Callable[[Alert], AlertWatch | None]) -> None:
        self.watch_for = watch_for
        # (path, session) of each session named -> one of its alerts, and the title last told
        self._told: dict[tuple[str, str], tuple[Alert, str | None]] = {}

    def _now(self, alert: Alert) -> str | None:
        """The title the watch of ``alert``'s log reads for its session now (None: none, or another session)."""
        watch = self.watch_for(alert)
        if watch is None or watch.engine.session != alert.session:
            return None
        return watch.title

    def named(self, alert: Alert) -> str | None:
        """The title of ``alert``'s session now (None: none known), told from here on by ``renamed``."""
        key = (alert.path, alert.session)
        told = self._told[key][1] if key in self._told else None
        title = self._now(alert) or told
        self._told[key] = (alert, title)
        return title

    def renamed(self, retitled: Iterable[AlertWatch]) -> list[tuple[Alert, str]]:
        """Of the sessions of the ``retitled`` watches (``Retitled.take``), an alert of each ``named`` gave whose
        title changed since it was last told, with its new title."""
        out = []
        for watch in retitled:
            key = (watch.engine.path, watch.engine.session)
            told = self._told.get(key)
            title = watch.title
            if told is not None and title and title != told[1]:
                self._told[key] = (told[0], title)
                out.append((told[0], title))
        return out


def warn_new(notes: list[str], before: Collection[str], warn: Callable[[str], None]) -> list[str]:
    """Warn each of a listing's ``notes`` (what it could not read) that the listing ``before`` it did not note: each is
    told once while it lasts, again should it come back. Returns ``notes``."""
    for note in notes:
        if note not in before:
            warn(note)
    return notes


def poll_one(watch: AlertWatch, now: int, final: bool, several: bool, unread: list[str]) -> list[Alert] | None:
    """``watch.poll(now, final)``, where a log that cannot be read through (cut or replaced while it was read) does
    not end the read of the others: in a one-off read (``final``) of ``several`` logs its error is added to
    ``unread`` and None returned (a log read alone raises it); a follower's poll raises ``unreachable`` with it
    (the session's row says so), cleared by the next poll that reads through (raised again at once, for its own
    reason, when that poll found the log's machine lost: ``AlertWatch.lost``)."""
    try:
        told = watch.poll(now, final)
    except LogFormatError as exc:
        if final and not several:
            raise
        if final:
            unread.append(str(exc))
            return None
        watch.unreadable = str(exc)
        return watch.engine.reachable(False, now, watch.unreadable)
    if watch.unreadable is not None:
        watch.unreadable = None
        told += watch.engine.reachable(True, now)
        if (lost := watch.lost()) is not None:  # read through, as a poll that reads nothing does: the machine is gone
            told += watch.engine.reachable(False, now, lost)
    return told


def act(watch: AlertWatch, alert: Alert, warn: Callable[[str], None]) -> None:
    """Send ``alert``'s action through ``watch`` (``AlertWatch.send_action``), unless the log's history raised it
    (``AlertWatch.history``: a watcher acts on what happens while it watches, not on what an operator may have
    answered already, each time it starts); a request that could not be written is reported to ``warn``."""
    if _key(alert) in watch.history:
        return
    try:
        watch.send_action(alert)
    except TapedeckError as exc:
        warn(f"{quoted_path(watch.path)}: the {alert.cause} action was not sent: {exc}")
