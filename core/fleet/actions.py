"""A fleet row's actions (pause, resume, stop, message): a request appended to the session's control inbox, here
or on another machine over SFTP, with the guarantees of ``tapedeck control`` (validated for the host's kind, one
whole line), only to a live host (remotely: one whose recorded state is live)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.control.host_state import exited_at, read_host_state
from core.control.inbox import ControlError, append_request, inbox_path
from core.remote.inbox import append_remote_request
from core.remote.link import link_for
from core.remote.sessions import remote_host_state
from core.remote.target import parse_remote

ROW_OPS = ("pause", "resume", "stop", "message")
ORIGIN = "fleet"  # the requests' origin, so the session's events say where they came from


def send_row_action(log: Path, op: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """Append ``op`` for the live host (or DSH bridge) of the session at ``log``; returns the request. Raises
    ``ControlError`` when nobody would read it now (nothing is written then)."""
    if op not in ROW_OPS:
        raise ControlError(f"{op!r} is not a fleet row action (one of {', '.join(ROW_OPS)})")
    remote = parse_remote(str(log))
    if remote is not None:
        link = link_for(remote)
        host = remote_host_state(link, remote, hosted=True)
    else:
        host = read_host_state(log)
    if not host.live:
        when = f" (it exited {exited_at(host.since)})" if host.state == "exited" else ""
        raise ControlError(f"no live host runs this session{when}; nothing was sent")
    if remote is not None:
        return append_remote_request(link, remote, op, args, kind=host.kind, origin=ORIGIN)
    return append_request(inbox_path(log), op, args, kind=host.kind, origin=ORIGIN)
