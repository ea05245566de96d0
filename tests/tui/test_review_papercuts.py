"""The TUI papercuts the last review left: each as the operator meets it, driven through the keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from core.control.config import validate_config
from tests.alerts.crafted import HEADER, Log
from tests.tui.pilot import NO_KEYMAP, recorded, settle, until
from tui.alerts import AlertRaised
from tui.app import TapedeckApp
from tui.screens.alerts import COLUMNS, AlertsScreen

pytestmark = pytest.mark.anyio


def _write(path: Path, events: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))


@pytest.mark.parametrize("title", ["Fix the\nflaky parser", None], ids=["titled", "untitled"])
async def test_the_alerts_list_names_a_session_by_its_title(
    tmp_path: Path, title: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The alerts screen's session column gave the head of the session's id ('crafted-') even for a session with a
    title, which is what the fleet table and the header call it by: the title now travels with the alert (on its
    ``AlertRaised``), and the row shows it on one line; the id's head only for a session with no title."""
    log = Log()
    if title is not None:
        log.add("session/title", {"title": title})
    log.turn(1)
    failed = log.result(True)
    path = tmp_path / "session.jsonl"
    _write(path, [HEADER, *log.events])
    posted: list[AlertRaised] = recorded(monkeypatch, TapedeckApp, "on_alert_raised")
    config = validate_config({"alerts": {"bell": False, "notify": False, "errorStreak": {"count": 1}}})
    app = TapedeckApp(
        path, follow=False, interval=0.02, use_watchfiles=False, keymap_file=NO_KEYMAP, config=config
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: len(app.board.alerts) == 1)
        await settle(pilot)
        assert [(m.alert.seq, m.title) for m in posted] == [(failed, title)]
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AlertsScreen))
        table = app.screen.query_one("#alerts-table", DataTable)
        await until(pilot, lambda: table.row_count == 1)
        cell = str(table.get_row_at(0)[COLUMNS.index("session")])
        assert cell == ("Fix the flaky parser" if title is not None else "crafted-")


async def test_the_help_lists_a_tables_keys_by_their_ids_and_as_a_keymap_rebinds_them(tmp_path: Path) -> None:
    """On a screen with a table, ``?`` listed Textual's table keys (cursor up and down, enter, page up …) with no
    binding id, so a keymap could not name them and the help could not show one rebound. Each key the help lists is
    one of the ids the keymap knows, and a table key the keymap moves works, and shows, on its new key."""
    from core.alerts.engine import Alert
    from tests.tui.logs import policy_log
    from tests.tui.pilot import make_app
    from tui.screens.help import HelpEntry, HelpScreen, help_entries

    path = policy_log().write(tmp_path / "session.jsonl")
    keymap = tmp_path / "keymap.toml"
    keymap.write_text('"table.cursor_down" = "j"\n"app.palette" = "f9"\n')
    app = make_app(path, keymap=keymap)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.keymap_problems == []
        for n in range(2):
            app.board.add(Alert("t-1", str(path), "loop", n, "warning", f"reason {n}", 1_000 + n), str(path))
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AlertsScreen))
        table = app.screen.query_one("#alerts-table", DataTable)
        await until(pilot, lambda: table.row_count == 2)
        entries = help_entries(app, app.screen)
        known = set(app.binding_ids())
        assert [e for e in entries if not e.fixed and e.binding_id not in known] == []
        assert HelpEntry("table", "j", "Cursor down", "table.cursor_down") in entries
        assert HelpEntry("everywhere", "f9", "palette", "app.palette") in entries
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, AlertsScreen))
        assert table.cursor_row == 0
        await pilot.press("j")
        await until(pilot, lambda: table.cursor_row == 1)


async def test_an_event_inside_a_step_that_names_none_is_listed_in_that_step(tmp_path: Path) -> None:
    """The event list gave turn '3' to the events inside step 3.1 that carry no step of their own (the user's
    prompt, logged once step 1 had started), and '3.1' to the tool call beside them: the projection now knows
    each event's step (``Session.step_of``), and the list shows '3.1' for both; the turn's start, before any step,
    stays '3'."""
    from tests.tui.logs import Log as TuiLog
    from tests.tui.pilot import main_screen, make_app

    log = TuiLog()
    log.turn(1, "a", "b")
    log.turn(2, "c", "d")
    seqs = log.turn(3, "e", "f")
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        main = main_screen(app)
        assert main is not None

        def turn_column(seq: int) -> str:
            main.events.go_seq(seq)
            line = main.events.render_line(main.events.cursor - int(main.events.scroll_y)).text
            number, turn = line.split()[:2]
            assert number == str(seq), line
            return turn

        for seq, expected in [(seqs["start"], "3"), (seqs["prompt"], "3.1"), (seqs["call"], "3.1"),
                              (seqs["answer"], "3.2"), (seqs["end"], "3")]:  # fmt: skip
            await settle(pilot)
            assert turn_column(seq) == expected, seq


