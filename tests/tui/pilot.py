"""Driving the app in tests: build it on a log and wait until loading, row workers and scans have settled."""

from __future__ import annotations

import asyncio
import functools
import os
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from textual.command import CommandPalette
from textual.notifications import Notification
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import DataTable, Static
from textual.worker import WorkerState

from core.alerts.config import RULE_KEYS
from core.control.config import PolicyConfig, validate_config
from tests.tui.logs import release_hosts
from tui.app import TapedeckApp
from tui.screens.filter import FilterScreen
from tui.screens.fleet import FleetScreen
from tui.screens.main import MainScreen
from tui.widgets.detail import DetailPane

ScreenT = TypeVar("ScreenT", bound=Screen[Any])

BACKGROUND = {"rows", "detail", "search", "filter", "copy", "browse", "policy-derive", "timetravel"}
# A keymap that does not exist, in a directory of this test process alone: the settings file (tui.toml) the app
# looks for beside it is never one another test run (or the user) wrote.
NO_KEYMAP = Path(tempfile.gettempdir()) / f"tapedeck-tests-{os.getpid()}" / "keymap.toml"


# Every alert rule off: the screens under test show no alert toasts or marks (tests/alerts covers those).
QUIET = validate_config({"alerts": {key: {"enabled": False} for key in RULE_KEYS.values()}})


def make_app(
    target: Path, *, follow: bool = False, keymap: Path = NO_KEYMAP, config: PolicyConfig = QUIET
) -> TapedeckApp:
    """An app on ``target`` that polls quickly (no watchfiles), ignores any real keymap file and raises no alerts
    (but those ``config`` turns on)."""
    return TapedeckApp(target, follow=follow, interval=0.02, use_watchfiles=False, keymap_file=keymap, config=config)


def main_screen(app: TapedeckApp) -> MainScreen | None:
    """The topmost main screen on the stack."""
    for screen in reversed(app.screen_stack):
        if isinstance(screen, MainScreen):
            return screen
    return None


def _unsettled(app: TapedeckApp) -> str | None:
    """What the app is still busy with (None when it is idle)."""
    live = app.live
    if live is not None and not (live.ready or live.phase == "error"):
        return f"the log is loading (phase {live.phase})"
    workers = [w.name or w.group for w in app.workers
               if w.group in BACKGROUND and w.state in (WorkerState.PENDING, WorkerState.RUNNING)]  # fmt: skip
    if workers:
        return f"workers running: {', '.join(workers)}"
    if not getattr(app.screen, "loaded", True):  # the fleet table's first rows have not landed
        return "the fleet table's first rows have not landed"
    if isinstance(app.screen, FleetScreen):
        # rows added or cells changed are measured when the table is next idle: until then each column is as wide
        # as its label (a snapshot taken then showed 'runn' for running, under load)
        table = app.screen.query_one(DataTable)
        if table._require_update_dimensions or table._updated_cells:
            return "the fleet table's columns are not measured yet"
    main = main_screen(app)
    if main is None:
        return None
    if live is not None and (live.announced < live.generation or main.taken_generation < live.announced):
        # a state published and not announced yet, or announced and not taken by the screen yet
        return f"generation {live.generation} announced {live.announced}, taken {main.taken_generation}"
    detail = main.query_one(DetailPane)
    busy = {"rows": main.events.busy, "detail": detail.busy, "panels": main._refresh_due,
            "status": main._status_due}  # fmt: skip
    busy.update({f"{s.__class__.__name__}": not s.done for s in (main.filter_scan, main.search_scan) if s is not None})
    if any(busy.values()):
        return "busy: " + ", ".join(name for name, flag in busy.items() if flag)
    return None


async def settle(pilot: Pilot[None], timeout: float = 60.0) -> None:
    """Wait until the app is idle: log loaded, visible rows computed, scans finished, panels redrawn. ``timeout``
    bounds by the wall clock work a loaded machine stretches: 60 s, as ``until``'s."""
    deadline = time.monotonic() + timeout
    calm = 0
    while calm < 3:
        await pilot.pause(0.02)
        why = _unsettled(pilot.app)  # type: ignore[arg-type]
        calm = calm + 1 if why is None else 0
        if time.monotonic() > deadline:
            raise AssertionError(f"the app did not settle in {timeout:g} s: {why or 'it had just settled'}")


async def quiet(pilot: Pilot[Any], timeout: float = 60.0) -> None:
    """Wait until the screen on top is quiet, three polls in a row: no worker pending or running (but the app's
    followers) and no layout, repaint or after-refresh callback pending (a table's rows land from a worker, and its
    refit to the width runs after a refresh). Only a screen that never goes quiet meets ``timeout``."""
    deadline = time.monotonic() + timeout
    calm = 0
    while calm < 3:
        await pilot.pause(0.02)
        busy = _busy(pilot.app)
        calm = 0 if busy else calm + 1
        if time.monotonic() > deadline:
            raise AssertionError(f"the screen did not go quiet in {timeout:g} s: {busy}")


def _busy(app: Any) -> str:
    """What the screen on top is still doing ("" when it is quiet)."""
    screen = app.screen
    workers = [w.name or w.group for w in app.workers
               if w.group != "live" and w.state in (WorkerState.PENDING, WorkerState.RUNNING)]  # fmt: skip
    pending = {"workers": workers, "layout": screen._layout_required, "repaint": screen._dirty_widgets,
               "after refresh": screen._callbacks}  # fmt: skip
    return ", ".join(f"{what}: {how}" for what, how in pending.items() if how)


