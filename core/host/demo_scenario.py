"""The demo's scripted agent: six turns and 42 tool calls over the demo workspace.

The script is written for the project ``demo_workspace`` creates, so every tool result it meets is known in
advance; it still reacts to the one call it makes fail on purpose (a write outside the workspace). It is one
plan per task, played by situation (``core.host.providers.players.PlanPlayer``): an operator's checkpoint,
rewind, message, pause or config change at any point still ends every turn completed. Between
them the turns exercise every policy for real: reads and greps, a failing then passing test run, results big
enough to fold (a CSV read, a build log), a checkpoint with an exploration and a rewind, turns long enough to
reach the soft checkpoint and the finalization phase, a prune tier (the script declares a 20,000-token context
window, so real context pressure crosses a tier and the cache-aware schedule prunes), ``expand_result``, ``recall_search`` and
``recall_turn``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

UNITTEST = "python3 -m unittest -q"
BUGGY = "        total = int(match.group(1)) * UNITS[match.group(2)]"
FIXED = "        total += int(match.group(1)) * UNITS[match.group(2)]"
REGRESSION = """    def test_compound(self) -> None:
        self.assertEqual(parse_duration("1h30m"), 5400)

    def test_every_unit(self) -> None:
        self.assertEqual(parse_duration("2d3h4m5s"), 2 * 86400 + 3 * 3600 + 4 * 60 + 5)
"""
CHANGELOG = """# Changelog

## Unreleased

- Fix `parse_duration` for compound durations such as `1h30m`: each unit's seconds are now added to the
  total instead of replacing it. Regression test: `test_every_unit`.
