"""A fleet row's actions (pause, resume, stop, message): a request appended to the session's control inbox, here
or on another machine over SFTP, with the guarantees of ``tapedeck control`` (validated for the host's kind, one
whole line), only to a live host (remotely: one whose recorded state is live)."""

from __future__ import annotations

import math
import posixpath
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from core.bridge.files import OutcomeReader
from core.control.host_state import KIND_DSH, UNKNOWN, HostState, exited_at, read_host_state
from core.control.inbox import ControlError, append_request, inbox_path
from core.control.outcome import BridgeOutcomeWatch, HostGone, OutcomeWatch, interrupted
from core.log.reader import read_header
from core.log.tail import Tailer
from core.remote.inbox import append_remote_request
from core.remote.link import SshLink, link_for
from core.remote.live import RemoteOutcomes
from core.remote.sessions import RemoteStateCheck, remote_header, remote_state_now
from core.remote.tail import RemoteTailer
from core.remote.target import RemoteTarget, parse_remote

ROW_OPS = ("pause", "resume", "stop", "message")
ORIGIN = "fleet"  # the requests' origin, so the session's events say where they came from


def _host(log: Path) -> tuple[HostState, SshLink | None, RemoteTarget | None]:
    """The host state of the session at ``log`` now (and, for a remote one, its link and target)."""
    remote = parse_remote(str(log))
    if remote is None:
        return read_host_state(log), None, None
    link = link_for(remote)
    return remote_state_now(link, remote)[0], link, remote


def _why_not(host: HostState) -> str | None:
    """Why no request would be read by the host in ``host``'s state, or None when it is live."""
    why = state_refusal(host)
    return None if why is None else f"{why}; nothing was sent"


def state_refusal(host: HostState) -> str | None:
    """Why no live host (or DSH bridge) would read a request in ``host``'s state, or None when one would: what a
    dialog still up says of a row whose host exited under it."""
    if host.live or host.state == UNKNOWN:  # not known yet (a row's first reading): the send reads it afresh
        return None
    if host.state == "none":
        problem = (host.bridge or {}).get("problem")  # its bridge.json serves no one here: installing would not help
        if host.kind == KIND_DSH:
            return f"a DSH session no tapedeck bridge runs ({problem or '`tapedeck bridge install` adds it'})"
        return "no tapedeck host has ever run this session"
    who = "DSH bridge" if host.kind == KIND_DSH else "host"
    return f"no live {who} runs this session (it exited {exited_at(host.since)})"


def row_refusal(log: Path) -> str | None:
    """Why an action on the session at ``log`` would not be sent now (its host's state read now), or None when a
    live host would read it: asked before the operator confirms or types anything."""
    return _why_not(_host(log)[0])


def send_row_action(log: Path, op: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """Append ``op`` for the live host (or DSH bridge) of the session at ``log``; returns the request. Raises
    ``ControlError`` when nobody would read it now (nothing is written then)."""
    if op not in ROW_OPS:
        raise ControlError(f"{op!r} is not a fleet row action (one of {', '.join(ROW_OPS)})")
    host, link, remote = _host(log)
    _refuse(host)
    if link is not None and remote is not None:
        return append_remote_request(link, remote, op, args, live=True, kind=host.kind, origin=ORIGIN)
    # asked again under the inbox's lock, which an exiting host holds from its last read until it releases its log
    return append_request(inbox_path(log), op, args, check=lambda: _refuse(read_host_state(log)), kind=host.kind,
                          origin=ORIGIN)  # fmt: skip


def _refuse(host: HostState) -> None:
    """Raise ``ControlError`` (saying why) when no request would be read by the host in ``host``'s state."""
    why = _why_not(host)
    if why is not None:
        raise ControlError(why)


ANSWER_SECONDS = 10.0  # how long a row action waits for the host's answer


class RowAnswer:
    """The answer to a row action on the session at ``log`` (here or ``[user@]host:PATH``): a tapedeck host answers
    in its log, a DSH bridge in ``control.outcomes.jsonl`` beside it, as the host's kind read now says (a row's may
    be none yet, or stale). Made before the request is sent, so that a raw log is followed from its end then (the
    answer is not missed, nor the log read whole, here or over SSH)."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.remote = parse_remote(str(log))
        # a remote host's state, looked at every second while a wait lasts, is read only when its files changed
        self._check = RemoteStateCheck(link_for(self.remote), self.remote) if self.remote is not None else None
        self.kind = self._host().kind
        self.gone: str | None = None  # why the last wait ended without an answer: its host exited first
        self.tailer: Tailer | None = None
        if self.kind != KIND_DSH and self.remote is not None:
            link = link_for(self.remote)
            self.tailer = RemoteTailer(link, self.remote)
            self.tailer.follow_from_end(remote_header(link, self.remote))
        elif self.kind != KIND_DSH:
            header = read_header(log)
            self.tailer = Tailer(str(log))
            if header is not None:  # a log that has none yet is read from its start
                self.tailer.follow_from_end(header)

    def wait(self, request_id: str, timeout: float | None = None, stop: Callable[[], bool] | None = None,
             late: Callable[[], object] | None = None) -> dict[str, Any] | None:  # fmt: skip
        """What the host answered to ``request_id`` in the end (``applied``, or ``rejected``, ``cancelled`` or
        ``expired`` and why: it may refuse what the table could not foresee, a stop with no turn open), waited for
        ``timeout`` seconds (``ANSWER_SECONDS`` by default); with ``late``, that is called once then and the wait
        goes on for as long as the host runs (an unanswered request stays in the inbox, and the host may still apply
        it). ``unknown`` as soon as a DSH bridge that died while running it is seen dead (``interrupted``); None when
        it gave no final answer by then, when its host exited first (``gone`` says so), or once ``stop`` returns True
        (the table is closing: its operator does not wait for the answer)."""
        remote = self.remote
        watch: OutcomeWatch | BridgeOutcomeWatch
        if self.kind == KIND_DSH:
            reader = (OutcomeReader(Path(self.log).parent) if remote is None else
                      RemoteOutcomes(link_for(remote), remote.at(posixpath.dirname(remote.path))))  # fmt: skip
            watch = BridgeOutcomeWatch(Path(str(self.log)), request_id, reader)
        else:
            watch = OutcomeWatch(Path(self.log if remote is None else remote.path), request_id, self.tailer)
        cut: dict[str, Any] | None = None
        self.gone = None

        def gone() -> str | None:
            nonlocal cut
            host = self._host()
            cut = interrupted(host, request_id, None) if self.kind == KIND_DSH else None
            return str(cut["error"]) if cut is not None else state_refusal(host)

        try:
            event = watch.wait(ANSWER_SECONDS if timeout is None else timeout, gone, stop)
            if event is None and late is not None and not (stop is not None and stop()):
                late()
                event = watch.wait(math.inf, gone, stop)
        except HostGone as exc:
            self.gone = None if cut is not None else str(exc)
            event = watch.wait(0)  # it may have answered just before it exited (our host answers its inbox then)
        return cut if event is None else event["data"]

    def _host(self) -> HostState:
        """The host state of the session now: read here each time (cheap), over SSH when its files changed."""
        return read_host_state(self.log) if self._check is None else self._check.state()
