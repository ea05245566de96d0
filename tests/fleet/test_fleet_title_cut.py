"""The fleet's title line names the roots it shows; when they do not fit the line, it ends in ``…`` so the
operator sees the list goes on, rather than a list that stops after a comma."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.pilot import NO_KEYMAP, until
from tui.app import TapedeckApp
from tui.screens.fleet import FleetScreen

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("width", [80, 200])
async def test_a_title_too_long_for_its_line_ends_in_an_ellipsis(fixtures_dir: Path, width: int) -> None:
    """`tapedeck watch tests/fixtures/dsh/*.jsonl` drew ``Fleet: 10 sessions, 1 needs attention ·
    bash-spill.session.jsonl,`` at 80 columns: the line stopped at a comma, as if the list ended there."""
    logs = sorted(p for p in fixtures_dir.glob("*.jsonl") if "expected" not in p.name)
    app = TapedeckApp(logs[0], follow=False, interval=0.02, keymap_file=NO_KEYMAP, fleet_roots=logs)
    async with app.run_test(size=(width, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FleetScreen) and len(app.screen.rows) == len(logs))
        title = app.screen.query_one("#fleet-title")
        await until(pilot, lambda: f"{len(logs)} sessions" in str(title.render()))
        await pilot.pause(0.1)
        region = title.region
        line = "".join(s.text for s in app.screen._compositor.render_strips()[region.y])[
            region.x : region.right
        ]
        assert line.strip().startswith(f"Fleet: {len(logs)} sessions"), line
        assert line.rstrip().endswith("…"), line
