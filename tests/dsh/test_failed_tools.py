"""A bash command the real DSH ran that exited non-zero is a failed tool call for tapedeck: DSH writes it with
``isError: false`` and its exit status as the result's last line (``[exit code: N]``), so the error count of
``inspect``, the error rows, the ``error-streak`` alert and the fleet's attention column read that marker; a
command that succeeded while printing the word "error" stays a success."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.log.decoder import Consumer
from core.read.facts import SessionFacts, is_error_event
from core.read.index import restore
from core.read.load import load_session
from tests.dsh.harness import DshHome, DshInstall, ScriptedModel, log_events, run_headless


def test_a_non_zero_exit_of_a_real_dsh_bash_call_counts_as_a_failed_tool_call(
    dsh: DshInstall,
    model: ScriptedModel,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = DshHome(dsh, tmp_path, model.url, bridge=False)
    done = run_headless(world, "Run the script: steps=4 fail=3,4")
    assert done.returncode == 0, done.stderr[-2000:]
    [log] = world.sessions.glob("*/*/session.jsonl")
    results = [e for e in log_events(log.parent) if e["type"] == "tool/result"]
    texts = [e["data"]["message"]["content"][0]["content"][0]["text"] for e in results]
    # what DSH wrote: no isError on any of them, the exit status in the text, and "error" in every one
    assert [e["data"]["message"]["content"][0]["isError"] for e in results] == [False] * 4
    assert [t.endswith("\n[exit code: 3]") for t in texts] == [False, False, True, True]
    assert all("error" in t for t in texts)
    failed = [e["seq"] for e in results[2:]]

    assert [e["seq"] for e in log_events(log.parent) if is_error_event(e)] == failed
    facts = SessionFacts.empty()  # an event at a time
    for event in results:
        facts.observe(event)
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", "0")  # and as the fused paths take them, into the log's index
    load_session(log, retain=False, index=True)
    back = restore(log, False, Consumer())
    assert back is not None
    assert facts.errors == back.facts.errors == failed
    assert main(["inspect", str(log), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tools"]["errors"] == 2
    assert main(["alerts", str(log), "--json", "--set", "alerts.errorStreak.count=2"]) == 1
    [alert] = json.loads(capsys.readouterr().out)
    assert (alert["cause"], alert["seq"]) == ("error-streak", failed[1])
    config = tmp_path / "alerts.toml"
    config.write_text("[alerts.errorStreak]\ncount = 2\n")
    assert main(["sessions", str(world.sessions), "--json", "--config", str(config)]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert [a["cause"] for a in row["attention"]] == ["error-streak"]
