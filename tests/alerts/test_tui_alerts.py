"""Alerts in the TUI: a toast, a mark on the triggering row, the alerts screen (``A``) whose enter goes to the
event; the rules run off the UI thread; the TUI raises the alerts ``tapedeck alerts`` reports."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from core.alerts.engine import Alert, AlertEngine
from core.control.config import validate_config
from core.fleet.alerts import AlertSources
from tests.alerts.crafted import HEADER, Log
from tests.tui.pilot import NO_KEYMAP, main_screen, quiet, raised_toasts, recorded, settle, until
from tests.tui.screens_policy.harness import AlertsHarness
from tui.alerts import AlertBoard, HistoryRecalled
from tui.app import TapedeckApp
from tui.screens.alerts import COLUMNS, AlertsScreen


def _write(path: Path, events: list[dict[str, Any]], mode: str = "w") -> None:
    with open(path, mode) as f:
        f.write("".join(json.dumps(e) + "\n" for e in events))


def _app(target: Path, follow: bool, alerts: dict[str, Any]) -> TapedeckApp:
    config = validate_config({"alerts": {"bell": False, "notify": False, **alerts}})
    return TapedeckApp(target, follow=follow, interval=0.02, use_watchfiles=False, keymap_file=NO_KEYMAP,
                       config=config)  # fmt: skip


async def _enter_on_the_first_alert(pilot: Any, app: TapedeckApp) -> Any:
    """From the main screen, its cursor on seq 0: open the alerts list and press enter on its first alert; the main
    screen."""
    main = main_screen(app)
    assert main is not None
    main.events.go_seq(0)
    await pilot.press("A")
    await until(pilot, lambda: isinstance(app.screen, AlertsScreen))
    await pilot.pause()
    await pilot.press("enter")
    return main


@pytest.mark.anyio
async def test_an_alert_shows_a_toast_marks_its_row_and_lists_on_the_alerts_screen(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    log = Log()
    log.turn(1)
    log.result(True)
    _write(path, [HEADER, *log.events])
    app = _app(path, True, {"errorStreak": {"count": 2}})
    toasts = raised_toasts(app)
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        assert app.board.alerts == []
        second = log.result(True)
        _write(path, log.events[-1:], "a")
        await until(pilot, lambda: len(app.board.alerts) == 1 and bool(toasts))  # the toast comes after the list's
        (alert,) = app.board.alerts
        assert (alert.cause, alert.seq) == ("error-streak", second)
        assert [t.title for t in toasts] == ["Alert: error-streak"]
        assert toasts[0].message == f"2 tool calls failed in a row (seq {second}, crafted-)"
        assert toasts[0].severity == "warning"
        assert app.alert_marks == {second: ("⚑ error-streak",)}
        await settle(pilot)
        main = await _enter_on_the_first_alert(pilot, app)
        await until(pilot, lambda: not isinstance(app.screen, AlertsScreen))
        await settle(pilot)
        assert main.events.current_seq == second
        # at 60 columns the row (a failed result: 'error' and 'on' badges) still says why it is flagged: its badges
        # and its size give way first, so that the summary keeps its cells beside the mark
        await pilot.resize_terminal(60, 20)
        await settle(pilot)
        line = main.events.render_line(main.events.cursor - int(main.events.scroll_y)).text
        assert line.rstrip().endswith("[⚑ error-streak]"), line


@pytest.mark.anyio
async def test_the_rules_run_on_a_worker_thread_never_the_ui_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[bool] = []
    feed = AlertEngine.feed

    def spy(self: AlertEngine, *args: Any, **kw: Any) -> Any:
        threads.append(threading.current_thread() is threading.main_thread())
        return feed(self, *args, **kw)

    monkeypatch.setattr(AlertEngine, "feed", spy)
    path = tmp_path / "session.jsonl"
    log = Log()
    log.result(True)
    _write(path, [HEADER, *log.events])
    app = _app(path, False, {"errorStreak": {"count": 1}})
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: len(app.board.alerts) == 1)
    assert threads and not any(threads)


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from core.control.config import load_config
    from core.host.demo_scenario import TASKS, write_script
    from core.host.demo_workspace import create_demo_workspace
    from core.host.loop import AgentHost, HostOptions
    from core.host.providers import make_provider

    tmp = tmp_path_factory.mktemp("demo")
    host = AgentHost.create(tmp / "root", make_provider(f"scripted:{write_script(tmp / 'script.json')}"),
                            load_config(None), HostOptions(workspace=create_demo_workspace(tmp / "ws")),
                            tasks=TASKS)  # fmt: skip
    try:
        host.run()
    finally:
        host.close()
    return tmp / "root"


EAGER = {"errorStreak": {"count": 1}, "cacheBreak": {"tokens": 1}, "loop": {"count": 2}}


def _recalls(monkeypatch: pytest.MonkeyPatch) -> list[HistoryRecalled]:
    """The ``HistoryRecalled`` messages the app handles from now on: once one came, the alerts the logs' histories
    raised have all been handled (the feed posts them before it, and the app handles its messages in order)."""
    return recorded(monkeypatch, TapedeckApp, "on_history_recalled")


@pytest.mark.anyio
@pytest.mark.parametrize("follow", [True, False], ids=["following", "read-once"])
async def test_the_tui_raises_what_tapedeck_alerts_reports(demo_root: Path, follow: bool,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    expected = AlertSources([demo_root], validate_config({"alerts": EAGER})).poll(final=True)  # what the CLI reports
    assert len(expected) > 5
    recalled = _recalls(monkeypatch)
    app = _app(demo_root, follow, EAGER)  # a sessions root: the browser, and every session's alerts
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: bool(recalled))  # every alert of the logs as they are was delivered
        key = lambda a: (a.path, a.cause, a.seq, a.reason, a.at)  # noqa: E731
        assert [key(a) for a in app.board.alerts] == [key(a) for a in expected]


def test_the_alerts_screen(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
    monkeypatch.setattr("tui.screens.alerts.today", lambda: "2026-12-07")  # the alerts of another day are dated
    path = tmp_path / "session.jsonl"
    log = Log()
    log.header()
    log.turn(1)
    for _ in range(3):
        log.call("read_file", '{"path": "a.py"}')
        log.result(True)
    log.usage(1, 1, miss=60_000)
    _write(path, [HEADER, *log.events])
    app = _app(path, False, {"errorStreak": {"count": 2}, "loop": {"count": 3}, "budget": {"usd": 0.5}})
    app.config = validate_config({"alerts": {"bell": False, "notify": False, "errorStreak": {"count": 2},
                                             "loop": {"count": 3}, "budget": {"usd": 0.5}},
                                  "model": {"prices": {"crafted-model": {"hit": 1, "miss": 10, "output": 20}}}})  # fmt: skip

    async def run(pilot: Any) -> None:
        await until(pilot, lambda: len(app.board.alerts) == 4)
        await settle(pilot)
        app.clear_notifications()
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AlertsScreen))
        await quiet(pilot)  # its table filled and fitted to the width

    assert snap_compare(app, terminal_size=(120, 24), run_before=run)


@pytest.mark.anyio
async def test_the_header_shows_the_run_rate_and_the_turn_projection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import re
    import time as clock

    import core.log.layout
    from tui.widgets.header import SessionHeader

    # the log whose spend the header shows is found in the feed's thread: the app's thread looked it up on disk
    on_ui: list[Path] = []
    looked, running = core.log.layout.stat_or_none, threading.Event()

    def watched(path: Path) -> Any:
        if threading.current_thread() is threading.main_thread() and running.is_set():
            on_ui.append(path)
        return looked(path)

    monkeypatch.setattr(core.log.layout, "stat_or_none", watched)

    path = tmp_path / "session.jsonl"
    log = Log(start_ms=int(clock.time() * 1000) - 120_000, step_ms=6_000)
    log.header()
    log.turn(1)
    for step in (1, 2):
        log.add("tapedeck/route", {"turn": 1, "step": step, "taskClass": "small", "budgets": {"soft": 2, "hard": 8}})
        log.usage(1, step, miss=10_000 * step)  # $0.10, then $0.20
    _write(path, [HEADER, *log.events])
    app = _app(path, True, {})
    app.config = validate_config({"alerts": {"bell": False, "notify": False},
                                  "model": {"prices": {"crafted-model": {"hit": 1, "miss": 10, "output": 20}}}})  # fmt: skip

    def header_text() -> str:
        return str(app.screen.query_one(SessionHeader).render())

    running.set()  # from here on the test's thread is the app's
    async with app.run_test(size=(200, 30)) as pilot:
        await settle(pilot)
        await until(pilot, lambda: "turn → " in header_text())
        # six steps left of the hard budget of 8, at the turn's average of $0.15: $0.30 + $0.90
        assert re.search(r"\$\d+\.\d\d/h · turn → \$1\.20", header_text()), header_text()
    assert on_ui == []


@pytest.mark.anyio
async def test_the_tui_shows_why_the_budget_guard_paused_the_demo_host(tmp_path: Path) -> None:
    """The real demo host with a budget guard: the TUI raises the budget alert, the host pauses, and the control
    event's row says the budget rule sent the pause; a resume lets the run finish."""
    from core.control import inbox as control
    from core.control.host_state import read_host_state
    from core.host.demo_scenario import TASKS, write_script
    from core.host.demo_workspace import create_demo_workspace
    from core.host.loop import AgentHost, HostOptions
    from core.host.providers import make_provider

    prices = {"prices": {"tapedeck-demo": {"hit": 0.028, "miss": 0.28, "output": 0.42}}}
    guarded = validate_config({"model": prices, "alerts": {"budget": {"usd": 0.003, "action": "pause"}}})
    host = AgentHost.create(tmp_path / "root", make_provider(f"scripted:{write_script(tmp_path / 's.json')}"),
                            guarded, HostOptions(workspace=create_demo_workspace(tmp_path / "ws")),
                            tasks=TASKS)  # fmt: skip
    log = host.writer.path
    outcomes: list[Any] = []
    runner = threading.Thread(target=lambda: outcomes.extend(host.run()), daemon=True)
    app = _app(log, True, {})
    app.config = validate_config({"model": prices, "alerts": {"bell": False, "notify": False,
                                                              "budget": {"usd": 0.003}}})  # fmt: skip
    try:
        async with app.run_test(size=(160, 40)) as pilot:
            runner.start()
            await until(pilot, lambda: read_host_state(log).state == "paused", timeout=60)
            await until(pilot, lambda: any(a.cause == "budget" for a in app.board.alerts))
            await until(pilot, lambda: any(o.get("origin") == "alert:budget" for o in app.live.facts.outcomes.values()))
            await settle(pilot)
            main = main_screen(app)
            assert main is not None
            seq = next(s for s in range(app.live.session.next_seq)
                       if (app.live.session.events[s].get("data") or {}).get("origin") == "alert:budget")  # fmt: skip
            assert main.events.go_seq(seq)
            await settle(pilot)
            row = main.events.cursor - int(main.events.scroll_y)
            text = main.events.render_line(row).text
            assert "control pause applied (sent by alert:budget)" in text, text
            control.append_request(control.inbox_path(log), "resume", {})
            await until(pilot, lambda: not runner.is_alive(), timeout=60)
    finally:
        if runner.is_alive():
            control.append_request(control.inbox_path(log), "stop", {})
            runner.join(60)
        host.close()
    assert [o.reason["kind"] for o in outcomes] == ["completed"] * len(TASKS)


