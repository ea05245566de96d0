"""Operator control from the TUI: pause/resume, message, checkpoint and stop keys, the host state in the header,
requests whose host exits, the palette and the keymap over every screen."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from textual.pilot import Pilot

import tui.live
from core.control.host_state import write_state
from core.control.inbox import append_request, outcome_event
from core.remote.inbox import MaybeWritten
from tests.tui.logs import policy_log, release_hosts
from tests.tui.pilot import (
    NO_KEYMAP,
    QUIET,
    main_screen,
    make_app,
    raised_toasts,
    says_the_host_exited,
    settle,
    until,
)
from tui.app import TapedeckApp
from tui.keymap import load_keymap
from tui.screens.confirm import AskScreen, ConfirmScreen
from tui.screens.control import CONTROL_BINDINGS
from tui.screens.toasts import INFO_SECONDS
from tui.widgets.detail import describe
from tui.widgets.header import SessionHeader

SIZE = (150, 40)
HOLDS = "The agent holds before its next model or tool call."  # the toast of a pause applied
pytestmark = pytest.mark.anyio


def _inbox(path: Path) -> list[dict]:  # type: ignore[type-arg]
    inbox = path.parent / "control.jsonl"
    return [orjson.loads(line) for line in inbox.read_bytes().splitlines()] if inbox.exists() else []


def _append(path: Path, *events: dict) -> None:  # type: ignore[type-arg]
    seq = len(path.read_bytes().splitlines()) - 1
    with path.open("ab") as f:
        for i, event in enumerate(events):
            f.write(orjson.dumps({**event, "seq": seq + i, "time": 1786000000000 + seq + i}) + b"\n")


def _header(app) -> str:  # type: ignore[no-untyped-def]
    return str(app.screen.query_one(SessionHeader).render())


async def _running(pilot: Pilot[None], app: TapedeckApp) -> None:
    """Wait until the app has settled and its header shows the host running."""
    await settle(pilot)
    await until(pilot, lambda: "host running" in _header(app))


async def _pause_requested(pilot: Pilot[None], app: TapedeckApp, path: Path) -> dict[str, Any]:
    """Once the app shows the host running, press P; the pause request it writes to the inbox."""
    await _running(pilot, app)
    await pilot.press("P")
    await until(pilot, lambda: len(_inbox(path)) == 1)
    (pause,) = _inbox(path)
    return pause


async def test_pause_then_resume_with_one_key_and_the_header_follows_the_host(tmp_path: Path) -> None:
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        pause = await _pause_requested(pilot, app, path)
        assert pause["op"] == "pause"
        write_state(path, "pausing", os.getpid(), 1)  # the host's side: applied, holding at the next call
        _append(path, outcome_event(pause, "applied"))
        await until(pilot, lambda: "host pausing" in _header(app))
        await pilot.press("P")  # the same key now resumes
        await until(pilot, lambda: len(_inbox(path)) == 2)
        assert _inbox(path)[1]["op"] == "resume"


async def test_an_applied_request_without_a_reason_is_toasted_without_an_empty_one(tmp_path: Path) -> None:
    """The toast of an outcome said ``pause:`` with nothing after the colon when the host gave no reason."""
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        pause = await _pause_requested(pilot, app, path)
        _append(path, outcome_event(pause, "applied"))
        await until(pilot, lambda: any(n.title == "Applied" for n in app._notifications))
        assert [n.message for n in app._notifications if n.title == "Applied"] == [HOLDS]
        assert [n.timeout for n in app._notifications if n.title == "Applied"] == [INFO_SECONDS]  # news, soon gone


async def test_message_checkpoint_and_stop_go_through_their_dialogs(tmp_path: Path) -> None:
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await _running(pilot, app)
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        await pilot.press(*"use the fixture", "enter")
        await until(pilot, lambda: len(_inbox(path)) == 1)
        await pilot.press("K")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        await pilot.press(*"try pyproject", "enter")
        await until(pilot, lambda: len(_inbox(path)) == 2)
        await pilot.press("S")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert _inbox(path)[2:] == []  # nothing is sent before the operator confirms
        await pilot.press("y")
        await until(pilot, lambda: len(_inbox(path)) == 3)
        message, mark, stop = _inbox(path)
        assert (message["op"], message["args"]) == ("message", {"text": "use the fixture"})
        assert (mark["op"], mark["args"]) == ("checkpoint", {"objective": "try pyproject"})
        assert stop["op"] == "stop" and stop["args"]["reason"]


async def test_a_request_whose_host_exits_turns_cancelled_and_is_withdrawn(tmp_path: Path) -> None:
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    toasts = raised_toasts(app)
    async with app.run_test(size=SIZE) as pilot:
        await _running(pilot, app)
        await pilot.press("P")
        await until(pilot, lambda: len(_inbox(path)) == 1)
        release_hosts()  # the host dies without answering
        await until(pilot, lambda: len(_inbox(path)) == 2)
        request, withdrawal = _inbox(path)
        assert withdrawal["withdraw"] == request["id"]
        await until(pilot, lambda: "host exited" in _header(app))
        cancelled = [t.message for t in toasts if t.title == "Cancelled"]
        assert cancelled and "no live host (" in cancelled[0] and "withdrawn" in cancelled[0]
        await pilot.press("P")  # control keys are off while no host runs: the key says so and sends nothing
        await until(pilot, lambda: any(t.title == "Pause/resume not sent" for t in toasts))
        assert len(_inbox(path)) == 2


@pytest.mark.parametrize("follow", [True, False])
async def test_a_request_the_host_answered_just_before_it_exited_shows_its_outcome(
    follow: bool, tmp_path: Path
) -> None:
    # A stop is applied and the host exits within milliseconds: the host poll sees it gone before the view's
    # follower (here slow, or not following at all) has read the outcome. The request was applied, not cancelled.
    path = policy_log().write(tmp_path / "session.jsonl")
    app = TapedeckApp(path, follow=follow, interval=30, use_watchfiles=False, keymap_file=NO_KEYMAP, config=QUIET)
    toasts = raised_toasts(app)
    async with app.run_test(size=SIZE) as pilot:
        pause = await _pause_requested(pilot, app, path)
        _append(path, outcome_event(pause, "applied"), {"type": "tapedeck/state", "data": {"state": "exited"}})
        write_state(path, "exited", os.getpid(), 1)
        release_hosts()
        await until(pilot, lambda: "host exited" in _header(app))
        await until(pilot, lambda: any(t.title in ("Applied", "Cancelled") for t in toasts))
        assert [t.title for t in toasts if t.title in ("Applied", "Cancelled")] == ["Applied"]
        assert _inbox(path) == [pause]  # nothing was withdrawn


async def test_a_turn_the_operator_stopped_shows_their_reason_in_its_row_and_detail(tmp_path: Path) -> None:
    path = policy_log().write(tmp_path / "session.jsonl")
    seq = len(path.read_bytes().splitlines()) - 1
    stop = {"by": "operator", "requestId": "r-7", "reason": "wrong branch"}
    _append(path, {"type": "turn/end", "data": {"turn": 3, "reason": {"kind": "aborted", "reason": {"kind": "user"}},
                                                 "stop": stop}})  # fmt: skip
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        assert screen is not None and app.live is not None
        screen.events.go_seq(seq)
        await settle(pilot)
        row = screen.events.cache.get(seq)
        assert row is not None and row.summary == "turn 3 ended: aborted by the operator: wrong branch"
        left, _, _ = describe(app.live, seq, 10_000)
        assert "why the operator stopped it (request r-7)" in left.plain and "wrong branch" in left.plain


async def test_palette_offers_every_action_of_every_screen_once(tmp_path: Path) -> None:
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert len(titles) == len(set(titles))
        for binding in CONTROL_BINDINGS:
            assert binding.description in titles
        for title in ("Checkpoints: Rewind…", "Folds: Expand for the model", "Checkpoints: Place checkpoint"):
            assert title in titles


def test_every_binding_id_help_shows_can_be_rebound(tmp_path: Path) -> None:
    app = make_app(tmp_path / "missing.jsonl")
    ids = app.binding_ids()
    for binding_id in ("policy.checkpoints.rewind", "policy.folds.expand", "policy.confirm.yes", "control.stop"):
        assert binding_id in ids
    keymap_file = tmp_path / "keymap.toml"
    keymap_file.write_text('"policy.checkpoints.rewind" = "W"\n"control.pause" = "ctrl+z"\n')
    keymap, problems = load_keymap(keymap_file, ids)
    assert problems == [] and keymap == {"policy.checkpoints.rewind": "W", "control.pause": "ctrl+z"}


async def test_the_fleet_of_a_root_shows_each_host_state_and_follows_it(tmp_path: Path) -> None:
    from tui.screens.fleet import FleetScreen

    root = tmp_path / "sessions"
    live = policy_log().write(root / "--w--" / "live-1" / "session.jsonl")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FleetScreen) and bool(app.screen.shown))
        table = app.screen.query_one("DataTable")
        assert str(table.get_row(str(live))[1]) == "running"
        write_state(live, "paused", os.getpid(), 1)
        await until(pilot, lambda: str(table.get_row(str(live))[1]) == "paused")
        release_hosts()
        await until(pilot, lambda: str(table.get_row(str(live))[1]) == "exited")


@pytest.mark.parametrize(("key", "dialog_type"), [("m", AskScreen), ("S", ConfirmScreen)])
async def test_the_message_and_stop_dialogs_say_at_once_that_the_host_exited(
    tmp_path: Path, key: str, dialog_type: type
) -> None:
    """The host exited while the message (or stop) dialog was up: the operator wrote the message to its end, and only
    Enter (y) said, in a toast, that it was not sent. The dialog says it while it is up, from the host's poll."""
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(key)
        await until(pilot, lambda: isinstance(app.screen, dialog_type))
        await says_the_host_exited(pilot, app.screen)


