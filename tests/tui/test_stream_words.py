"""The key that hides the model streams is named for them wherever it is named: the footer, ``?``'s key table and
the palette say "streams", as the legend above that table and the README do, never "chunks"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.pilot import make_app, settled_main_screen
from tui.screens.help import help_entries

pytestmark = pytest.mark.anyio


async def test_the_hide_streams_key_is_described_as_the_legend_describes_it(fixtures_dir: Path) -> None:
    """``?`` said ``h  Hide chunks`` under a legend that says ``h hides the streams``: two names for one row kind."""
    app = make_app(fixtures_dir / "multi-turn.session.jsonl")
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await settled_main_screen(pilot)
        entry = next(e for e in help_entries(app, screen) if e.binding_id == "main.hide_chunks")
        assert entry.description == "Hide streams", entry
        app.action_help()
        await pilot.pause()
        legend = " ".join(text for _term, text in app.screen.legend)
        assert f"{entry.keys} hides the streams" in legend, legend
        palette = [c.title for c in app.get_system_commands(screen)]
        assert not [title for title in palette if "chunk" in title.lower()], palette
