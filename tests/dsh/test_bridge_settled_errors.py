"""What a ``td`` command DSH settled as an error counts for, with the real DSH.

Whether a ``td`` command ran its request is told by the kind of its ``command/done`` (the session format's
``{commandId, kind: 'success'|'error', text?}``), never by the words of its text: DSH itself settles some commands as
errors before the plugin's handler sees them, in words of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.bridge.commands import td_commands
from core.read.load import load_session
from tests.dsh.harness import (
    DshInstall,
    DshWeb,
    ScriptedModel,
    final_outcome,
    log_events,
    outcomes,
    send,
    start_session,
    td_runs,
    wait_for,
)
from tests.dsh.test_bridge_lifecycle import _hold, _inbox_read_to, _installed_world, _reload_to_new_instance

# a 1×1 PNG: DSH refuses a command given with an image when the command takes none, before its handler runs
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def test_a_td_command_dsh_refused_before_the_handler_is_no_run_of_its_request(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """A checkpoint the bridge read waits before it runs (``TAPEDECK_BRIDGE_HOLD``); a ``td`` command of it given
    with an image is refused by DSH ('/td does not accept image attachments'), its handler never entered. The
    plugin reloads, and its new instance, which reads the log, takes the refused command for no run: the
    checkpoint runs from its line, once. That command's text is no outcome of the plugin's, and was taken for a run:
    the checkpoint was left to it and never answered."""
    world = _installed_world(dsh, model, tmp_path)
    hold = _hold(world)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Refused with an image: steps=30 sleep=1")
        mark = send(d, "checkpoint", {"objective": "its td command refused by DSH"})
        size = (d / "control.jsonl").stat().st_size
        wait_for(lambda: _inbox_read_to(d) == size, 60, "the bridge to read it")
        image = {"mediaType": "image/png", "data": PIXEL, "name": "pixel.png"}
        refused = web.call(
            "commands/execute",
            {"args": {"agentId": sid, "line": "/td " + json.dumps(mark), "images": [image]}},
        )
        assert refused["result"] == {"kind": "error", "text": "/td does not accept image attachments"}, (
            refused
        )
        _reload_to_new_instance(d, world)
        hold.unlink()
        done = final_outcome(d, mark["id"])
        assert (done["outcome"], done["detail"]["objective"]) == (
            "applied",
            "its td command refused by DSH",
        ), done
        settled = wait_for(
            lambda: (
                (pairs := [p for p in td_runs(log_events(d)) if p[0]["request"]["id"] == mark["id"]])
                and all(p[1] for p in pairs)
                and pairs
            ),
            60,
            "both td commands settled in the log",
        )
    assert [pair[1]["data"]["kind"] for pair in settled] == ["error", "success"]  # type: ignore[index]
    assert [o["outcome"] for o in outcomes(d)] == ["applied"]
    # tapedeck's reader of the log says the same: the refused command did not run, in DSH's words
    read = [
        c.outcome for c in td_commands(load_session(d / "session.jsonl")) if c.request.get("id") == mark["id"]
    ]
    assert [(o or {}).get("outcome") for o in read] == ["not run", "applied"], read
    assert read[0]["error"] == "DSH did not run this td command: /td does not accept image attachments", read  # type: ignore[index]
