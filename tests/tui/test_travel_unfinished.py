"""Time travel on a log whose host was killed mid-request: the request that went out last, with no answer
logged, is among the requests to step to and open, marked unfinished as ``request``, ``cost`` and ``diff``
mark it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.timetravel.dsh_log import cut_in_flight
from tests.tui.pilot import main_screen, make_app, opened, settle
from tui.screens.request import RequestScreen

SIZE = (150, 42)
MARK = "unfinished: the log ends before its answer"


def _killed(fixtures_dir: Path, tmp_path: Path) -> Path:
    """multi-turn cut right after turn 2 step 1's prompt: that step's request went out and never came back."""
    return cut_in_flight(fixtures_dir / "multi-turn.session.jsonl", tmp_path / "session.jsonl")


@pytest.mark.anyio
async def test_scrubbing_to_the_end_shows_the_request_in_flight(fixtures_dir: Path, tmp_path: Path) -> None:
    """The TUI listed only the requests answered in the log: at the end of a killed session ``T`` and ``R``
    showed the request before, ``.`` stopped there and nothing said a request was under way."""
    app = make_app(_killed(fixtures_dir, tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = main_screen(app)
        assert main is not None
        last = main.live.session.next_seq - 1
        main.events.go_seq(last)
        await pilot.press("T")  # the moment the log ends: the request in flight then
        await settle(pilot)
        assert main.stop is not None and main.stop.moment.seq == last
        assert f"request {MARK}" in str(main.query_one("#status").render())
        assert main.stop.unfinished
        await pilot.press("comma")  # the turn before's request: answered
        await settle(pilot)
        assert main.stop.moment.seq < last and not main.stop.unfinished
        assert MARK not in str(main.query_one("#status").render())
        await pilot.press("full_stop")
        await settle(pilot)
        assert main.stop.moment.seq == last and main.stop.unfinished

        screen = await opened(pilot, "R", RequestScreen)
        heading = str(screen.query_one("#request-heading").render())
        assert heading.startswith("request 2/2 · turn 2 step 1") and heading.endswith(MARK), heading
        assert screen.view is not None and screen.view.request.usage is None
        await pilot.press("comma")
        await settle(pilot)
        heading = str(screen.query_one("#request-heading").render())
        assert heading.startswith("request 1/2 · turn 1 step 1") and MARK not in heading, heading
