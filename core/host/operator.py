"""The operator's side of a running host: the control inbox watched all the time, each request answered once.

A thread reads the inbox every ``POLL_SECONDS`` whatever the host is doing (a model call, a tool, a pause):

Each op's handler is a method ``op_<name>`` (dots as underscores) returning the events to log with its
``applied`` outcome and the outcome's detail: the ops that steer the host are this module's, the policy requests
(``checkpoint``, ``rewind``, ``expand``, ``config.set``) ``core.host.hooks.PolicyHooks``'s, run under the host's
lock and rejected when they raise. ``core.control.inbox.OPS`` says when each applies:

- ``checkpoint``, ``pause``, ``resume``, ``message`` and ``stop`` take effect at once and are answered at once.
  A checkpoint's anchor is the log length at that moment; a steering message is in the log (its outcome holds the
  text) before the host reports it applied, and reaches the model at the next step; a ``stop`` interrupts the
  model stream and any running tool on the spot (``on_stop`` callbacks).
- ``rewind``, ``expand`` and ``config.set`` change what the next model request contains: they are acknowledged
  ``pending`` at once and applied (or rejected) at the next boundary, before the next model call; one that no
  boundary could apply (an ``expand`` of a seq that is not a tool result in the log, a ``config.set`` of a value
  the config refuses) is rejected on arrival.
- ``pause`` holds the host before its next model call or tool call (state ``pausing``, then ``paused``).

Every request gets exactly one final outcome: ``applied``, ``rejected``, ``cancelled`` (withdrawn by its sender, or
sent to a host that is gone) or ``expired``. A restarted host skips what was answered and cancels what was sent to
the host before it unless the sender marked it ``queued`` for the next resume, saying whether that host
acknowledged it, died before reading it, or none ran when it was sent. The lines the host before it read
(``host.json`` records how far) are not reported again, nor, while the inbox lasts, an unreadable line read again
from an inbox replaced or written again in place. A new line that reuses a taken request's id is a retry of that
request: never applied again and given no outcome of its own (its sender reads the first one's), with a warning.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from core.control import inbox as control
from core.control.host_state import (
    STATE_EVENT,
    read_inbox_position,
    remove_stale_temporaries,
    state_path,
    write_state,
)
from core.host.port import HostPort
from core.host.resume import QUEUED, Steer, paused_by_operator, pending_steers
from core.log.messages import user_message
from core.read.session import Session
from core.shared.errors import TapedeckError
from core.shared.text import quoted

POLL_SECONDS = 0.05
# the distinct unreadable inbox lines known again when read again: past it, each is still said, none more is kept
UNREADABLE_REMEMBERED = 4096
NEXT_STEP = "next step"
STALE = (
    "it was sent while no host was running this session (use --queue to leave a request for the next resume)"
)
GONE = "the host exited before applying it"
DIED = "the host it was sent to died before reading it"
UNREAD = "the host it was sent to exited before reading it"
WITHDRAWN = "withdrawn by its sender before the host applied it"
DUPLICATE = "control: an inbox line reuses request id {rid}, taken already: ignored as a retry (its outcome is the first one's)"


Answer = tuple[list[dict[str, Any]], Any]
"""What a handler returns: the events to log with the request's ``applied`` outcome, and the outcome's detail."""


def _rejection(exc: Exception) -> str:
    """The error of a request rejected because applying it raised ``exc``."""
    code = getattr(exc, "code", None)
    error = str(exc) if isinstance(exc, TapedeckError) else repr(exc)
    return f"{code}: {error}" if code else error


def _now_ms() -> int:
    return int(time.time() * 1000)


def _last_state(session: Session) -> tuple[str, int] | None:
    """The last ``tapedeck/state`` of the session as ``(state, time)`` (None when no host recorded one)."""
    for seq in range(session.next_seq - 1, -1, -1):
        event = session.events[seq]
        if event.get("type") == STATE_EVENT:
            return str((event.get("data") or {}).get("state")), int(event.get("time") or 0)
    return None


class Operator:
    """Watches one host's control inbox and answers every request exactly once."""

    def __init__(
        self, host: HostPort, log: Path, inbox: Path, policies: Any, on_stop: Sequence[Callable[[], None]] = ()
    ) -> None:
        """Answer the requests of ``inbox`` for the host that writes ``log``; ``policies`` (the host's
        ``PolicyHooks``) handle the policy requests with their ``op_*`` methods, check them on arrival with their
        ``check_*`` ones and hear from ``forget_ahead`` when a waiting one is taken out; a ``stop`` calls each of
        ``on_stop`` (what interrupts a running tool)."""
        self.host = host
        self.log = log
        self.policies = policies
        self.reader = control.InboxReader(inbox)
        self.taken_before = read_inbox_position(log)  # how far the host before this one read the inbox
        self._marked = self.taken_before  # the inbox position host.json records
        remove_stale_temporaries(log)  # a host killed while it rewrote host.json left its temporary file
        events = host.session.events
        self.answered = control.answered_ids(events)
        self.acknowledged = control.acknowledged_ids(events)
        self.started = _now_ms()
        self._before = _last_state(host.session)  # how the host before this one ended: (state, when), None if none ran
        self.deferred: dict[str, dict[str, Any]] = {}  # the requests waiting for the next boundary, by id, in order
        # the args of each checked op's waiting requests by id, in order (kept as they arrive and are withdrawn)
        self._ahead: dict[str, dict[str, dict[str, Any]]] = {}
        self._lines: dict[str, tuple[int, int]] = {}  # each request id: the reader's generation and offset of its line
        self.steers: list[Steer] = pending_steers(host.session)
        self._paused = paused_by_operator(host.session)  # a pause outlives its host until the operator resumes
        self._stopped = threading.Event()
        self._stop_record: dict[str, Any] | None = None
        self._on_stop = tuple(on_stop)
        self.state: str | None = None
        self._since = 0
        self._withdrawn: set[str] = set()
        self._troubles: dict[str, str] = {}  # what is wrong now with the inbox or host.json, said once while it lasts
        self._retried: set[str] = set()  # the request ids whose retry was warned of
        # the unreadable lines said while the inbox lasts, and those read in the reader's generation, by digest
        self._unreadable_said: Counter[str] = Counter()
        self._unreadable_read: tuple[int, Counter[str]] = (-1, Counter())
        self._mutex = threading.RLock()  # one request at a time, whichever thread reads it
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None

    # the stop, as the host sees it ---------------------------------------------------------------------------
    @property
    def stop_requested(self) -> bool:
        """Whether an operator's ``stop`` arrived."""
        return self._stopped.is_set()

    @property
    def stop_record(self) -> dict[str, Any] | None:
        """Who stopped the run and why (``turn/end``'s ``stop``), once a ``stop`` arrived."""
        return self._stop_record

    def wait_for_stop(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for a ``stop``; whether one arrived."""
        return self._stopped.wait(seconds)

    @property
    def paused(self) -> bool:
        """Whether the operator's pause is in force: the host holds at its next model or tool call."""
        return self._paused

    # lifecycle ---------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start watching the inbox on a background thread (idempotent)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, name="tapedeck-inbox", daemon=True)
            self._thread.start()

    def stop_watching(self) -> None:
        """Stop the inbox thread (idempotent): from here on only the caller's thread reads the inbox."""
        self._closing.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            # A signal's exception (Ctrl-C, SIGTERM) can cut ``start`` short before the thread ran, and it cannot be
            # joined then. Should it run after all, it finds ``_closing`` set before it reads anything, and ends.
            with contextlib.suppress(RuntimeError):
                thread.join()

    def close(self) -> None:
        """Stop watching; cancel every request this host will never apply (queued ones wait for a resume)."""
        self.stop_watching()
        with self._mutex:
            self.poll()
            for request in self.deferred.values():
                if not request.get("queued"):
                    self._final(request, control.CANCELLED, GONE)
            self._forget_waiting()
            self.set_state("exited")

    def _watch(self) -> None:
        while not self._closing.wait(POLL_SECONDS):
            self.poll()

    # state -------------------------------------------------------------------------------------------------
    def set_state(self, state: str) -> None:
        """Record a change of host state (``host.json`` for readers, a ``tapedeck/state`` event for the record)."""
        with self._mutex:
            if state == self.state:
                return
            self.state = state
            self._since = _now_ms()
            self.host.append([{"type": STATE_EVENT, "data": {"state": state}}])
            self._write_state()

    def _write_state(self) -> None:
        """Rewrite ``host.json``: the state, and how far the inbox is read (the earlier host's mark until then).
        A file that cannot be written is reported once while it cannot be, and stops nothing: the log holds every
        state too."""
        if self.state is not None:
            position = self.reader.position or self.taken_before
            try:
                write_state(self.log, self.state, os.getpid(), self._since, position)
                self._marked = position
                self._trouble("host.json", None)
            except OSError as exc:
                why = exc.strerror or exc
                self._trouble("host.json", f"cannot write {state_path(self.log)} ({why}); readers may show a stale state")

    def _working_state(self) -> str:
        return "running" if self.host.session.open_turn is not None else "idle"

    def pause_state(self) -> str:
        """The state a pause in force puts the host in before it holds: ``paused`` between turns, ``pausing`` while a
        turn is open (it writes on until its next model or tool call, where ``boundary`` or ``tool_gate`` holds)."""
        return "paused" if self.host.session.open_turn is None else "pausing"

    # boundaries (called by the host loop) ------------------------------------------------------------------
    def boundary(self, idle: bool = False) -> bool:
        """Before a model call (or, ``idle``, between turns): apply deferred requests, deliver steering messages
        into the open turn, hold while paused. False when the host must stop."""
        self.poll()
        with self._mutex:
            for request in self.deferred.values():
                self._apply_deferred(request)
            self._forget_waiting()
            if not idle and self.steers:
                steers, self.steers = self.steers, []
                self.host.append([user_message(s.text, s.source()) for s in steers])
        return self._hold()

    def _forget_waiting(self) -> None:
        """Every waiting request was answered: none is ahead of the next one."""
        for op in self._ahead:
            self.policies.forget_ahead(op, 0)
        self.deferred, self._ahead = {}, {}

    def next_steer(self) -> Steer | None:
        """The oldest steering message waiting for a turn (between turns, it starts the next one), taken."""
        return self.steers.pop(0) if self.steers else None

    def drop_steer(self, request_id: str) -> None:
        """Forget the steering message of ``request_id`` (a resumed turn's prompt already is that message)."""
        self.steers = [s for s in self.steers if s.request_id != request_id]

    def tool_gate(self) -> bool:
        """Before a tool call: hold while paused. False when the host must stop."""
        return self._hold()

    def _hold(self) -> bool:
        if self._paused and not self._stopped.is_set():
            self.set_state("paused")
            while self._paused and not self._stopped.is_set():
                self._stopped.wait(POLL_SECONDS)
                self.host.check_log()
                if self._thread is None:
                    self.poll()
            if not self._stopped.is_set():
                self.set_state(self._working_state())
        return not self._stopped.is_set()

    # reading -------------------------------------------------------------------------------------------------
    def poll(self) -> None:
        """Read and answer the requests that arrived since the last poll (any thread)."""
        with self._mutex:
            try:
                entries = self.reader.read()
            except control.ControlError as exc:
                self._trouble("inbox", str(exc))
                return
            self._trouble("inbox", None)
            if self.reader.position is None:  # no inbox: the next one's lines are its own
                self._unreadable_said.clear()
            if self.reader.position is None and self._marked is not None:
                # The inbox is gone: a mark of it would pass the first lines of the next one, which may get its
                # inode number, for lines read already.
                self.taken_before = None
                self._write_state()
            if entries:
                self._write_state()  # before anything is reported: a kill from here on never reports it twice
            withdrawn = {e.withdraw for e in entries if e.withdraw}
            for entry in entries:
                try:
                    self._take(entry, withdrawn)
                except Exception as exc:  # noqa: BLE001 - no request may stop the host
                    if entry.request is not None and entry.request["id"] not in self.answered:
                        self._final(
                            entry.request, control.REJECTED,
                            f"the host failed on it: {type(exc).__name__}: {quoted(exc, 200)}",  # as a tool's failure
                        )

    def _trouble(self, what: str, message: str | None) -> None:
        """Say ``message``, what is wrong with ``what`` (the inbox, host.json), once while it stays so; None: it
        is right again, and the next time it goes wrong is said again."""
        if message is None:
            self._troubles.pop(what, None)
        elif self._troubles.get(what) != message:
            self._troubles[what] = message
            self.host.say(message)

    def _take(self, entry: control.InboxEntry, withdrawn: set[str]) -> None:
        if entry.withdraw:
            self._withdraw(entry.withdraw)
            return
        request = entry.request
        if request is None:
            if not self._reported_before(entry) and self._unsaid(entry):
                self.host.say(entry.error or "an unreadable control inbox line")
            return
        rid = request["id"]
        if self._duplicate(entry, request):  # a second final outcome would stand for the first request's
            if rid not in self._retried:  # a sender retrying on and on is warned of once
                self._retried.add(rid)
                self.host.say(DUPLICATE.format(rid=quoted(rid)))
            return
        if rid in self.answered or rid in self.deferred:  # a line read again (inbox replaced): taken already
            return
        if entry.error:
            self._final(request, control.REJECTED, entry.error)
        elif rid in withdrawn or rid in self._withdrawn:
            self._final(request, control.CANCELLED, WITHDRAWN)
        elif control.is_expired(request):
            self._final(request, control.EXPIRED, control.expiry_error(request))
        elif not request.get("queued") and isinstance(request.get("at"), int) and request["at"] < self.started:
            self._final(request, control.CANCELLED, self._left_behind(request))
        elif control.OPS[request["op"]].at_boundary:
            if not self._possible(request):
                return
            self.deferred[rid] = request
            if rid not in self.acknowledged:
                self.acknowledged.add(rid)
                self.host.append(
                    [control.outcome_event(request, control.PENDING, None, {"until": "next step"})]
                )
        else:
            self._apply(request)

    def _left_behind(self, request: dict[str, Any]) -> str:
        """Why a request sent before this host started is cancelled: the host before it acknowledged it and ended
        before applying it, or ended (died, or exited before the request was sent) before reading it, or no host
        ran when it was sent."""
        if request["id"] in self.acknowledged:
            return GONE
        if self._before is None:
            return STALE
        state, when = self._before
        if state != "exited":  # it died without saying so: senders write only while a host is live
            return DIED
        return UNREAD if request["at"] < when else STALE

    def _duplicate(self, entry: control.InboxEntry, request: dict[str, Any]) -> bool:
        """Whether ``entry`` is a new line reusing the id of a request taken already: one this host read on another
        line of the inbox as the reader has it since it last started it over, or one answered before it started and
        sent since. A line read again (the host before this one read it, or the inbox was replaced or written again
        in place, its lines maybe moved) is none."""
        where = (self.reader.generation, entry.offset)
        first = self._lines.get(request["id"])
        if first is None or first[0] != where[0]:
            self._lines[request["id"]] = where
        if self._reported_before(entry):
            return False
        if first is not None:
            return first[0] == where[0] and first[1] != where[1]
        at = request.get("at")
        return request["id"] in self.answered and isinstance(at, int) and at >= self.started

    def _unsaid(self, entry: control.InboxEntry) -> bool:
        """Whether ``entry``, a line that can only be reported, was not said yet while the inbox lasts: one replaced
        or written again in place is read again from its start, and a line said then (the same bytes, as many
        times over, wherever they moved) is not said again. Only the first ``UNREADABLE_REMEMBERED`` distinct lines
        are kept (hostile bytes must not grow the host): one past them is said each time it is read."""
        if self._unreadable_read[0] != self.reader.generation:  # read again from its start
            self._unreadable_read = (self.reader.generation, Counter())
        said = self._unreadable_said
        if entry.digest not in said and len(said) >= UNREADABLE_REMEMBERED:
            return True
        read = self._unreadable_read[1]
        read[entry.digest] += 1
        if read[entry.digest] <= self._unreadable_said[entry.digest]:
            return False
        self._unreadable_said[entry.digest] += 1
        return True

    def _reported_before(self, entry: control.InboxEntry) -> bool:
        """Whether the host before this one (killed, or stopped) already read ``entry``'s line."""
        mark = self.taken_before
        return mark is not None and self.reader.continues(mark) and entry.offset < mark[2]

    def _possible(self, request: dict[str, Any]) -> bool:
        """False, with the request rejected, when no later boundary could apply it (the op's ``check_<name>``
        of the policy hooks, if it has one, says so, given the requests of that op waiting ahead of it); True,
        and it is one of those for the next request of its op (which the caller defers)."""
        op = request["op"]
        check = getattr(self.policies, "check_" + op.replace(".", "_"), None)
        if check is None:
            return True
        ahead = self._ahead.setdefault(op, {})
        with self.host.lock:
            try:
                check(request["args"], ahead.values())
            except TapedeckError as exc:
                self._final(request, control.REJECTED, _rejection(exc))
                return False
        ahead[request["id"]] = request["args"]
        return True

    def _withdraw(self, rid: str) -> None:
        if rid in self.answered:
            return
        waiting = self.deferred.pop(rid, None)
        if waiting is not None:
            ahead = self._ahead.get(waiting["op"], {})
            if rid in ahead:
                # from the newest back: a sender whose --wait timed out withdraws the one it sent last
                back = next(n for n, key in enumerate(reversed(ahead)) if key == rid)
                self.policies.forget_ahead(waiting["op"], len(ahead) - 1 - back)
                del ahead[rid]
            self._final(waiting, control.CANCELLED, WITHDRAWN)
        else:
            self._withdrawn.add(rid)

    def _final(
        self, request: dict[str, Any], outcome: str, error: str | None = None, detail: Any = None,
        events: list[dict[str, Any]] | None = None,
    ) -> None:  # fmt: skip
        self.answered.add(request["id"])
        self.host.append([*(events or []), control.outcome_event(request, outcome, error, detail)])
        op = request.get("op") if isinstance(request.get("op"), str) else "request"  # a line whose op was unreadable
        self.host.say(f"control {quoted(op)} {outcome}" + (f": {error}" if error else ""))  # the inbox's op, quoted

    # applying ----------------------------------------------------------------------------------------------
    def _apply(self, request: dict[str, Any]) -> None:
        """Run the request's handler and log its outcome: an ``op_*`` method of this operator, else of the
        policy hooks (under the host's lock; a request one of them raises on is rejected)."""
        name = "op_" + request["op"].replace(".", "_")
        own = getattr(self, name, None)
        if own is not None:
            events, detail = own(request["args"], request)
            self._final(request, control.APPLIED, None, detail, events)
            return
        with self.host.lock:
            try:
                events, detail = getattr(self.policies, name)(request["args"], request)
            except Exception as exc:  # noqa: BLE001 - a failing request is rejected, the host goes on
                self._final(request, control.REJECTED, _rejection(exc))
                return
            self._final(request, control.APPLIED, None, detail, events)

    def _apply_deferred(self, request: dict[str, Any]) -> None:
        if control.is_expired(request):
            self._final(request, control.EXPIRED, control.expiry_error(request))
        else:
            self._apply(request)

    # the ops that steer the host -----------------------------------------------------------------------------
    def op_pause(self, _args: dict[str, Any], _request: dict[str, Any]) -> Answer:
        """Hold before the next model or tool call (a host already paused stays so: it holds now)."""
        self._paused = True
        if self.state != "paused":
            self.set_state(self.pause_state())
        return [], None

    def op_resume(self, _args: dict[str, Any], _request: dict[str, Any]) -> Answer:
        """Let a paused host go on."""
        was = self._paused
        self._paused = False
        if self.state in ("pausing", "paused"):
            self.set_state(self._working_state())
        return [], {"wasPaused": was}

    def op_stop(self, args: dict[str, Any], request: dict[str, Any]) -> Answer:
        """End the run now, interrupting the model stream and any running tool."""
        self._stop_record = {"by": "operator", "requestId": request["id"]}
        if args.get("reason"):
            self._stop_record["reason"] = args["reason"]
        self._stopped.set()
        for interrupt in self._on_stop:
            interrupt()
        return [], {"reason": args.get("reason")}

    def op_message(self, args: dict[str, Any], request: dict[str, Any]) -> Answer:
        """A note is only logged; a steering message reaches the model at the next step."""
        text = args["text"]
        if args.get("kind", "steer") == "note":
            return [], {"note": text}
        # The outcome holds the text: once it is logged, the message survives a crash (resume re-queues it).
        when = NEXT_STEP if self.host.session.open_turn is not None else QUEUED
        self.steers.append(Steer(text, request["id"]))
        return [], {"queued": when, "text": text}