@pytest.mark.anyio
@pytest.mark.parametrize("follow", [True, False], ids=["following", "read-once"])
async def test_the_open_log_is_decoded_once_for_the_view_and_the_rules(demo_root: Path, follow: bool,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    from core.log.decoder import LogDecoder
    from core.log.sessions import discover_sessions

    (log,) = [ref.path for ref in discover_sessions(demo_root)]
    expected = AlertSources([log], validate_config({"alerts": EAGER})).poll(final=True)
    decoded: dict[int, tuple[str, int]] = {}  # bytes each decoder was fed, by decoder
    seen: list[LogDecoder] = []  # every decoder counted, kept: a freed one's id would count for the next made there
    feed = LogDecoder.feed

    def counted(self: LogDecoder, data: bytes) -> Any:
        if id(self) not in decoded:
            seen.append(self)
        name, fed = decoded.get(id(self), (self.name, 0))
        decoded[id(self)] = (name, fed + len(data))
        return feed(self, data)

    monkeypatch.setattr(LogDecoder, "feed", counted)
    recalled = _recalls(monkeypatch)
    app = _app(log, follow, EAGER)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: bool(recalled))  # every alert of the log as it is was delivered
        key = lambda a: (a.path, a.cause, a.seq, a.reason, a.at)  # noqa: E731
        assert [key(a) for a in app.board.alerts] == [key(a) for a in expected]
    size = log.stat().st_size
    passes = [fed for name, fed in decoded.values() if name == str(log) and fed > 1 << 16]
    assert passes == [size]  # one pass over the log: the view's (the others read the 64 KiB holding its header)


