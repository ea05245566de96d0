"""``?`` on the fleet table at 60x20, 80x24 and 120x40: every word of every key's description is readable. At 60
columns the where, keys and binding id columns left the descriptions five cells, and ``palette``, ``Alerts``,
``Attention`` or ``Filter`` showed as ``pale…``, ``Aler…``, ``Atte…``, ``Filt…``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import Static

from tests.fleet.test_fleet_tui import _loaded, _root
from tests.tui.pilot import settle, until
from tui.app import TapedeckApp
from tui.screens.help import HelpScreen

SIZES = [(60, 20), (80, 24), (120, 40)]
KEYMAP = Path(
    "/nonexistent/tapedeck/keymap.toml"
)  # the notes name it: a path of a test's own differs each run
Snap = Callable[..., bool]


def _app(tmp_path: Path) -> TapedeckApp:
    """The fleet of ``_root``'s three sessions, as ``tests/fleet/test_fleet_tui.py`` opens it, but for the keymap."""
    root = _root(tmp_path)
    return TapedeckApp(root, follow=False, interval=0.02, keymap_file=KEYMAP, fleet_roots=[root])


async def _help_up(pilot: Pilot[None]) -> HelpScreen:
    """The fleet loaded, its alert toast taken off, then ``?``."""
    await _loaded(pilot, 3)
    await until(pilot, lambda: bool(pilot.app._notifications))
    pilot.app.clear_notifications()
    await pilot.press("question_mark")
    await until(pilot, lambda: isinstance(pilot.app.screen, HelpScreen))
    await settle(pilot)
    assert isinstance(pilot.app.screen, HelpScreen)
    return pilot.app.screen


@pytest.mark.anyio
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_every_word_of_the_fleet_help_is_whole(tmp_path: Path, size: tuple[int, int]) -> None:
    """Each description's words, and each binding id, stand whole in the keys as the help box draws them."""
    app = _app(tmp_path)
    async with app.run_test(size=size) as pilot:
        screen = await _help_up(pilot)
        keys = screen.query_one("#help-keys", Static)
        lines = ["".join(s.text for s in strip) for strip in keys.render_lines(Region(0, 0, *keys.size))]
        words = {word for line in lines for word in line.split()}
        assert "fleet.open" in words and "Attention" in words  # the fleet table's own keys are there
        for entry in screen.entries:
            missing = [w for w in [*entry.description.split(), entry.binding_id] if w and w not in words]
            assert not missing, (entry, missing, lines)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_fleet_help(snap_compare: Snap, tmp_path: Path, size: tuple[int, int]) -> None:
    """The fleet's help as it opens: at 60 columns each scope heads its keys, wider it is a column beside them."""

    async def shown(pilot: Pilot[None]) -> None:
        await _help_up(pilot)

    assert snap_compare(_app(tmp_path), terminal_size=size, run_before=shown)
