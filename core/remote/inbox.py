"""A control request appended to the inbox of a session on another machine, as ``core.control.inbox`` appends a
local one: validated for the host's kind, one whole line written with one append (a torn last line left by a
crashed writer gets a newline first), mode 0600, never through a symbolic link, flushed before returning."""

from __future__ import annotations

import posixpath
import time
from collections.abc import Mapping
from typing import Any

from core.control.inbox import INBOX_MODE, INBOX_NAME, make_request
from core.remote.link import SshLink
from core.remote.target import RemoteTarget
from core.shared.text import js_json


def append_remote_request(link: SshLink, log: RemoteTarget, op: str, args: Mapping[str, Any] | None = None, *,
                          queued: bool = False, expires_in: float | None = None, kind: str = "tapedeck",
                          origin: str | None = None) -> dict[str, Any]:  # fmt: skip
    """Append ``op`` to the inbox beside the remote log ``log``; returns the request."""
    request = make_request(op, args, queued=queued, expires_in=expires_in, kind=kind, origin=origin)
    _append(link, log, request)
    return request


def withdraw_remote_request(link: SshLink, log: RemoteTarget, request_id: str) -> None:
    """Withdraw a request: the host answers it ``cancelled`` unless it already has a final outcome."""
    _append(link, log, {"withdraw": request_id, "at": int(time.time() * 1000)})


def _append(link: SshLink, log: RemoteTarget, obj: Mapping[str, Any]) -> None:
    inbox = posixpath.join(posixpath.dirname(log.path), INBOX_NAME)
    link.append(inbox, (js_json(obj) + "\n").encode("utf-8"), INBOX_MODE)