@pytest.mark.anyio
async def test_a_log_whose_history_raises_many_alerts_gives_one_toast_that_counts_them(
    tmp_path: Path,
) -> None:
    """Opening a log whose past raises eight alerts: every one is listed and marked, and one toast counts them (none
    rings or notifies), not eight stacked toasts."""
    path = tmp_path / "session.jsonl"
    log = Log()
    log.turn(1)
    failed = []
    for _ in range(8):  # each failure is a streak of one that the next success clears
        failed.append(log.result(True))
        log.result(False)
    _write(path, [HEADER, *log.events])
    app = _app(path, False, {"errorStreak": {"count": 1}})
    toasts = raised_toasts(app)  # the toast is gone after 6 s, which a loaded machine's settle can outlast
    async with app.run_test(size=(140, 36)) as pilot:
        await until(pilot, lambda: len(app.board.alerts) == 8)
        assert [a.seq for a in app.board.alerts] == failed
        assert set(app.alert_marks) == set(failed)
        await until(pilot, lambda: any(t.title == "Alerts" for t in toasts))
        await settle(pilot)
        assert [(t.title, t.message) for t in toasts] == [
            ("Alerts", "8 alerts in this log's history: A lists them")]  # fmt: skip


def test_a_burst_ends_after_a_quiet_gap_and_the_next_alert_is_delivered_alone() -> None:
    from tui.alerts import BURST_GAP, BURST_ONE_BY_ONE, Burst

    now = [0.0]
    burst = Burst(clock=lambda: now[0])
    alert = _alert("budget", "critical")
    assert [burst.alone(alert) for _ in range(BURST_ONE_BY_ONE + 2)] == [True] * BURST_ONE_BY_ONE + [False] * 2
    assert not burst.over()
    now[0] += BURST_GAP
    assert burst.over()
    assert burst.summary("A") == ("2 more alerts (budget): A lists them all", "critical")
    assert burst.summary("A") is None
    assert burst.alone(_alert("stalled", "warning"))  # a new burst


