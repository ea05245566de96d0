"""The alerts of local and remote targets at once (``tapedeck alerts ROOT…`` with ``[user@]host:PATH`` roots).

Local targets are followed as ``core.alerts.follow.AlertFollower`` follows them; remote ones by the fleet's own
watches (``core.fleet.follow.Fleet``: the log's new bytes over SFTP, the host's state from the files beside it,
reconnects with backoff, ``unreachable`` while the machine cannot be reached), whose alerts are collected as
each poll raises them. A poll gives the local logs' alerts first, then the remote ones'. With actions, a live
remote host that does not act on a rule itself gets the request in its own inbox, over SFTP.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from core.alerts.engine import Alert
from core.alerts.follow import AlertFollower, now_ms
from core.control.config import PolicyConfig
from core.fleet.follow import Fleet
from core.remote.target import parse_remote


class AlertSources(AlertFollower):
    """``AlertFollower`` over local targets and a ``Fleet`` over the remote ones (see the module docstring)."""

    def __init__(self, targets: Sequence[str | os.PathLike[str]], config: PolicyConfig,
                 ssh_options: Mapping[str, Any] | None = None, **options: Any) -> None:  # fmt: skip
        """As ``AlertFollower`` (``options``: ``act``, ``warn``, ``pace``); ``ssh_options`` go to each remote
        machine's ``core.remote.link.SshLink``."""
        remote = [t for t in targets if parse_remote(str(t)) is not None]
        super().__init__([t for t in targets if parse_remote(str(t)) is None], config, **options)
        self.remote = Fleet(remote, config, **(ssh_options or {})) if remote else None
        self.unreached: list[str] = []  # the remote targets that could not be listed at the last look, and why

    def poll(self, now: int | None = None, final: bool = False) -> list[Alert]:
        """The alerts every log raised since the last poll: the local ones', then the remote ones'. A remote
        machine whose host key is not known raises ``core.remote.link.HostKeyRefused``."""
        now = now_ms() if now is None else now
        out = super().poll(now, final)
        if self.remote is not None:
            raised: list[Alert] = []
            self.remote.poll(now, final, raised=raised)
            for note in self.remote.skipped:
                if note not in self.unreached:
                    self.warn(note)
            self.unreached = list(self.remote.skipped)
            if self.act:
                self.remote.act(raised, self.warn)
            out.extend(raised)
        return out
