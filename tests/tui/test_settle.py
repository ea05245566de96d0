"""``tests.tui.pilot.settle``, which every Pilot test relies on: it returns only once the main screen took the
live session's last published state. The loader makes the log's projection ready before it posts the update that
says so; a test that appended as soon as the projection was ready could get that update after its append (a
whole-list redraw in the middle of what it measures: a flaky ``test_finished_lines`` under load)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.tui.logs import Log
from tests.tui.pilot import main_screen, make_app, settle
from tui.app import TapedeckApp
from tui.live import SessionUpdated

pytestmark = pytest.mark.anyio


async def test_settle_waits_for_the_update_that_ends_the_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = Log()
    for n in range(1, 20):
        log.turn(n, f"task {n}", "ok")
    path = log.write(tmp_path / "session.jsonl")
    post = TapedeckApp._from_live
    late, posted = threading.Event(), threading.Event()

    def delayed(self: TapedeckApp, message: Any) -> None:
        live = self.live
        loader = threading.current_thread() is not threading.main_thread()
        if isinstance(message, SessionUpdated) and message.reset and live and live.ready and loader and not late.is_set():
            late.set()
            time.sleep(0.5)  # the loader thread loses the CPU between the phase's change and the update
            post(self, message)
            posted.set()
            return
        post(self, message)

    monkeypatch.setattr(TapedeckApp, "_from_live", delayed)
    app = make_app(path, follow=True)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        main = main_screen(app)
        assert late.is_set() and main is not None and app.live is not None
        assert posted.is_set(), "settle returned before the load's last update was posted"
        assert main.taken_generation == app.live.generation, "settle returned before the screen took it"


async def test_until_says_which_toasts_and_alerts_the_app_showed_when_it_times_out() -> None:
    """A Pilot test that timed out in ``until`` said only where the live session stood: the toast that told why (a
    'Not sent', a refused key, an error caught in a worker) was not in the failure, and had often expired by then.
    The failure lists each toast shown while it waited, an expired one too, and the alerts listed."""
    from textual.notifications import Notification, Notifications

    from core.alerts.engine import Alert
    from tests.tui.pilot import until
    from tui.alerts import AlertBoard

    class App:
        live = None
        _notifications = Notifications()
        board = AlertBoard()

    refused = Notification("stop x: no live host", "Not sent", "error", timeout=60)

    class Pilot:
        app = App()
        pauses = 0

        async def pause(self) -> None:
            self.pauses += 1
            if self.pauses == 1:
                self.app._notifications.add(refused)
                self.app._notifications.add(Notification("sent: pause to y", timeout=60))
            elif self.pauses == 2:
                refused.raised_at = 0  # it expires (and goes) before the wait does

    Pilot.app.board.add(Alert("sid", "/logs/s.jsonl", "error-streak", 7, "error", "3 tool errors in a row", None), "k")
    with pytest.raises(AssertionError) as failed:
        await until(Pilot(), lambda: False, timeout=0.05)  # type: ignore[arg-type]
    said = str(failed.value)
    for seen in ["Not sent: stop x: no live host", "sent: pause to y", "error-streak", "3 tool errors in a row"]:
        assert seen in said, said
