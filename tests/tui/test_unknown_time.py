"""A log line without a time (DSH's committed logs) shows its time as unknown, not as the epoch."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from core.read.rows import build_row
from core.shared.clock import IMPLAUSIBLE
from tests.conftest import FIXTURES
from tui.live import LiveSession
from tui.screens.alerts import alert_time
from tui.widgets.detail import describe
from tui.widgets.rows import IMPLAUSIBLE_CLOCK, ago, clock


def test_a_log_without_times_shows_them_unknown_not_1970() -> None:
    """The reader stands in 0 for a missing time, which is no moment: rows read 00:00:00 and '20792d ago', the
    detail pane 1970-01-01."""
    live = LiveSession(FIXTURES / "multi-turn.session.jsonl", follow=False)
    live.run()
    row = build_row(live.event(4))  # type: ignore[arg-type]
    assert (clock(row.time), ago(row.time, 1.8e12)) == ("--:--:--", "-")
    left, _, _ = describe(live, 4, 2000)
    assert "1970" not in left.plain.splitlines()[0], left.plain.splitlines()[0]


@pytest.mark.parametrize("ms", [-5_000, -30_610_224_000_000, 2**63 - 1, 2**64 - 1])
def test_a_time_no_clock_gives_is_said_so_not_drawn_as_a_date(tmp_path: Path, ms: int) -> None:
    """A forged or broken time, before 1970 or past the year 9999, was drawn as a date or not at all: the rows read
    23:59:55 and '20833d ago', the detail pane 1969-12-31 23:59:55 UTC (past the year 9999, nothing), the alerts
    screen 07:12:56 (of the year 292278994). By core's one rule (``utc_time``) such a time is implausible, and each
    says so instead (a row has no time past the year 9999: core's ``event_time`` gives none)."""
    lines = (FIXTURES / "tool-call-turn.session.jsonl").read_bytes().splitlines()
    event = orjson.loads(lines[4])
    event["time"] = ms
    lines[4] = orjson.dumps(event)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    live = LiveSession(path, follow=False)
    live.run()
    row = build_row(live.event(3))  # type: ignore[arg-type]
    if row.time is not None:  # a time a date holds (core's event_time): the row has it, and shows it for what it is
        assert (clock(row.time), ago(row.time, 1.8e12)) == (IMPLAUSIBLE_CLOCK, "?")
    left, _, _ = describe(live, 3, 2000)
    title = left.plain.splitlines()[0]
    assert title.endswith(f" · {IMPLAUSIBLE}"), title
    assert alert_time(ms) == IMPLAUSIBLE_CLOCK
