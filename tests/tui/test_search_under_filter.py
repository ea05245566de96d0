"""Under a filter, the search counts and steps through the matches the list shows: it counted every match in the
log ('6/7 matches' with two rows shown) and ``n`` stepped from 7/7 back to 6/7."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.logs import Log
from tests.tui.pilot import make_app, settle, settled_main_screen, until

pytestmark = pytest.mark.anyio


async def test_the_match_count_and_n_keep_to_the_rows_the_filter_shows(tmp_path: Path) -> None:
    log = Log()
    results = [log.turn(n, f"alpha prompt {n}", f"alpha out {n}")["result"] for n in range(1, 4)]
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await settled_main_screen(pilot)
        await pilot.press("f", *"tool/result", "enter")
        await settle(pilot)
        await until(pilot, lambda: screen.filter_scan is not None and screen.filter_scan.done)
        assert [screen.events.view.row(r)[0] for r in range(len(screen.events.view))] == results
        await pilot.press("slash", *"alpha", "enter")
        await settle(pilot)
        await until(pilot, lambda: screen.search_scan is not None and screen.search_scan.done)
        await settle(pilot)
        seen = []
        for _ in range(4):
            seen.append((screen.events.current_seq, screen._search_label()))
            await pilot.press("n")
            await settle(pilot)
        want = [(seq, f"{i}/3 matches for 'alpha'") for i, seq in enumerate(results, 1)]
        assert seen == [*want, want[0]], seen