def _alert(cause: str, severity: str) -> Any:
    from core.alerts.engine import Alert

    return Alert("s", "/l", cause, 1, severity, "why", None)


@pytest.mark.anyio
async def test_a_logs_past_alerts_are_listed_and_summed_up_in_one_quiet_toast_and_only_live_ones_toast(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    log = Log()
    log.turn(1)
    for _ in range(3):  # three error streaks, each ended
        log.result(True)
        log.result(False)
    log.add("tapedeck/state", {"state": "paused"})  # paused, then resumed: a state that no longer holds
    log.add("tapedeck/state", {"state": "running"})
    _write(path, [HEADER, *log.events])
    app = _app(path, True, {"errorStreak": {"count": 1}})
    toasts = raised_toasts(app)  # each is gone after a few seconds, which a loaded machine's settle can outlast
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: len(app.board.alerts) == 4 and bool(toasts))
        await settle(pilot)
        assert sorted(a.cause for a in app.board.alerts) == ["error-streak"] * 3 + ["waiting"]
        assert [(t.title, t.message, t.severity) for t in toasts] == [
            ("Alerts", "3 alerts in this log's history: A lists them", "information")]  # fmt: skip
        toasts.clear()
        live = log.result(True)
        _write(path, log.events[-1:], "a")
        await until(pilot, lambda: len(app.board.alerts) == 5 and bool(toasts))
        await settle(pilot)
        assert [(t.title, t.message) for t in toasts] == [
            ("Alert: error-streak", f"1 tool call failed in a row (seq {live}, crafted-)")]  # fmt: skip


