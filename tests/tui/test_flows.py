"""Pilot flows on the main screen: tailing, follow/pause, search, filters that survive appends, navigation."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.tui.logs import Log, append, policy_log
from tests.tui.pilot import (
    main_screen,
    make_app,
    open_filter,
    palette_searched,
    settle,
    settled_main_screen,
    until,
)
from tui.screens.filter import FilterScreen
from tui.screens.help import HelpScreen
from tui.screens.main import MainScreen
from tui.widgets.search_bar import SearchBar

pytestmark = pytest.mark.anyio
SIZE = (150, 40)


def write_partial(tmp_path: Path, upto: int) -> tuple[Log, Path]:
    log = policy_log()
    path = tmp_path / "s" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(log.lines([log.header, *log.events[:upto]]))
    return log, path


def status_text(screen: MainScreen) -> str:
    return str(screen.query_one("#status").render())


async def test_tailing_shows_appends_and_pause_counts_new_rows(tmp_path: Path) -> None:
    log, path = write_partial(tmp_path, 14)
    app = make_app(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        events = screen.events
        assert len(events.view) == 14 and events.following and events.cursor == 13

        append(path, log, 14)  # the writer appends while we follow
        n = len(log.events)
        await until(pilot, lambda: len(events.view) == n)
        await settle(pilot)
        assert events.following and events.current_seq == n - 1
        assert "following" in status_text(screen) and f"row {n}/{n}" in status_text(screen)  # after the frame

        await pilot.press("up")  # scrolling up pauses follow mode
        assert not events.following
        more = Log()
        more.events = [dict(e) for e in log.events]
        more.turn(4, "again", "ok")
        append(path, more, n)
        await until(pilot, lambda: len(events.view) == len(more.events))
        await settle(pilot)
        assert events.current_seq == n - 2  # the cursor stayed where the operator left it
        assert f"scroll lock +{len(more.events) - n} new" in status_text(screen)

        await pilot.press("F")
        assert events.following and events.new_rows == 0
        assert events.current_seq == len(more.events) - 1


async def test_navigation_keys(tmp_path: Path) -> None:
    log = policy_log()
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        ev = screen.events
        starts = app.live.facts.turn_starts  # type: ignore[union-attr]
        await pilot.press("g")
        assert ev.current_seq == 0 and not ev.following
        await pilot.press("right_square_bracket")
        assert ev.current_seq == starts[0]
        await pilot.press("right_square_bracket")
        assert ev.current_seq == starts[1]
        await pilot.press("left_square_bracket")
        assert ev.current_seq == starts[0]
        await pilot.press("right_curly_bracket")
        assert ev.current_seq == app.live.facts.step_starts[0]  # type: ignore[union-attr]
        await pilot.press("right_curly_bracket", "left_curly_bracket")
        assert ev.current_seq == app.live.facts.step_starts[0]  # type: ignore[union-attr]
        await pilot.press("e")
        assert ev.current_seq == app.live.facts.errors[0]  # type: ignore[union-attr]
        await pilot.press("G")
        assert ev.current_seq == len(log.events) - 1 and ev.following
        await pilot.press("E")
        assert ev.current_seq == app.live.facts.errors[-1]  # type: ignore[union-attr]
        await pilot.press("down", "down")
        assert ev.current_seq == app.live.facts.errors[-1] + 2  # type: ignore[union-attr]


async def test_search_runs_in_the_background_and_n_steps_through_matches(tmp_path: Path) -> None:
    log = policy_log()
    path = log.write(tmp_path / "session.jsonl")
    expected = [e["seq"] for e in log.events if "passed" in orjson.dumps(e).decode().casefold()]
    assert len(expected) >= 1
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        await pilot.press("slash")
        assert screen.query_one(SearchBar).display
        await pilot.press(*"PASSED", "enter")
        await settle(pilot)
        assert list(screen.search_scan.seqs) == expected  # type: ignore[union-attr]
        await pilot.press("escape")
        assert screen.events.has_focus
        await pilot.press("g", "n")
        assert screen.events.current_seq == expected[0]
        assert f"1/{len(expected)} matches" in status_text(screen)
        await pilot.press("N")  # wraps to the last match
        assert screen.events.current_seq == expected[-1]
        await pilot.press("slash", *"zzz-no-such-text", "enter")
        await settle(pilot)
        assert "no matches" in status_text(screen)


async def test_filter_survives_appends(tmp_path: Path) -> None:
    log, path = write_partial(tmp_path, 14)
    app = make_app(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        types = (await open_filter(pilot)).query_one("#filter-types")
        types.value = "tool/result"  # type: ignore[attr-defined]
        types.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        results = [e["seq"] for e in log.events[:14] if e["type"] == "tool/result"]
        assert list(screen.events.view.base) == results

        append(path, log, 14)
        await until(pilot, lambda: app.live.session.next_seq == len(log.events))  # type: ignore[union-attr]
        await settle(pilot)
        assert list(screen.events.view.base) == [e["seq"] for e in log.events if e["type"] == "tool/result"]
        assert "filter: type tool/result" in status_text(screen)

        await pilot.press("x")
        await settle(pilot)
        assert len(screen.events.view) == len(log.events)


async def test_filter_dialog_reports_bad_fields(tmp_path: Path) -> None:
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        dialog = await open_filter(pilot)
        turns, regex = dialog.query_one("#filter-turns"), dialog.query_one("#filter-regex")
        turns.value = "9-2"  # type: ignore[attr-defined]
        turns.focus()
        await pilot.press("enter")  # Enter in a field applies
        assert isinstance(app.screen, FilterScreen)
        assert "ends before it starts" in str(dialog.query_one("#filter-error").render())
        turns.value = "3"  # type: ignore[attr-defined]
        regex.value = "(unclosed"  # type: ignore[attr-defined]
        regex.focus()
        await pilot.press("enter")
        assert "does not compile" in str(dialog.query_one("#filter-error").render())
        regex.value = "boom"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await settle(pilot)
        screen = main_screen(app)
        assert screen is not None and screen.filter.turns == (3, 3)
        assert [app.live.event(s)["type"] for s in screen.events.view.base] == ["tool/result"]  # type: ignore[union-attr,index]


async def test_surface_view_and_expanding_a_tape_entry(tmp_path: Path) -> None:
    log = policy_log()
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        session = app.live.session  # type: ignore[union-attr]
        await pilot.press("s")
        await settle(pilot)
        assert list(screen.events.view.base) == session.surface
        tape = session.surface[0]
        await pilot.press("g", "enter")
        await settle(pilot)
        rows = [screen.events.view.row(i) for i in range(len(screen.events.view))]
        originals = [3, 4, 6, 9]  # turn 1's prompt, call message, original result (under the fold), answer
        assert rows[: 1 + len(originals)] == [(tape, 0), *[(s, 1) for s in originals]]
        await pilot.press("enter")
        assert len(screen.events.view) == len(session.surface)
        await pilot.press("s")
        assert len(screen.events.view) == len(log.events)


async def test_copy_selected_event(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TMUX", raising=False)
    log = policy_log()
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert orjson.loads(app.clipboard) == log.events[-1]
        screen = main_screen(app)
        assert screen is not None
        screen.events.go_seq(log.events[-6]["seq"])  # the failed tool result
        await pilot.press("Y")
        await settle(pilot)
        assert app.clipboard == "Traceback: boom"


async def test_help_is_generated_from_bindings(tmp_path: Path) -> None:
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        ids = {entry.binding_id for entry in app.screen.entries}
        assert {"main.search", "main.filter", "main.follow", "app.tape", "app.config", "list.expand"} <= ids
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_palette_lists_every_bound_action(tmp_path: Path) -> None:
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = {command.title for command in app.get_system_commands(app.screen)}
        for binding in [*MainScreen.BINDINGS, *app.BINDINGS]:
            assert binding.description in titles  # type: ignore[union-attr]
        command = next(c for c in app.get_system_commands(app.screen) if c.title == "Surface/full")
        await command.callback()  # type: ignore[misc]
        assert main_screen(app).mode == "surface"  # type: ignore[union-attr]
        await pilot.press("ctrl+p")
        await until(pilot, lambda: palette_searched(app))  # not shut down under its search (ci32's NoMatches)


async def test_policy_screens_open_from_their_keys(tmp_path: Path) -> None:
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for key, name in [("t", "TapeScreen"), ("o", "FoldsScreen"), ("c", "CheckpointsScreen"),
                          ("r", "RouterScreen"), ("p", "ProlongScreen"), ("C", "ConfigScreen")]:  # fmt: skip
            await pilot.press(key)
            await settle(pilot)
            assert type(app.screen).__name__ == name
            await pilot.press("escape")
            await settle(pilot)
            assert isinstance(app.screen, MainScreen)


async def test_after_a_truncation_the_status_line_keeps_the_follow_state_and_row_at_80_columns(tmp_path: Path) -> None:
    """The notice of a reset (``re-synced: PATH was truncated …``) held its whole length in the status line for
    good, and at 80 columns it pushed out the follow state and the row counter ever after; the line says
    ``re-synced`` and the notice whole only where it fits beside them."""
    log, path = write_partial(tmp_path, 20)
    app = make_app(path, follow=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settled_main_screen(pilot)
        path.write_bytes(log.lines([log.header, *log.events[:8]]))  # truncated
        await until(pilot, lambda: bool(app.live and app.live.notices))  # type: ignore[union-attr]
        await settle(pilot)
        status = status_text(screen)
        assert "re-synced" in status and "following" in status and "row 8/8" in status, status
    app = make_app(path, follow=True)
    async with app.run_test(size=(200, 24)) as pilot:
        screen = await settled_main_screen(pilot)
        path.write_bytes(log.lines([log.header, *log.events[:4]]))
        await until(pilot, lambda: bool(app.live and app.live.notices))  # type: ignore[union-attr]
        await settle(pilot)
        assert "re-synced: " in status_text(screen) and "truncated" in status_text(screen), status_text(screen)
