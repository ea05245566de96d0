"""The fleet and the screens it opens, with Pilot: a row action's toasts worded as an open session's for the same
op; a note's toast saying whether it was added, replaced or removed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, TextArea

from core.control.inbox import inbox_path
from tests.fleet.test_fleet_tui import _answer, _answers_awaited, _app, _hosts, _loaded, _pause_sent, _root
from tests.tui.pilot import raised_toasts, settle, until

__all__ = ["_answers_awaited", "_hosts"]  # the fleet tests' fixtures: hosts released, answers awaited


@pytest.mark.anyio
@pytest.mark.parametrize(("key", "said"), [("P", "The pause"), ("m", "Your message"), ("S", "The stop")])
async def test_a_row_actions_refusal_names_the_op_as_an_open_sessions_toast_does(
    tmp_path: Path, key: str, said: str
) -> None:
    """The fleet began its toasts with the op capitalised as a word of its own ('Pause to Write the changelog: …',
    'Message to …'), where an open session says 'The pause …', 'Your message …': the same request, told in the
    words of ``TrackedRequest.asked``."""
    root = _root(tmp_path)
    calm = root / "p" / "calm-a" / "session.jsonl"
    app = _app([root])
    toasts = raised_toasts(app)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _loaded(pilot, 3)
        screen.query_one(DataTable).move_cursor(row=screen.shown.index(str(calm)))
        await pilot.press(key)
        await until(pilot, lambda: any(n.title == "Not sent" for n in toasts))
        (toast,) = [str(n.message) for n in toasts if n.title == "Not sent"]
        assert toast.startswith(f"{said} to Write the changelog: a DSH session no tapedeck bridge runs"), (
            toast
        )
        assert not inbox_path(calm).exists()


@pytest.mark.anyio
async def test_a_row_action_sent_and_answered_is_told_as_an_open_sessions_request(tmp_path: Path) -> None:
    """'Pause sent to …' became 'The pause was sent to …', as an open session's 'The pause was sent.'; the answer
    names the request in the same words."""
    root = _root(tmp_path)
    live = root / "p" / "live-c" / "session.jsonl"
    app = _app([root])
    toasts = raised_toasts(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await _pause_sent(pilot, live)
        await until(pilot, lambda: any("was sent" in str(n.message) for n in toasts))
        sent = [str(n.message) for n in toasts if "was sent" in str(n.message)]
        assert sent == ["The pause was sent to Port the CLI to the new config."], sent
        await _answer(pilot, live, "applied", None)
        (answer,) = [str(n.message) for n in toasts if n.title == "host"]
        assert answer == "The host applied the pause sent to Port the CLI to the new config.", answer


@pytest.mark.anyio
async def test_the_note_toast_says_whether_the_note_was_added_replaced_or_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``a`` said 'Noted seq N' both for a new note and for one that replaced the note there before: the toast
    says which, as ``tapedeck note`` does."""
    from core.read.notes import sidecar_paths
    from core.shared.text import quoted_path
    from tests.tui.logs import policy_log
    from tests.tui.pilot import make_app, settled_main_screen
    from tui.screens.confirm import AskScreen

    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    toasts = raised_toasts(app)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settled_main_screen(pilot)
        seq = screen.events.current_seq
        assert seq is not None
        for typed, said in [
            ("first", "Added a note on"),
            ("second", "Replaced the note on"),
            ("", "Removed the note on"),
        ]:
            await pilot.press("a")
            await until(pilot, lambda: isinstance(app.screen, AskScreen))
            app.screen.query_one(TextArea).text = typed
            await pilot.press("enter")
            want = f"{said} seq {seq} ({quoted_path(sidecar_paths(path)[0])})."
            await until(pilot, lambda w=want: any(str(n.message) == w for n in toasts))


def _alerts_drawn(app: Any) -> list[str]:
    """The Alerts screen's lines as drawn."""
    return ["".join(s.text for s in strip) for strip in app.screen._compositor.render_strips()]


