"""Snapshots of the screens the TUI core owns, in their important states (fixed size, no clocks or paths)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Checkbox

from tests.tui.logs import Log, append, policy_log
from tests.tui.pilot import main_screen, make_app, open_filter, settle, until
from tui.screens.fleet import FleetScreen

SIZE = (150, 42)
Snap = Callable[..., bool]
FUTURE_S = 4_000_000_000  # a log written after the test's clock: its write age stays `<1m`


async def fleet_listed(pilot: Pilot[None], count: int) -> None:
    """Wait until the fleet table lists all ``count`` sessions, each with its turn read."""
    await until(pilot, lambda: isinstance(pilot.app.screen, FleetScreen) and len(pilot.app.screen.shown) == count
                and all(shown.row.turn is not None for shown in pilot.app.screen.rows.values()))  # fmt: skip
    await settle(pilot)


def steps(
    *keys: str, before: Callable[[Pilot[None]], Awaitable[None]] | None = None
) -> Callable[[Pilot[None]], Awaitable[None]]:
    """Settle, run ``before``, press ``keys`` one by one (settling after each), settle."""

    async def run(pilot: Pilot[None]) -> None:
        await settle(pilot)
        if before is not None:
            await before(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return run


def host_log(tmp_path: Path) -> Path:
    return policy_log().write(tmp_path / "demo" / "session.jsonl")


def test_read_only_dsh_log_following(snap_compare: Snap, fixtures_dir: Path, tmp_path: Path) -> None:
    """A real DSH log: read-only badge, follow mode at the bottom, the last event in the detail pane."""
    log = shutil.copy(fixtures_dir / "tool-call-turn.session.jsonl", tmp_path / "session.jsonl")
    assert snap_compare(make_app(Path(log), follow=True), terminal_size=SIZE, run_before=steps())


def test_follow_paused_counts_new_events(snap_compare: Snap, tmp_path: Path) -> None:
    """Scrolled up while the writer appends: follow is paused and the status line counts new rows."""
    log = policy_log()
    path = tmp_path / "session.jsonl"
    path.write_bytes(log.lines([log.header, *log.events[:20]]))

    async def grow(pilot: Pilot[None]) -> None:
        await pilot.press("up", "up")
        append(path, log, 20)
        await until(pilot, lambda: pilot.app.live.session.next_seq == len(log.events))  # type: ignore[attr-defined]
        await settle(pilot)

    assert snap_compare(make_app(path, follow=True), terminal_size=SIZE, run_before=steps(before=grow))


def test_surface_view(snap_compare: Snap, tmp_path: Path) -> None:
    """What the model sees now: the tape entry first, then the later turns."""
    assert snap_compare(make_app(host_log(tmp_path)), terminal_size=SIZE, run_before=steps("s", "g"))


def test_surface_view_tape_entry_expanded(snap_compare: Snap, tmp_path: Path) -> None:
    """The tape entry expanded to the originals it sealed (one of them folded before it was sealed)."""
    assert snap_compare(make_app(host_log(tmp_path)), terminal_size=SIZE, run_before=steps("s", "g", "enter"))


def test_folded_result_beside_its_original(snap_compare: Snap, tmp_path: Path) -> None:
    """The full log on a folded tool result: dimmed original rows, the digest beside the original text."""

    async def to_fold(pilot: Pilot[None]) -> None:
        screen = main_screen(pilot.app)  # type: ignore[arg-type]
        assert screen is not None
        screen.events.go_seq(6)  # turn 1's original tool result, folded and then sealed
        await settle(pilot)

    assert snap_compare(make_app(host_log(tmp_path)), terminal_size=SIZE, run_before=steps(before=to_fold))


def test_help_screen(snap_compare: Snap, tmp_path: Path) -> None:
    """``?``: every key, where it works and its binding id."""
    assert snap_compare(make_app(host_log(tmp_path)), terminal_size=SIZE, run_before=steps("question_mark"))


def test_help_screen_without_colours_at_80x24(
    snap_compare: Snap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``?`` with NO_COLOR on a small terminal: the help scrolls, its scrollbar's thumb in the text's grey."""
    monkeypatch.setenv("NO_COLOR", "1")
    run = steps("question_mark", "pagedown")
    assert snap_compare(make_app(host_log(tmp_path)), terminal_size=(80, 24), run_before=run)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_help_lists_the_fixed_keys(snap_compare: Snap, tmp_path: Path, size: tuple[int, int]) -> None:
    """``?`` scrolled to its end: the last of the main screen's keys, and the notes (the keymap file they name is one
    no test writes: a path of its own would differ at each run)."""
    app = make_app(host_log(tmp_path), keymap=Path("/nonexistent/tapedeck/keymap.toml"))
    assert snap_compare(app, terminal_size=size, run_before=steps("question_mark", "end"))


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_help_lists_the_keys_of_every_screen_once(
    snap_compare: Snap, tmp_path: Path, size: tuple[int, int]
) -> None:
    """``?`` scrolled to its keys: those that work everywhere first, Textual's keys of every screen (focus, copy)
    among them, marked fixed, and not again under the main screen's."""

    async def to_keys(pilot: Pilot[None]) -> None:
        await steps("question_mark")(pilot)
        pilot.app.screen.query_one("#help-keys-title").scroll_visible(top=True, animate=False)
        await settle(pilot)

    assert snap_compare(make_app(host_log(tmp_path)), terminal_size=size, run_before=to_keys)


def test_filter_dialog(snap_compare: Snap, tmp_path: Path) -> None:
    """``f``: the filter form."""
    assert snap_compare(make_app(host_log(tmp_path)), terminal_size=SIZE, run_before=steps("f"))


def test_filtered_errors(snap_compare: Snap, tmp_path: Path) -> None:
    """The list filtered to errors only."""

    async def errors_only(pilot: Pilot[None]) -> None:
        dialog = await open_filter(pilot)
        dialog.query_one("#filter-errors", Checkbox).value = True
        dialog.query_one("#filter-types").focus()
        await pilot.press("enter")
        await settle(pilot)

    assert snap_compare(
        make_app(host_log(tmp_path)), terminal_size=SIZE, run_before=steps(before=errors_only)
    )


def test_fleet_of_a_sessions_root(snap_compare: Snap, tmp_path: Path, fixtures_dir: Path) -> None:
    """``watch ROOT``: the fleet table, sessions newest first, the subagent child under its parent (snapshotted
    once all three are listed)."""
    root = tmp_path / "sessions"
    parent = Log({**policy_log().header, "id": "parent-1", "createdAt": 1786000000000})
    parent.turn(1, "delegate", "CHILD_OK", tool="subagent")
    child = Log(
        {
            **parent.header,
            "id": "child-1",
            "parentSession": "parent-1",
            "origin": "subagent",
            "delegationDepth": 1,
        }
    )
    child.turn(1, "do the part", "ok")
    other = Log({**parent.header, "id": "other-2", "createdAt": 1786000100000})
    other.turn(1, "hello", "hi")
    for log, name in ((parent, "parent-1"), (child, "child-1"), (other, "other-2")):
        log.write(root / "--w--" / name / "session.jsonl")
    for name, mtime in (("child-1", FUTURE_S + 50), ("parent-1", FUTURE_S), ("other-2", FUTURE_S + 100)):
        os.utime(root / "--w--" / name / "session.jsonl", (mtime, mtime))

    async def listed(pilot: Pilot[None]) -> None:
        await fleet_listed(pilot, 3)

    assert snap_compare(make_app(root), terminal_size=SIZE, run_before=steps(before=listed))
