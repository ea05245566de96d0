"""``bench/alerts.py --replay-size 0`` leaves the replay cost out and ``--reopen-size 0`` the TUI's reopen, as its usage
line says, and prints its JSON, an empty line and its tables as every bench script does (the other parts are
stubbed here: only the argument handling and the report are under test)."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest


def test_sizes_of_zero_leave_the_replay_cost_and_the_reopen_out(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = importlib.import_module("bench.alerts")
    latency = {"n": 1, "p50_ms": 1, "p95_ms": 1, "max_ms": 1}
    monkeypatch.setattr(bench, "follow_latency", lambda *_: latency)
    monkeypatch.setattr(bench, "tui_latency", lambda *_: latency)
    monkeypatch.setattr(bench, "replay_equals_live", lambda *_: {"equal": 1, "logs": 1, "percent": 100, "alerts": 0, "rounds": 1})
    monkeypatch.setattr(bench, "budget_guard", lambda *_: {"runs": [], "met": False})

    def replay_cost(*_: Any) -> dict[str, Any]:
        raise AssertionError("--replay-size 0 ran the replay cost")

    def tui_reopen(*_: Any) -> dict[str, Any]:
        raise AssertionError("--reopen-size 0 ran the TUI's reopen")

    monkeypatch.setattr(bench, "replay_cost", replay_cost)
    monkeypatch.setattr(bench, "tui_reopen", tui_reopen)
    assert bench.main(["--replay-size", "0", "--reopen-size", "0"]) == 0  # 7e96f75: ValueError from parse_size('0')
    out = capsys.readouterr().out
    assert "replay_cost" not in out and "tui_reopen" not in out
    payload, table = out.split("\n\n", 1)  # as bench/README.md says to read any script's output
    assert set(json.loads(payload)) == {"follow", "tui", "replay", "guard"}
    assert table.startswith("| path | samples |") and "replay = live: 1/1 logs (100%)" in table
    assert bench.main(["--replay-size", "0", "--reopen-size", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(payload)