async def test_the_rewind_preview_is_readable_at_80x24(tmp_path: Path) -> None:
    """At 80x24 the Checkpoints screen kept its rewind preview beside the marks, in 26 cells: the preview table had
    room for its kind column alone (no seq, no size, no content), so what a rewind would fold could not be read,
    and the confirm dialog's last line was cut. The preview goes under the marks there and shows every column, and
    the dialog shows its whole text."""
    from tests.tui.screens_policy.harness import PolicyHarness
    from tests.tui.screens_policy.harness import settle as settle_policy
    from tests.tui.screens_policy.scenarios import demo
    from tui.screens.checkpoints import CheckpointsScreen
    from tui.screens.confirm import ConfirmScreen

    app = PolicyHarness(demo(tmp_path / "s"), CheckpointsScreen)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle_policy(pilot)
        table = app.screen.query_one("#region-table", DataTable)
        assert table.row_count == 4
        assert [str(c.label) for c in table.columns.values()] == ["seq", "turn", "kind", "chars", "content"]
        # over the outcomes line and the footer
        assert table.region.right <= 80 and table.region.bottom <= 24 - 3
        assert table.virtual_size.height <= table.size.height  # every row in sight, none scrolled away
        await pilot.press("w")
        await settle_policy(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        body = app.screen.query_one(".policy-dialog-body")
        assert body.max_scroll_y == 0, "the dialog's text is cut"


async def diagnostics_heading(path: Path, named: str) -> str:
    """The Diagnostics screen's heading line of the log at ``path`` at 80 columns, once it names ``named``."""
    from tests.tui.pilot import make_app, settled_main_screen
    from tui.screens.diagnostics import DiagnosticsScreen

    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled_main_screen(pilot)
        await pilot.press("D")
        await until(pilot, lambda: isinstance(app.screen, DiagnosticsScreen))
        heading = app.screen.query_one("#policy-heading")
        await until(pilot, lambda: f"session {named}" in str(heading.render()))
        return heading.render_line(0).text.rstrip()


async def test_the_diagnostics_heading_keeps_its_hint_at_80_columns(tmp_path: Path) -> None:
    """The Diagnostics heading (97 characters) was cut at 80 columns before its key hint, 'enter: go to it': the
    heading now fits there whole, the hint and the session it names in sight."""
    from tests.tui.logs import policy_log
    from tui.screens.diagnostics import DiagnosticsScreen

    line = await diagnostics_heading(policy_log().write(tmp_path / "session.jsonl"), "t-1")
    assert line == f"{DiagnosticsScreen.HEADING} · session t-1", line
    assert "enter: go to it" in line


async def test_a_policy_heading_names_a_dsh_session_by_its_short_id_at_80_columns(
    tmp_path: Path, fixtures_dir: Path
) -> None:
    """A DSH session's id is a 36-character UUID: named whole after the heading, it pushed the Diagnostics hint
    ('enter: go to it') out of an 80-column line. The heading names the session as the fleet and the alerts do,
    by the id's first 8 characters."""
    from tui.screens.diagnostics import DiagnosticsScreen

    path = tmp_path / "session.jsonl"
    path.write_bytes((fixtures_dir / "multi-turn.session.jsonl").read_bytes())
    line = await diagnostics_heading(path, "228b7b82")
    assert line == f"{DiagnosticsScreen.HEADING} · session 228b7b82", line


async def test_a_policy_heading_with_a_wide_session_id_fits_its_line(tmp_path: Path) -> None:
    """The room left for the title was the line's width less the suffix's characters, not its cells: a session id
    of wide characters (two cells each) made the line 8 cells too wide at 80 columns, its end cut off."""
    from rich.cells import cell_len

    from tests.tui.logs import policy_log

    log = policy_log()
    log.header = {**log.header, "id": "会话会话会话会话-1"}
    line = await diagnostics_heading(log.write(tmp_path / "session.jsonl"), "会话会话会话会话")
    assert line.endswith(" · session 会话会话会话会话"), line
    assert cell_len(line) <= 80, line
