"""The bridge across a DSH restart, a plugin reload (HMR), an upgrade in place and a headless run, with the real DSH.

The plugin is installed the way operators do it: ``tapedeck bridge install`` on a DSH home that was never booted
(restart, reload), ``tapedeck bridge install --print-patch`` as the overlay of a headless run; one op goes
through ``tapedeck control --wait``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.bridge.files import packaged_fingerprint, proc_start_time
from core.control.outcome import unknown_hint
from tests.conftest import Processes
from tests.dsh.harness import (
    NEVER_ALIVE_PID,
    PLUGIN,
    DshHome,
    DshInstall,
    DshWeb,
    ScriptedModel,
    bridge_json,
    final_outcome,
    killed_and_resumed,
    known_event_types,
    log_events,
    outcomes,
    send,
    send_line,
    start_headless,
    start_session,
    stop_process,
    td_runs,
    wait_for,
)

ROOT = Path(__file__).resolve().parents[2]


def _tapedeck(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "core.cli", *argv], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def _installed_world(dsh: DshInstall, model: ScriptedModel, tmp_path: Path) -> DshHome:
    world = DshHome(dsh, tmp_path, model.url, bridge=False)
    assert not any(world.home.iterdir())  # DSH never booted here
    done = _tapedeck("bridge", "install", str(world.home))
    assert done.returncode == 0, done.stderr
    return world


def _turn_ends(d: Path) -> list[dict]:
    return [e for e in log_events(d) if e["type"] == "turn/end"]


def _hold(world: DshHome) -> Path:
    """The file whose presence makes the plugin hold every request it read before running it (its test hook)."""
    hold = world.base / "hold"
    hold.touch()
    world.extra_env["TAPEDECK_BRIDGE_HOLD"] = str(hold)
    return hold


def _hold_outcomes(world: DshHome) -> Path:
    """The file whose presence makes the plugin hold the outcome of every request it ran (its other test hook)."""
    hold = world.base / "hold-outcome"
    hold.touch()
    world.extra_env["TAPEDECK_BRIDGE_HOLD_OUTCOME"] = str(hold)
    return hold


def _inbox_read_to(d: Path) -> int | None:
    """How far the bridge has read the inbox (its saved cursor), None before it saved one."""
    try:
        return json.loads((d / "bridge.state.json").read_text())["cursor"]["offset"]
    except (OSError, ValueError):
        return None


# the plugin's: a gap this short between two bridges of one session is a reload, not an absence
RELOAD_GRACE_MS = int(re.search(r"const RELOAD_GRACE_MS = (\d+);", PLUGIN.read_text()).group(1))  # type: ignore[union-attr]


def _past_a_reload_gap(d: Path) -> bool:
    """Whether the bridge that last wrote bridge.json in ``d`` was last alive (when it exited, else its last
    heartbeat, as the plugin reads the file) longer than a reload's gap ago: a bridge that starts now takes what was
    sent since for requests no bridge read, never for a reload's."""
    written = bridge_json(d) or {}
    last = written.get("since") if written.get("state") == "exited" else written.get("heartbeat")
    return isinstance(last, int) and time.time() * 1000 - last > RELOAD_GRACE_MS


def _no_replays(d: Path, sent: int) -> None:
    """Every request ran at most once in DSH's log and has exactly one final outcome."""
    runs = Counter(run["request"]["id"] for run, _ in td_runs(log_events(d)))
    assert runs and max(runs.values()) == 1, runs
    finals = Counter(o["requestId"] for o in outcomes(d) if o["outcome"] != "pending")
    assert len(finals) == sent and max(finals.values()) == 1, finals


