"""Structured diagnostics: every malformed thing a reader meets becomes one of these, never an exception."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Literal

from core.shared.records import record

Severity = Literal["error", "warning", "info"]


@record(frozen=True, slots=True)
class Diagnostic:
    """One problem found in a log.

    ``code`` is a stable kebab-case identifier (``bad-json``, ``seq-gap``, ``replace-missing-node`` …),
    ``offset`` the byte offset of the offending line or frame in the file (``None`` when not tied to bytes),
    ``seq`` the event seq involved, when there is one.
    """

    code: str
    message: str
    offset: int | None = None
    seq: int | None = None
    severity: Severity = "error"

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for ``--json`` output."""
        return asdict(self)

    def __str__(self) -> str:
        where = []
        if self.seq is not None:
            where.append(f"seq {self.seq}")
        if self.offset is not None:
            where.append(f"offset {self.offset}")
        loc = f" ({', '.join(where)})" if where else ""
        return f"{self.severity}: {self.code}{loc}: {self.message}"
