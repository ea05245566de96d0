"""Logged token usage: the tokens of one usage record, and running totals over the steps whose usage counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def usage_tokens(usage: dict[str, Any] | None) -> tuple[int | None, int, int] | None:
    """(cache hits or None when not reported, other input, output) of one usage record; None for no record."""
    if not usage:
        return None

    def get(key: str) -> int:
        value = usage.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    hit = get("cacheReadTokens") if "cacheReadTokens" in usage else None
    return hit, get("inputTokens") + get("cacheWriteTokens"), get("outputTokens")


@dataclass(slots=True)
class UsageTally:
    """``usage_tokens`` summed over each step's usage in force, kept up to date as samples replace each other
    (so a live header reads totals without walking the steps)."""

    hit: int = 0
    miss: int = 0
    output: int = 0
    reporting: int = 0  # steps whose usage reports cache hits
    used: int = 0  # steps with a usage record

    def add(self, usage: dict[str, Any] | None, sign: int = 1) -> None:
        """Count ``usage`` in (``sign`` -1: take it out again)."""
        tokens = usage_tokens(usage)
        if tokens is None:
            return
        hit, miss, output = tokens
        self.hit += sign * (hit or 0)
        self.miss += sign * miss
        self.output += sign * output
        self.reporting += sign * (hit is not None)
        self.used += sign