def test_restart_resumes_the_session_and_replays_nothing(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    world = _installed_world(dsh, model, tmp_path)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "First turn: steps=2 sleep=1")  # the installed plugin answers
        mark = send(d, "checkpoint", {"objective": "before restart"})
        steer = send(d, "message", {"text": "steered before the restart"})
        for request in (mark, steer):
            assert final_outcome(d, request["id"])["outcome"] == "applied"
        wait_for(lambda: _turn_ends(d), 60, "the first turn to end")
        pause = send(d, "pause")  # from idle; kept across the restart
        assert final_outcome(d, pause["id"])["detail"] == {"state": "paused"}
    assert bridge_json(d)["state"] == "exited"
    # the operator left it paused: what inspect and the fleet say of the exited session tells the next start holds
    shown = _tapedeck("inspect", str(d))
    assert "left it paused" in shown.stdout and "until it is resumed" in shown.stdout, (
        shown.stdout + shown.stderr
    )
    assert json.loads(_tapedeck("inspect", str(d), "--json").stdout)["host"]["bridge"]["paused"] is True
    listed = _tapedeck("sessions", str(world.sessions))
    assert "DSH exited, left paused" in listed.stdout, listed.stdout + listed.stderr
    # sent while no bridge runs: the plain one must not fire late, the queued one waits for the next start
    late = send(d, "message", {"text": "sent to nobody"})
    queued = send(d, "checkpoint", {"objective": "queued for the restart"}, queued=True)
    wait_for(lambda: _past_a_reload_gap(d), 60, "the exit to be longer ago than a reload's gap")
    with DshWeb(world) as web:
        # as if a sibling container's DSH (pids of its own, the same kernel) had run the session last, with this
        # DSH's pid and start tick, and died running a request: another process, whose request is unknown here; its
        # file damaged, the time it exited no time at all (past what a millisecond count holds): when the bridge was
        # last alive is unknown, so what the inbox holds from before was sent while none ran
        assert web.proc is not None
        sibling = {**bridge_json(d), "since": 10**20, "pid": web.proc.pid, "procStart": proc_start_time(web.proc.pid),
                   "pidNs": os.stat("/proc/self/ns/pid").st_ino + 1, "inFlight": [{"id": "sib-1", "op": "checkpoint"},
                   {"id": "sib-2", "op": "\x1b]52;c;Zm9yZ2Vk\x07pause", "origin": {"forged": True}}]}  # fmt: skip
        (d / "bridge.json").write_text(json.dumps(sibling))
        web.prompt(sid, "Second turn: steps=1 sleep=0")  # DSH resumes the session from its log
        wait_for(
            lambda: (bridge_json(d) or {}).get("state") == "paused", 60, "the restarted bridge, still paused"
        )
        assert "arrived while no bridge was running" in final_outcome(d, late["id"])["error"]
        assert final_outcome(d, queued["id"])["detail"]["markId"] == 2
        assert final_outcome(d, "sib-1")["outcome"] == "unknown"  # taken for a reload, it was never answered
        # a forged entry's op is none of DSH's and its origin no sender's: the answer names neither, as tapedeck's
        # reading of bridge.json (core.bridge.files) takes neither
        forged = final_outcome(d, "sib-2")
        assert (forged["op"], "origin" in forged) == (None, False), forged
        assert "while it ran this request," in forged["error"] and "\x1b" not in forged["error"], forged
        resumed = _tapedeck("control", str(d), "resume", "--wait", "--json")
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        wait_for(lambda: len(_turn_ends(d)) == 2, 60, "the resumed session's new turn to end")
        # the new turn was held: it took no step before the resume's command ran
        assert _steps_before_run(log_events(d), json.loads(resumed.stdout)["data"]["requestId"]) == 3
    assert _turn_ends(d)[-1]["data"]["reason"] == {"kind": "completed"}
    _no_replays(d, sent=8)  # sib-1 and sib-2 among them
    state = json.loads((d / "bridge.state.json").read_text())
    assert [m["markId"] for m in state["marks"]] == [1, 2] and state["paused"] is False
    assert {e["type"] for e in log_events(d)} <= known_event_types(dsh)


def _answering_after(d: Path, after: float) -> dict[str, Any] | None:
    """``bridge.json`` once a bridge that answers (not one that exited) wrote it after ``after`` (ms), else None."""
    written = bridge_json(d) or {}
    return written if written.get("heartbeat", 0) > after and written.get("state") != "exited" else None


