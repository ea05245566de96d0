"""What the readers of a bridged DSH session see while the plugin reloads, with the real DSH.

A reload disposes the old plugin instance before the new one attaches. The test hook ``TAPEDECK_BRIDGE_HOLD_ATTACH``
keeps the new instance from attaching while its file exists, so the gap between the two, some milliseconds in DSH,
lasts as long as a test reads the session in it: every reader (the state ``inspect``, the TUI, the fleet, the
alerts and ``control`` go by, ``inspect`` and ``sessions`` themselves, a ``control --wait`` already waiting) must
take the session for the live one it is, never for one whose bridge exited or was unloaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from core.control.host_state import LIVE_STATES, read_host_state
from tests.conftest import Processes
from tests.dsh.harness import (
    DshHome,
    DshInstall,
    DshWeb,
    ScriptedModel,
    bridge_json,
    final_outcome,
    killed_and_resumed,
    log_events,
    outcomes,
    send,
    start_session,
    td_runs,
    wait_for,
)
from tests.dsh.test_bridge_lifecycle import (
    ROOT,
    _answering_after,
    _hold_outcomes,
    _inbox_read_to,
    _installed_world,
    _no_replays,
    _reload_until,
    _tapedeck,
)

GAP_SECONDS = (
    2.5  # how long the readers look at the session between the two instances: twice a --wait's check
)


def _hold_attach(world: DshHome) -> Path:
    """The file whose presence keeps a plugin instance from attaching a session (made by the caller when due)."""
    hold = world.base / "hold-attach"
    world.extra_env["TAPEDECK_BRIDGE_HOLD_ATTACH"] = str(hold)
    return hold


def _held(hold: Path) -> int:
    """How many plugin instances the hook has held at their attach (each adds a line to the file)."""
    try:
        return hold.read_text().count("waiting\n")
    except OSError:
        return 0


def _reload_until_held(world: DshHome, hold: Path, generation: int, held: int) -> int:
    """Reload the plugin (``_reload_until``) until at least ``held`` instances were held at their attach; returns
    the generation the profile patch has now (an instance held late from an earlier save only makes one more reload
    in a row)."""
    return _reload_until(
        world, generation, lambda: _held(hold) >= held, f"instance {held + 1}, held before it attaches"
    )


def _read_through_the_gap(d: Path, world: DshHome) -> list[str]:
    """Every host state the readers give the session for ``GAP_SECONDS``: ``read_host_state`` (as the TUI, the
    fleet, the alerts and ``control`` read it) as often as it answers, ``inspect --json`` and ``sessions``."""
    log = d / "session.jsonl"
    seen = []
    deadline = time.monotonic() + GAP_SECONDS
    while time.monotonic() < deadline:
        state = read_host_state(log)
        seen.append(f"{state.state} live={state.live}")
    inspect = json.loads(_tapedeck("inspect", str(d), "--json").stdout)["host"]
    seen.append(f"inspect {inspect['state']}")
    listed = _tapedeck("sessions", str(world.sessions)).stdout
    seen.append("sessions " + ("DSH running" if "DSH running" in listed else listed))
    return seen


def _all_live(seen: list[str]) -> bool:
    return all(
        s in {f"{state} live=True" for state in LIVE_STATES}
        or s in {"inspect running", "sessions DSH running"}
        for s in seen
    )


def test_a_reload_reads_as_the_running_session_and_a_waiting_request_runs_once(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path, processes: Processes
) -> None:
    """A ``control --wait`` whose message the bridge read and had not run yet (``TAPEDECK_BRIDGE_HOLD`` holds it)
    when the plugin reloads: through the gap between the two instances every reader says the session runs, the
    wait goes on (it would withdraw the message for a bridge that exited), and the new instance runs the message
    once."""
    world = _installed_world(dsh, model, tmp_path)
    hold_attach = _hold_attach(world)
    hold_run = world.base / "hold"
    world.extra_env["TAPEDECK_BRIDGE_HOLD"] = str(hold_run)
    with DshWeb(world) as web:
        _, d = start_session(world, web, "Reloaded mid-turn: steps=30 sleep=1")
        wait_for(lambda: (bridge_json(d) or {}).get("state") == "running", 60, "the bridge running")
        hold_run.touch()
        waiting = processes.start(
            [sys.executable, "-m", "core.cli", "control", str(d), "message", "--arg", "text=across the reload",
             "--wait", "--timeout", "120", "--json"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        inbox = d / "control.jsonl"
        wait_for(lambda: inbox.exists() and inbox.stat().st_size > 0, 60, "the request in the inbox")
        read_to = inbox.stat().st_size
        wait_for(lambda: _inbox_read_to(d) == read_to, 60, "the bridge to read it")
        hold_attach.touch()
        _reload_until_held(world, hold_attach, 2, 1)
        seen = _read_through_the_gap(d, world)
        assert _all_live(seen), sorted(set(seen))
        assert waiting.poll() is None, waiting.communicate()
        released = time.time() * 1000
        hold_attach.unlink()
        hold_run.unlink()
        wait_for(lambda: _answering_after(d, released), 60, "the new instance's first word")
        out, err = waiting.communicate(timeout=120)
        assert waiting.returncode == 0, out + err
        told = json.loads(out)["data"]
        assert told["outcome"] == "applied", told
    events = log_events(d)
    assert [run["request"]["id"] for run, _ in td_runs(events)] == [told["requestId"]]
    said = [e for e in events if e["type"] == "user/message" and "across the reload" in json.dumps(e["data"])]
    assert len(said) == 1, said
    _no_replays(d, sent=1)


def test_two_reloads_in_a_row_read_as_the_running_session_and_replay_nothing(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """A second reload lands before the first one's new instance attached (it is disposed having written
    nothing): through both gaps every reader says the session runs; the third instance answers, keeps the mark the
    first one placed and runs the request sent in the gap once."""
    world = _installed_world(dsh, model, tmp_path)
    hold = _hold_attach(world)
    with DshWeb(world) as web:
        _, d = start_session(world, web, "Reloaded twice mid-turn: steps=30 sleep=1")
        mark = send(d, "checkpoint", {"objective": "before the reloads"})
        assert final_outcome(d, mark["id"])["detail"]["markId"] == 1
        hold.touch()
        generation = _reload_until_held(world, hold, 2, 1)
        _reload_until_held(world, hold, generation + 1, 2)
        sent_in_gap = send(d, "checkpoint", {"objective": "sent between the reloads"})
        seen = _read_through_the_gap(d, world)
        assert _all_live(seen), sorted(set(seen))
        released = time.time() * 1000
        hold.unlink()
        wait_for(lambda: _answering_after(d, released), 60, "the third instance's first word")
        assert final_outcome(d, sent_in_gap["id"])["detail"]["markId"] == 2
        assert outcomes(d)[-1]["requestId"] == sent_in_gap["id"]
    _no_replays(d, sent=2)


def test_dsh_killed_in_a_reload_s_gap_reads_as_exited_and_its_next_start_runs_nothing_read_before(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """DSH killed after a reload disposed the old instance and before the new one attached, a request the old one
    read not run yet (``TAPEDECK_BRIDGE_HOLD`` holds it): the file the old instance left says the session runs, and
    still every reader says it exited the moment DSH is gone; the next start cancels that request, never runs it."""
    world = _installed_world(dsh, model, tmp_path)
    hold_attach = _hold_attach(world)
    hold_run = world.base / "hold"
    world.extra_env["TAPEDECK_BRIDGE_HOLD"] = str(hold_run)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Killed in a reload: steps=30 sleep=2")
        hold_run.touch()
        read = send(d, "checkpoint", {"objective": "read before the reload"})
        read_to = (d / "control.jsonl").stat().st_size
        wait_for(lambda: _inbox_read_to(d) == read_to, 60, "the bridge to read it")
        hold_attach.touch()
        _reload_until_held(world, hold_attach, 2, 1)
        assert read_host_state(d / "session.jsonl").live

        def exited() -> None:
            state = read_host_state(d / "session.jsonl")
            assert (state.state, state.live) == ("exited", False), state
            assert json.loads(_tapedeck("inspect", str(d), "--json").stdout)["host"]["state"] == "exited"
            hold_attach.unlink()
            hold_run.unlink()

        with killed_and_resumed(web, sid, exited):
            done = final_outcome(d, read["id"])
            assert (done["outcome"], done["error"]) == ("cancelled", "DSH exited before applying it"), done
            wait_for(
                lambda: len([e for e in log_events(d) if e["type"] == "turn/end"]) >= 2,
                60,
                "the new turn to end",
            )
    assert td_runs(log_events(d)) == []
    assert [o["requestId"] for o in outcomes(d)] == [read["id"]]


def test_a_message_running_across_a_reload_is_answered_once_by_the_instance_that_ran_it(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """A reload while a steer runs (its outcome held by ``TAPEDECK_BRIDGE_HOLD_OUTCOME``), its outcome written in
    the gap by the old instance: every reader says the session runs through the gap, the new instance lists the
    request in flight only until that outcome is out and never runs it again, and the agent got the message once."""
    world = _installed_world(dsh, model, tmp_path)
    hold_attach = _hold_attach(world)
    hold_outcome = _hold_outcomes(world)
    hold_outcome.unlink()
    with DshWeb(world) as web:
        _, d = start_session(world, web, "Reloaded while a steer runs: steps=30 sleep=1")
        hold_outcome.touch()
        steer = send(d, "message", {"text": "steered across the reload"})
        wait_for(lambda: (bridge_json(d) or {}).get("inFlight"), 60, "the steer in flight")
        hold_attach.touch()
        _reload_until_held(world, hold_attach, 2, 1)
        hold_outcome.unlink()  # the old instance writes the outcome now, in the gap
        assert final_outcome(d, steer["id"])["outcome"] == "applied"
        seen = _read_through_the_gap(d, world)
        assert _all_live(seen), sorted(set(seen))
        released = time.time() * 1000
        hold_attach.unlink()
        reloaded = wait_for(lambda: _answering_after(d, released), 60, "the new instance's first word")
        assert "inFlight" not in reloaded, reloaded
        # the new instance reads the inbox in order, after what it took over: once this is answered, a second run of
        # the steer would be in the log already
        after = send(d, "checkpoint")
        assert final_outcome(d, after["id"])["outcome"] == "applied"
    said = [
        e
        for e in log_events(d)
        if e["type"] == "user/message" and "across the reload" in json.dumps(e["data"])
    ]
    assert len(said) == 1, said
    _no_replays(d, sent=2)


def test_a_td_command_that_reaches_a_reload_s_new_instance_before_it_attached_runs_once_it_has(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """A ``td`` command given by hand for a request the inbox holds too reaches the reload's new instance while it
    has not attached the session yet (``TAPEDECK_BRIDGE_HOLD_ATTACH`` holds it there): the command waits for the
    attach and runs the request then, once, and the inbox's line of it leaves the run to that command. It was
    answered 'no bridge', and its ``command/run`` in the log counted as a run, so the line never ran either and the
    request stayed without an outcome."""
    world = _installed_world(dsh, model, tmp_path)
    hold = _hold_attach(world)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Reloaded mid-turn: steps=30 sleep=1")
        wait_for(lambda: (bridge_json(d) or {}).get("state") == "running", 60, "the bridge running")
        hold.touch()
        _reload_until_held(world, hold, 2, 1)
        request = send(d, "checkpoint", {"objective": "given before the attach"})
        with ThreadPoolExecutor(1) as pool:
            given = pool.submit(web.command, sid, "/td " + json.dumps(request))
            wait_for(
                lambda: [run for run, _ in td_runs(log_events(d)) if run["request"]["id"] == request["id"]],
                60,
                "the td command in the log",
            )
            hold.unlink()
            done = final_outcome(d, request["id"])
            answer = given.result(timeout=60)
        assert (done["outcome"], done["detail"]["objective"]) == ("applied", "given before the attach"), done
        assert answer["result"]["kind"] == "success" and json.loads(answer["result"]["text"]) == done, answer
        later = send(d, "checkpoint")  # answered after the line: a second run of the request would be logged
        assert final_outcome(d, later["id"])["detail"]["markId"] == 2
    _no_replays(d, sent=2)
