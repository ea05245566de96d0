"""Every screen's table with no row: the cursor keys and Enter leave the app running."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.tui.pilot import NO_KEYMAP, make_app, settle, settled_main_screen
from tui.app import TapedeckApp
from tui.screens.main import MainScreen
from tui.widgets.table import RowTable

pytestmark = pytest.mark.anyio

KEYS = ("pagedown", "pageup", "end", "home", "pagedown", "enter")


async def _press_on_every_table(app: TapedeckApp, pilot: Pilot[None]) -> int:
    """Focus each table of the screen on top in turn and press the keys on it; how many tables there were."""
    screen = app.screen
    tables = [table for table in screen.query(RowTable) if table.row_count == 0]
    for table in tables:
        table.focus()
        for key in KEYS:
            await pilot.press(key)
            await pilot.pause()
            if app.screen is not screen:  # Enter may act on the screen (none of these does on no row)
                break
    return len(tables)


@pytest.mark.parametrize("key", ["t", "o", "c", "r", "C", "D", "A"])
async def test_keys_on_a_screens_empty_table_keep_the_app(tmp_path: Path, fixtures_dir: Path, key: str) -> None:
    """A session just started (its log holds only its header) leaves each screen's table empty: page down there
    highlights row -1 (Textual's quirk), which carries no row key, and the Tape and Config screens raised
    AttributeError reading it, ending 'tapedeck watch'."""
    log = tmp_path / "session.jsonl"
    log.write_bytes((fixtures_dir / "error-finish.session.jsonl").read_bytes().split(b"\n", 1)[0] + b"\n")
    app = make_app(log)
    async with app.run_test(size=(120, 36)) as pilot:
        await settled_main_screen(pilot)
        await pilot.press(key)
        await settle(pilot)
        assert not isinstance(app.screen, MainScreen)
        assert await _press_on_every_table(app, pilot)
        await settle(pilot)
    assert app._exception is None


async def test_keys_on_an_empty_fleet_table_keep_the_app(tmp_path: Path) -> None:
    """The fleet of a sessions root holding no session yet."""
    root = tmp_path / "sessions"
    root.mkdir()
    app = TapedeckApp(root, follow=False, interval=0.02, keymap_file=NO_KEYMAP, fleet_roots=[root])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert await _press_on_every_table(app, pilot)
        await settle(pilot)
    assert app._exception is None