def _reload(world: DshHome, generation: int) -> None:
    """Edit the bridge row's config in the profile patch, as an editor saves a file (whole), so that DSH reloads
    the plugin: DSH re-reads the file at its first change event, and a write in place read between its truncation
    and its bytes (a busy machine) is an empty patch list that DSH refuses."""
    patch = world.home / "profiles" / "web" / "cordis.patch.yml"
    text = patch.read_text()
    edited = text.replace("config: {}", f"config: {{generation: {generation}}}")
    if edited == text:
        edited = text.replace(
            f"config: {{generation: {generation - 1}}}", f"config: {{generation: {generation}}}"
        )
    assert edited != text
    edit = patch.with_name(patch.name + ".edit")
    edit.write_text(edited)
    os.replace(edit, patch)


def _reload_until(world: DshHome, generation: int, came: Callable[[], Any], what: str) -> int:
    """Save the profile patch (``_reload``) until ``came()`` says the new instance came; returns the generation the
    file has now. DSH's file watcher can miss a save that lands soon after its previous reload: seen once in CI and
    1 run in 6 at load, the new instance never came, and a second save brought it. So a save that brought none
    within 10 s is made again (a later one, as an editor saves again), within 60 s in all."""
    deadline = time.monotonic() + 60
    while True:
        _reload(world, generation)
        try:
            wait_for(came, 10, what)
            return generation
        except TimeoutError:
            if time.monotonic() > deadline:
                raise
            generation += 1


def _reload_to_new_instance(d: Path, world: DshHome) -> float:
    """Reload the plugin and return (ms) when its new instance was seen attaching the session in ``d``: a bridge.json
    with a later heartbeat is that instance's (``_answering_after``). A reload keeps the file's ``since`` (its state
    goes on), so what tells the new instance is its attach, which first removes the temporary files a dead DSH left
    (each instance does so once, the old one long ago): one planted before the reload goes then, and the old
    instance, superseded before, writes nothing after."""
    left = d / f".bridge.json.{NEVER_ALIVE_PID}.tmp"  # a pid no process has
    left.write_text("{}\n")
    an_hour_ago = time.time() - 3600
    os.utime(left, (an_hour_ago, an_hour_ago))
    _reload_until(world, _next_generation(world), lambda: not left.exists(), "the new instance's attach")
    return time.time() * 1000


def _next_generation(world: DshHome) -> int:
    """The generation the next edit of the bridge row's config gives it (``_reload``): one past the profile patch's,
    2 while it has none."""
    text = (world.home / "profiles" / "web" / "cordis.patch.yml").read_text()
    found = re.search(r"config: \{generation: (\d+)\}", text)
    return int(found.group(1)) + 1 if found else 2


def _steps_before_run(events: list[dict[str, Any]], request_id: str) -> int:
    """How many steps DSH started before the ``td`` command that ran ``request_id``."""
    [at] = [run["seq"] for run, _ in td_runs(events) if run["request"]["id"] == request_id]
    return len([e for e in events if e["type"] == "step/start" and e["seq"] < at])


