"""The budget guard on the real demo host: the request that crosses the budget ends, the host pauses before its
next model request, the log says which rule paused it, and a resume lets the run finish. ``tapedeck alerts
--follow --json`` sees the alerts as they happen."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from core.cli import main
from core.control import inbox as control
from core.control.config import validate_config
from core.control.host_state import read_host_state
from core.host.demo_scenario import TASKS, write_script
from core.host.demo_workspace import create_demo_workspace
from core.host.loop import AgentHost, HostOptions
from core.host.providers import make_provider
from tests.conftest import Processes

PRICES = {"prices": {"tapedeck-demo": {"hit": 0.028, "miss": 0.28, "output": 0.42}}}
BUDGET = 0.003  # crossed by the demo's third or fourth request at these prices


def _events(path: Path) -> list[dict[str, Any]]:
    """The log's events, as far as its lines are whole (the host may be writing the next one)."""
    text = path.read_text()
    return [json.loads(line) for line in text[: text.rfind("\n") + 1].splitlines()[1:]]


def _paused(log: Path) -> bool:
    """The host says it is paused and the log holds the pause request's outcome: the host records the state
    (``host.json``) as the op takes effect and the request's outcome right after it, so a reader can see the
    first a moment before the second."""
    if read_host_state(log).state != "paused":
        return False
    return any(e["type"] == "tapedeck/control" and e["data"].get("op") == "pause" and "outcome" in e["data"]
               for e in _events(log))  # fmt: skip


