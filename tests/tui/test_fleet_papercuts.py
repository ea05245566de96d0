"""The fleet and the screens it opens, with Pilot: a row action's toasts worded as an open session's for the same
op; a note's toast saying whether it was added, replaced or removed."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, TextArea

from core.control.inbox import inbox_path
from tests.fleet.test_fleet_tui import _answer, _answers_awaited, _app, _hosts, _loaded, _pause_sent, _root
from tests.tui.pilot import raised_toasts, until

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
