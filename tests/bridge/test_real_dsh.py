"""tapedeck's readers against the real DSH through the bridge: the host state from ``bridge.json``, ``control
--wait`` answered from ``control.outcomes.jsonl``, and a bridge checkpoint read back as a mark whose rewind preview
is exactly the region the plugin then replaces. Skipped (one line naming what is missing) without the DSH install
``tools/install_dsh.sh`` makes; the DSH world and its scripted model are ``tests/dsh``'s."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from core.cli import main
from core.control.host_state import read_host_state
from core.policies.checkpoint import marks
from core.policies.rewind import preview_rewind
from core.read.load import load_session
from tests.dsh.harness import (
    DshHome,
    DshInstall,
    DshWeb,
    ScriptedModel,
    log_events,
    outcomes,
    run_headless,
    start_headless,
    start_session,
    stop_process,
    tool_in_flight,
    wait_for,
)
from tests.tui.pilot import NO_KEYMAP, make_app, settle, until
from tests.tui.screens_policy.harness import panel
from tui.screens.checkpoints import CheckpointsScreen
from tui.screens.confirm import AskScreen, ConfirmScreen
from tui.screens.policy_screen import requests_for

if TYPE_CHECKING:
    from core.alerts.follow import AlertWatch


def _control(capsys: pytest.CaptureFixture[str], d: Path, *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["control", str(d), *argv, "--wait", "--timeout", "60", "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)["data"] if out.strip() else {}


def test_state_outcomes_and_marks_read_from_a_real_dsh_session(
    shared_web: tuple[DshHome, DshWeb], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    world, web = shared_web
    _, d = start_session(world, web, "Work slowly: steps=3 sleep=2")
    log = d / "session.jsonl"
    state = read_host_state(log)
    assert (state.kind, state.live) == ("dsh", True) and state.state in ("running", "pausing")
    # it keeps the bridge.json of the session DSH runs; the temporary file of a bridge write under way this moment
    # (a heartbeat's) is listed, and may be renamed before it is copied: none is taken
    copy = shutil.copytree(d, tmp_path / "copy", ignore=shutil.ignore_patterns(".*.tmp"))
    assert (read_host_state(copy / "session.jsonl").state, read_host_state(log).live) == ("none", True)

    code, outcome = _control(capsys, d, "checkpoint", "--arg", "objective=probe")
    assert code == 0 and outcome["detail"]["markId"] == 1
    code, _ = _control(capsys, d, "pause")
    assert code == 0
    wait_for(lambda: read_host_state(log).state == "paused", 60, "host.state paused")
    code, _ = _control(capsys, d, "resume")
    assert code == 0
    wait_for(lambda: read_host_state(log).state == "idle", 60, "host.state idle")
    # idle is said only once DSH has flushed the turn: its end is in the log the moment the state reads idle
    assert any(e["type"] == "turn/end" for e in log_events(d))

    session = load_session(d)
    [mark] = marks(session)
    assert (mark.mark_id, mark.bridged, mark.active, mark.objective) == (1, True, True, "probe")
    preview = preview_rewind(session)
    code, outcome = _control(capsys, d, "rewind", "--arg", "markId=1")
    assert code == 0, outcome
    detail = outcome["detail"]
    region = preview.region
    assert (detail["start"], detail["end"], detail["foldedNodes"]) == (
        region.start,
        region.end,
        len(region.shadowed_seqs),
    )
    replacement = next(e for e in log_events(d) if e["seq"] == detail["seq"])
    assert replacement["sourceEventSeqs"] == sorted(region.shadowed_seqs)
    assert [m.active for m in marks(load_session(d))] == [False]

    code, outcome = _control(capsys, d, "config.set", "--arg", "key=temperature", "--arg", "value=1")
    assert code == 2  # refused before sending: DSH has no such live setting
    assert main(["inspect", str(d), "--json"]) == 0
    host = json.loads(capsys.readouterr().out)["host"]
    assert (host["kind"], host["state"], host["bridge"]["plugin"]) == ("dsh", "idle", "tapedeck-bridge/0.1.0")


def test_a_headless_run_loads_the_bridge_install_put_into_a_home_dsh_never_booted(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world = DshHome(dsh, tmp_path, model.url, bridge=False)  # the overlay routes the model, no bridge in it
    assert main(["bridge", "install", str(world.home), "--profile", "headless"]) == 0
    done = run_headless(world, "Work: steps=1 sleep=0")
    assert done.returncode == 0, done.stderr[-2000:]
    [log] = world.sessions.glob("*/*/session.jsonl")
    state = read_host_state(log)
    assert (state.kind, state.state, state.to_dict()["bridge"]["plugin"]) == (
        "dsh",
        "exited",
        "tapedeck-bridge/0.1.0",
    )
    assert main(["bridge", "remove", str(world.home), "--profile", "headless"]) == 0
    capsys.readouterr()
    assert not (world.home / "profiles" / "headless" / "tapedeck-bridge.mjs").exists()


def test_a_running_dsh_web_picks_up_the_bridge_install_adds(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world = DshHome(dsh, tmp_path, model.url, bridge=False)
    with DshWeb(world) as web:
        assert main(["bridge", "install", str(world.home)]) == 0  # profile web, while DSH runs
        capsys.readouterr()
        sid = web.create_session()
        web.prompt(sid, "Work: steps=1 sleep=0")
        d = world.session_dir(sid)
        wait_for(
            lambda: read_host_state(d / "session.jsonl").live, 60, "the bridge to load without a restart"
        )
        code, outcome = _control(capsys, d, "checkpoint")
        assert code == 0 and outcome["detail"]["markId"] == 1


def test_bridge_remove_while_dsh_runs_a_turn_is_no_death(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``bridge remove`` under a running ``dsh web`` unloads the plugin, which writes that it exited: the session
    read ``DSH exited`` and raised a critical host-died while DSH ran its turn on. It now reads as a DSH session no
    bridge runs, and ``bridge install`` gives it back its bridge."""
    world = DshHome(dsh, tmp_path, model.url, bridge=False)
    assert main(["bridge", "install", str(world.home)]) == 0
    with DshWeb(world) as web:
        _, d = start_session(world, web, "Work slowly: steps=30 sleep=2")
        log = d / "session.jsonl"
        assert main(["bridge", "remove", str(world.home)]) == 0
        wait_for(lambda: (read_host_state(log).state, read_host_state(log).kind) == ("none", "dsh"), 60,
                 "the unloaded bridge")  # fmt: skip
        capsys.readouterr()
        assert main(["alerts", str(d)]) == 0, capsys.readouterr().out
        assert tool_in_flight(d) or wait_for(lambda: tool_in_flight(d), 60, "DSH's next step")  # it runs on
        assert main(["bridge", "install", str(world.home)]) == 0
        wait_for(lambda: read_host_state(log).live, 60, "the bridge loaded again")


