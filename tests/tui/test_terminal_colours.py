"""NO_COLOR and a dumb terminal get no colour at all. NO_COLOR greyed every colour instead (in truecolor on a
truecolor terminal), and ``TERM=dumb``, in which Textual's console finds no colours, was drawn in truecolor: a
line's colours are rendered in truecolor when the console has no colour system."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.terminal_theme import SVG_EXPORT_THEME
from textual.filter import NoColor

from tests.tui.logs import policy_log
from tests.tui.pilot import make_app, settle

pytestmark = pytest.mark.anyio
PLAIN = {  # the environment of each case beside TERM=xterm-256color, COLORTERM unset and no NO_COLOR
    "NO_COLOR on a truecolor terminal": {"NO_COLOR": "1", "COLORTERM": "truecolor"},
    "NO_COLOR, even empty": {"NO_COLOR": ""},
    "TERM=dumb": {"TERM": "dumb"},
}


def colours_drawn(svg: str) -> set[str]:
    """The colours a screenshot fills its text and cells with."""
    return set(re.findall(r"fill: (#[0-9a-f]{6})", svg))


@pytest.mark.parametrize("case", list(PLAIN))
async def test_no_colour_is_drawn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    """The main screen drawn under each case: the screenshot holds the terminal's own foreground and background
    (and the foreground dimmed), no colour of the app's; Textual's filter that drops every colour is on."""
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("COLORTERM", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    for name, value in PLAIN[case].items():
        monkeypatch.setenv(name, value)
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.no_color and any(isinstance(f, NoColor) for f in app.get_line_filters())
        drawn = colours_drawn(app.export_screenshot())
        own = {SVG_EXPORT_THEME.foreground_color.hex, SVG_EXPORT_THEME.background_color.hex}
        assert own <= drawn and len(drawn - own) <= 1, drawn  # the one more: the foreground dimmed


async def test_a_terminal_of_colours_is_drawn_in_colour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without NO_COLOR, on a terminal of colours, the app's colours are drawn (the cases above are not
    colourless by accident)."""
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert not app.no_color and not any(isinstance(f, NoColor) for f in app.get_line_filters())
        assert len(colours_drawn(app.export_screenshot())) > 6
