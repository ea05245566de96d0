"""What a worker says of a failure: a read of the log that no longer holds what was projected, or an error nobody
foresaw.

A big log's events are read back from the file on demand. When the file was cut short, replaced or became
unreadable under a view that does not follow it (``--no-follow``), or before the follower noticed, that read
fails; the operator gets a notification saying so, and the app stays up. An error of no kind a worker expects (a
bug) is told in the words of ``unexpected``, wherever it is caught.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from textual.dom import DOMNode

from core.shared.errors import TapedeckError
from core.shared.text import quoted, quoted_path

P = ParamSpec("P")
N = TypeVar("N", bound=DOMNode)
LOG_CHANGED = "The log changed under this view"
READ_ERRORS = (TapedeckError, OSError)
UNEXPECTED_TEXT = 200  # characters of an unexpected error's own words a message quotes at most


def unexpected(exc: BaseException) -> str:
    """How a message names an error nobody foresaw (a bug): its type and its words, cut and with no control
    character (they may quote a log)."""
    return f"an unexpected error ({type(exc).__name__}: {quoted(exc, UNEXPECTED_TEXT)})"


def system_failure(exc: OSError) -> str:
    """How a message names a failure the system reported (a full disk, a directory one may not write in), which is
    to be foreseen, unlike ``unexpected``'s: the file it names, if any, and the system's reason."""
    why = exc.strerror or str(exc)
    return f"{quoted_path(os.fsdecode(exc.filename))}: {why}" if isinstance(exc.filename, str | bytes) else why


def report_log_failure(node: DOMNode, error: BaseException) -> None:
    """Tell the operator a read of the log failed and why (UI thread)."""
    node.app.notify(f"{error}. Reopen the log to read it again.", title=LOG_CHANGED, severity="error", timeout=15)


def reads_log(method: Callable[Concatenate[N, P], None]) -> Callable[Concatenate[N, P], None]:
    """Wrap a thread worker's body: a failed read of the log becomes a notification, not a crash."""

    @functools.wraps(method)
    def body(node: N, *args: P.args, **kwargs: P.kwargs) -> None:
        try:
            method(node, *args, **kwargs)
        except READ_ERRORS as exc:
            node.app.call_from_thread(report_log_failure, node, exc)

    return body