def _wait(what: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_the_budget_guard_pauses_the_demo_host_before_its_next_model_request(  # type: ignore[no-untyped-def]
    tmp_path: Path, capsys, processes: Processes
) -> None:
    raw = {"model": PRICES, "alerts": {"budget": {"usd": BUDGET, "action": "pause"}}}
    config = validate_config(raw)
    workspace = create_demo_workspace(tmp_path / "ws")
    script = write_script(tmp_path / "script.json")
    root = tmp_path / "root"
    conf = tmp_path / "alerts.json"
    conf.write_text(json.dumps({"model": PRICES, "alerts": {"budget": {"usd": BUDGET}}}))
    host = AgentHost.create(root, make_provider(f"scripted:{script}"), config, HostOptions(workspace=workspace),
                            tasks=TASKS)  # fmt: skip
    log = host.writer.path
    follower = processes.start(
        [sys.executable, "-m", "core.cli", "alerts", str(root), "--follow", "--json", "--config", str(conf)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    lines: list[str] = []  # what the follower streamed so far, read as it comes
    reader = threading.Thread(target=lambda: lines.extend(follower.stdout), daemon=True)  # type: ignore[arg-type]
    reader.start()
    outcomes: list[Any] = []
    runner = threading.Thread(target=lambda: outcomes.extend(host.run()), daemon=True)
    runner.start()
    try:
        _wait(lambda: _paused(log))
        events = _events(log)
        pauses = [e for e in events if e["type"] == "tapedeck/control" and e["data"]["op"] == "pause"]
        assert [p["data"]["origin"] for p in pauses] == ["alert:budget"]
        assert pauses[0]["data"]["outcome"] == "applied"
        # the request that crossed the budget, and nothing of a later model request before the pause
        spent, crossing = 0.0, None
        for e in events:
            usage = (e.get("data") or {}).get("usage") if e["type"] == "assistant/message" else None
            if usage:
                spent += (usage.get("inputTokens", 0) * 0.28 + usage.get("outputTokens", 0) * 0.42) / 1e6
                if spent >= BUDGET:
                    crossing = e
                    break
        assert crossing is not None
        step = (crossing["data"]["turn"], crossing["data"]["step"])
        later = [e for e in events if e["type"] in ("assistant/chunk", "assistant/message")
                 and (e["data"]["turn"], e["data"]["step"]) > step]  # fmt: skip
        assert later == [], "a model request went out after the crossing one and before the pause"
        # the CLI shows why the host paused
        assert main(["events", str(log), "--type", "tapedeck/control"]) == 0
        assert "control pause applied (sent by alert:budget)" in capsys.readouterr().out
        resume = control.append_request(control.inbox_path(log), "resume", {})
        runner.join(60)
        assert not runner.is_alive()
        # held until then: every model answer after the crossing one comes after the host's answer to the resume
        events = _events(log)
        [resumed] = [e["seq"] for e in events if e["type"] == "tapedeck/control"
                     and e["data"]["requestId"] == resume["id"] and e["data"]["outcome"] == "applied"]  # fmt: skip
        answers = [e["seq"] for e in events if e["type"] == "assistant/message" and e["seq"] > crossing["seq"]]
        assert answers and min(answers) > resumed, (answers, resumed)
    finally:
        if runner.is_alive():
            control.append_request(control.inbox_path(log), "stop", {})
            runner.join(60)
        host.close()
    # what the follower streamed live is what a report of the finished log says (bar the live-only waiting): wait
    # for its polls to reach the log's end (on a loaded machine that takes a while), then stop it
    assert main(["alerts", str(root), "--json", "--config", str(conf)]) == 1
    reported = json.loads(capsys.readouterr().out)
    key = lambda a: (a["cause"], a["seq"], a["reason"])  # noqa: E731

    def streamed_keys() -> list[tuple[Any, ...]]:
        alerts = [json.loads(line) for line in list(lines)]
        return [key(a) for a in alerts if a["cause"] != "waiting" or a["reason"].startswith("paused")]

    try:
        _wait(lambda: len(streamed_keys()) >= len(reported), timeout=60)
    finally:
        follower.send_signal(signal.SIGTERM)
        follower.wait(timeout=60)
        reader.join(60)
    err = follower.stderr.read()  # type: ignore[union-attr]
    assert [o.reason["kind"] for o in outcomes] == ["completed"] * len(TASKS)
    streamed = [json.loads(line) for line in lines]
    budget = [a for a in streamed if a["cause"] == "budget"]
    assert len(budget) == 1 and budget[0]["path"] == str(log)
    at = _events(log)[budget[0]["seq"]]["data"]  # the crossing step's usage (its usage chunk)
    assert (at["turn"], at["step"]) == step and budget[0]["seq"] <= crossing["seq"]
    assert set(budget[0]) == {"session", "path", "cause", "seq", "severity", "reason", "at"}
    assert [key(a) for a in reported] == streamed_keys()
    assert (follower.returncode, err) == (143, "tapedeck: terminated\n"), err  # SIGTERM ends it, with a word


def test_a_budget_action_turned_on_at_run_time_guards_the_rest_of_the_run(tmp_path: Path) -> None:
    config = validate_config({"model": PRICES, "alerts": {"budget": {"usd": BUDGET}}})  # no action at start
    host = AgentHost.create(tmp_path / "root", make_provider(f"scripted:{write_script(tmp_path / 's.json')}"),
                            config, HostOptions(workspace=create_demo_workspace(tmp_path / "ws")),
                            tasks=TASKS)  # fmt: skip
    log = host.writer.path
    assert host.guard is None
    control.append_request(control.inbox_path(log), "config.set", {"key": "alerts.budget.action", "value": "pause"})
    runner = threading.Thread(target=host.run, daemon=True)
    runner.start()
    try:
        _wait(lambda: _paused(log))
        pauses = [e["data"] for e in _events(log) if e["type"] == "tapedeck/control" and e["data"]["op"] == "pause"]
        assert [(p["origin"], p["outcome"]) for p in pauses] == [("alert:budget", "applied")]
    finally:
        control.append_request(control.inbox_path(log), "stop", {})
        runner.join(60)
        host.close()


def test_a_host_resumed_past_its_budget_pauses_before_its_next_model_request(tmp_path: Path) -> None:
    script = write_script(tmp_path / "script.json")
    workspace = create_demo_workspace(tmp_path / "ws")
    host = AgentHost.create(tmp_path / "root", make_provider(f"scripted:{script}"),
                            validate_config({"model": PRICES}), HostOptions(workspace=workspace), tasks=TASKS)  # fmt: skip
    log = host.writer.path
    host.run()
    host.close()
    events = _events(log)
    turn2 = next(e for e in events if e["type"] == "turn/start" and e["data"]["turn"] == 2)
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[: turn2["seq"] + 1]))  # header + turn 1: more than the budget was spent
    create_demo_workspace(workspace)
    config = validate_config({"model": PRICES, "alerts": {"budget": {"usd": BUDGET, "action": "pause"}}})
    resumed = AgentHost.resume(log, make_provider(f"scripted:{script}"), config, HostOptions(workspace=workspace))
    runner = threading.Thread(target=resumed.run, daemon=True)
    runner.start()
    try:
        _wait(lambda: _paused(log))
        after = _events(log)[turn2["seq"] - 1 :]
        pauses = [e for e in after if e["type"] == "tapedeck/control" and e["data"]["op"] == "pause"]
        assert [(p["data"]["origin"], p["data"]["outcome"]) for p in pauses] == [("alert:budget", "applied")]
        assert not [e for e in after if e["type"] in ("assistant/chunk", "assistant/message")]  # no request went out
    finally:
        control.append_request(control.inbox_path(log), "stop", {})
        runner.join(60)
        resumed.close()