def test_the_alerts_list_is_in_time_order_across_sessions() -> None:
    """The fleet reads each session's history in turn: a later session's older alerts came after an earlier
    session's newer ones, so the list said 'newest last' with 21:44 above 21:09; an alert takes its place by its
    time, one of the same time after those before it."""
    from core.alerts.engine import Alert
    from tui.alerts import AlertBoard

    def alert(session: str, at: int | None) -> Alert:
        return Alert(session, f"/r/{session}/session.jsonl", "host-died", 1, "critical", "r", at)

    board = AlertBoard()
    for a in (alert("a", 300), alert("b", 100), alert("b", 300), alert("c", 200), alert("d", None), alert("e", 400)):
        board.add(a, a.path)
    assert [(a.session, a.at) for a in board.alerts] == [
        ("b", 100), ("c", 200), ("a", 300), ("b", 300), ("e", 400), ("d", None)]


def test_the_board_resolves_each_logs_path_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's thread hands every alert to the board, which keyed its marks by the log's resolved path (symlinks
    followed: a few system calls) for each alert, and again for the open log's marks after each: a history of
    hundreds of alerts made hundreds of calls on the UI thread, and a reset one for every alert listed. Each path
    is resolved once."""
    calls: list[Path] = []
    resolve = Path.resolve

    def counted(self: Path, strict: bool = False) -> Path:
        calls.append(self)
        return resolve(self, strict)

    monkeypatch.setattr(Path, "resolve", counted)
    board = AlertBoard()
    log = tmp_path / "session.jsonl"
    for n in range(300):
        board.add(Alert("t-1", str(log), "loop", n, "warning", f"reason {n}", 1_000 + n), str(log))
        assert len(board.marks_for(str(log))) == n + 1
    board.forget_marks(str(log))
    assert board.marks_for(str(log)) == {} and len(board.replaced) == 300
    assert len(calls) <= 2, len(calls)


@pytest.mark.anyio
async def test_the_alerts_screen_shows_the_selected_alerts_reason_whole_at_80x24(tmp_path: Path) -> None:
    """At 80 columns the reason column begins at column 50 and was cut there ('cache broke at byte 12206 of'):
    what the alert says could not be read without going to its event. The selected alert's reason is now given
    whole, wrapped, under the table, and follows the cursor."""
    from tests.tui.logs import policy_log
    from tests.tui.pilot import make_app

    path = policy_log().write(tmp_path / "session.jsonl")
    reasons = [f"cache broke at byte {n}2206 of 40210 (30% reused), the cause a fold at seq {n}7 that rewrote the "
               "request's head: the whole prompt was sent again at the miss price" for n in (1, 2)]  # fmt: skip
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for n, reason in enumerate(reasons):
            app.board.add(
                Alert("t-1", str(path), "cache-break", 10 + n, "warning", reason, 1_000 + n), str(path)
            )
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AlertsScreen))
        await settle(pilot)

        def drawn() -> str:
            lines = ["".join(s.text for s in strip) for strip in app.screen._compositor.render_strips()]
            return " ".join(" ".join(lines).split())

        assert reasons[0] in drawn(), drawn()
        await pilot.press("down")
        await until(pilot, lambda: reasons[1] in drawn())


@pytest.mark.anyio
async def test_a_replaced_log_keeps_no_mark_of_the_old_ones_alerts(tmp_path: Path) -> None:
    """The marks of a log's alerts stayed on their seqs when another log replaced it at its path, though the same
    seq then means another event (README: a replaced log is never merged with what was there before): the new log's
    rows carry the marks of its own alerts alone; the alerts list keeps the old ones."""
    from tests.tui.logs import Log as TuiLog
    from tests.tui.logs import policy_log

    path = policy_log(host=False).write(tmp_path / "session.jsonl")
    app = _app(path, True, {"errorStreak": {"count": 1}})
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await until(pilot, lambda: bool(app.alert_marks))
        (old,) = app.alert_marks
        live = app.live
        assert live is not None
        epoch = live.epoch
        new = TuiLog()
        new.turn(1, "a", "b")
        failed = new.turn(2, "c", "boom", error=True)["result"]
        assert failed != old
        path.write_bytes(new.lines())  # shorter: replaced
        await until(pilot, lambda: live.epoch != epoch and live.ready and failed in app.alert_marks)
        await settle(pilot)
        assert app.alert_marks == {failed: ("⚑ error-streak",)}
        assert [a.seq for a in app.board.alerts] == [old, failed]
        # the old log's alert, listed still, goes to no event of the new log (its seq is another event there)
        main = await _enter_on_the_first_alert(pilot, app)  # the old log's
        await until(pilot, lambda: any("its event is gone" in n.message for n in app._notifications))
        assert isinstance(app.screen, AlertsScreen) and main.events.current_seq == 0


@pytest.mark.anyio
async def test_a_log_waited_for_at_the_start_keeps_its_marks(tmp_path: Path) -> None:
    """Only a reset takes a log's marks along: a log the view waits for as it opens (not there yet; a remote one
    whose machine does not answer, opened from the fleet with the fleet's marks) keeps the marks it has."""
    from core.alerts.engine import Alert

    path = tmp_path / "session.jsonl"
    app = _app(path, True, {})
    app.board.add(
        Alert("t-1", str(path), "error-streak", 3, "warning", "2 tool calls failed in a row", 1_000), str(path)
    )
    async with app.run_test(size=(100, 30)) as pilot:
        live = app.live
        assert live is not None
        await until(pilot, lambda: live.phase == "waiting")
        await pilot.pause(0.1)
        assert app.alert_marks == {3: ("⚑ error-streak",)}


