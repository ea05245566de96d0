"""One live session log for the TUI: loading, projecting and following it off the UI thread.

``LiveSession.run`` is the body of a thread worker. It paints a preview from the tail of big logs, projects the
whole file into a ``core.read.session.Session`` in one pass and then follows appends, posting ``SessionUpdated``
(and ``LoadProgress`` while loading) through the ``post`` callback it was given. Small logs keep their events
in memory; for big ones the same pass notes where each line is (``core.log.linestore``), and events are read
back from the file on demand.
"""

from __future__ import annotations

import bisect
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from textual.message import Message

from core.alerts.follow import FedWatch
from core.bridge.files import OutcomeReader
from core.control.host_state import (
    KIND_DSH,
    KIND_TAPEDECK,
    LIVE_STATES,
    STATE_EVENT,
    HostRecord,
    HostState,
    exited_at,
    host_record,
    how_it_ended,
    read_host_state,
)
from core.control.inbox import FINAL, append_request, final_outcome_in, inbox_path, withdraw_request
from core.control.outcome import interrupted
from core.log.bulk import gc_paused
from core.log.decoder import Consumer
from core.log.layout import is_compressed, resolve_log_path
from core.log.linestore import LineStore
from core.log.pace import Pacer, no_pacing
from core.log.reader import read_log_header
from core.log.records import PackedRow
from core.log.sessions import told
from core.log.store import EventStore
from core.log.tail import FOLLOW_INTERVAL, READ_CHUNK, Tailer, TailUpdate, events_at_end, wakeups
from core.read import index
from core.read.facts import FACT_TYPES, SessionFacts
from core.read.session import Session
from core.read.session_state import run_columns
from core.remote.link import Unreachable
from core.remote.live import REMOTE_INTERVAL, RemoteLog
from core.shared.diagnostics import Diagnostic
from core.shared.errors import LogFormatError, LogIncompleteError, LogNotFoundError, TapedeckError
from core.shared.regular import open_regular
from core.shared.text import quoted_path
from tui.alerts import log_key
from tui.heap import trim_heap

# Logs above this size open with a preview of their tail; logs above RETAIN_BYTES are read back from the file.
PREVIEW_BYTES = 2 << 20
RETAIN_BYTES = 48 << 20
RETAIN_BYTES_ZSTD = 8 << 20
PREVIEW_EVENTS = 80
PROBE_BYTES = 16 << 20
PROBE_LINES = 40
LOAD_SLICE = 1 << 20  # bytes decoded and projected per step while loading (the loader paces between steps)
LATE_BACK = 1 << 20  # how far before the view's read point a host's last outcome line may start (a torn read)
INTERNAL_ERROR = "reading stopped on an internal error:"  # how the error screen names a reader bug
READ_ONLY_DSH = (
    "This session is run by DeepSeek Harness without the tapedeck bridge, so it opens read-only: nobody reads "
    "control requests for it. `tapedeck bridge install DSH_HOME` adds the bridge to DSH."
)


class SessionUpdated(Message, bubble=False):
    """The projection changed: ``reset`` means it was rebuilt from scratch, else events were appended."""

    def __init__(self, generation: int, reset: bool, start: int = 0, end: int = 0, epoch: int = 0) -> None:
        super().__init__()
        self.generation = generation
        self.reset = reset
        self.epoch = (
            epoch  # bumps when the file was truncated or replaced: the same seq now means another event
        )
        self.start = start  # first new seq (appends) …
        self.end = end  # … and one past the last


class LoadProgress(Message, bubble=False):
    """Loading moved on: ``phase`` is ``preview``, ``projecting``, ``ready`` or ``error``; ``loaded``: a (re)load
    has just ended (not a phase posted again, as when a remote log's reachability changes)."""

    def __init__(self, phase: str, fraction: float, loaded: bool = False) -> None:
        super().__init__()
        self.phase = phase
        self.fraction = fraction
        self.loaded = loaded


