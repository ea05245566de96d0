"""The alerts of local and remote targets at once (``tapedeck alerts ROOT…`` with ``[user@]host:PATH`` roots).

Local targets are followed as ``core.alerts.follow.AlertFollower`` follows them; remote ones by the fleet's own
watches (``core.fleet.follow.Fleet``: the log's new bytes over SFTP, the host's state from the files beside it,
reconnects with backoff, ``unreachable`` while the machine cannot be reached), whose alerts are collected as
each poll raises them. A poll gives the local logs' alerts first, then the remote ones'. With actions, a live
remote host that does not act on a rule itself gets the request in its own inbox, over SFTP. ``RemoteFedWatch``
is the engine of the one remote log the TUI's session view reads and feeds (``tapedeck watch [user@]host:PATH``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from core.alerts.engine import Alert
from core.alerts.follow import AlertFollower, FedWatch, now_ms, warn_new
from core.control.config import PolicyConfig
from core.control.host_state import HostState
from core.fleet.follow import Fleet, send_remote_action
from core.remote.live import RemoteLog
from core.remote.target import parse_remote


class AlertSources(AlertFollower):
    """``AlertFollower`` over local targets and a ``Fleet`` over the remote ones (see the module docstring)."""

    def __init__(self, targets: Sequence[str | os.PathLike[str]], config: PolicyConfig,
                 ssh_options: Mapping[str, Any] | None = None, **options: Any) -> None:  # fmt: skip
        """As ``AlertFollower`` (``options``: ``act``, ``warn``, ``pace``); ``ssh_options`` go to each remote
        machine's ``core.remote.link.SshLink``."""
        remote = [t for t in targets if parse_remote(str(t)) is not None]
        local = [t for t in targets if parse_remote(str(t)) is None]
        super().__init__(local, config, **options)
        self.remote = Fleet(remote, config, **(ssh_options or {})) if remote else None
        # a one-off read goes on past a log it cannot read through when there are others, here or remote
        self.alongside = self.remote is not None
        if self.remote is not None:
            self.remote.alongside = bool(local)
        self.unreached: list[str] = []  # the remote targets that could not be listed at the last look, and why
        self._noted: list[str] = []  # the fleet's notes at the last look: each is warned once while it lasts

    def poll(self, now: int | None = None, final: bool = False) -> list[Alert]:
        """The alerts every log raised since the last poll: the local ones', then the remote ones'. A remote
        machine whose host key is not known raises ``core.remote.link.HostKeyRefused``."""
        now = now_ms() if now is None else now
        out = super().poll(now, final)
        if self.remote is not None:
            raised: list[Alert] = []
            self.remote.poll(now, final, raised=raised)
            self._noted = warn_new(list(self.remote.skipped), self._noted, self.warn)
            self.unreached = list(self.remote.unreached)
            for note in self.remote.unread:
                self.warn(note)
            self.unread += self.remote.unread
            if self.act:
                self.remote.act(raised, self.warn)
            out.extend(raised)
        return out


class RemoteFedWatch(FedWatch):
    """``FedWatch`` of a log on another machine that a view reads over SSH (``remote``): ticked with the host's
    state and the file's mtime as the view last read them (no round trip of its own), ``unreachable`` raised
    while the view's reads get no answer, and actions sent to the remote inbox."""

    checkpoints = False  # a copy of another machine's log: its checkpoint would describe the copy

    def __init__(self, config: PolicyConfig, remote: RemoteLog) -> None:
        super().__init__(config)
        self.remote = remote

    def read_host(self) -> HostState:
        """The host's state as the view last read it."""
        return self.remote.host

    def last_write(self) -> int | None:
        """The remote file's mtime at the view's last poll."""
        return self.remote.tail.last_write if self.remote.tail is not None else None

    def log_size(self) -> int | None:
        """The remote file's size at the view's last poll."""
        return self.remote.tail.size_seen if self.remote.tail is not None else None

    def tick(self, now: int, final: bool = False) -> list[Alert]:
        """As ``FedWatch.tick``, but not while the view's reads get no answer (``RemoteSessionWatch.tick``), and
        with the clock at the start of the view's last poll that got its answers, at the latest: the view polls in
        its own thread, and one that waits for a link that stopped answering (until the call gives up and the
        machine is called unreachable) knows nothing of the writes since, so ``stalled`` would run ahead."""
        tail = self.remote.tail
        if tail is None:
            return super().tick(now, final)
        if tail.unreachable is not None:
            return []
        return super().tick(now if tail.answered_at is None else min(now, tail.answered_at), final)

    def poll(self, now: int, final: bool = False) -> list[Alert]:
        """As ``FedWatch.poll``, then whether the machine answered the view's last read."""
        out = super().poll(now, final)
        if self.remote.tail is None:
            return out
        lost = self.lost()
        with self._feeding:
            return out + self.engine.reachable(lost is None, now, lost or "")

    def lost(self) -> str | None:
        """Why the machine did not answer the view's last read (None: it did, or the view read nothing yet)."""
        tail = self.remote.tail
        return str(tail.unreachable) if tail is not None and tail.unreachable is not None else None

    def send_action(self, alert: Alert) -> None:
        """Append the alert's action to the remote inbox (as ``core.fleet.follow.send_remote_action``)."""
        if self.remote.log is not None:
            send_remote_action(self, alert, self.remote.link, self.remote.log)