async def settled_main_screen(pilot: Pilot[None]) -> MainScreen:
    """The app's main screen once the app has settled (``settle``); fails when there is none."""
    await settle(pilot)
    screen = main_screen(pilot.app)  # type: ignore[arg-type]
    assert screen is not None
    return screen


async def until(pilot: Pilot[None], predicate: Callable[[], bool], timeout: float = 60.0) -> None:
    """Wait (processing messages) until ``predicate`` holds; past ``timeout``, fail saying which toasts the app
    showed meanwhile (one that expired too: it often says why), its alerts, where its live session stood and what
    its other threads were doing (a flake seen once in a loaded CI run is read from that). ``timeout`` is wall
    clock, and the app's work is CPU a loaded machine shares out thinly: at load 25-30 a replaced log's reload under
    the request view took up to 11 s (a CI run at load 8-10 met the 20 s this was), so it is 60 s."""
    deadline = time.monotonic() + timeout
    toasts: dict[str, Notification] = {}
    while not predicate():  # looked at again after each pause: one long pause may be what brought it about
        toasts.update((n.identity, n) for n in getattr(pilot.app, "_notifications", ()))
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not reached\n{_shown(pilot.app, toasts.values())}{_stood(pilot.app)}")
        await asyncio.sleep(0.01)
        await pilot.pause()


def raised_toasts(app: Any) -> list[Notification]:
    """Every toast ``app`` shows from now on, in order, kept once it has gone: ``app._notifications`` drops a toast
    when its few seconds are up, by the wall clock, so a test that reads it after waiting for something slower (a
    remote log read late on a loaded machine) finds some gone."""
    raised: list[Notification] = []
    add = app._notifications.add

    def keep(notification: Notification) -> Any:
        raised.append(notification)
        return add(notification)

    app._notifications.add = keep
    return raised


def recorded(monkeypatch: pytest.MonkeyPatch, cls: type[Any], name: str) -> list[Any]:
    """The first argument of every call of the method ``cls.name`` from now on (a handler's message, the row a
    screen draws), in order; the method still runs and returns what it returns. The spy carries the method's
    signature (``functools.wraps``): Textual passes a handler as many arguments as its signature names."""
    method = getattr(cls, name)
    calls: list[Any] = []

    @functools.wraps(method)
    def spy(self: Any, first: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(first)
        return method(self, first, *args, **kwargs)

    monkeypatch.setattr(cls, name, spy)
    return calls


def dialog_text(dialog: Screen[Any]) -> str:
    """Everything ``dialog`` shows in words: the text of its shown ``Static`` widgets, one string."""
    return " ".join(str(static.content) for static in dialog.query(Static) if static.display)


async def says_the_host_exited(pilot: Pilot[Any], dialog: Screen[Any]) -> None:
    """An operator dialog (pause, message, stop) up while its host runs says, as soon as the host exits (every
    simulated host of ``tests.tui.logs`` let go) and while it stays up, that no live host runs and nothing is
    sent."""
    assert "no live host" not in dialog_text(dialog)
    release_hosts()
    await until(pilot, lambda: "no live host" in dialog_text(dialog))
    assert "nothing is sent" in dialog_text(dialog) and pilot.app.screen is dialog, dialog_text(dialog)


def _shown(app: Any, toasts: Iterable[Notification], most: int = 12) -> str:
    """The last ``most`` toasts and alerts the app showed, a line each (cut: a toast may quote a log)."""
    lines = [f"toast [{n.severity}] {n.title}: {n.message}" for n in toasts][-most:]
    board = getattr(app, "board", None)
    lines += [f"alert {a.cause} (seq {a.seq}): {a.reason}" for a in ([] if board is None else board.alerts[-most:])]
    return "".join(f"{line[:300]}\n" for line in lines)


def _stood(app: object) -> str:
    """The live session's phase, error and seqs, and each other thread's innermost frames."""
    live = getattr(app, "live", None)
    lines = [] if live is None else [
        f"live: phase={live.phase} error={live.error} next_seq={live.session.next_seq} read_to={live.read_to} "
        f"generation={live.generation} announced={live.announced}"
    ]  # fmt: skip
    names = {t.ident: t.name for t in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        if ident != threading.get_ident():
            where = " < ".join(f"{Path(f.f_code.co_filename).name}:{n} {f.f_code.co_name}" for f, n in traceback.walk_stack(frame))
            lines.append(f"{names.get(ident, ident)}: {where[:600]}")
    return "\n".join(lines)


def palette_searched(app: Any) -> bool:
    """Whether the command palette is on top with its search done: it searches in a worker of its own, so what it
    lists comes later than the keys, and a search left running as the app shuts down looks for the palette's list
    after the list is gone (NoMatches, a WorkerFailed in ci32)."""
    screen = app.screen
    return isinstance(screen, CommandPalette) and not any(w.node is screen and not w.is_finished for w in app.workers)


async def opened(pilot: Pilot[None], key: str, kind: type[ScreenT]) -> ScreenT:
    """Press ``key`` and wait until a screen of ``kind`` is up and the app has settled; that screen."""
    await pilot.press(key)
    await until(pilot, lambda: isinstance(pilot.app.screen, kind))
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, kind)
    return screen


async def open_filter(pilot: Pilot[None]) -> FilterScreen:
    """Press ``f`` on the main screen and wait until the filter dialog is up and settled; the dialog."""
    return await opened(pilot, "f", FilterScreen)
