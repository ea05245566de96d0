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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.conftest import Processes
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


def _td_while_held(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path, wait_ms: int, attach_in_time: bool
) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """A checkpoint sent to the inbox and given by hand as a ``td`` command while a reload's new instance is held
    before its attach, the command's wait set to ``wait_ms`` (``TAPEDECK_BRIDGE_ATTACH_WAIT_MS``); the attach comes
    as soon as the command is in the log (``attach_in_time``) or once DSH answered the command. Returns the
    request's outcome, what DSH answered the command and how DSH settled each td command of the request."""
    world = _installed_world(dsh, model, tmp_path)
    world.extra_env["TAPEDECK_BRIDGE_ATTACH_WAIT_MS"] = str(wait_ms)
    hold = _hold_attach(world)
    with DshWeb(world) as web, ThreadPoolExecutor(1) as pool:
        sid, d = start_session(world, web, "Reloaded mid-turn: steps=30 sleep=1")
        wait_for(lambda: (bridge_json(d) or {}).get("state") == "running", 60, "the bridge running")
        hold.touch()
        _reload_until_held(world, hold, 2, 1)
        request = send(d, "checkpoint", {"objective": "given while the attach is held"})
        given = pool.submit(web.command, sid, "/td " + json.dumps(request))
        if attach_in_time:
            wait_for(lambda: _td_of(d, request["id"]), 60, "the td command in the log")
        answer = given.result(timeout=60) if not attach_in_time else None
        hold.unlink()
        done = final_outcome(d, request["id"])
        answer = answer or given.result(timeout=60)
        kinds = wait_for(
            lambda: (pairs := _td_of(d, request["id"])) and all(p[1] for p in pairs) and pairs,
            60,
            "every td command of the request settled in the log",
        )
    assert [o["outcome"] for o in outcomes(d)] == ["applied"]
    return done, answer, [done_event["data"]["kind"] for _, done_event in kinds]


def test_a_td_command_whose_session_is_attached_within_the_wait_runs_its_request(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """The wait set long (60 s): the instance attaches while the command waits, and the command runs the request,
    once; the inbox's line leaves the run to it."""
    done, answer, kinds = _td_while_held(dsh, model, tmp_path, 60_000, attach_in_time=True)
    assert (done["outcome"], done["detail"]["objective"]) == ("applied", "given while the attach is held"), (
        done
    )
    assert answer["result"]["kind"] == "success" and json.loads(answer["result"]["text"]) == done, answer
    assert kinds == ["success"]


def test_a_td_command_whose_session_is_not_attached_within_the_wait_gives_up_saying_so(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """The wait set short (1 s) and the attach held past it: the command gives up, saying that no instance attached
    the session within 1 s and that it applied nothing, and the inbox's line runs the request once the instance
    attaches."""
    done, answer, kinds = _td_while_held(dsh, model, tmp_path, 1_000, attach_in_time=False)
    said = json.loads(answer["result"]["text"])
    assert answer["result"]["kind"] == "error" and said["requestId"] == done["requestId"], answer
    assert said["error"] == (
        "no instance of the tapedeck bridge attached this session within 1 s, so this command applied nothing: the "
        "control inbox's line of this request, if it has one, runs once one attaches; give it again to run it here"
    ), said
    assert (done["outcome"], done["detail"]["objective"]) == ("applied", "given while the attach is held"), (
        done
    )
    assert kinds == ["error", "success"]