@pytest.mark.anyio
async def test_the_tui_opened_on_a_real_dsh_session_directory_shows_the_bridge_outcome(
    shared_web: tuple[DshHome, DshWeb],
) -> None:
    """``tapedeck watch SESSION_DIR``: the outcome file is the one in that directory (it was read from its parent,
    so every request stayed pending and, once DSH exited, was shown cancelled and withdrawn though applied)."""
    world, web = shared_web
    _, d = start_session(world, web, "Work slowly: steps=3 sleep=2")
    app = make_app(d, follow=True)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        await until(pilot, lambda: app.live.host.live)
        await pilot.press("K")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        await pilot.press(*"probe", "enter")
        await until(pilot, lambda: [i.state for i in requests_for(app.live).items()] == ["applied"])
        assert requests_for(app.live).items()[0].reason.endswith(": probe")  # the objective, after the mark


def test_an_alert_of_a_real_dsh_session_names_it_by_more_than_its_id_prefix(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """DSH names every session ``session-<uuid>``: the alert line showed the id's first 8 characters, so every
    DSH session read ``session-`` (in ``alerts``, the TUI's toast and its alerts list)."""
    world = DshHome(dsh, tmp_path, model.url)
    proc = start_headless(world, "Work slowly: steps=5 sleep=2")
    try:
        d = wait_for(
            lambda: next(world.sessions.glob("*/session-*/session.jsonl"), None), 60, "the log"
        ).parent
        wait_for(lambda: tool_in_flight(d), 60, "a bash step in flight")
    finally:
        stop_process(proc)  # DSH goes away mid-turn: host-died
    wait_for(lambda: not read_host_state(d / "session.jsonl").live, 60, "the bridge to read exited")
    assert main(["alerts", str(d)]) == 1
    [line] = [line for line in capsys.readouterr().out.splitlines() if "host-died" in line]
    assert f" {d.name.removeprefix('session-')[:8]} " in line, line


@pytest.mark.anyio
async def test_the_checkpoints_panel_shows_a_real_dsh_outcome_while_the_session_is_quiet(
    shared_web: tuple[DshHome, DshWeb],
) -> None:
    """A bridge's outcome comes in a file beside the log, read by the app's host poll: the policy screens'
    outcome panel was redrawn only when the log grew, so a checkpoint placed on an idle (or paused) DSH session
    stayed 'pending — waiting for the host' there while the toast said it was applied."""
    world, web = shared_web
    _, d = start_session(world, web, "Quick: steps=1 sleep=0", in_flight=False)
    log = d / "session.jsonl"
    wait_for(lambda: read_host_state(log).state == "idle", 60, "the bridge to go idle")
    app = make_app(log, follow=True)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        await until(pilot, lambda: app.live.host.live)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, CheckpointsScreen) and app.screen._view is not None)
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        await pilot.press(*"quiet", "enter")
        await until(pilot, lambda: [i.state for i in requests_for(app.live).items()] == ["applied"])
        await until(pilot, lambda: panel(app).startswith("applied"))


