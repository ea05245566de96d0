"""One request of an op at a time from one sender: a second ``op`` is held back while one the sender began waits.

A key pressed twice, or pressed again against a host state that lags the answer, would otherwise send the request
twice (a second pause, a second stop the host then refuses). The op is held from the moment the sender begins it
(``CHECKING``: its host is still being read) until the host answers it or exits (``WAITING``: sent, no final
outcome yet), however long the answer takes. A request whose append may never have been written does not hold the
op: it may wait for good, and a second pause or stop does no harm.
"""

from __future__ import annotations

CHECKING, WAITING = "checking", "waiting"  # where an op begun by this sender stands


def held_back(op: str, stage: str | None, to: str = "") -> str | None:
    """Why a second ``op`` (to the session named ``to``) is not sent now, as one sentence: one begun by this sender
    is at ``stage`` (``CHECKING`` or ``WAITING``); None when ``stage`` is None (nothing holds the op)."""
    if stage is None:
        return None
    to = f" to {to}" if to else ""
    if stage == WAITING:
        return f"A {op} sent from here{to} waits for the host's answer: it is not sent twice."
    return f"A {op}{to} is still being checked with its host: it is not sent twice."
