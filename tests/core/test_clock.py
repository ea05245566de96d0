"""Epoch-ms times no clock gives are said to be implausible, never printed as a date (one rule, core.shared.clock)."""

from __future__ import annotations

import pytest

from core.control.inbox import expiry_error
from core.shared.clock import LATEST_MS, utc_time

FORGED = [-1, -9_000_000_000_000_000, LATEST_MS, 2**63 - 1, 10**400, float("nan"), float("inf"), True, "1"]


@pytest.mark.parametrize("ms", FORGED)
def test_a_time_no_clock_gives_has_no_text(ms: object) -> None:
    assert utc_time(ms) is None  # type: ignore[arg-type]


def test_times_from_1970_to_the_year_9999_are_written_in_the_format_asked() -> None:
    assert utc_time(0) == "1970-01-01 00:00:00 UTC"
    assert utc_time(LATEST_MS - 1) == "9999-12-31 23:59:59 UTC"
    assert utc_time(1_764_744_012_345.6, "%H:%M:%S") == "06:40:12"


@pytest.mark.parametrize("expires", [2**62, LATEST_MS])
def test_an_expired_request_with_a_forged_deadline_says_so(expires: int) -> None:
    # it was 'it expired at 146140482-04-05 …': a year no clock reaches
    assert expiry_error({"id": "r", "expires": expires}) == (
        "it expired at an implausible time before a host could apply it"
    )