def test_control_wait_ends_cancelled_when_dsh_dies_while_it_waits(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``control --wait`` on a request DSH holds (a rewind waits for idle) kept waiting after DSH died, for the
    whole --timeout, then said it timed out (exit 2); it now sees the bridge exit and answers cancelled (exit 1).
    DSH dies once its bridge has answered the rewind pending (not on a timer, which a loaded machine can fire
    before the request is sent)."""
    world = DshHome(dsh, tmp_path, model.url)
    proc = start_headless(world, "Work slowly: steps=30 sleep=2")

    def crash_once_held() -> None:
        try:
            wait_for(lambda: _holds(d, "rewind"), 60, "DSH to hold the rewind")
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()  # reaped, as DSH's parent shell would: a zombie keeps its /proc entry

    try:
        d = wait_for(
            lambda: next(world.sessions.glob("*/session-*/session.jsonl"), None), 60, "the log"
        ).parent
        wait_for(lambda: tool_in_flight(d), 60, "a bash step in flight")
        code, _ = _control(capsys, d, "checkpoint")
        assert code == 0
        killer = threading.Thread(target=crash_once_held)
        killer.start()
        code, outcome = _control(
            capsys, d, "rewind", "--arg", "markId=1"
        )  # --timeout 60: exit 2 had it run out
        killer.join()
    finally:
        stop_process(proc)
    assert _holds(d, "rewind")  # DSH died holding it
    assert code == 1, outcome
    assert outcome["outcome"] == "cancelled" and "DSH bridge exited" in outcome["error"]


def _holds(d: Path, op: str) -> bool:
    """Whether the bridge of the session directory ``d`` has answered an ``op`` request pending (it holds it)."""
    with contextlib.suppress(ValueError):  # a line being appended
        return any(o.get("op") == op and o["outcome"] == "pending" for o in outcomes(d))
    return False


def _killed_mid_turn(world: DshHome) -> tuple[str, Path, AlertWatch]:
    """A session a DSH web of ``world`` ran, that DSH killed mid-turn once an alert watch had read the session, and
    the watch's look after the bridge reads exited: the session id, its directory and the watch (its turn 1 did
    die with its DSH: the one host-died the watch raised)."""
    from core.alerts.follow import AlertWatch, now_ms
    from core.control.config import validate_config

    web = DshWeb(world).start()
    try:
        sid, d = start_session(world, web, "Work slowly: steps=30 sleep=2")
        watch = AlertWatch(d / "session.jsonl", validate_config({}))
        assert watch.poll(now_ms()) == []
        os.killpg(web.proc.pid, signal.SIGKILL)  # type: ignore[union-attr]
        web.proc.wait()  # type: ignore[union-attr]
    finally:
        web.stop()
    wait_for(lambda: not read_host_state(d / "session.jsonl").live, 60, "the bridge to read exited")
    assert [a.cause for a in watch.poll(now_ms())] == ["host-died"]
    return sid, d, watch


def test_a_new_dsh_taking_up_a_session_whose_dsh_was_killed_raises_no_second_death(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """DSH killed mid-turn: one host-died. A new DSH that takes the session up closes that turn and opens the next
    before its bridge rewrites bridge.json; the watcher fed that turn while the host still read exited, and raised
    a second, false host-died (critical: a bell in the TUI and the fleet) that cleared a second later."""
    from core.alerts.follow import now_ms
    from core.alerts.rules import TAKEN_UP_MS

    world = DshHome(dsh, tmp_path, model.url)
    sid, d, watch = _killed_mid_turn(world)
    log = d / "session.jsonl"
    # taken up later than a heartbeat's slack after the death (within it, the turn could still be the dead DSH's)
    time.sleep(max(0.0, (read_host_state(log).since or 0) + TAKEN_UP_MS - now_ms()) / 1000 + 0.5)
    with DshWeb(world) as again:
        again.prompt(sid, "Once more: steps=1 sleep=0")
        wait_for(lambda: sum(e["type"] == "turn/start" for e in log_events(d)) == 2, 60, "the new DSH's turn")
        raised = watch.poll(now_ms())  # what the log holds now, judged against the host's last reading
        wait_for(lambda: read_host_state(log).live, 60, "the new bridge")
        raised += watch.poll(now_ms())
    assert [a.cause for a in raised if a.cause == "host-died"] == []


def test_a_dsh_back_within_seconds_raises_no_second_death(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """DSH killed mid-turn and a new one (already booted, as a supervisor restarts it) taking the session up a
    second later: the new DSH's turn met the old reading ``exited`` under 5 s after the last heartbeat, so the
    watcher raised 'DSH exited in the middle of turn 2' although bridge.json already named the live new DSH."""
    from core.alerts.follow import now_ms

    world = DshHome(dsh, tmp_path, model.url)
    with DshWeb(world) as again:
        sid, d, watch = _killed_mid_turn(world)
        log = d / "session.jsonl"
        again.prompt(sid, "Once more: steps=1 sleep=0")
        wait_for(lambda: sum(e["type"] == "turn/start" for e in log_events(d)) == 2, 60, "the new DSH's turn")
        raised = watch.poll(now_ms())
        wait_for(lambda: read_host_state(log).live, 60, "the new bridge")
        raised += watch.poll(now_ms())
    assert [(a.cause, a.reason) for a in raised] == []


@pytest.mark.anyio
async def test_a_fleet_row_action_the_bridge_refuses_says_so(shared_web: tuple[DshHome, DshWeb]) -> None:
    """S on a DSH session whose turn had ended said 'sent: stop' and nothing more: the bridge refused it (no turn to
    stop) in its outcomes file, which the table never read. The bridge's answer now follows the send."""
    from tui.app import TapedeckApp
    from tui.screens.fleet import FleetScreen

    world, web = shared_web
    sid, d = start_session(world, web, "Quick: steps=1 sleep=0", in_flight=False)
    wait_for(lambda: read_host_state(d / "session.jsonl").state == "idle", 60, "the bridge to go idle")
    app = TapedeckApp(
        world.sessions, follow=False, interval=0.02, keymap_file=NO_KEYMAP, fleet_roots=[world.sessions]
    )
    async with app.run_test(size=(150, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FleetScreen) and sid in {
            r.row.ref.id for r in app.screen.rows.values()})  # fmt: skip
        await pilot.press("slash", *sid, "enter")
        await until(pilot, lambda: len(app.screen.shown) == 1)  # type: ignore[attr-defined]
        await until(pilot, lambda: app.screen.rows[app.screen.shown[0]].row.host.get("state") == "idle")  # type: ignore[attr-defined]
        app.clear_notifications()
        await pilot.press("S")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: any(n.title == "DSH bridge" for n in app._notifications))
        (said,) = [n for n in app._notifications if n.title == "DSH bridge"]
        assert said.message.startswith("The DSH bridge refused the stop sent to "), said.message
        assert "no turn to stop" in said.message, said.message
        assert said.severity == "error"