@pytest.mark.anyio
async def test_a_new_alert_is_one_row_more_not_the_table_filled_again() -> None:
    """The app asks the open Alerts screen to show the board again at every alert, and the screen cleared its table
    and added every row again: O(n^2) over a long history. An alert newer than every row is one row appended now,
    the cursor left where it was; one that goes between rows (a fleet reads its sessions' histories one session at
    a time) fills the table again in time order, the cursor kept on the alert it was on."""
    board = AlertBoard()
    for n in range(300):
        board.add(
            Alert("t-1", "/s/session.jsonl", "loop", n, "warning", f"reason {n}", 10_000 + 10 * n), "/s/session.jsonl"
        )
    app = AlertsHarness(board)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, AlertsScreen)
        table = screen.query_one("#alerts-table", DataTable)
        await until(pilot, lambda: table.row_count == 300)
        table.move_cursor(row=120)
        calls: list[str] = []
        clear, add_row = table.clear, table.add_row
        table.clear = lambda *a, **kw: (calls.append("clear"), clear(*a, **kw))[1]  # type: ignore[method-assign]
        table.add_row = lambda *a, **kw: (calls.append("add_row"), add_row(*a, **kw))[1]  # type: ignore[method-assign]
        for n in range(300, 305):
            board.add(
                Alert("t-1", "/s/session.jsonl", "loop", n, "warning", f"reason {n}", 10_000 + 10 * n), "/s/session.jsonl"
            )
            screen.show_alerts()
        assert calls == ["add_row"] * 5
        assert table.row_count == 305 and table.cursor_row == 120
        assert "seq 120:" in str(screen.query_one("#alerts-selected", Static).render())
        assert str(screen.query_one("#alerts-summary", Static).render()) == "305 alerts"
        earlier = Alert("t-2", "/s/other.jsonl", "budget", 7, "critical", "older", 10_005)  # between seqs 0 and 1
        board.add(earlier, earlier.path)
        screen.show_alerts()
        seqs = [str(table.get_row_at(i)[COLUMNS.index("seq")]) for i in range(table.row_count)]
        assert seqs[:3] == ["0", "7", "1"] and seqs[-1] == "304"
        assert "seq 120:" in str(screen.query_one("#alerts-selected", Static).render())