async def test_a_request_whose_append_may_have_been_written_is_not_called_unsent_and_its_outcome_is_announced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A remote append whose status was lost (core's ``MaybeWritten``: the line may be in the inbox) was toasted
    "Not sent" and dropped from the requests watched, so the host's later "applied" for it was never announced."""
    path = policy_log().write(tmp_path / "session.jsonl")

    def lost_status(*args: Any, **kwargs: Any) -> dict[str, Any]:  # written, but the writer cannot tell
        request = append_request(*args, **kwargs)
        raise MaybeWritten(f"the append gave no exit status, so request {request['id']} may have been written",
                           request_id=str(request["id"]))  # fmt: skip

    monkeypatch.setattr(tui.live, "append_request", lost_status)
    app = make_app(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        pause = await _pause_requested(pilot, app, path)
        await until(pilot, lambda: bool(app._notifications))
        (unsure,) = list(app._notifications)
        assert unsure.title == "May have been sent" and "may have been written" in unsure.message, unsure
        _append(path, outcome_event(pause, "applied"))
        await until(pilot, lambda: any(n.title == "Applied" for n in app._notifications))
        assert [n.message for n in app._notifications if n.title == "Applied"] == [HOLDS]


async def test_p_never_sends_a_second_pause_and_the_header_says_what_the_toast_says(tmp_path: Path) -> None:
    """The header read the host's state from host.json twice a second, behind the log: the event list showed the
    host's ``tapedeck/state`` row and the toast ``applied: pause`` while the header still said ``host running``, and
    P, deciding by that state, sent a second pause (as it did when pressed again before the host answered)."""
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        pause = await _pause_requested(pilot, app, path)
        await pilot.press("P")  # again before the host answered: nothing more is sent
        await until(pilot, lambda: any(n.title == "Not sent" for n in app._notifications))
        assert [r["op"] for r in _inbox(path)] == ["pause"]
        # the host's side, as it writes it; its host.json not read yet (the poll's half second, a slow file system)
        _append(path, {"type": "tapedeck/state", "data": {"state": "pausing"}}, outcome_event(pause, "applied"))
        await until(pilot, lambda: any(n.title == "Applied" for n in app._notifications))
        assert "host pausing" in _header(app)
        await pilot.press("P")
        await until(pilot, lambda: len(_inbox(path)) == 2)
        assert _inbox(path)[1]["op"] == "resume"


async def test_the_outcome_panel_shows_a_request_before_its_final_outcome(tmp_path: Path) -> None:
    """A key of the app's (here P on the Checkpoints screen) sent its request, but the screen's outcome panel was
    redrawn only when a final outcome came: it said no request was sent while the pause waited for the host."""
    from tests.tui.pilot import opened
    from tui.screens.checkpoints import CheckpointsScreen
    from tui.screens.policy_screen import OutcomePanel

    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await _running(pilot, app)
        screen = await opened(pilot, "c", CheckpointsScreen)
        panel = screen.query_one(OutcomePanel)
        await pilot.press("P")
        await until(pilot, lambda: len(_inbox(path)) == 1)
        await until(pilot, lambda: "pending" in str(panel.render()))
        assert "pause" in str(panel.render()) and "waiting for the host" in str(panel.render())


async def test_a_failing_host_watch_is_reported_once_and_the_watch_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host watch's worker ran with exit_on_error=False and no handler: an unexpected error in a poll was
    dropped without a word (and the outcomes it would have announced with it)."""
    from tui.screens.policy_screen import RequestLog

    real = RequestLog.poll
    failures = iter(range(3))

    def poll(self: RequestLog, *args: Any) -> Any:
        if next(failures, None) is not None:
            raise ValueError("a bug in the poll")
        return real(self, *args)

    monkeypatch.setattr(RequestLog, "poll", poll)
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    toasts = raised_toasts(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        said = "failed on an unexpected error (ValueError: a bug in the poll)"  # as every worker words it
        await until(pilot, lambda: any(said in t.message for t in toasts))
        write_state(path, "paused", os.getpid(), 1)
        await until(pilot, lambda: "host paused" in _header(app))
        assert len([t for t in toasts if "a bug in the poll" in t.message]) == 1


async def test_a_send_that_fails_on_an_unexpected_error_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The send worker ran with exit_on_error=False and caught only the errors of a write: any other left the
    request 'sending' for good, without a word."""
    from tui.screens.policy_screen import NOT_SENT, requests_for

    def send(self: tui.live.LiveSession, op: str, args: dict[str, Any]) -> dict[str, Any]:
        raise ValueError("a bug in send")

    monkeypatch.setattr(tui.live.LiveSession, "send", send)
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await _running(pilot, app)
        await pilot.press("P")
        said = "The pause was not sent: an unexpected error (ValueError: a bug in send); look at the inbox"
        await until(pilot, lambda: any(said in str(n.message) for n in app._notifications))
        assert app.live is not None and [i.state for i in requests_for(app.live).items()] == [NOT_SENT]


def test_an_unexpected_error_is_worded_one_way_cut_and_with_no_control() -> None:
    """The fleet's row actions, the control keys' send and the host watch each worded an error nobody foresaw in
    their own way ('an unexpected error (…)', 'an internal error (…)', a bare 'Type: words'), each quoting its words
    whole: one wording now, the words cut and their controls escaped (an error may quote a log's bytes)."""
    from tui.failures import UNEXPECTED_TEXT, unexpected

    said = unexpected(ValueError("\x1b[2J" + "x" * 100_000))
    assert said.startswith("an unexpected error (ValueError: \\u001b[2Jxxx") and said.endswith("…)"), said[:80]
    assert len(said) < UNEXPECTED_TEXT + 40 and "\x1b" not in said


async def test_a_host_watch_failing_on_and_on_is_told_once_until_a_poll_gets_through(tmp_path: Path) -> None:
    """A poll that failed was told once per error text: one whose words change at each poll (a count, a time)
    toasted every half second, and each text was kept for good. A failing watch is told once while it fails; told
    again once a poll got through and the watch fails again."""
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    toasts = raised_toasts(app)  # the first had gone (8 s) when a loaded machine came to count two
    async with app.run_test(size=SIZE) as pilot:
        await _running(pilot, app)
        live, polls = app.live, []
        working = live.poll_host

        def failing() -> Any:
            polls.append(1)
            raise RuntimeError(f"bug number {len(polls)}")

        def told() -> int:
            return len([n for n in toasts if n.title == "Host watch failed"])

        live.poll_host = failing
        await until(pilot, lambda: len(polls) >= 3)
        await settle(pilot)
        assert told() == 1
        through: list[int] = []

        def working_again() -> Any:
            host = working()
            through.append(1)
            return host

        live.poll_host = working_again
        await until(pilot, lambda: len(through) >= 2)  # a poll got through, and its news reached the screen
        await settle(pilot)
        polls.clear()
        live.poll_host = failing
        await until(pilot, lambda: len(polls) >= 2)
        await settle(pilot)
        assert told() == 2


async def test_a_control_key_on_a_read_only_dsh_log_says_why_in_a_sentence(fixtures_dir: Path, tmp_path: Path) -> None:
    # the toast's title names what was not sent, its text is the reason as a sentence of its own: not
    # "Checkpoint cannot act: This session…" with a capital after the colon
    path = tmp_path / "session.jsonl"
    path.write_bytes((fixtures_dir / "multi-turn.session.jsonl").read_bytes())
    app = make_app(path)
    toasts = raised_toasts(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("K")
        await until(pilot, lambda: any(t.title == "Checkpoint not sent" for t in toasts))
        said = next(t.message for t in toasts if t.title == "Checkpoint not sent")
        assert said == tui.live.READ_ONLY_DSH
        assert not _inbox(path)