def _dense_tail(path: Path, size: int, pace: Callable[[], None] = no_pacing) -> tuple[int, bytes] | None:
    """The end of a raw log read by the probe, ``(offset, bytes from it to the end)``, when its last PROBE_BYTES
    hold enough lines for a cheap tail preview (which decodes them), else None.

    A tail of a few multi-MB lines would have to be parsed in full just to fill one screen, holding the GIL
    for long stretches; such logs are listed from their head as the projection reaches it instead. Read
    backwards in READ_CHUNK slices, stopping as soon as the answer is known.
    """
    lines = 0
    end = size
    read: list[bytes] = []
    with open_regular(path) as f:  # a FIFO swapped in since the log's stat is not waited on
        while end > max(0, size - PROBE_BYTES) and lines < PROBE_LINES:
            start = max(0, size - PROBE_BYTES, end - READ_CHUNK)
            f.seek(start)
            read.append(f.read(end - start))
            lines += read[-1].count(b"\n")
            end = start
            pace()
    return (end, b"".join(reversed(read))) if lines >= PROBE_LINES else None


def neighbour(seqs: list[int], seq: int, forward: bool) -> int | None:
    """The first entry of the sorted ``seqs`` after (or before) ``seq``."""
    if forward:
        i = bisect.bisect_right(seqs, seq)
        return seqs[i] if i < len(seqs) else None
    i = bisect.bisect_left(seqs, seq)
    return seqs[i - 1] if i > 0 else None


class _Loading(Consumer):
    """Where the loader's tailer sends decoded items: while the log loads (``start``), each goes straight into the
    session being loaded (not published yet, so no lock), an event with its facts gathered as ``_apply`` does for
    a whole update, so no batch of decoded events waits in memory to be projected; rows and well-formed chunk
    events are never a fact (a failed stream's finish chunk, which is one, takes the event path). Once it is loaded
    (``done``), appends come in the tailer's updates, rows as their member events, for the observers."""

    def start(self, session: Session, facts: SessionFacts, kept: list[Any] | None = None) -> None:
        """Project every item into ``session`` from the next read on; with ``kept``, also add each item to it (for
        the alert engine, which takes them a slice at a time)."""
        apply, observe, facts_types = session.apply, facts.observe, FACT_TYPES

        def take(event: dict[str, Any]) -> None:
            apply(event)
            if event["type"] in facts_types:
                observe(event)

        self.event, self.row, self.chunk = take, session.apply_row, session.apply_chunk
        if kept is None:
            return
        keep, apply_row, apply_chunk = kept.append, session.apply_row, session.apply_chunk

        def take_kept(event: dict[str, Any]) -> None:
            take(event)
            keep(event)

        def row_kept(row: PackedRow) -> None:
            apply_row(row)
            keep(row)

        def chunk_kept(event: dict[str, Any], turn: int, step: int, chunk: dict[str, Any]) -> None:
            apply_chunk(event, turn, step, chunk)
            keep(event)

        self.event, self.row, self.chunk = take_kept, row_kept, chunk_kept

    def done(self) -> None:
        """Leave appends to the tailer's updates."""
        self.event = self.row = self.chunk = None