"""


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def _step(*calls: dict[str, Any], text: str | None = None, reasoning: str | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {}
    if reasoning:
        response["reasoning"] = reasoning
    if text:
        response["text"] = text
    if calls:
        response["toolCalls"] = list(calls)
    return response


TASKS: list[str] = [
    "The unit tests of the timeparse project fail. Investigate why and explain the cause; "
    "do not modify any files yet.",
    "Fix the bug in parse_duration so that the test suite passes.",
    "Add a regression test for a compound duration that uses every unit, such as 2d3h4m5s, and run the suite.",
    "Go through logs/build.log and the lookup table in timeparse/_tables.py and list every warning you find.",
    "Remind me: what root cause did we identify in the first turn? Explain briefly.",
    "Write a CHANGELOG.md entry describing the fix.",
]


def plans() -> list[dict[str, Any]]:
    """One plan per task: the responses the agent intends, in order, its final answer last."""
    turn1 = [
        _step(_call("checkpoint", objective="find why the timeparse tests fail"),
              text="I'll mark a checkpoint before exploring, so the exploration can be folded afterwards.",
              reasoning="Start by setting a checkpoint; the exploration will be long."),
        _step(_call("list_dir", path="."), _call("glob", pattern="**/*.py"), _call("read_file", path="timeparse/__init__.py")),
        _step(_call("read_file", path="README.md"), _call("bash", command=UNITTEST, description="run the tests")),
        _step(_call("read_file", path="timeparse/duration.py"), _call("grep", pattern="parse_duration", path="."),
              reasoning="test_compound gets 1800 for 1h30m: only the last unit (30m) survives. Look at the loop."),
        _step(_call("read_file", path="tests/test_duration.py"), _call("read_file", path="data/measurements.csv")),
        _step(_call("grep", pattern="total", path="timeparse"), _call("list_dir", path="data"),
              _call("bash", command="python3 -c \"from timeparse import parse_duration; print(parse_duration('1h30m'))\"")),
        _step(_call("rewind"), text="The cause is clear; folding the exploration into a report."),
        _step(text="Cause: in `parse_duration` (timeparse/duration.py) the loop assigns "
                   "`total = int(...) * UNITS[...]` instead of adding to it, so only the last unit counts: "
                   "`1h30m` parses to 1800 instead of 5400. Both failing tests (test_compound and "
                   "test_round_trip) follow from that one line."),
    ]  # fmt: skip
    turn2 = [
        _step(_call("read_file", path="timeparse/duration.py", offset=10, limit=20),
              _call("grep", pattern="total", path="timeparse")),
        _step(_call("edit_file", path="timeparse/duration.py", old_text=BUGGY, new_text=FIXED)),
        _step(_call("bash", command=UNITTEST, description="run the tests after the fix")),
        _step(text="Fixed: `total +=` accumulates every unit. All 4 tests pass now."),
    ]  # fmt: skip
    turn3 = [
        _step(_call("read_file", path="tests/test_duration.py")),
        _step(_call("edit_file", path="tests/test_duration.py",
                    old_text='    def test_compound(self) -> None:\n        self.assertEqual(parse_duration("1h30m"), 5400)\n',
                    new_text=REGRESSION)),
        _step(_call("bash", command="python3 -m unittest -v", description="run the suite verbosely")),
        _step(_call("grep", pattern="def test_", path="tests"), _call("glob", pattern="tests/*.py")),
        _step(text="Added `test_every_unit` (2d3h4m5s = 183845 s); the suite has 5 passing tests."),
    ]  # fmt: skip
    turn4 = [
        _step(_call("checkpoint", objective="collect every warning"), text="Marking a checkpoint for this sweep."),
        _step(_call("bash", command="cat logs/build.log", description="read the whole build log"),
              _call("read_file", path="timeparse/_tables.py")),
        _step(_call("grep", pattern="WARN", path="logs"), _call("grep", pattern="deprecated", path="timeparse")),
        _step(_call("expand_result", turn=4, step=2, call=1, grep="WARN")),
        _step(_call("bash", command="grep -c WARN logs/build.log"),
              _call("read_file", path="logs/build.log", offset=1300, limit=40)),
        _step(_call("grep", pattern="ERROR", path="logs")),
        _step(_call("glob", pattern="logs/*"), _call("list_dir", path="logs"), _call("read_file", path="README.md")),
        _step(_call("rewind"), text="Sweep done; folding it."),
        _step(text="Warnings: the build log has 32 `WARN deprecated call to legacy_parse` lines (4 per section, "
                   "sections 1-8) and one ERROR in section 6 (the parse_duration failure fixed in turn 2). "
                   "timeparse/_tables.py defines the lookup table but calls no deprecated API."),
    ]  # fmt: skip
    turn5 = [
        _step(_call("recall_search", query="root cause parse_duration total")),
        _step(_call("recall_turn", turn="1")),
        _step(text="In turn 1 we found that `parse_duration` overwrote `total` for each unit instead of adding, "
                   "so `1h30m` gave 1800; turn 2 changed it to `total +=`."),
    ]  # fmt: skip
    turn6 = [
        _step(_call("write_file", path="../CHANGELOG.md", content=CHANGELOG)),
        {
            **_step(_call("read_file", path="CHANGELOG.md"), _call("bash", command=UNITTEST)),
            "onError": [
                _step(_call("write_file", path="CHANGELOG.md", content=CHANGELOG),
                      text="That path is outside the workspace; writing the changelog at its root instead."),
                _step(_call("read_file", path="CHANGELOG.md"), _call("bash", command=UNITTEST)),
            ],
        },
        _step(text="CHANGELOG.md now records the parse_duration fix and its regression test; tests still pass."),
    ]  # fmt: skip
    turns = [turn1, turn2, turn3, turn4, turn5, turn6]
    return [{"prompt": task, "responses": steps} for task, steps in zip(TASKS, turns, strict=True)]


def write_script(path: Path) -> Path:
    """Write the scripted-provider file for the demo to ``path``."""
    path.write_text(
        json.dumps({"model": "tapedeck-demo", "contextWindow": 20000, "plans": plans()}, indent=1), encoding="utf-8"
    )
    return path
