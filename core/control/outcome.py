"""Waiting for the final outcome of one control request: a tapedeck host logs it as a ``tapedeck/control`` event,
the DSH bridge writes it to ``control.outcomes.jsonl`` beside the log (here, or read over SFTP by the caller's
reader)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.bridge.files import OutcomeReader
from core.control.host_state import HostState, exited_at, unknown_hint
from core.control.inbox import CONTROL_EVENT, FINAL, UNKNOWN
from core.log.tail import Tailer
from core.shared.errors import LogFormatError

POLL_SECONDS = 0.1
HOST_CHECK_SECONDS = 1.0  # how often a wait looks whether the host still runs


class OutcomeWatch:
    """Follows a session log for the final outcome of one request (our host answers in the log)."""

    def __init__(self, log: Path, request_id: str, tailer: Tailer | None = None) -> None:
        """Follow ``log`` (or what ``tailer`` follows: a remote log) for ``request_id``'s outcome."""
        self.tailer = tailer or Tailer(str(log))
        self.request_id = request_id
        self.pending: dict[str, Any] | None = None  # the request's pending outcome, once the host sent one

    def wait(self, timeout: float, gone: Callable[[], str | None] | None = None,
             stop: Callable[[], bool] | None = None) -> dict[str, Any] | None:  # fmt: skip
        """The request's final outcome event, or None when ``timeout`` seconds pass without one or ``stop`` says
        the waiter gave up (``HostGone`` when ``gone`` says why the host exited first)."""
        return poll_until(timeout, self._look, gone, stop)

    def _look(self) -> dict[str, Any] | None:
        update = self.tailer.poll()
        if update.fatal:
            raise LogFormatError(str(update.fatal))
        for event in update.events:
            data = event.get("data")  # what a damaged or forged log holds may be no object
            if event.get("type") == CONTROL_EVENT and isinstance(data, dict) and data.get("requestId") == self.request_id:
                if data.get("outcome") in FINAL:
                    return event
                self.pending = data
        return None


class BridgeOutcomeWatch:
    """Follows ``control.outcomes.jsonl`` for the final outcome of one request (the DSH bridge answers there)."""

    def __init__(self, log: Path, request_id: str, reader: OutcomeReader | None = None) -> None:
        """Follow the outcome file beside ``log`` (or what ``reader`` reads: one on another machine)."""
        self.reader = reader or OutcomeReader(log.parent)
        self.request_id = request_id
        self.pending: dict[str, Any] | None = None  # as ``OutcomeWatch.pending``

    def wait(self, timeout: float, gone: Callable[[], str | None] | None = None,
             stop: Callable[[], bool] | None = None) -> dict[str, Any] | None:  # fmt: skip
        """The outcome as a ``tapedeck/control`` event without a seq, or None after ``timeout`` seconds (as
        ``OutcomeWatch.wait``)."""
        return poll_until(timeout, self._look, gone, stop)

    def _look(self) -> dict[str, Any] | None:
        self.reader.read()
        data = self.reader.outcomes.get(self.request_id)
        if data is not None and data.get("outcome") in FINAL:
            return {"type": CONTROL_EVENT, "data": data, "file": str(self.reader.path)}
        self.pending = data
        return None


def interrupted(state: HostState, request_id: str, op: str | None) -> dict[str, Any] | None:
    """The ``unknown`` outcome data of ``request_id`` when the DSH bridge ``state`` reads (no longer live) had begun
    to run it and wrote no outcome (``bridge.json``'s ``inFlight``, which names its op when ``op`` is None): it may
    or may not have taken effect, which the next start of DSH with the bridge says too. None otherwise."""
    if state.live:
        return None
    began = next((r for r in (state.bridge or {}).get("inFlight", ()) if r["id"] == request_id), None)
    if began is None:
        return None
    op = op or began["op"]
    error = (f"the DSH bridge exited {exited_at(state.since)} while it ran this {op or 'request'}, before it wrote "
             f"the outcome: it may or may not have taken effect: {unknown_hint(op)}")  # fmt: skip
    return {"requestId": request_id, "op": op, "outcome": UNKNOWN, "error": error}


class HostGone(Exception):
    """The host exited while a request waited for its outcome (the message says when)."""


def poll_until(
    timeout: float,
    look: Callable[[], dict[str, Any] | None],
    gone: Callable[[], str | None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> dict[str, Any] | None:
    """What ``look`` finds, asking every ``POLL_SECONDS`` (at least once) until ``timeout`` seconds have passed;
    None when it finds nothing by then, or as soon as ``stop`` returns True (the waiter gave up: an app that
    exits). ``gone``, asked every ``HOST_CHECK_SECONDS``, says why the host exited (raised as ``HostGone``), or
    None while it runs."""
    start = time.monotonic()
    deadline, checked = start + timeout, start
    while True:
        found = look()
        if found is not None:
            return found
        now = time.monotonic()
        if now >= deadline or (stop is not None and stop()):
            return None
        if gone is not None and now - checked >= HOST_CHECK_SECONDS:
            checked = now
            if (why := gone()) is not None:
                raise HostGone(why)
        time.sleep(POLL_SECONDS)
