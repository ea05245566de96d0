"""Logged token usage: the tokens of one usage record, and running totals over the steps whose usage counts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.shared.records import record


def usage_tokens(usage: Mapping[str, Any] | None) -> tuple[int | None, int, int] | None:
    """(cache hits or None when not reported, other input, output) of one usage record; None for no record."""
    if not usage:
        return None
    get = usage.get  # a count of any other type (a bool included) counts as 0
    hit, given, written, output = (
        get("cacheReadTokens"), get("inputTokens"), get("cacheWriteTokens"), get("outputTokens")
    )  # fmt: skip
    return (  # ``__class__`` is an attribute read, where ``type()`` is a call: every usage sample passes here
        (hit if hit.__class__ is int else 0) if hit is not None or "cacheReadTokens" in usage else None,
        (given if given.__class__ is int else 0) + (written if written.__class__ is int else 0),
        output if output.__class__ is int else 0,
    )


@record(slots=True)
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