class LiveSession:
    """Owns tailing + projection for one log, off the UI thread; posts SessionUpdated to the app."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        post: Callable[[Message], Any] | None = None,
        *,
        follow: bool = True,
        interval: float = FOLLOW_INTERVAL,
        use_watchfiles: bool = False,
        retain_bytes: int | None = None,
        alerts: FedWatch | None = None,
        remote: RemoteLog | None = None,
    ) -> None:
        """Prepare to watch ``path`` (a log file or session directory); nothing is read until ``run``. ``alerts``
        is handed every item the load and the follower decode (the alert engine of this log, read only here);
        ``remote`` is the remote log ``path`` names when the caller made it (the one its alert engine ticks from)."""
        self.path = Path(path).expanduser()
        self._post = post or (lambda message: None)
        self.follow = follow
        self.interval = interval
        self.use_watchfiles = use_watchfiles
        self._retain_bytes = retain_bytes
        self.alerts = alerts
        self.session = Session({"type": "session", "id": ""}, path=self.path)
        self.facts = SessionFacts.empty()
        self.lines: LineStore | None = None  # where each line is, for big logs: events are read back from there
        self._decoder_diagnostics = 0  # how many of the session's diagnostics (the first ones) are the decoder's
        self.preview: list[dict[str, Any]] = []
        self.generation = 0
        self.announced = 0  # the generation the last ``SessionUpdated`` posted carried
        self.epoch = 0
        self._new_file = False  # a reset was seen; the next published state starts a new epoch
        self.phase = "opening"
        self.fraction = 0.0
        self.error: str | None = None
        self.notices: list[Diagnostic] = []
        self.read_to = 0  # the bytes of the log the projection has read (local logs)
        self.host_record: HostRecord | None = None  # host.json's, by ``check_host``
        self.key: str | None = None  # ``log_key`` of the path, then of the log found (its alert marks): the worker's
        self.lock = threading.RLock()
        self.stop_event = threading.Event()
        self.host = HostState("none")  # refreshed by ``check_host`` (the app polls it)
        # the state the newest ``tapedeck/state`` event the follower read names (None: none read since the load, or
        # since the host was last seen not live): the log has it before host.json, and before any outcome after it
        self.logged_state: str | None = None
        # ``[user@]host:PATH``: the log is read over SSH. Unless given, ``_locate`` tells, in a worker: telling a
        # remote path from a local one looks at the disk, and the fleet view makes a LiveSession on the UI thread
        self.remote = remote
        self._located = remote is not None
        self.unreachable: str | None = None  # why the remote machine cannot be reached now (None: it can)
        # the DSH bridge's outcomes in the session directory, read by ``check_host``: a local log's reader is made
        # there, in a worker, as telling a session directory from a log looks at the disk
        self.bridge_outcomes: OutcomeReader | None = remote.outcomes() if remote is not None else None
        self.outcomes_problem: str | None = None  # why the bridge's outcome file could not be read at the last check
        self._exit_seen: tuple[int, int] | None = None  # (generation, epoch) when ``poll_host`` found the host exited
        self.pace = Pacer()  # the loader naps between slices of work so the UI thread gets the GIL
        # Called in the follower thread with each applied batch of appended events, before SessionUpdated.
        self.append_observers: list[Callable[[list[dict[str, Any]]], None]] = []

    # the public contract --------------------------------------------------------------------------------
    @property
    def read_only_reason(self) -> str | None:
        """None when a tapedeck host or the DSH bridge runs the log (control actions allowed), else why it is
        read-only."""
        if self.phase in ("opening", "preview", "projecting"):
            return "The log is still loading; control actions wait until it is read completely."
        if self.error is not None:
            return f"The log cannot be read: {self.error}"
        if self.facts.host is not None or self.host.state != "none":
            return None
        problem = (self.host.bridge or {}).get("problem")
        return f"{READ_ONLY_DSH} ({problem})" if problem else READ_ONLY_DSH

    @property
    def inbox_path(self) -> Path:
        """``control.jsonl`` beside the log."""
        return inbox_path(self.path)

    @property
    def ready(self) -> bool:
        """True once the whole log is projected."""
        return self.phase in ("ready", "following")

    @property
    def shown_host(self) -> HostState:
        """The host state as the operator has been told it: ``host``, but while a tapedeck host is live, the state its
        newest ``tapedeck/state`` event the follower read names (the event list's row, and the state before every
        outcome the toasts announce after it; host.json, polled, can be half a second behind)."""
        host, logged = self.host, self.logged_state
        if logged is None or logged == host.state or host.kind != KIND_TAPEDECK or not host.live:
            return host
        return HostState(logged, host.pid, host.since, host.kind, host.bridge)

    def _locate(self) -> None:
        """Find out, once, whether the path names a log on another machine (a worker's job: it looks at the disk)."""
        if self._located:
            return
        with self.lock:
            if not self._located:
                self.remote = RemoteLog.of(self.path)
                if self.remote is not None:
                    self.bridge_outcomes = self.remote.outcomes()
                self._located = True

    def check_host(self) -> HostState:
        """Read the host state again, and a DSH bridge's new outcomes (a lock probe and small files: call it
        from a worker). A bridge writes its state before the outcome of a request it applied: its outcomes are
        read first, so none is taken in ahead of the state it brought (a toast never runs ahead of the header)."""
        self._locate()
        bridged = self.host.kind == KIND_DSH and self.host.state != "none"
        if bridged:
            self._read_outcomes()
        if self.remote is not None:
            self.host = self.remote.host_state(self.facts.host is not None, self.host)
        else:
            # a loaded log's facts say whether a tapedeck host ever ran it: its head is not read at every check
            hosted = (self.facts.host is not None) if self.ready else None
            if self.path.is_file():
                record = host_record(self.path)  # read once: the state, and how a host that runs no more ended
                state = read_host_state(self.path, hosted, record)
            else:
                record, state = (None, None), HostState("none")
            self.host_record = record  # before the state: ``how_host_ended`` (the UI thread asks it) reads nothing
            self.host = state
        if not self.host.live:  # a host resumed later logs its own states
            self.logged_state = None
        if not bridged and self.host.kind == KIND_DSH and self.host.state != "none":  # a bridge found just now
            self._read_outcomes()
        return self.host

    def _read_outcomes(self) -> None:
        """Take in the DSH bridge's new outcome lines; a file that cannot be read is noted in ``outcomes_problem``
        (the log is read on: the host watch tells it)."""
        if self.bridge_outcomes is None:
            self.bridge_outcomes = OutcomeReader(self.path if self.path.is_dir() else self.path.parent)
        try:
            self.bridge_outcomes.read()
        except Unreachable:  # a remote machine gone: read at the next check
            return
        except OSError as exc:
            self.outcomes_problem = f"{quoted_path(self.bridge_outcomes.path)}: cannot read ({exc.strerror or exc})"
            return
        except TapedeckError as exc:  # the far side's refusal, naming the file
            self.outcomes_problem = str(exc)
            return
        self.outcomes_problem = None

    def poll_host(self) -> HostState:
        """``check_host`` for the app's poll, but a tapedeck host found exited is not read again while the followed
        log stands still: a host resumed on the log writes to it (a log not followed is read at every poll)."""
        moved = (self.generation, self.epoch)
        if self._exit_seen == moved and self.follow and self.host.kind != KIND_DSH:
            return self.host
        self.check_host()
        self._exit_seen = moved if self.host.state == "exited" else None
        return self.host

    @property
    def log_deleted(self) -> bool:
        """The followed log was deleted and no log stands at its path yet."""
        return self.phase == "waiting" and bool(self.notices) and self.notices[-1].code == "file-removed"

    @property
    def how_changed(self) -> str:
        """What became of the log when its epoch last moved, in words: deleted, or truncated or replaced."""
        return "deleted" if self.log_deleted else "truncated or replaced"

    def host_gone(self, state: HostState | None = None) -> str | None:
        """Why no live host will answer requests (its exit), or None while one runs; ``state``: the host's state as
        last read (``host``), else it is read now."""
        state = self.check_host() if state is None else state
        if state.live or (self.facts.host is None and state.state == "none"):
            return None
        if state.kind == KIND_DSH:
            return f"the DSH bridge exited {exited_at(state.since)}"
        return f"no live host ({self.how_host_ended(state)})"

    def how_host_ended(self, state: HostState) -> str:
        """How the tapedeck host of the log ended (``state``: it runs no more), in control's words (a remote log's
        host.json is not read here: its exit time); a local one's ``host.json`` as ``check_host`` read it."""
        if self.remote is not None:
            return f"it exited {exited_at(state.since)}"
        return how_it_ended(self.path, state, self.host_record or (None, None))  # never read here: the UI asks

    def send(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        """Append a control request to the inbox (call it from a worker); returns the request as written."""
        reason = self.read_only_reason or self.host_gone()
        if reason is not None:
            raise TapedeckError(f"not sent: {reason}")
        if self.remote is not None:
            return self.remote.send(op, args, self.host.kind)
        return append_request(self.inbox_path, op, args, kind=self.host.kind, check=self._still_live)

    def _still_live(self) -> None:
        """Refuse the write when the host exited since ``send`` looked (asked under the inbox's lock)."""
        if (reason := self.host_gone()) is not None:
            raise TapedeckError(f"not sent: {reason}")

    def withdraw(self, request_id: str) -> None:
        """Withdraw a request whose host is gone, so no later host applies it (call it from a worker)."""
        if self.remote is not None:
            self.remote.withdraw(request_id)
        else:
            withdraw_request(self.inbox_path, request_id)

    def outcome_for(self, request_id: str) -> dict[str, Any] | None:
        """The outcome data for that request, if it arrived: a ``tapedeck/control`` event's, or for a DSH
        session a line of the bridge's ``control.outcomes.jsonl``. Once the host is known to have exited, the
        log past what the view has read is looked at too: a host may answer and exit before the view reads it; a DSH
        bridge that died while it ran the request leaves it ``unknown`` (``interrupted``)."""
        bridged = self.bridge_outcomes.outcomes if self.bridge_outcomes is not None else {}
        found = self.facts.outcomes.get(request_id) or bridged.get(request_id)
        if found is None and not self.host.live and self.facts.host is not None:
            found = self._late_outcome(request_id)
        if found is None or found.get("outcome") not in FINAL:  # one acknowledged pending may be running too
            found = interrupted(self.host, request_id, None) or found
        return found

    def _late_outcome(self, request_id: str) -> dict[str, Any] | None:
        """A final outcome of ``request_id`` in the local raw log from where the view stopped reading (None for a
        remote or zstd log, or an unreadable one)."""
        if self.remote is not None or is_compressed(self.path):
            return None
        try:
            with open_regular(self.path) as f:  # a FIFO renamed over the log is not waited on
                f.seek(max(0, self.read_to - LATE_BACK))
                carry = b""
                while chunk := f.read(READ_CHUNK):
                    lines = carry + chunk
                    cut = lines.rfind(b"\n") + 1
                    found = final_outcome_in(lines[:cut], request_id)
                    if found is not None:
                        return found
                    carry = lines[cut:]
        except OSError:
            return None
        return final_outcome_in(carry, request_id)

    def stop(self) -> None:
        """Ask ``run`` to return at its next wake-up."""
        self.stop_event.set()

    # reading events (workers only: these may read and decode the file) ------------------------------------
    @property
    def count(self) -> int:
        """Events known: the projection's, the lines its pass reached while loading, or the preview's end."""
        n = self.session.next_seq
        if self.lines is not None:
            n = max(n, len(self.lines))
        if self.preview:
            n = max(n, int(self.preview[-1]["seq"]) + 1)
        return n

    def event(self, seq: int) -> dict[str, Any] | None:
        """Event ``seq`` as logged (a flagged one too: this is what the screen shows), from the projection, the
        lines read so far or the preview (whichever has it); None when unknown."""
        session = self.session
        if 0 <= seq < session.next_seq:
            return session.events.raw(seq)  # type: ignore[attr-defined]
        lines = self.lines
        if lines is not None and 0 <= seq < len(lines):
            return lines.raw(seq)
        if self.preview:
            k = seq - int(self.preview[0]["seq"])
            if 0 <= k < len(self.preview):
                return self.preview[k]
        return None

    def iter_events(self, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]:
        """Events ``start``..``stop-1`` of the projection in seq order, as logged (for what the screen shows and
        matches); a long range of a read-back session is read in order from the line that holds ``start``."""
        events = self.session.events
        end = self.session.next_seq if stop is None else min(stop, self.session.next_seq)
        if end - start < 256 or not isinstance(events, LineStore):
            for seq in range(start, end):
                yield events.raw(seq)  # type: ignore[attr-defined]
            return
        pace = Pacer()  # one per caller: scans run in their own workers
        for k, event in enumerate(events.iter_raw(start, end)):
            if not k & 255:
                pace()
            yield event

    # the worker -------------------------------------------------------------------------------------------
    def run(self) -> None:
        """Load, then follow until ``stop``; every failure ends up in ``error`` and a message, never a raise."""
        try:
            self._locate()
            self.key = log_key(self.path)  # before the log is waited for: the marks it has are shown meanwhile
            self.check_host()  # known before the first paint: the header never guesses the host's state
            tailer = self._load()
            while tailer is not None and self.follow and not self.stop_event.is_set():
                tailer = self._follow(tailer)
        except LogFormatError as exc:  # a directory with no log: what it holds instead is said (``told``)
            self._fail(told(exc))
        except OSError as exc:
            self._fail(f"{quoted_path(self.path)}: {exc.strerror or exc}")
        except TapedeckError as exc:  # a remote log: its host key refused, or not one session
            self._fail(str(exc))
        except Exception as exc:  # noqa: BLE001 - a reader bug must end on the error screen, not in a frozen one
            self._fail(f"{quoted_path(self.path)}: {INTERNAL_ERROR} {type(exc).__name__}: {exc}")

    def _fail(self, message: str) -> None:
        if self.alerts is not None:
            self.alerts.loaded(self, None)  # the clock rules need not wait for a pass that ended here
            if not self.follow:
                self.alerts.done.set()  # nothing more will come
        self.error = message
        self.phase = "error"
        self._post(LoadProgress("error", 1.0))

    def _wait_for_file(self) -> tuple[Path, dict[str, Any]] | None:
        """The log and its header, once there is a log with a complete header (following, a missing log or one
        being born is waited for; anything else is an error)."""
        while not self.stop_event.is_set():
            try:
                if self.remote is not None:
                    return self.remote.open()
                log = resolve_log_path(self.path)
                return log, read_log_header(log)
            except (LogNotFoundError, LogIncompleteError, Unreachable) as exc:
                if not self.follow:
                    raise
                # "incomplete": the log is there but holds no complete first line yet (empty, header half written)
                phase = "incomplete" if isinstance(exc, LogIncompleteError) else "waiting"
                if self.phase != phase:
                    self.phase = phase
                    if self._new_file and self.session.next_seq:  # emptied or removed: its rows go with it
                        self._forget()
                    self._post(LoadProgress(phase, 0.0))
                self.stop_event.wait(self.interval)
        return None

    def _forget(self) -> None:
        """Publish an empty session in place of the one of a log that went away (a new epoch)."""
        with self.lock:
            self.session = Session({"type": "session", "id": ""}, path=self.path)
            self.facts, self.lines, self.preview = SessionFacts.empty(), None, []
            self._decoder_diagnostics = 0
            self._publish()
        self._updated(True, 0, 0)

    def _progress(self, phase: str, fraction: float) -> None:
        """Record progress; post it when the phase changes or per percent (slices are small, messages cost)."""
        posted = self.phase == phase and int(self.fraction * 100) == int(fraction * 100) and fraction < 1.0
        self.phase, self.fraction = phase, fraction
        if not posted:
            self._post(LoadProgress(phase, fraction))

    def _load(self) -> Tailer | None:
        """Preview and project the whole file; publish the projection; return the positioned tailer."""
        fresh = self._new_file  # a reset sent us here (the preview's publish clears the flag)
        found = self._wait_for_file()
        if found is None:
            return None
        log, header = found
        self.path, self.key = log, log_key(log)
        compressed = is_compressed(log)
        size = self.remote.size() if self.remote is not None else os.path.getsize(log)
        # a remote log's events stay in memory: reading them back would cost a round trip each
        retain = self.remote is not None or size <= (
            self._retain_bytes or (RETAIN_BYTES_ZSTD if compressed else RETAIN_BYTES)
        )
        loading = _Loading()
        tailer = (
            Tailer(log, pace=self.pace, consumer=loading)
            if self.remote is None
            else self.remote.tailer(self.pace, loading)
        )
        # a big log read before goes on from its index: only the bytes after it are decoded (the objects it
        # restores are all kept, as a load's are: no collector pass walks them)
        with gc_paused(freeze=True):
            restored = None if retain else index.restore(log, compressed, loading, runs=True)
        if (
            restored is None
            and size > PREVIEW_BYTES
            and self.remote is None  # a remote log is read from its start only, never twice
            and self.session.next_seq == 0
            and (compressed or (probed := _dense_tail(log, size, self.pace)) is not None)
        ):
            self._preview(log, header, None if compressed else probed)
        lines: LineStore | None = None
        facts = SessionFacts.empty()
        self._decoder_diagnostics = 0
        if retain:
            session = Session(header, EventStore(), path=log)  # packed rows stay packed in memory
        elif restored is not None:
            session, lines, facts = restored.session, restored.lines, restored.facts
            self._decoder_diagnostics = restored.decoder_diagnostics
            tailer.resume(restored.decoder, restored.offset)
            with self.lock:
                self.lines = lines
                self._publish()
        else:  # the projection's own pass notes where each line is: events are read back from there
            lines = LineStore(log, tailer)
            session = Session(header, lines, path=log, retain=False)
            run_columns(session)  # millions of events, a few thousand turns: per-event columns as runs
            with self.lock:  # rows the pass reached can be listed while it goes on
                self.lines = lines
                self._publish()
        session.compressed = compressed
        indexed = tailer.offset
        decoded: list[Any] | None = None
        if self.alerts is not None:  # the bytes an index restored are not handed over: the engine reads them
            store = lines if lines is not None else session.events
            self.alerts.begin(self, log, header, store, reset=fresh, unread=indexed)  # type: ignore[arg-type]
            decoded = []
        loading.start(session, facts, decoded)
        self._progress("projecting", 0.0)
        listed = self.count
        with gc_paused(freeze=True):  # the load builds and keeps every object: no collector pass walks it
            while tailer.offset < size:
                before = tailer.offset
                update = tailer.poll(max_bytes=LOAD_SLICE)
                if update.reset:  # the lines noted so far belong to the file that went away
                    with self.lock:
                        self.lines = None
                    self._new_file = True
                    if self.alerts is not None:  # this pass ends here: the clock rules need not wait for the next
                        self.alerts.loaded(self, None)
                    return self._load()
                if update.fatal:
                    raise LogFormatError(update.fatal)
                if tailer.offset == before and not update:
                    break  # nothing more to read (the file shrank or vanished: the follower reports it)
                # A slice inside a line longer than LOAD_SLICE yields no event yet; keep reading: the projection
                # is only complete (and ``loaded`` shown) once the whole file went through it.
                self._apply(session, facts, update)
                if decoded:
                    self.alerts.take(self, decoded, tailer.offset - before, tailer.offset)  # type: ignore[union-attr]
                    decoded.clear()
                self._progress("projecting", tailer.offset / max(size, 1))
                if lines is not None and self.count > listed and int(self.fraction * 100) > int(before / size * 100):
                    self._updated(False, listed, self.count)
                    listed = self.count
                self.pace()
            at = tailer.decoder
            ended = at is not None and at.at_boundary and tailer.offset == at.bytes_fed  # at a line's end, none torn
            decoder = at if lines is not None else None  # logs kept in memory (remote ones too): no index
            whole = decoder is not None and ended
            if not self.follow:
                self._apply(session, facts, tailer.finish())
        loading.done()
        if self.alerts is not None:
            if decoded:  # a torn tail the end of the load settled
                self.alerts.take(self, decoded)
            self.alerts.loaded(self, tailer.offset if ended and self.remote is None else None)
            if not self.follow:
                self.alerts.done.set()
        with self.lock:
            self.session, self.facts, self.lines, self.preview = session, facts, lines, []
            self.read_to = tailer.offset
            self._publish()
        self.phase = "following" if self.follow else "ready"
        self.fraction = 1.0
        self._updated(True, 0, session.next_seq)
        self._post(LoadProgress(self.phase, 1.0, loaded=True))
        if lines is not None and whole and decoder is not None and index.worth_writing(tailer.offset, indexed):
            # the list is usable already; only this thread changes the session, so it is read without the lock.
            # What the load freed goes back first: the write's buffers (tens of MB on a 500 MB log) come on top.
            trim_heap()
            index.write(log, session, lines, decoder, self._decoder_diagnostics, facts)
        return tailer

    def _updated(self, reset: bool, start: int, end: int) -> None:
        """Tell the screens the projection changed (``SessionUpdated``), and note the state that was announced."""
        generation = self.generation
        self._post(SessionUpdated(generation, reset, start, end, self.epoch))
        self.announced = generation

    def _publish(self) -> None:
        """Count a new published state (under ``lock``); the first one after a reset starts a new epoch."""
        self.generation += 1
        if self._new_file:
            self._new_file = False
            self.epoch += 1

    def _preview(self, log: Path, header: dict[str, Any], probed: tuple[int, bytes] | None) -> None:
        """Show the last events of the log (``probed``: its end as the probe read it, decoded, not read again)."""
        events = events_at_end(log, PREVIEW_EVENTS, probed)
        if not events:  # a log whose lines give no seqs is numbered by the projection's pass alone, never twice
            return
        with self.lock:
            self.session = Session(header, path=log)
            self.preview = events
            self._publish()
        self._progress("preview", 0.0)
        first, end = int(events[0]["seq"]), int(events[-1]["seq"]) + 1
        self._updated(True, first, end)

    def _reachable(self, tailer: Tailer) -> None:
        """Note whether the remote machine answered the last poll; tell the screens when that changed."""
        lost = getattr(tailer, "unreachable", None)
        now = str(lost) if lost is not None else None
        if now != self.unreachable:
            self.unreachable = now
            self._post(LoadProgress(self.phase, self.fraction))

    def _apply(self, session: Session, facts: SessionFacts, update: TailUpdate, end: int | None = None) -> None:
        """Project ``update`` and hand its events to the alert engine (``end``: where the reader stands after it)."""
        with self.lock:
            for event in update.events:
                if type(event) is PackedRow:
                    session.apply_row(event)
                else:
                    session.apply(event)
                    facts.observe(event)
            found = [d for d in update.diagnostics if d.code != "log-reset"]
            k = self._decoder_diagnostics  # the decoder's come first, the projection's after, as a full read gives them
            session.diagnostics[k:k] = found
            self._decoder_diagnostics = k + len(found)
        if self.alerts is not None and update.events:
            self.alerts.take(self, update.events, end=end)  # type: ignore[arg-type]
        self.notices.extend(d for d in update.diagnostics if d.code in ("log-reset", "file-removed"))

    def _note_state(self, events: list[Any]) -> None:
        """Keep the state the newest live-state ``tapedeck/state`` event of ``events`` (appended ones) names."""
        for event in reversed(events):
            if type(event) is dict and event.get("type") == STATE_EVENT:
                data = event.get("data")
                state = data.get("state") if type(data) is dict else None
                if state in LIVE_STATES:
                    self.logged_state = state
                return

    def _follow(self, tailer: Tailer) -> Tailer | None:
        """Apply appends until the file is reset (then reload and return the new tailer) or ``stop``."""
        remote = self.remote is not None
        interval = max(self.interval, REMOTE_INTERVAL) if remote else self.interval
        for _ in wakeups(tailer.path, self.stop_event, interval, self.use_watchfiles and not remote):
            update = tailer.poll()
            if remote:
                self._reachable(tailer)
            if update.reset:  # rewritten, replaced or removed: no longer ready by the time its notice is seen
                self.phase = "reset"
                self.notices.extend(update.diagnostics)
                self._new_file = True
                self._post(LoadProgress("reset", 0.0))
                return self._load()
            if not update:
                self.read_to = tailer.offset
                continue
            if update.fatal:
                raise LogFormatError(update.fatal)
            start = self.session.next_seq
            self._apply(self.session, self.facts, update, tailer.offset)
            self._note_state(update.events)
            self.read_to = tailer.offset
            with self.lock:
                self.generation += 1
            for observer in list(self.append_observers):
                observer(update.events)
            self._updated(False, start, self.session.next_seq)
        return None