def test_an_alert_is_filed_under_the_log_its_path_names_when_it_is_raised(tmp_path: Path) -> None:
    """The feed kept each alert path's resolved ``log_key`` for good: once the path (a link) named another log, its
    alerts were filed under the old one, so they marked no row of the log the view had open and Enter on them said
    'another session'; the cache also grew by every path that ever raised an alert."""
    from core.alerts.follow import Retitled
    from tests.tui.pilot import QUIET
    from tui.alerts import AlertFeed, AlertRaised, log_key

    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_bytes(b"")
    second.write_bytes(b"")
    link = tmp_path / "current.jsonl"
    link.symlink_to(first)

    def alert(seq: int) -> Alert:
        return Alert("s", str(link), "stalled", seq, "warning", "nothing written", seq)

    class Follower:
        settled = True

        def __init__(self) -> None:
            self.polls = 0
            self.retitled = Retitled()  # no watch: none noted

        def watch_for(self, _alert: Alert) -> None:
            return None

        def poll(self, final: bool = False) -> list[Alert]:
            self.polls += 1
            if self.polls == 2:  # the link now names another log
                link.unlink()
                link.symlink_to(second)
            return [alert(self.polls)]

    posted: list[object] = []
    feed = AlertFeed([tmp_path], QUIET, posted.append)
    follower = Follower()
    feed.follower = lambda: follower  # type: ignore[method-assign]
    feed.pause = lambda: follower.polls >= 2  # type: ignore[method-assign]
    feed.run()
    assert [(m.alert.seq, m.key) for m in posted if isinstance(m, AlertRaised)] == [
        (1, log_key(first)), (2, log_key(second))
    ]


def test_the_alerts_heading_fits_the_narrowest_screen() -> None:
    """The alerts screen's heading (71 characters) was cut at 60 columns, the width every screen is laid out for,
    in the middle of its key hint ('enter: go to the ev'). It fits in the 58 cells a heading line leaves there."""
    from rich.cells import cell_len

    assert cell_len(AlertsScreen.HEADING) <= 60 - 2, AlertsScreen.HEADING
    assert "enter" in AlertsScreen.HEADING


@pytest.mark.anyio
async def test_an_alerts_toast_names_a_titled_session_by_its_title(tmp_path: Path) -> None:
    # the Alerts screen's row names a titled session by its title (613e353d): the live toast said the id's head
    path = tmp_path / "session.jsonl"
    log = Log()
    log.add("session/title", {"title": "Port the\nparser"})
    log.turn(1)
    _write(path, [HEADER, *log.events])
    app = _app(path, True, {"errorStreak": {"count": 1}})
    toasts = raised_toasts(app)
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        failed = log.result(True)
        _write(path, log.events[-1:], "a")
        await until(pilot, lambda: len(app.board.alerts) == 1 and bool(toasts))
        assert [(t.title, t.message) for t in toasts] == [
            ("Alert: error-streak", f"1 tool call failed in a row (seq {failed}, Port the parser)")]  # fmt: skip
