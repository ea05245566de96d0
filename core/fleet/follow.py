"""Every session under the fleet's roots, each log followed from its new bytes only.

``SessionWatch`` is the alert engine's watch of one log (``core.alerts.follow.AlertWatch``: a ``Tailer`` that
keeps its offset and decoder state, and the log's ``AlertEngine``); what the rows need beyond the engine's
signals, the session's title among them (the turn and step, how the last turn ended, the router's phase and class,
the cache-hit share), it folds from the same decoded events. The host's state is read at most every ``HOST_SECONDS`` for a live host and every
``IDLE_HOST_SECONDS`` otherwise, and whenever the log grew. ``Fleet`` holds one watch per log under its targets
(log files, session directories, sessions roots) and lists the roots again every ``RESCAN_SECONDS`` for new
sessions (and those gone), reading only the new logs' headers; it remakes the rows of the logs polled since the last ``rows``
only, and sends the actions of the alerts its polls raised (``act``) through each session's watch.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from core.alerts.actions import action_request, origin_of
from core.alerts.engine import Alert
from core.alerts.follow import AlertWatch, FileNames, Retitled, act, now_ms, poll_one
from core.alerts.rate import project, window_ms
from core.alerts.rules import context_ratio
from core.control.config import PolicyConfig
from core.control.host_state import UNKNOWN, HostState
from core.fleet.row import FleetRow, fleet_order
from core.log.layout import is_sessions_root, resolve_log_path
from core.log.records import PackedRow
from core.log.sessions import SessionRef, session_logs, session_ref
from core.log.skipped import UNREACHED, UNREADABLE, SkipNote, skip_note
from core.log.vocabulary import ROUTE_EVENT
from core.read.outcome import TurnOutcome
from core.rebuild.cost import cached_share
from core.remote.inbox import append_remote_request
from core.remote.link import HostKeyRefused, SshLink, Unreachable, link_for
from core.remote.sessions import (
    remote_host_state,
    remote_host_states,
    remote_logs,
    remote_real_paths,
    remote_refs,
)
from core.remote.tail import RemoteTailer
from core.remote.target import RemoteTarget, parse_remote
from core.shared.errors import LogFormatError, LogNotFoundError, TapedeckError
from core.shared.values import int_or_none

HOST_SECONDS = 1.0  # a live host's state is read again this often
IDLE_HOST_SECONDS = 10.0  # … an exited (or never hosted) session's, unless its log grew
RESCAN_SECONDS = 5.0  # the roots are listed again for new sessions this often
REMOTE_POLL_SECONDS = 0.25  # a remote log's size is asked for at most this often (a round trip each)


class SessionWatch(AlertWatch):
    """One followed log: its alert engine and the rest of its fleet row, folded from its new events."""

    def __init__(self, ref: SessionRef, config: PolicyConfig, pace: Callable[[], None] | None = None) -> None:
        self.ref = ref
        self._host_read = float("-inf")
        self._grew = True
        self._stat: tuple[int, int] | None = None
        self._host_dict: tuple[HostState | None, HostState | None, dict[str, Any]] = (None, None, host_fields(None, None))
        super().__init__(ref.path, config, pace=pace)

    def _engine(self) -> Any:
        """A new engine (at the start, and when the log was truncated or replaced) and a new fold beside it."""
        self.turn: int | None = None
        self.step: int | None = None
        self.phase: str | None = None
        self.task_class: str | None = None
        self.ended = TurnOutcome()  # how the last turn ended
        self.usage: dict[tuple[int, int], tuple[int | None, int]] = {}  # (turn, step) -> (cache hits, misses)
        return super()._engine()

    CHECKPOINT = "fleet"
    FOLD_TYPES = {  # what ``fold_state`` keeps of the row's own columns (a checkpoint's types)
        "turn": int | None,
        "step": int | None,
        "phase": str | None,
        "task_class": str | None,
        "ended": tuple[int | None, str],
        "usage": dict[tuple[int, int], tuple[int | None, int]],
    }

    def fold_state(self) -> dict[str, Any]:
        """The row's own columns as the events folded them."""
        return {"turn": self.turn, "step": self.step, "phase": self.phase,
                "task_class": self.task_class, "ended": self.ended.state(), "usage": self.usage}  # fmt: skip

    def restore_fold(self, fold: dict[str, Any]) -> None:
        """Take back the columns ``fold_state`` gave."""
        self.turn, self.step = fold["turn"], fold["step"]
        self.phase, self.task_class, self.usage = fold["phase"], fold["task_class"], fold["usage"]
        self.ended.restore(fold["ended"])

    sees_rows = True  # a packed row folds here as its first member would: the others hold the same turn and step

    def seen(self, events: list[dict[str, Any] | PackedRow]) -> None:  # type: ignore[override]
        """Fold the row's own columns from the events the engine is about to see. A packed row's members are stream
        deltas of one turn and step, which set the turn and step and nothing else: the row folds as its first."""
        self._grew = True
        events = [item.event(0) if type(item) is PackedRow else item for item in events]  # type: ignore[union-attr]
        self.ended.feed(events)  # type: ignore[arg-type]
        for event in events:
            data = event.get("data")
            if not isinstance(data, dict):
                continue
            turn, step = int_or_none(data.get("turn")), int_or_none(data.get("step"))
            if turn is not None and (step is not None or turn != self.turn):
                self.turn, self.step = turn, step
            etype = event.get("type")
            if etype == ROUTE_EVENT:
                self.phase = data["phase"] if isinstance(data.get("phase"), str) else self.phase
                self.task_class = data["taskClass"] if isinstance(data.get("taskClass"), str) else self.task_class
            elif etype == "assistant/message" and isinstance(data.get("usage"), dict):
                self._usage(turn, step, data["usage"])
            elif etype == "assistant/chunk":
                chunk = data.get("chunk")
                if isinstance(chunk, dict) and chunk.get("type") == "usage" and isinstance(chunk.get("usage"), dict):
                    self._usage(turn, step, chunk["usage"])

    def _usage(self, turn: int | None, step: int | None, usage: dict[str, Any]) -> None:
        """A step's latest usage sample replaces its earlier one (as the cost does)."""
        hit = int_or_none(usage.get("cacheReadTokens"))
        miss = (int_or_none(usage.get("inputTokens")) or 0) + (int_or_none(usage.get("cacheWriteTokens")) or 0)
        self.usage[(turn or 0, step or 0)] = (hit, miss)

    def read_host(self) -> HostState | None:
        """The host's state, read again only when it may have changed (see the module docstring)."""
        now = now_ms() / 1000
        if self.host_due(now):
            self._host_read = now
            self._grew = False
            return self.fresh_host()
        assert self.host is not None
        return self.host

    def host_due(self, now: float) -> bool:
        """Whether the host's state is to be read again at ``now`` (epoch seconds)."""
        every = HOST_SECONDS if self.host is None or self.host.live else IDLE_HOST_SECONDS
        return self.host is None or (self._grew and self.grown_reads_host) or now - self._host_read >= every

    grown_reads_host = True  # a log that grew has its host's state read again at once (locally: cheap)

    def fresh_host(self) -> HostState | None:
        """The host's state read now (None: it cannot be read now)."""
        return super().read_host()

    def changed(self) -> bool:
        """Whether the log's size or mtime moved since the last call (one stat)."""
        try:
            st = os.stat(self.path)
            seen = (st.st_size, st.st_mtime_ns)
        except OSError:
            seen = None
        changed, self._stat = seen != self._stat, seen
        return changed

    def row(self, now: int) -> FleetRow:
        """The session's row as of the last poll, aged to ``now`` (epoch ms)."""
        signals = self.engine.signals
        last = signals.last_write
        if last is not None and self.ref.mtime * 1000 != last:
            self.ref = dataclasses.replace(self.ref, mtime=last / 1000, size=self.consumed)
        ratio, _ = context_ratio(signals)
        hits = [hit for hit, _ in self.usage.values() if hit is not None]
        cached = cached_share(sum(hits) if hits else None, sum(m for _, m in self.usage.values()))
        window = window_ms(self.config.alerts)
        rate = project(signals, window, now).usd_per_hour if signals.priced_steps else None
        # HostState.to_dict is slow enough to matter for 200 rows: made again only for another state or reading
        if self._host_dict[0] is not self.host or (self.host is None and self._host_dict[1] is not self.reading):
            self._host_dict = (self.host, self.reading, host_fields(self.host, self.reading))
        host = dict(self._host_dict[2])
        return FleetRow(
            self.ref,
            title=self.title,
            host=host,
            turn=self.turn,
            step=self.step,
            outcome=self.ended.outcome,
            phase=self.phase,
            task_class=self.task_class,
            last_write_age_s=round(max(0, now - last) / 1000, 1) if last is not None else None,
            context_pct=round(ratio * 100, 1) if ratio is not None else None,
            cache_pct=round(cached * 100, 1) if cached is not None else None,
            cost_usd=round(signals.cost_usd, 6) if signals.priced_steps else None,
            usd_per_hour=round(rate, 4) if rate is not None else None,
            attention=self.engine.attention,
        )


