"""A paste into any text box of the app is made inert: Textual's text boxes draw what they hold as it is, so a
pasted ESC ] 52 set the clipboard, ESC [ 2J cleared the screen and U+202E turned the line around, at every redraw
of the box. Each control character is kept as its picture (␛ for ESC), and a toast says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.events import Paste
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from tests.fleet.test_fleet_tui import _app as fleet_app
from tests.fleet.test_fleet_tui import _loaded, _root
from tests.tui.logs import policy_log, release_hosts
from tests.tui.pilot import make_app, quiet, settle, until
from tui.app import inert_paste

pytestmark = pytest.mark.anyio
HOSTILE = "x\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[31mred\x9b0m\u202eevil\x7f"
PICTURED = "x␛]52;c;cHduZWQ=␇␛[2J␛[31mred�0m�evil␡"
# the keys that open each text box from the main view (``focus``: the box to move to once they are pressed)
BOXES: dict[str, tuple[tuple[str, ...], str | None]] = {
    "search": (("slash",), None),
    "filter-types": (("f",), None),
    "filter-tools": (("f",), "#filter-tools"),
    "filter-turns": (("f",), "#filter-turns"),
    "filter-regex": (("f",), "#filter-regex"),
    "note": (("a",), None),
    "checkpoint-objective": (("K",), None),
    "message": (("m",), None),
    "config-value": (("C", "e"), None),
    "config-other-key": (("C", "a"), None),
    "palette": (("ctrl+p",), None),
}


def _controls(text: str) -> list[str]:
    return [c for c in text if ord(c) < 32 and c != "\n" or 0x7F <= ord(c) <= 0x9F or 0x202A <= ord(c) <= 0x202E]


async def _paste_into_the_focused_box(pilot: Pilot[Any]) -> None:
    """Paste ``HOSTILE`` as a terminal does (to the app, which hands it to the focused widget); the box then holds
    it as pictures, draws no control character, and a toast said why."""
    app = pilot.app
    box = app.focused
    assert isinstance(box, Input | TextArea), box
    app.post_message(Paste(HOSTILE))
    await until(pilot, lambda: PICTURED in (box.value if isinstance(box, Input) else box.text))
    await until(pilot, lambda: any("control character" in str(n.message) for n in app._notifications))
    await quiet(pilot)  # the box drawn with what it holds now
    held = box.value if isinstance(box, Input) else box.text
    assert not _controls(held), held
    drawn = "\n".join("".join(s.text for s in strip) for strip in app.screen._compositor.render_strips())
    assert not _controls(drawn), drawn
    assert any("control character" in str(n.message) for n in app._notifications)


@pytest.mark.parametrize("box", list(BOXES))
async def test_a_paste_into_a_text_box_of_the_session_view_is_inert(tmp_path: Path, box: str) -> None:
    keys, focus = BOXES[box]
    app = make_app(policy_log().write(tmp_path / "demo" / "session.jsonl"))
    try:
        async with app.run_test(size=(120, 36), notifications=True) as pilot:
            await settle(pilot)
            for key in keys:
                await pilot.press(key)
                await settle(pilot)
            await until(pilot, lambda: isinstance(app.focused, Input | TextArea))
            if focus is not None:
                app.screen.query_one(focus).focus()
                await pilot.pause()
            await _paste_into_the_focused_box(pilot)
            # the palette searches for what was pasted in a worker of its own: left running as the app shuts down,
            # it looked for its list after the list was gone (NoMatches, a WorkerFailed in ci32)
            await until(pilot, lambda: not any(w.is_running and w.node is app.screen for w in app.workers))
    finally:
        release_hosts()


@pytest.mark.parametrize("keys", [("slash",), ("m",)], ids=["filter", "message"])
async def test_a_paste_into_a_text_box_of_the_fleet_is_inert(tmp_path: Path, keys: tuple[str, ...]) -> None:
    app = fleet_app([_root(tmp_path)])
    try:
        async with app.run_test(size=(120, 36), notifications=True) as pilot:
            await _loaded(pilot, 3)
            await settle(pilot)
            await pilot.press("end" if keys == ("m",) else "home", *keys)  # the live session's row for a message
            await until(pilot, lambda: isinstance(app.focused, Input | TextArea))
            await _paste_into_the_focused_box(pilot)
    finally:
        release_hosts()


def test_a_paste_keeps_its_lines_and_tabs_and_counts_what_it_made_inert() -> None:
    assert inert_paste("a\r\nb\rc\td") == ("a\nb\nc\td", 0)
    assert inert_paste(HOSTILE) == (PICTURED, 7)
