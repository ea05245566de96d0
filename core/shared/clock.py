"""Epoch-millisecond times as a person reads them, by one rule for a time no clock gives."""

from __future__ import annotations

import time

IMPLAUSIBLE = "an implausible time"
LATEST_MS = 253_402_300_800_000  # 10000-01-01 UTC: a later time has no four-digit year
UTC_SECONDS = "%Y-%m-%d %H:%M:%S UTC"


def utc_time(ms: float, fmt: str = UTC_SECONDS) -> str | None:
    """``ms`` (epoch milliseconds) in UTC by the ``time.strftime`` format ``fmt`` (``2026-12-03 06:40:12 UTC``);
    None for a time before 1970 or from the year 10000 on (or no number at all), which only a forged or broken
    record gives: the caller says so (``IMPLAUSIBLE``, a dash) rather than print a year no clock reaches."""
    if isinstance(ms, bool) or not isinstance(ms, int | float) or not 0 <= ms < LATEST_MS:
        return None
    return time.strftime(fmt, time.gmtime(ms / 1000))