def host_fields(host: HostState | None, reading: HostState | None) -> dict[str, Any]:
    """A row's ``host``: the state its engine believes (``host``), else ``unknown`` with what the last ``reading``,
    not believed yet (a heartbeat read stale at the first look, confirmed or not within ``HEARTBEAT_FRESH_MS``),
    says of the host but its state and since when (``unknown`` alone before any reading)."""
    if host is not None:
        return host.to_dict()
    if reading is None:
        return {"state": UNKNOWN, "pid": None, "since": None, "kind": None}
    return {**reading.to_dict(), "state": UNKNOWN, "since": None}


class RemoteSessionWatch(SessionWatch):
    """A session on another machine: its log followed over SFTP (``core.remote.tail``), its host's state read from
    the files beside it, and ``unreachable`` raised while the machine cannot be reached."""

    def __init__(self, ref: SessionRef, config: PolicyConfig, link: SshLink, target: RemoteTarget,
                 pace: Callable[[], None] | None = None) -> None:  # fmt: skip
        self.link = link
        self.target = target
        super().__init__(ref, config, pace)
        self.tailer: RemoteTailer
        self._asked = float("-inf")  # when the log was last polled (monotonic)
        # read with many others by ``Fleet.poll``, and whether a ``tapedeck/host`` event had been read then
        self.prefetched_host: tuple[HostState, bool] | None = None

    checkpoints = False  # a remote log is never read whole in one go: nothing to keep

    def _reader(self) -> tuple[RemoteTailer, None]:
        """A tailer over SFTP; no line table (its lines are read back from a local file): the engine keeps the
        events its rebuild reads."""
        return RemoteTailer(self.link, self.target), None

    def poll(self, now: int, final: bool = False) -> list[Alert]:
        """Read the new bytes and tick, then say whether the machine answered."""
        self._asked = time.monotonic()
        try:
            out = super().poll(now, final)
        except (HostKeyRefused, LogFormatError):
            raise
        except TapedeckError as exc:  # the server refused this log's file (its stat, a read), not the link: the
            raise LogFormatError(str(exc)) from None  # session cannot be read through, as a local one that fails
        lost = self.lost()
        return out + self.engine.reachable(lost is None, now, lost or "")

    def lost(self) -> str | None:
        """Why the machine did not answer the last poll (None: it did)."""
        return str(self.tailer.unreachable) if self.tailer.unreachable is not None else None

    def tick(self, now: int, final: bool = False) -> list[Alert]:
        """As ``SessionWatch.tick``, but not while the machine cannot be reached: its writes and its host are not
        known then (``stalled`` would say nothing was written), so the clock rules wait for its answer."""
        return [] if self.tailer.unreachable is not None else super().tick(now, final)

    def changed(self) -> bool:
        """Whether it is time to poll again (polling a remote log is its stat): every ``REMOTE_POLL_SECONDS``."""
        return time.monotonic() - self._asked >= REMOTE_POLL_SECONDS

    def last_write(self) -> int | None:
        """The remote file's mtime at the last poll."""
        return self.tailer.last_write

    def log_size(self) -> int | None:
        """The remote file's size at the last poll."""
        return self.tailer.size_seen

    grown_reads_host = False  # over SSH the host's files are read on the clock only

    def fresh_host(self) -> HostState | None:
        """The host's state from the remote files (None while they cannot be read: the last one known stands, and
        before any is known the row's host is ``unknown``)."""
        prefetched, self.prefetched_host = self.prefetched_host, None
        if prefetched is not None and prefetched[1] == self.engine.signals.hosted:
            return prefetched[0]  # (a log read since that names a tapedeck host changes what no state file means)
        try:
            return remote_host_state(self.link, self.target, self.engine.signals.hosted)
        except TapedeckError:
            return None

    def send_action(self, alert: Alert) -> None:
        """Append the alert's action to the remote inbox when the host's state at the last tick is live and does
        not act on the rule itself."""
        send_remote_action(self, alert, self.link, self.target)

    def row(self, now: int) -> FleetRow:
        """The row, placed on its machine."""
        row = super().row(now)
        row.where = self.target.where
        return row


