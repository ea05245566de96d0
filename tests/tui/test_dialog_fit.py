"""Every modal dialog fits an 80x24 terminal: each of its fields and buttons is wholly in sight without scrolling."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, TextArea

from tests.tui.logs import policy_log
from tests.tui.pilot import make_app, quiet, settle, until
from tests.tui.screens_policy.harness import PolicyHarness
from tests.tui.screens_policy.harness import settle as settle_policy
from tests.tui.screens_policy.scenarios import demo
from tui.screens.checkpoints import CheckpointsScreen
from tui.screens.config import ConfigScreen
from tui.screens.folds import FoldsScreen

pytestmark = pytest.mark.anyio
CONTROLS = (Button, Input, TextArea, Checkbox)


def main_app(tmp_path: Path) -> App[Any]:
    return make_app(policy_log().write(tmp_path / "session.jsonl"))


def policy_app(screen: type) -> Callable[[Path], App[Any]]:
    return lambda tmp_path: PolicyHarness(demo(tmp_path / "s"), screen)


# name -> (app builder, keys that open the dialog)
DIALOGS: dict[str, tuple[Callable[[Path], App[Any]], tuple[str, ...]]] = {
    "filter": (main_app, ("f",)),
    "note": (main_app, ("a",)),
    "checkpoint": (main_app, ("K",)),
    "message": (main_app, ("m",)),
    "stop": (main_app, ("S",)),
    "rewind": (policy_app(CheckpointsScreen), ("w",)),
    "config": (policy_app(ConfigScreen), ("e", "backspace", "4", "enter")),
    "expand": (policy_app(FoldsScreen), ("down", "down", "x")),
    "full-result": (policy_app(FoldsScreen), ("down", "v")),
}


def hidden_controls(dialog: ModalScreen[Any]) -> list[Widget]:
    """The dialog's fields and buttons not wholly on the screen (cut by its edge or scrolled out of their box)."""
    hidden = []
    for control in (w for w in dialog.query("*") if isinstance(w, CONTROLS)):
        seen = dialog.find_widget(control).visible_region
        if seen.size != control.region.size or not dialog.region.contains_region(seen):
            hidden.append(control)
    return hidden


@pytest.mark.parametrize("size", [(80, 24), (150, 45)], ids=["80x24", "150x45"])
@pytest.mark.parametrize("name", list(DIALOGS))
async def test_every_dialog_fits_without_scrolling_and_leaves_a_footer_in_sight(
    tmp_path: Path, name: str, size: tuple[int, int]
) -> None:
    """Every control of each dialog is in sight without scrolling. And the full result view (``v``), at the bottom
    since toasts took the rows above it, covered the footer of the Folds screen: no key was in sight while it was
    up. Each dialog's box ends above the last row, where a footer shows the keys: its own, or the screen's beneath
    it."""
    from textual.widgets import Footer

    build, keys = DIALOGS[name]
    app = build(tmp_path)
    async with app.run_test(size=size) as pilot:
        if isinstance(app, PolicyHarness):
            await settle_policy(pilot)
        else:
            await settle(pilot)
        await pilot.press(*keys)
        await until(pilot, lambda: isinstance(app.screen, ModalScreen))
        await quiet(pilot)
        dialog = app.screen
        assert [w for w in dialog.query("*") if isinstance(w, CONTROLS)] or name == "full-result"
        assert not hidden_controls(dialog), [(c, c.region) for c in hidden_controls(dialog)]
        assert dialog.query_one(dialog.BOX).region.bottom < size[1], dialog.query_one(dialog.BOX).region
        footers = [*dialog.query(Footer)] or [*app.screen_stack[-2].query(Footer)]
        assert [footer.region.y for footer in footers] == [size[1] - 1]


async def test_the_rewind_confirm_draws_each_node_on_one_line_at_80_columns(tmp_path: Path) -> None:
    """At 80 columns the rewind dialog's node lines (seq, kind, size, content) ran past its box and wrapped, a
    call's arguments spilling onto a row of their own; each node is one row now, its content cut to fit."""
    from textual.containers import VerticalScroll
    from textual.geometry import Region
    from textual.widgets import Static

    from tui.screens.confirm import ConfirmScreen

    app = policy_app(CheckpointsScreen)(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle_policy(pilot)
        await pilot.press("w")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await quiet(pilot)
        body = app.screen.query_one(VerticalScroll).query_one(Static)
        width, height = body.size
        lines = ["".join(s.text for s in strip).rstrip() for strip in body.render_lines(Region(0, 0, width, height))]
        nodes = app.screen_stack[-2]._view.preview_for(None).nodes  # type: ignore[attr-defined]
        first = next(i for i, line in enumerate(lines) if line.split()[:1] == [str(nodes[0].seq)])
        drawn = lines[first : first + len(nodes)]
        assert [line.split()[0] for line in drawn] == [str(n.seq) for n in nodes], lines
        for node, line in zip(nodes, drawn, strict=True):
            assert node.kind in line and node.summary[:8] in line, lines
        assert lines[first + len(nodes)].startswith("The agent may run on"), lines  # no node spilled onto a row


@pytest.mark.parametrize("size", [(80, 24), (150, 45)], ids=["80x24", "150x45"])
async def test_the_help_screen_names_its_close_key_in_a_footer(tmp_path: Path, size: tuple[int, int]) -> None:
    """The ``?`` help screen, a screen of its own, had no footer: its last rows were blank, and how to leave it was
    written only in its table of keys, among dozens, scrolled out of sight at 80x24. Its footer says it, under the
    help box."""
    from textual.widgets import Footer

    from tui.screens.help import HelpScreen

    app = main_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await quiet(pilot)
        (footer,) = app.screen.query(Footer)
        assert footer.region.y == size[1] - 1
        assert app.screen.query_one("#help-dialog").region.bottom <= footer.region.y
        keys = [key for key in footer.query("FooterKey") if key.display]
        assert any(key.description == "Close help" for key in keys), [key.description for key in keys]
