"""``tapedeck bridge remove`` while a rewind given by hand waits in its handler for the agent to be idle, with the real
DSH: no new instance of the plugin comes, and the rewind is rejected once that is known, saying the plugin was
removed, rather than after the wait for a reload's new instance (``ATTACH_WAIT_MS``) runs out."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.dsh.harness import (
    DshInstall,
    DshWeb,
    ScriptedModel,
    bridge_json,
    final_outcome,
    send,
    start_session,
    wait_for,
)
from tests.dsh.test_bridge_lifecycle import _installed_world, _tapedeck


def test_a_rewind_waiting_for_idle_when_the_plugin_is_removed_is_rejected_saying_so(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """The wait for a reload's new instance is set to 10 minutes: the answer within 60 s is the removal's. It came only
    once that wait ran out, in words about no new instance taking the rewind over."""
    world = _installed_world(dsh, model, tmp_path)
    world.extra_env["TAPEDECK_BRIDGE_ATTACH_WAIT_MS"] = "600000"
    with DshWeb(world) as web, ThreadPoolExecutor(1) as pool:
        sid, d = start_session(world, web, "Removed under a rewind: steps=30 sleep=1")
        assert final_outcome(d, send(d, "checkpoint")["id"])["outcome"] == "applied"
        rewind = {"id": "rewind-by-hand", "op": "rewind", "args": {}}
        given = pool.submit(web.command, sid, "/td " + json.dumps(rewind))
        wait_for(lambda: (bridge_json(d) or {}).get("inFlight"), 60, "the rewind waiting for idle")
        assert _tapedeck("bridge", "remove", str(world.home)).returncode == 0
        answer = given.result(timeout=60)
        done = final_outcome(d, rewind["id"])
    assert answer["result"]["kind"] == "error" and json.loads(answer["result"]["text"]) == done, answer
    assert done["outcome"] == "rejected", done
    assert "the tapedeck bridge plugin was removed" in done["error"], done
