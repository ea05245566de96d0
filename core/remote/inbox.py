"""A control request appended to the inbox of a session on another machine, as ``core.control.inbox`` appends a
local one: validated for the host's kind, one whole line written with one append (a torn last line left by a
crashed writer gets a newline first), mode 0600, never through a symbolic link, flushed before returning."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any, Unpack

from core.control.inbox import INBOX_MODE, INBOX_NAME, RequestOptions, inbox_line, make_request, withdrawal
from core.remote.link import SshLink
from core.remote.target import RemoteTarget


def append_remote_request(
    link: SshLink, log: RemoteTarget, op: str, args: Mapping[str, Any] | None = None, **options: Unpack[RequestOptions]
) -> dict[str, Any]:
    """Append ``op`` (``make_request``) to the inbox beside the remote log ``log``; returns the request."""
    request = make_request(op, args, **options)
    _append(link, log, request)
    return request


def withdraw_remote_request(link: SshLink, log: RemoteTarget, request_id: str) -> None:
    """Withdraw a request: the host answers it ``cancelled`` unless it already has a final outcome."""
    _append(link, log, withdrawal(request_id))


def _append(link: SshLink, log: RemoteTarget, obj: Mapping[str, Any]) -> None:
    inbox = posixpath.join(posixpath.dirname(log.path), INBOX_NAME)
    link.append(inbox, inbox_line(obj), INBOX_MODE)
