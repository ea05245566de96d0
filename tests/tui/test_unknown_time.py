"""A log line without a time (DSH's committed logs) shows its time as unknown, not as the epoch."""

from __future__ import annotations

from core.read.rows import build_row
from tests.conftest import FIXTURES
from tui.live import LiveSession
from tui.widgets.detail import describe
from tui.widgets.rows import ago, clock


def test_a_log_without_times_shows_them_unknown_not_1970() -> None:
    """The reader stands in 0 for a missing time, which is no moment: rows read 00:00:00 and '20792d ago', the
    detail pane 1970-01-01."""
    live = LiveSession(FIXTURES / "multi-turn.session.jsonl", follow=False)
    live.run()
    row = build_row(live.event(4))  # type: ignore[arg-type]
    assert (clock(row.time), ago(row.time, 1.8e12)) == ("--:--:--", "-")
    left, _, _ = describe(live, 4, 2000)
    assert "1970" not in left.plain.splitlines()[0], left.plain.splitlines()[0]
