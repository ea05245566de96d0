"""What the host's parts may use of the host that runs them: the narrow interface between ``AgentHost`` and its
policy hooks and operator, so neither reaches into the loop (nor imports it: the loop imports them)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Protocol

from core.read.session import Session


class HostPort(Protocol):
    """The host's projection, its one write path, its voice to the operator, and the lock its log changes under."""

    session: Session
    lock: threading.RLock

    def append(self, events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Append planned events to the log and project them."""
        ...

    def say(self, message: str) -> None:
        """Report progress to the operator."""
        ...

    def check_log(self) -> None:
        """Raise a TapedeckError when the host no longer holds its log (replaced or removed under it)."""
        ...
