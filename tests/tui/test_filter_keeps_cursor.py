"""A filter that keeps the selected row (``h`` hiding the streams, most often) keeps the cursor on it: the list
went back to its first row, as the filter's scan rebuilt it from nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.logs import policy_log
from tests.tui.pilot import make_app, settle, settled_main_screen

pytestmark = pytest.mark.anyio


async def test_hiding_the_streams_keeps_the_cursor_on_its_row(tmp_path: Path) -> None:
    log = policy_log()
    chunk = {
        "type": "assistant/chunk",
        "data": {"turn": 3, "step": 2, "chunk": {"type": "text-delta", "text": "ans"}},
    }
    for _ in range(3):
        log.add(chunk)
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settled_main_screen(pilot)
        results = [e["seq"] for e in log.events if e["type"] == "tool/result"]
        seq = results[len(results) // 2]  # a row far from the first, which the filter keeps
        row = screen.events.view.row_of_seq(seq)
        assert row is not None and row > 0
        screen.events.go(row)
        await settle(pilot)
        assert screen.events.current_seq == seq
        for _ in range(2):  # hidden, then shown again
            await pilot.press("h")
            await settle(pilot)
            assert screen.events.current_seq == seq, (screen.events.current_seq, seq)
