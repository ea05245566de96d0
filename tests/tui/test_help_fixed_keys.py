"""``?`` lists every key that works on the screen it was opened on: the keys a keymap rebinds and Textual's own,
which it cannot (marked fixed), each from the screen's bindings."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Static

from tests.tui.logs import policy_log
from tests.tui.pilot import make_app, settle, until
from tui.screens.help import HelpEntry, HelpScreen, help_entries
from tui.screens.main import MainScreen

pytestmark = pytest.mark.anyio


def _listed(entries: list[HelpEntry]) -> set[tuple[str, str]]:
    """(key, what it does) of every key the entries list."""
    return {(key, entry.description) for entry in entries for key in entry.keys.split(" / ")}


async def test_help_lists_textuals_own_keys_as_fixed(tmp_path: Path) -> None:
    """The help listed only the keys a keymap can rebind and named Textual's own in a note: tab and shift+tab,
    copying a selection, the detail pane's scroll keys were missing from the list of keys that work on the main
    screen. Every binding with a description that works there is listed now, Textual's own marked fixed."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        main = app.screen
        assert isinstance(main, MainScreen)
        active = [
            (app.get_key_display(binding), binding.description)
            for _node, binding, _enabled, _tip in main.active_bindings.values()
            if binding.description and not binding.system
        ]
        entries = help_entries(app, main)
        assert set(active) <= _listed(entries), set(active) - _listed(entries)
        fixed = {(e.scope, e.description) for e in entries if e.fixed}
        assert {("everywhere", "Focus Next"), ("everywhere", "Copy selected text"),
                ("detail pane", "Scroll Down")} <= fixed, fixed  # fmt: skip
        assert all(e.binding_id in app.binding_ids() for e in entries if not e.fixed)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        keys = app.screen.query_one("#help-keys", Static)
        await until(
            pilot, lambda: keys.size.height > len(entries)
        )  # laid out: a line per key, a blank per scope
        line = next(
            text for y in range(keys.size.height) if "Focus Next" in (text := keys.render_line(y).text)
        )
        assert line.split()[-1] == "fixed" and "tab" in line.split(), line


async def test_help_opened_from_a_text_field_lists_its_editing_keys(tmp_path: Path) -> None:
    """With the search field focused (``?`` types into it; the palette's Help opens the help), the help lists the
    field's editing keys as fixed keys of the text field, where the note only named them."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await until(pilot, lambda: isinstance(app.focused, Input))
        entries = help_entries(app, app.screen)
        field = {(e.keys, e.description) for e in entries if e.scope == "text field" and e.fixed}
        assert ("^u / super+⌫", "Delete all to the left") in field, field
        assert any(e.binding_id == "search.close" for e in entries)


@pytest.mark.parametrize("keys", [(), ("t",), ("C",)], ids=["main", "tape", "config"])
async def test_help_lists_each_key_once_where_it_belongs(tmp_path: Path, keys: tuple[str, ...]) -> None:
    """Textual's keys of every screen (focus next and previous, copying the selection) were listed under the screen's
    own group, as if that screen alone took them, and again under a widget's group that copies alike (the Config
    screen's text field). They are listed once, among the keys that work everywhere."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
        await settle(pilot)
        entries = help_entries(app, app.screen)
        screen_wide = {"Focus Next", "Focus Previous", "Copy selected text"}
        assert {
            e.description: e.scope for e in entries if e.description in screen_wide and e.fixed
        } == dict.fromkeys(screen_wide, "everywhere")
        everywhere = _listed([e for e in entries if e.scope == "everywhere"])
        again = {
            (e.scope, key) for e in entries if e.scope != "everywhere" for key in _listed([e]) & everywhere
        }
        assert not again, again