@pytest.mark.anyio
@pytest.mark.parametrize("size", [(80, 24), (60, 20)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_fleets_alerts_name_their_session_when_narrow_and_enter_opens_it(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """Opened from the fleet on a narrow terminal, the Alerts screen left out its session column first, so nothing
    said which session raised an alert; Enter on an alert of a session not open said only 'open it from
    the fleet table'. The session stays, its title cut to the room; Enter opens the alert's session as Enter on its
    fleet row does (going back returns to that row)."""
    from core.alerts.engine import Alert
    from tui.screens.alerts import AlertsScreen
    from tui.screens.main import MainScreen

    root = _root(tmp_path)
    calm, broken = (root / "p" / sid / "session.jsonl" for sid in ("calm-a", "broken-b"))
    app = _app([root])
    async with app.run_test(size=size) as pilot:
        screen = await _loaded(pilot, 3)
        await until(pilot, lambda: len(app.board.alerts) == 1)  # broken-b's error streak
        # one of calm-a's, of a day before today, its session titled long: the columns take more room
        alert = Alert(
            "calm-a", str(calm), "rewind-guard", 345, "critical", "the rewind would drop a pinned step", 1
        )
        app.board.add(alert, str(calm), "Write the changelog for the 2.0 release")
        screen.query_one(DataTable).move_cursor(row=screen.shown.index(str(calm)))
        await pilot.press("enter")  # another session open under the alerts
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AlertsScreen))
        table = app.screen.query_one("#alerts-table", DataTable)
        await until(pilot, lambda: table.row_count == 2)
        await settle(pilot)  # laid out for the screen's width
        assert "session" in [str(c.label) for c in table.columns.values()], list(table.columns)
        drawn = _alerts_drawn(app)
        assert any("Fix the fla" in line for line in drawn), "\n".join(drawn)
        assert any("Write the c" in line for line in drawn), "\n".join(drawn)
        assert table.max_scroll_x == 0
        table.move_cursor(row=1)  # broken-b's (calm-a's is of 1970)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MainScreen) and app.live is not None
                    and app.live.path == broken)  # fmt: skip
        assert [type(s).__name__ for s in app.screen_stack[1:]] == ["FleetScreen", "MainScreen"]
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        assert screen.current_key == str(broken)


@pytest.mark.anyio
async def test_an_alert_not_of_today_shows_its_date(tmp_path: Path) -> None:
    """The alert's time was its time of day alone: yesterday's alert read like one of this morning. One not raised
    today (UTC, as every time the app shows) gives its date before its time to the minute (before this year, its
    date alone); today's its time alone."""
    import time

    from core.alerts.engine import Alert
    from tui.screens.alerts import COLUMNS, AlertsScreen

    root = _root(tmp_path)
    log = str(root / "p" / "calm-a" / "session.jsonl")
    app = _app([root])
    async with app.run_test(size=(80, 24)) as pilot:
        await _loaded(pilot, 3)
        await until(pilot, lambda: len(app.board.alerts) == 1)
        now = int(time.time() * 1000)
        for at in (now - 86_400_000, now):
            app.board.add(Alert("calm-a", log, "loop", 3, "warning", "the same call again", at), log)
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AlertsScreen))
        table = app.screen.query_one("#alerts-table", DataTable)
        await until(pilot, lambda: table.row_count == 3)
        times = [str(table.get_row_at(n)[COLUMNS.index("time")]) for n in range(3)]
        day_before = time.gmtime(now / 1000 - 86_400)
        dated = "%m-%d %H:%M" if day_before.tm_year == time.gmtime(now / 1000).tm_year else "%Y-%m-%d"
        streak = app.board.alerts[-1].at  # broken-b's, in 2096: its year too
        assert streak is not None
        assert times == [time.strftime(dated, day_before), time.strftime("%H:%M:%S", time.gmtime(now / 1000)),
                         time.strftime("%Y-%m-%d", time.gmtime(streak / 1000))], times  # fmt: skip
        assert table.max_scroll_x == 0 and "session" in [str(c.label) for c in table.columns.values()]


@pytest.mark.anyio
async def test_an_error_given_as_a_mapping_is_said_key_by_key(tmp_path: Path) -> None:
    """A host's error given as a mapping of what is wrong with each key was said as its raw pairs ('refused:
    slice.fold.pinSteps=must be 0 or more, value=-1'): each key is named, then what is wrong with it, as the
    screen words its own errors; a value that is no text is given as its JSON."""
    import orjson

    from core.control.inbox import REJECTED, outcome_event
    from tests.tui.logs import policy_log
    from tests.tui.pilot import make_app, settle
    from tui.screens.policy_screen import PolicyScreen

    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path, follow=True)
    toasts = raised_toasts(app)
    error = {"slice.fold.pinSteps": "must be 0 or more", "got": -1}
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await until(pilot, lambda: app.control_unavailable() is None)
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, PolicyScreen))
        app.send_control("config.set", {"key": "slice.fold.pinSteps", "value": -1}, "pinSteps")
        inbox = path.parent / "control.jsonl"
        await until(pilot, lambda: inbox.exists() and inbox.read_bytes().endswith(b"\n"))
        request = orjson.loads(inbox.read_bytes().splitlines()[-1])
        seq = len(path.read_bytes().splitlines())
        answer = {**outcome_event(request, REJECTED), "seq": seq, "time": 1786000000000}
        answer["data"]["error"] = error
        with path.open("ab") as log:
            log.write(orjson.dumps(answer) + b"\n")
        await until(pilot, lambda: any(n.title == "Rejected" for n in toasts))
        (said,) = [str(n.message) for n in toasts if n.title == "Rejected"]
        assert said == (
            "The change of slice.fold.pinSteps to -1 was refused: slice.fold.pinSteps: must be 0 or more; got: -1."
        ), said
