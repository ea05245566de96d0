"""The footer's keys composed again after its screen went away (a dismissed screen's bindings changed just before)."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen

from tui.widgets.footer import PriorityFooter


class _Keys(Screen[None]):
    BINDINGS = [Binding("x", "noop", "Nothing")]

    def compose(self) -> ComposeResult:
        yield PriorityFooter()


@pytest.mark.anyio
async def test_a_footer_composed_again_once_its_screen_is_gone_does_nothing() -> None:
    """Textual composes a footer's keys again after the next refresh once its screen's bindings changed; when the
    screen was dismissed meanwhile (escape right after a new alert refilled the Alerts screen's table), the footer's
    fit asked the screen it no longer had and the app ended on NoScreen. A footer no longer attached fits nothing."""
    app: App[None] = App()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = _Keys()
        await app.push_screen(screen)
        footer = screen.query_one(PriorityFooter)
        await app.pop_screen()
        await pilot.pause()
        assert not footer.is_attached
        await footer.recompose()  # what the footer's call_after_refresh runs
        await pilot.pause()
