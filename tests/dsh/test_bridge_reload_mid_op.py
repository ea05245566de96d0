"""A plugin reload while an op from the inbox runs in its ``td`` command's handler, with the real DSH.

The op queue gives DSH the ``td`` command of each request it reads; the reload disposes the instance whose queue did,
and the handler, already running, goes on and applies the op, its outcome written by the new instance. DSH's
``command/done`` for that command must say the same as ``control.outcomes.jsonl``: what happened.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.dsh.harness import (
    DshInstall,
    DshWeb,
    ScriptedModel,
    bridge_json,
    final_outcome,
    log_events,
    outcomes,
    send,
    start_session,
    td_runs,
    wait_for,
)
from tests.dsh.test_bridge_lifecycle import _installed_world, _reload_to_new_instance


def test_an_op_the_reload_lands_in_is_logged_as_what_it_did(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """A steer read from the inbox waits in its handler (``TAPEDECK_BRIDGE_HOLD_RUN``) while the plugin reloads,
    then applies: the log holds the steer, and its ``td`` command settles as a success whose text is the outcome
    written. With the instance's own abort signal given to DSH, the dispose settled the command as an error
    ('tapedeck-bridge unloaded') though the op then applied."""
    world = _installed_world(dsh, model, tmp_path)
    hold = world.base / "hold-run"
    hold.touch()
    world.extra_env["TAPEDECK_BRIDGE_HOLD_RUN"] = str(hold)
    with DshWeb(world) as web:
        _, d = start_session(world, web, "Reloaded mid-op: steps=30 sleep=1")
        steer = send(d, "message", {"text": "steered across a reload"})
        wait_for(
            lambda: (
                any(r["request"]["id"] == steer["id"] for r, _ in td_runs(log_events(d)))
                and steer["id"] in {e["id"] for e in (bridge_json(d) or {}).get("inFlight", [])}
            ),
            60,
            "the steer's td command in its handler",
        )
        _reload_to_new_instance(d, world)
        hold.unlink()
        done = final_outcome(d, steer["id"])
        settled = wait_for(
            lambda: [p[1] for p in td_runs(log_events(d)) if p[0]["request"]["id"] == steer["id"] and p[1]],
            60,
            "the steer's td command settled in the log",
        )
        wait_for(
            lambda: any(
                e["type"] == "user/message" and "steered across a reload" in json.dumps(e)
                for e in log_events(d)
            ),
            60,
            "the steer in the log",
        )
        assert final_outcome(d, send(d, "stop")["id"])["outcome"] == "applied"
    assert done["outcome"] == "applied", done
    assert [e["data"]["kind"] for e in settled] == ["success"], settled
    assert json.loads(settled[0]["data"]["text"]) == done, settled
    assert [o["outcome"] for o in outcomes(d) if o["requestId"] == steer["id"]] == ["applied"]