def send_remote_action(watch: AlertWatch, alert: Alert, link: SshLink, log: RemoteTarget) -> None:
    """Append ``alert``'s action to the inbox beside the remote ``log`` when the host's state at ``watch``'s last
    tick is live and does not act on the rule itself."""
    found = action_request(alert, watch.config.alerts)
    if found is None or alert.cause in watch.engine.host_guards or watch.host is None or not watch.host.live:
        return
    op, args = found
    append_remote_request(link, log, op, args, live=True, kind=watch.host.kind, origin=origin_of(alert.cause))


class Fleet:
    """Every session under ``targets``: ``poll`` reads each log's new bytes, ``rows`` lists them in order."""

    def __init__(self, targets: Sequence[str | os.PathLike[str]], config: PolicyConfig, *,
                 pace: Callable[[], None] | None = None, **ssh_options: Any) -> None:  # fmt: skip
        """Follow ``targets``: local paths, and ``[user@]host:PATH`` on other machines (``ssh_options`` go to
        ``core.remote.link.SshLink``; ``pace`` as for ``core.alerts.follow.AlertWatch``)."""
        self.targets: list[Path | RemoteTarget] = [parse_remote(str(t)) or Path(t).expanduser() for t in targets]
        self.config = config
        self.pace = pace
        self.ssh_options = ssh_options
        self.watches: dict[str, SessionWatch] = {}
        self._rows: dict[str, FleetRow] = {}  # each watch's row as of its last poll
        self._dirty: set[str] = set()  # watches polled since their row was made
        self.remade: set[str] = set()  # the keys whose rows the last ``rows`` call made again
        self._order: list[str] = []  # the keys in the fleet's order, as the last ``rows`` call found it
        self.skipped: list[SkipNote] = []
        self.unreached: list[SkipNote] = []  # the notes of ``skipped`` that are machines which could not be listed
        # the errors of the sessions the last poll, a one-off read, could not read through (their rows left out)
        self.unread: list[str] = []
        self.alongside = False  # other logs are read with these (``core.fleet.alerts.AlertSources``' local ones)
        self._scanned = float("-inf")
        self._pending: set[Path | RemoteTarget] = set()  # logs found whose header could not be read yet
        self._answered: set[str] = set()  # the targets listed at least once
        self._born: set[str] = set()  # logs found under a target listed before: watched from their birth
        self._regroup = False  # a session went: the order is made again at the next ``rows``
        self.retitled = Retitled()  # the watches whose session's title a poll changed
        # a log reached by several names is watched under one (a remote one's real path is the far side's,
        # ``host:PATH``)
        self.names = FileNames()
        # each remote target's names reached through a link at its last listing
        self._through: dict[str, set[str]] = {}

    def rescan(self) -> None:
        """Start watching the logs that appeared under the targets (only a new log's header is read), stop watching
        those that went. A target that cannot be read (a remote machine that cannot be reached, a path that is not
        there) is noted in ``skipped`` and ``unreached``; a machine whose host key is refused raises
        ``HostKeyRefused``."""
        self._scanned = now_ms() / 1000
        skipped: list[SkipNote] = []
        silent: set[str] = set()  # the machines a target of which did not answer
        listings: list[tuple[Path | RemoteTarget, list[Path | RemoteTarget]]] = []
        for target in self.targets:
            try:
                if isinstance(target, RemoteTarget):
                    link = self.link(target)
                    links: set[str] = set()  # the logs it holds that are reached through a link
                    there = remote_logs(link, target, skipped, links=links)
                    # the far side's real paths, one round trip: of the new names, and of those reached through a
                    # link, now or at the last listing (made to name another file since, maybe)
                    through = {str(log) for log in there if log.path in links}
                    again = through | self._through.get(str(target), set())
                    self.names.look_up(there, partial(remote_real_paths, link), again)
                    self._through[str(target)] = through
                    listings.append((target, list(there)))
                else:
                    root = is_sessions_root(target)
                    logs = session_logs(target, skipped) if root else [resolve_log_path(target)]
                    self.names.look_up(logs)  # a name whose file is another by its stat: again
                    listings.append((target, list(logs)))
            except (Unreachable, LogNotFoundError) as exc:  # no answer for that root: the others go on
                skipped.append(skip_note(UNREACHED, target, str(exc)))
                if isinstance(exc, Unreachable) and isinstance(target, RemoteTarget):  # (a missing root's answered)
                    silent.add(target.where)
        seen: set[str] = set()  # the real paths of the logs listed (a remote one's as ``host:PATH``)
        # one name of each file: the one it is watched under, else the first listed (``FileNames``)
        every = [log for _, logs in listings for log in logs]
        kept = set(map(str, self.names.first(every, seen, watched=self.watches)))
        listed: set[str] = set()  # every log kept under the targets that answered
        for target, logs in listings:
            found = [log for log in logs if str(log) in kept]
            listed.update(map(str, found))
            new = [log for log in found if str(log) not in self.watches]
            self._pending.update(new)
            if str(target) in self._answered:  # not there at the target's last listing: it began while watched
                self._born.update(str(log) for log in new)
            self._answered.add(str(target))
        self.skipped = skipped
        self.unreached = [note for note in skipped if note.kind == UNREACHED]
        self._forget(listed, silent, seen)
        self._adopt()

    def _forget(self, listed: set[str], silent: set[str], seen: set[str]) -> None:
        """Stop watching the logs that are gone: a local one no longer there or listed under another name (its real
        path in ``seen``), a remote one its machine no longer lists (a machine that did not answer keeps its rows,
        ``unreachable``)."""
        gone = [key for key, watch in self.watches.items() if key not in listed and (
            watch.target.where not in silent if isinstance(watch, RemoteSessionWatch)
            else not os.path.lexists(key) or self.names.real(key) in seen)]  # fmt: skip
        for key in gone:
            self._drop(key)

    def _drop(self, key: str) -> None:
        """Stop watching the log at ``key`` (a later listing that finds it watches it afresh)."""
        del self.watches[key]
        self._rows.pop(key, None)
        self._dirty.discard(key)
        self._regroup = True

    def link(self, target: RemoteTarget) -> SshLink:
        """The SSH link to ``target``'s machine (one per machine, shared by its sessions)."""
        return link_for(target, **self.ssh_options)

    def _adopt(self) -> None:
        """Watch the new logs whose header can be read now (one still being written is tried at every poll)."""
        by_link: dict[int, list[RemoteTarget]] = {}
        for log in self._pending:
            if isinstance(log, RemoteTarget):
                by_link.setdefault(id(self.link(log)), []).append(log)
        for logs in by_link.values():  # one machine's new logs: their headers read in two round trips
            link = self.link(logs[0])
            try:
                refs = remote_refs(link, logs, self.skipped)  # a log it cannot read is noted there, and tried again
            except HostKeyRefused:
                raise
            except Unreachable:
                continue
            except TapedeckError:  # a file the server fails otherwise than by a refusal: each log alone, that one noted
                refs = [self._ref_alone(link, log) for log in logs]
            for log, ref in zip(logs, refs, strict=True):
                if ref is not None:
                    self._watch(log, RemoteSessionWatch(ref, self.config, link, log, self.pace))
        for log in list(self._pending):
            if isinstance(log, RemoteTarget):
                continue
            if (ref := session_ref(log, self.skipped)) is not None:  # one it cannot read is noted there
                self._watch(log, SessionWatch(ref, self.config, self.pace))
            elif not log.exists():
                self._pending.discard(log)
                self._born.discard(str(log))

    def _ref_alone(self, link: SshLink, log: RemoteTarget) -> SessionRef | None:
        """``remote_refs`` of one log (None when the server fails its file, noted in ``skipped``)."""
        try:
            return remote_refs(link, [log], self.skipped)[0]
        except HostKeyRefused:
            raise
        except Unreachable:
            return None  # tried again at the next poll
        except TapedeckError as exc:
            if (note := skip_note(UNREADABLE, log, str(exc))) not in self.skipped:
                self.skipped.append(note)
            return None

    def _watch(self, log: Path | RemoteTarget, watch: SessionWatch) -> None:
        """Follow ``log`` with ``watch`` (from the log's birth when it appeared while its target was watched)."""
        key = str(log)
        if key in self._born:
            self._born.discard(key)
            watch.born_watched()
        self.watches[key] = watch
        self._pending.discard(log)
        # a note that it could not be read goes now, not at the next listing
        self.skipped = [note for note in self.skipped if not (note.kind == UNREADABLE and note.subject == key)]

    def poll(self, now: int | None = None, final: bool = False, clock: bool | Collection[str] = True,
             raised: list[Alert] | None = None, sweep: bool = True) -> int:  # fmt: skip
        """Read the logs' new bytes and tick their engines; returns how many sessions were polled. With ``clock``
        every session is (the time-dependent rules and the ages move on); with a collection of keys those
        sessions are, and with False none; besides, every log that changed since is (with ``sweep``, a stat each
        locally; a remote log when its poll is due), and every session ``rows`` has not listed yet. The alerts the
        polls raised are added to ``raised``."""
        if now_ms() / 1000 - self._scanned >= RESCAN_SECONDS:
            self.rescan()
        elif self._pending:
            self._adopt()
        now = now_ms() if now is None else now
        every = clock is True or final
        polled = [key for key, watch in list(self.watches.items())
                  if every or key not in self._rows or (not isinstance(clock, bool) and key in clock)
                  or ((sweep or isinstance(watch, RemoteSessionWatch)) and watch.changed())]  # fmt: skip
        remote = [watch for key in polled if isinstance(watch := self.watches[key], RemoteSessionWatch)]
        self._prefetch(remote, now)
        self.unread, several = [], len(self.watches) > 1 or self.alongside
        try:
            for key in polled:
                alerts = poll_one(self.watches[key], now, final, several, self.unread)
                if alerts is None:  # its row would tell a read of bytes the log no longer holds
                    self._drop(key)
                    continue
                self._dirty.add(key)
                self.retitled.note(self.watches[key])
                if raised is not None:
                    raised.extend(alerts)
        finally:
            for watch in remote:
                watch.tailer.clear_prefetch()
                watch.prefetched_host = None
        return len(polled)

    def act(self, alerts: Iterable[Alert], warn: Callable[[str], None]) -> None:
        """Send the actions of ``alerts`` (raised by this fleet's polls) to their sessions' live hosts, here or on
        the remote machine (``core.alerts.follow.act``)."""
        for alert in alerts:
            watch = self.watch_for(alert)
            if watch is not None:
                act(watch, alert, warn)

    def watch_for(self, alert: Alert) -> SessionWatch | None:
        """The watch of the session that raised ``alert`` (None: no longer followed)."""
        return self.watches.get(alert.path)

    @property
    def stale(self) -> bool:
        """Whether a row changed (a log was polled, or a session appeared or went) since ``rows`` was last called."""
        return bool(self._dirty) or self._regroup or len(self._rows) != len(self.watches)

    @staticmethod
    def _prefetch(watches: list[RemoteSessionWatch], now: int) -> None:
        """Stat every remote log, and read the host states that are due, in a few round trips per machine (one
        call each would wait one round trip per session, in turn)."""
        by_link: dict[int, list[RemoteSessionWatch]] = {}
        for watch in watches:
            by_link.setdefault(id(watch.link), []).append(watch)
        for group in by_link.values():
            link = group[0].link
            due = [watch for watch in group if watch.host_due(now / 1000)]
            refused: dict[str, str] = {}
            try:
                stats = link.stat_many([watch.target.path for watch in group], refused=refused, own=True)
                hosts = remote_host_states(link, [(watch.target, watch.engine.signals.hosted) for watch in due])
            except HostKeyRefused:
                raise
            except TapedeckError:  # the link lost (it waits out its backoff): each watch finds out itself, at once
                continue
            for watch, st in zip(group, stats, strict=True):
                if watch.target.path not in refused:  # a log the server refuses is stat'ed alone: told why, as its own
                    watch.tailer.prefetch(st)
            for watch, host in zip(due, hosts, strict=True):
                watch.prefetched_host = (host, watch.engine.signals.hosted)

    def rows(self, now: int | None = None) -> list[FleetRow]:
        """Every session's row, in the fleet's order (``core.fleet.row.fleet_order``); only the rows of the logs
        polled since the last call are made again."""
        now = now_ms() if now is None else now
        self.remade = {key for key in self.watches if key in self._dirty or key not in self._rows}
        regroup = self._regroup or len(self._order) != len(self.watches)  # a session appeared or went
        self._regroup = False
        for key in self.remade:
            old, new = self._rows.get(key), self.watches[key].row(now)
            if old is None or bool(old.attention) != bool(new.attention):
                regroup = True  # the order moves only with the rows or with a row's need of attention
            else:
                new.nesting, new.children = old.nesting, old.children
            self._rows[key] = new
        self._dirty.clear()
        if regroup:
            self._order = [row.key for row in fleet_order([self._rows[key] for key in self.watches])]
        return [self._rows[key] for key in self._order]

    @property
    def bytes_read(self) -> int:
        """Bytes of the logs consumed so far, over every watch."""
        return sum(watch.consumed for watch in self.watches.values())