def test_a_plugin_reload_keeps_the_pause_and_a_waiting_rewind_and_replays_no_op(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    world = _installed_world(dsh, model, tmp_path)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Before the reload: steps=3 sleep=1")
        sent = [send(d, "checkpoint"), send(d, "message", {"text": "one steer"}), send(d, "pause")]
        for request in sent:
            assert final_outcome(d, request["id"])["outcome"] == "applied"
        rewind = send(d, "rewind")  # the turn is open (and held): it waits for idle
        sent.append(rewind)
        wait_for(lambda: any(o["requestId"] == rewind["id"] for o in outcomes(d)), 60, "the rewind pending")
        paused = wait_for(lambda: (b := bridge_json(d) or {}).get("state") == "paused" and b, 60, "paused")
        steps = len([e for e in log_events(d) if e["type"] == "step/start"])
        runs_before = len(td_runs(log_events(d)))
        # DSH disposes the old instance first, which leaves bridge.json as it was: the verdict waits for the new
        # instance's own first word, and that word is the pause it took over, paused since before the reload
        attached = _reload_to_new_instance(d, world)
        reloaded = wait_for(lambda: _answering_after(d, attached), 60, "the new instance's word")
        assert (reloaded["state"], reloaded["since"]) == ("paused", paused["since"]), (reloaded, paused)
        resume = send(d, "resume")
        sent.append(resume)
        assert final_outcome(d, resume["id"])["outcome"] == "applied"
        # the held step stayed held through the reload, and nothing ran again: up to the resume's command, no step
        # started and no command ran (one at any moment before it would be there)
        events = log_events(d)
        assert _steps_before_run(events, resume["id"]) == steps
        assert [run["request"]["id"] for run, _ in td_runs(events)].index(resume["id"]) == runs_before
        assert final_outcome(d, rewind["id"])["outcome"] == "applied"  # once the turn has ended
        assert _turn_ends(d)[0]["data"]["reason"] == {"kind": "completed"}
        after = send(d, "checkpoint")
        sent.append(after)
        assert final_outcome(d, after["id"])["detail"]["markId"] == 2  # marks rebuilt, ids continue
        web.prompt(sid, "After the reload: steps=1 sleep=0")
        wait_for(lambda: len(_turn_ends(d)) == 2, 60, "a turn after the reload")
    _no_replays(d, sent=len(sent))
    pending = [o["requestId"] for o in outcomes(d) if o["outcome"] == "pending"]
    assert pending == [rewind["id"]]  # acknowledged once, by the first instance


def test_a_reload_keeps_the_since_of_a_running_and_of_an_idle_session(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """``since`` in bridge.json is when the session entered the state it is in, and a reload, through which that state
    goes on, keeps it, as it does a pause's (the test above): the running turn's and the idle session's. An idle
    one's new instance said running until a flush of its own, then idle since that flush."""
    world = _installed_world(dsh, model, tmp_path)
    with DshWeb(world) as web:
        _, d = start_session(world, web, "Reloaded while running: steps=30 sleep=2")
        running = wait_for(lambda: (b := bridge_json(d) or {}).get("state") == "running" and b, 60, "running")
        attached = _reload_to_new_instance(d, world)
        reloaded = wait_for(lambda: _answering_after(d, attached), 60, "the new instance's word")
        assert (reloaded["state"], reloaded["since"]) == ("running", running["since"]), (reloaded, running)
        assert final_outcome(d, send(d, "stop")["id"])["outcome"] == "applied"
        idle = wait_for(lambda: (b := bridge_json(d) or {}).get("state") == "idle" and b, 60, "idle")
        attached = _reload_to_new_instance(d, world)
        reloaded = wait_for(lambda: _answering_after(d, attached), 60, "the new instance's word")
        assert (reloaded["state"], reloaded["since"]) == ("idle", idle["since"]), (reloaded, idle)


def test_install_upgrades_an_older_plugin_a_running_dsh_has_loaded(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """What an earlier tapedeck installed (a plugin that writes no fingerprint, under a row naming the file alone)
    runs in DSH: inspect and bridge status call it stale, and install replaces it in the running DSH, whose new
    plugin instance answers the next request."""
    world = _installed_world(dsh, model, tmp_path)
    web_dir = world.home / "profiles" / "web"
    (web_dir / "tapedeck-bridge.mjs").write_bytes(
        PLUGIN.read_bytes().replace(b"if (FINGERPRINT) body.fingerprint = FINGERPRINT;", b"")
    )
    patch = web_dir / "cordis.patch.yml"
    patch.write_text(re.sub(r"\?v=[0-9a-f]+", "", patch.read_text()))
    with DshWeb(world) as web:
        _, d = start_session(world, web, "Long enough to upgrade under: steps=6 sleep=1")
        assert "fingerprint" not in bridge_json(d)
        host = json.loads(_tapedeck("inspect", str(d), "--json").stdout)["host"]
        assert "`tapedeck bridge install` upgrades it in place" in host["bridge"]["stale"]
        assert "STALE: an older copy" in _tapedeck("bridge", "status", str(world.home)).stdout
        done = _tapedeck("bridge", "install", str(world.home))
        assert (
            "updated the plugin" in done.stdout
            and "brought the tapedeck-bridge row up to date" in done.stdout
        )
        wait_for(
            lambda: (bridge_json(d) or {}).get("fingerprint") == packaged_fingerprint(), 60, "the new plugin"
        )
        host = json.loads(_tapedeck("inspect", str(d), "--json").stdout)["host"]
        assert host["state"] in ("running", "pausing", "paused", "idle") and "stale" not in host["bridge"]
        mark = send(d, "checkpoint", {"objective": "after the upgrade"})
        assert final_outcome(d, mark["id"])["outcome"] == "applied"
    _no_replays(d, sent=1)


def test_headless_run_with_zstd_log_obeys_the_inbox(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    printed = _tapedeck("bridge", "install", "--print-patch")  # the overlay operators give headless runs
    assert printed.returncode == 0, printed.stderr
    world = DshHome(dsh, tmp_path, model.url, compression="zstd", bridge=False, overlay_tail=printed.stdout)
    proc = start_headless(world, "Headless: steps=3 sleep=1")
    try:
        d = wait_for(
            lambda: next(iter(world.sessions.glob("*/*/session.jsonl.zstd")), None), 60, "the zstd log"
        ).parent
        wait_for(lambda: bridge_json(d), 60, "bridge.json")
        mark = send(d, "checkpoint")
        note = send(d, "message", {"text": "headless steer"})
        assert final_outcome(d, mark["id"])["outcome"] == "applied"
        assert final_outcome(d, note["id"])["outcome"] == "applied"
        assert proc.wait(60) == 0
    finally:
        stop_process(proc)
    assert bridge_json(d)["state"] == "exited"
    events = log_events(d)
    assert any("headless steer" in json.dumps(e["data"]) for e in events if e["type"] == "user/message")
    assert {e["type"] for e in events} <= known_event_types(dsh)


def test_a_rewind_waiting_for_idle_when_dsh_is_killed_is_cancelled_when_it_comes_back(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """A rewind acknowledged pending (it waits for the turn to end) when DSH is killed mid-turn is answered
    cancelled by the restarted bridge, never applied late, as our host cancels what the host before it had not
    applied; a plugin reload's short gap still keeps it (the test above)."""
    world = _installed_world(dsh, model, tmp_path)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Killed mid-turn: steps=30 sleep=2")
        assert final_outcome(d, send(d, "checkpoint")["id"])["outcome"] == "applied"
        rewind = send(d, "rewind")
        wait_for(lambda: any(o["requestId"] == rewind["id"] for o in outcomes(d)), 60, "the rewind pending")

        def past_the_gap() -> None:
            wait_for(
                lambda: _past_a_reload_gap(d), 60, "the last heartbeat to be longer ago than a reload's gap"
            )

        with killed_and_resumed(web, sid, past_the_gap):
            wait_for(
                lambda: bridge_json(d)["state"] == "idle" and len(_turn_ends(d)) >= 2,
                60,
                "the new turn to end",
            )
            done = final_outcome(d, rewind["id"])
            assert (done["outcome"], done["error"]) == ("cancelled", "DSH exited before applying it"), done
    assert rewind["id"] not in [run["request"]["id"] for run, _ in td_runs(log_events(d))]


def test_requests_read_but_not_run_when_dsh_is_killed_are_answered_when_it_comes_back(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """DSH killed while the bridge holds requests it read from the inbox but has not run yet (the plugin's test hook
    holds them there): the bridge that DSH starts next, at once, cancels the plain one, as our host cancels what the
    host before it read and never applied, answers the one whose time ran out expired, as our host does, cancels
    the one its sender withdrew after the kill as withdrawn, and runs the one queued for the next start."""
    world = _installed_world(dsh, model, tmp_path)
    hold = _hold(world)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Killed mid-turn: steps=30 sleep=2")
        held = send(d, "checkpoint", {"objective": "read, never run"})
        queued = send(d, "checkpoint", {"objective": "queued, read, never run"}, queued=True)
        expiring = send(d, "checkpoint", expires=int(time.time() * 1000) + 1000)
        given_up = send(d, "message", {"text": "its sender gives up"})
        read_to = (d / "control.jsonl").stat().st_size
        wait_for(lambda: _inbox_read_to(d) == read_to, 60, "the bridge to read the four requests")
        assert outcomes(d) == []

        def withdrawn_and_expired() -> None:
            send_line(
                d, json.dumps({"withdraw": given_up["id"], "at": int(time.time() * 1000)}).encode()
            )  # past the cursor
            hold.unlink()
            wait_for(
                lambda: time.time() * 1000 > expiring["expires"], 60, "the third request's time to run out"
            )

        # restarted within a plugin reload's grace: still another DSH process
        with killed_and_resumed(web, sid, withdrawn_and_expired):
            done = final_outcome(d, held["id"])
            assert (done["outcome"], done["error"]) == ("cancelled", "DSH exited before applying it"), done
            done = final_outcome(d, expiring["id"])
            assert done["outcome"] == "expired" and done["error"].startswith("it expired at"), done
            done = final_outcome(d, given_up["id"])
            assert (done["outcome"], done["error"]) == ("cancelled", "withdrawn by its sender"), done
            assert final_outcome(d, queued["id"])["detail"]["objective"] == "queued, read, never run"
            wait_for(lambda: len(_turn_ends(d)) >= 2, 60, "the new turn to end")
    assert [run["request"]["id"] for run, _ in td_runs(log_events(d))] == [queued["id"]]
    _no_replays(d, sent=4)


def test_requests_read_but_not_run_when_the_plugin_reloads_run_once_in_the_new_instance(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """A plugin reload while the bridge holds requests it read and has not run (the test hook holds them): the old
    instance, which no longer answers, drops them, and the new one, whose inbox cursor is past their lines, runs
    each of them once."""
    world = _installed_world(dsh, model, tmp_path)
    hold = _hold(world)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Reloaded mid-turn: steps=30 sleep=1")
        sent = [
            send(d, "checkpoint", {"objective": "read before the reload"}),
            send(d, "message", {"text": "held"}),
        ]
        read_to = (d / "control.jsonl").stat().st_size
        wait_for(lambda: _inbox_read_to(d) == read_to, 60, "the bridge to read both requests")
        _reload_to_new_instance(d, world)
        assert outcomes(d) == []
        hold.unlink()
        assert final_outcome(d, sent[0]["id"])["detail"]["objective"] == "read before the reload"
        assert final_outcome(d, sent[1]["id"])["outcome"] == "applied"
        # The old instance's held requests looked for the hold file on timers set before it went; one sent now is
        # read at a later poll and answered once DSH's next write batch (a later timer still) logged its command
        # pair: when its outcome is there, the old instance has had its chance to run what it held.
        later = send(d, "checkpoint", {"objective": "after the old instance had its chance"})
        sent.append(later)
        assert final_outcome(d, later["id"])["outcome"] == "applied"
    assert [run["request"]["id"] for run, _ in td_runs(log_events(d))] == [r["id"] for r in sent]
    _no_replays(d, sent=3)


def test_a_request_dsh_ran_and_died_before_answering_is_answered_unknown_never_cancelled(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path, processes: Processes
) -> None:
    """DSH killed after running a request and before writing its outcome (the plugin's test hook holds it there): a
    `control --wait` that sees DSH dead, and the bridge DSH starts next, say it is unknown whether it took effect
    (exit 4), never cancelled, for it did (the mark is kept); one whose command pair DSH had logged is answered as
    the log says."""
    world = _installed_world(dsh, model, tmp_path)
    hold = _hold_outcomes(world)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Short: steps=1 sleep=0", in_flight=False)
        wait_for(lambda: (bridge_json(d) or {}).get("state") == "idle", 60, "idle")
        waiting = processes.start(
            [sys.executable, "-m", "core.cli", "control", str(d), "checkpoint", "--arg", "objective=held",
             "--wait", "--timeout", "60", "--json"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        wait_for(lambda: (bridge_json(d) or {}).get("inFlight"), 60, "the checkpoint in flight")
        (held,) = bridge_json(d)["inFlight"]
        assert held["op"] == "checkpoint"
        wait_for(lambda: json.loads((d / "bridge.state.json").read_text())["marks"], 60, "the mark kept")

        def told_unknown() -> None:
            out, err = waiting.communicate(timeout=60)
            assert waiting.returncode == 4, out + err
            told = json.loads(out)["data"]
            assert (told["requestId"], told["outcome"]) == (held["id"], "unknown"), told
            assert "may or may not" in told["error"], told
            hold.unlink()

        with killed_and_resumed(web, sid, told_unknown):
            done = final_outcome(d, held["id"])
            assert done["outcome"] == "unknown" and "may or may not have taken effect" in done["error"], done
            assert "inFlight" not in bridge_json(d)  # type: ignore[operator]
            wait_for(lambda: len(_turn_ends(d)) >= 2, 60, "the new turn to end")
            assert (
                final_outcome(d, send(d, "checkpoint")["id"])["detail"]["markId"] == 2
            )  # the first mark was placed
    _no_replays(d, sent=2)


def test_a_request_dsh_ran_and_logged_before_it_died_is_answered_as_its_log_says(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """DSH killed mid-turn after it logged a request's command pair, before the bridge wrote the outcome: the next
    start answers it as DSH's log says (applied)."""
    world = _installed_world(dsh, model, tmp_path)
    hold = _hold_outcomes(world)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Killed mid-turn: steps=30 sleep=1")
        steer = send(d, "message", {"text": "steered, then killed"})
        wait_for(
            lambda: [done for run, done in td_runs(log_events(d)) if done], 60, "the command pair in the log"
        )
        assert outcomes(d) == []
        with killed_and_resumed(web, sid, meanwhile=hold.unlink):
            assert final_outcome(d, steer["id"])["outcome"] == "applied"
            wait_for(lambda: len(_turn_ends(d)) >= 2, 60, "the new turn to end")
    _no_replays(d, sent=1)


def test_requests_sent_to_a_killed_dsh_that_never_read_them_are_cancelled_when_it_comes_back(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """DSH killed before its bridge read the requests sent to it (one sent just before it died, one after): the
    next start cancels both, as our host cancels what was sent to the host before it, never runs them in a turn
    their sender never saw; a queued one runs."""
    world = _installed_world(dsh, model, tmp_path)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Killed mid-turn: steps=30 sleep=2")
        sent: dict[str, dict[str, Any]] = {}

        def sent_while_dead() -> None:
            last = bridge_json(d)["heartbeat"]  # type: ignore[index]
            # as its poll was due
            sent["unread"] = send(d, "checkpoint", {"objective": "sent before it died"}, at=last - 500)
            sent["after"] = send(d, "checkpoint", {"objective": "sent after it died"})
            sent["queued"] = send(d, "checkpoint", {"objective": "queued"}, queued=True)

        with killed_and_resumed(web, sid, sent_while_dead):
            done = final_outcome(d, sent["unread"]["id"])
            assert (done["outcome"], done["error"]) == ("cancelled", "DSH exited before reading it"), done
            done = final_outcome(d, sent["after"]["id"])
            assert (done["outcome"], done["error"]) == (
                "cancelled",
                "it arrived while no bridge was running",
            ), done
            assert final_outcome(d, sent["queued"]["id"])["outcome"] == "applied"
            wait_for(lambda: len(_turn_ends(d)) >= 2, 60, "the new turn to end")
    queued = sent["queued"]
    assert [run["request"]["id"] for run, _ in td_runs(log_events(d))] == [queued["id"]]
    _no_replays(d, sent=3)


def test_an_outcome_written_after_the_bridge_was_removed_leaves_it_unloaded(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """``bridge remove`` while a request runs (its outcome held by the test hook): the unloaded plugin still writes
    the outcome, and bridge.json goes on saying the bridge exited, so the session reads as one no bridge runs, not
    as a live bridge nobody answers for."""
    world = _installed_world(dsh, model, tmp_path)
    hold = _hold_outcomes(world)
    with DshWeb(world) as web:
        _, d = start_session(world, web, "Work slowly: steps=30 sleep=1")
        mark = send(d, "checkpoint", {"objective": "held"})
        wait_for(lambda: (bridge_json(d) or {}).get("inFlight"), 60, "the checkpoint in flight")
        assert _tapedeck("bridge", "remove", str(world.home)).returncode == 0
        wait_for(lambda: bridge_json(d)["state"] == "exited", 60, "the plugin unloaded")
        hold.unlink()
        final_outcome(d, mark["id"])
        # the unloaded plugin rewrites bridge.json once the outcome is out, the request no longer in flight
        rewritten = wait_for(
            lambda: (now := bridge_json(d)) and "inFlight" not in now and now, 60, "the rewrite"
        )
        assert rewritten["state"] == "exited"
        host = json.loads(_tapedeck("inspect", str(d), "--json").stdout)["host"]
        assert (host["state"], host["bridge"].get("unloaded")) == ("none", True), host


def test_a_request_running_across_a_plugin_reload_stays_in_flight_and_is_unknown_after_a_kill(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """A plugin reload while a request runs (its outcome held by the test hook, the agent held by a pause, so DSH
    logs nothing of it), then DSH killed: the new instance's bridge.json still lists the request in flight, and the
    next start answers it unknown, never cancelled, for it took effect (the mark is kept)."""
    world = _installed_world(dsh, model, tmp_path)
    hold = _hold_outcomes(world)
    hold.unlink()  # the pause is answered; only the checkpoint's outcome is held
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Paused mid-turn: steps=30 sleep=1")
        assert final_outcome(d, send(d, "pause")["id"])["outcome"] == "applied"
        wait_for(lambda: (bridge_json(d) or {}).get("state") == "paused", 60, "the agent held by the pause")
        hold.touch()
        mark = send(d, "checkpoint", {"objective": "runs across the reload"})
        wait_for(lambda: (bridge_json(d) or {}).get("inFlight"), 60, "the checkpoint in flight")
        wait_for(lambda: json.loads((d / "bridge.state.json").read_text())["marks"], 60, "the mark kept")
        _reload_to_new_instance(d, world)
        # looked at once, as DSH logs the held command's pair a second or so after a reload: the new instance, attached,
        # lists the request in flight (a bridge.json of its attach, or the old one's last, which listed it too)
        assert [r["id"] for r in bridge_json(d).get("inFlight", [])] == [mark["id"]]  # type: ignore[union-attr]

        def left_unanswered() -> None:
            assert mark["id"] not in [
                run["request"]["id"] for run, _ in td_runs(log_events(d))
            ]  # DSH logged none of it
            assert mark["id"] not in [o["requestId"] for o in outcomes(d)]
            hold.unlink()

        with killed_and_resumed(web, sid, left_unanswered):
            done = final_outcome(d, mark["id"])
            assert done["outcome"] == "unknown" and "may or may not have taken effect" in done["error"], done
            assert done["error"].endswith(unknown_hint("checkpoint")), (
                done
            )  # where a mark shows, not the events
            wait_for(lambda: "inFlight" not in (bridge_json(d) or {}), 60, "the in-flight list emptied")


def test_a_wait_on_a_request_pending_when_dsh_died_says_it_was_pending(
    world: DshHome, processes: Processes
) -> None:
    """A rewind sent mid-turn is acknowledged pending (it waits for the turn's end), then DSH is killed: `control
    --wait` says the bridge exited while the request was pending, and what it waited for (it said the bridge
    exited before it answered)."""
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Killed mid-turn: steps=30 sleep=1")
        waiting = processes.start(
            [sys.executable, "-m", "core.cli", "control", str(d), "rewind", "--wait", "--timeout", "60"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        wait_for(lambda: [o for o in outcomes(d) if o["outcome"] == "pending"], 60, "the rewind pending")
        assert web.proc is not None
        os.killpg(web.proc.pid, signal.SIGKILL)
        web.proc.wait()
        out, err = waiting.communicate(timeout=60)
    assert waiting.returncode == 1, out + err
    assert (
        "while request" in out
        and "was still pending (waitingFor: idle)" in out
        and "before it answered" not in out
    ), out
