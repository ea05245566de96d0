"""Two DSH processes that run one session at once (a second ``dsh web`` resuming it while the first runs it), with
the real DSH: one bridge answers the session's inbox, never both."""

from __future__ import annotations

import contextlib
import json
import os

import pytest

from core.cli import main
from core.control.host_state import read_host_state
from tests.dsh.harness import (
    DshHome,
    DshWeb,
    bridge_json,
    final_outcome,
    log_events,
    outcomes,
    pid_namespace_refused,
    send,
    start_session,
    td_runs,
    wait_for,
)


def test_a_second_dsh_running_the_session_leaves_its_inbox_to_the_first_until_it_exits(
    world: DshHome, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both processes load the session, so both bridges attached to its directory and each ran every request: a
    checkpoint was applied twice (two marks, two outcomes for one id) and bridge.json named either process in
    turn. The second waits while the first runs; once the first exits, it answers the requests sent since.

    Meanwhile a third, in a pid namespace of its own (a sibling container: the machine's id and boot, pids of its
    own), resumes another session the first runs: the first's pid was looked for in the third's /proc, found
    running nowhere, so the third answered that inbox too; and once the third served, tapedeck looked for its pid
    here and read DSH exited. Across pid namespaces a bridge is judged by its heartbeat: the third waits while the
    first runs, then serves, live. The third sees the session root at another path, as a sibling container mounts a
    volume where it likes: the third took the first's bridge.json, which names the directory by the first's path,
    for another directory's and answered the inbox too, and tapedeck read the third's, naming a path it has not,
    as the file of a directory moved here (DSH exited). (Skipped at its end, naming why, where unshare --pid is not
    permitted.)"""
    refused = pid_namespace_refused()
    with DshWeb(world) as first, contextlib.ExitStack() as stack:
        sid, d = start_session(world, first, "The first process's turn: steps=1 sleep=0", in_flight=False)
        sibling, s = start_session(world, first, "A session a sibling resumes: steps=1 sleep=0", in_flight=False)
        assert first.proc is not None
        wait_for(lambda: (bridge_json(d) or {}).get("state") == "idle", 60, "the first bridge idle")
        wait_for(lambda: (bridge_json(s) or {}).get("state") == "idle", 60, "the first bridge idle on the other")
        if not refused:
            world.own_pids, world.volume_at = True, world.base / "volume"
            world.write_patch()
            third = stack.enter_context(DshWeb(world))
            world.own_pids, world.volume_at = False, None
            third.prompt(sibling, "The third process's turn: steps=1 sleep=0")
            wait_for(lambda: (s / "bridge.standby.json").exists(), 60, "the third bridge on standby")
            across = send(s, "checkpoint", {"objective": "once across pid namespaces"})
            final_outcome(s, across["id"])
            wait_for(lambda: not third.running(sibling), 60, "the third process's turn to end")
        with DshWeb(world) as second:
            assert second.proc is not None
            second.prompt(sid, "The second process's turn: steps=2 sleep=0")
            # what inspect and the fleet show is the first process's state: they say a second one waits as standby
            wait_for(lambda: (d / "bridge.standby.json").exists(), 60, "the second bridge on standby")
            assert main(["inspect", str(d), "--json"]) == 0
            host = json.loads(capsys.readouterr().out)["host"]
            assert host["pid"] == first.proc.pid and host["bridge"]["standby"] == second.proc.pid, host
            assert main(["inspect", str(d)]) == 0
            assert f"DSH pid {second.proc.pid} runs this session too" in capsys.readouterr().out
            assert main(["sessions", str(world.sessions)]) == 0
            assert "(+standby)" in capsys.readouterr().out
            once = send(d, "checkpoint", {"objective": "once"})
            final_outcome(d, once["id"])
            wait_for(lambda: not second.running(sid), 60, "the second process's turn to end")
            later = send(d, "checkpoint", {"objective": "still once"})
            final_outcome(d, later["id"])
            assert bridge_json(d)["pid"] == first.proc.pid
            first.stop()
            wait_for(lambda: (bridge_json(d) or {}).get("pid") == second.proc.pid, 60, "the second bridge")
            if not refused:
                ours = os.stat("/proc/self/ns/pid").st_ino
                wait_for(lambda: (bridge_json(s) or {}).get("pidNs") not in (None, ours), 60, "the third bridge")
                state = read_host_state(s / "session.jsonl")
                assert state.live and state.bridge["unseen"] is True, state
                assert main(["control", str(s), "checkpoint", "--arg", "objective=in the sibling", "--wait"]) == 0
                finals = [o["requestId"] for o in outcomes(s) if o["outcome"] != "pending"]
                assert finals[0] == across["id"] and len(finals) == 2, finals
            after = send(d, "checkpoint", {"objective": "after the first exited"})
            assert final_outcome(d, after["id"])["outcome"] == "applied"
            assert not (d / "bridge.standby.json").exists()  # the standby serves now
    ids = [once["id"], later["id"], after["id"]]
    assert [o["requestId"] for o in outcomes(d) if o["outcome"] != "pending"] == ids
    assert [run["request"]["id"] for run, _ in td_runs(log_events(d))] == ids
    if refused:
        pytest.skip(f"the third process, in a pid namespace of its own, did not run: {refused}")
