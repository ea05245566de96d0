"""A ``td`` command waiting for the answering plugin instance to attach its session, with the real DSH.

A reload's new instance can take a ``td`` command before it has attached the session; the command then waits for
the attach (``ATTACH_WAIT_MS`` in the plugin). The test hook ``TAPEDECK_BRIDGE_HOLD_ATTACH`` keeps the new instance
from attaching while its file exists, so a test decides when the attach comes.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

from tests.conftest import Processes
from tests.dsh.harness import (
    DshInstall,
    DshWeb,
    ScriptedModel,
    bridge_json,
    log_events,
    outcomes,
    start_session,
    td_runs,
    wait_for,
)
from tests.dsh.test_bridge_lifecycle import ROOT, _installed_world
from tests.dsh.test_bridge_reload_readers import _hold_attach, _reload_until_held


def _inbox_request(d: Path) -> dict[str, Any] | None:
    """The first request of the session's inbox, once a sender has written its whole line."""
    try:
        written = (d / "control.jsonl").read_bytes()
    except FileNotFoundError:
        return None
    line = written[: written.find(b"\n") + 1]
    return json.loads(line) if line else None


def _given_then_dropped(web: DshWeb, sid: str, line: str) -> http.client.HTTPConnection:
    """Send ``line`` to DSH's ``commands/execute`` without reading the answer; closing the returned connection
    cancels the command (DSH aborts the signal it gave the handler when its client goes)."""
    url = urllib.parse.urlsplit(web.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    envelope = {
        "type": "client-request",
        "rpcId": str(uuid.uuid4()),
        "method": "commands/execute",
        "payload": {"args": {"agentId": sid, "line": line, "images": []}},
    }
    connection.request(
        "POST", "/api/commands/execute", json.dumps(envelope), {"content-type": "application/json"}
    )
    return connection


def _td_of(d: Path, request_id: str) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    return [(run, done) for run, done in td_runs(log_events(d)) if run["request"]["id"] == request_id]


def test_a_td_command_cancelled_while_it_waits_for_the_attach_leaves_the_request_to_its_inbox_line(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path, processes: Processes
) -> None:
    """The operator's ``control --wait`` sends a checkpoint while a reload's new instance is held before its attach;
    a ``td`` command of the same request, given by hand, waits for the attach and is cancelled (its client goes)
    before it comes. The cancelled command applied nothing, so once the instance attaches, the inbox's line runs the
    request and ``control`` gets its outcome. The command's ``command/run`` in the log, settled by DSH as an error,
    was counted as a run: the line never ran and ``control`` waited until its timeout."""
    world = _installed_world(dsh, model, tmp_path)
    hold = _hold_attach(world)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Reloaded mid-turn: steps=30 sleep=1")
        wait_for(lambda: (bridge_json(d) or {}).get("state") == "running", 60, "the bridge running")
        hold.touch()
        _reload_until_held(world, hold, 2, 1)
        waiting = processes.start(
            [sys.executable, "-m", "core.cli", "control", str(d), "checkpoint", "--arg", "objective=cancelled by hand",
             "--wait", "--timeout", "60", "--json"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        request = wait_for(lambda: _inbox_request(d), 60, "control's request in the inbox")
        given = _given_then_dropped(web, sid, "/td " + json.dumps(request))
        wait_for(lambda: _td_of(d, request["id"]), 60, "the td command in the log")
        given.close()
        [(_, cancelled)] = wait_for(
            lambda: [p for p in _td_of(d, request["id"]) if p[1]], 60, "DSH to settle it"
        )
        assert cancelled is not None and cancelled["data"]["kind"] == "error", cancelled
        hold.unlink()
        out, err = waiting.communicate(timeout=90)
        assert waiting.returncode == 0, out + err
        told = json.loads(out)["data"]
        assert (told["outcome"], told["detail"]["objective"]) == ("applied", "cancelled by hand"), told
        # run once, by the line: its td command is the second one of the request in the log, and succeeded
        assert [done["data"]["kind"] for _, done in _td_of(d, request["id"]) if done] == ["error", "success"]
    assert [o["outcome"] for o in outcomes(d)] == ["applied"]
