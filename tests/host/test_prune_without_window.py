"""A model whose context window is unknown still gets its turns pruned (seed 004's step triggers).

The cache-aware schedule writes a tier's prunes only where the request already breaks the provider's cache or
where context pressure forces it; with no known window (a model missing from the table without
``model.contextWindow``, the scripted model) pressure is never known, so without the fallback one long turn
grows without bound. This runs the real host on a scripted batch turn of 19 tool steps, each printing 30,000
characters, and measures the largest request (the surface after the turn's last tool result).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.control.config import validate_config
from core.host.loop import AgentHost, HostOptions
from core.host.providers.scripted import ScriptedModel

TASK = "Run a bulk check across the repository"  # a batch task: soft budget 10, hard 20, so 19 tool steps
STEPS = 19
OUTPUT = "python3 -c \"print('x' * 30000)\""


def _largest_surface(tmp_path: Path, schedule: str, window: int | None) -> int:
    responses = [{"toolCalls": [{"name": "bash", "arguments": {"command": OUTPUT}}]} for _ in range(STEPS)]
    script: dict[str, object] = {"model": "no-such-model", "responses": [*responses, {"text": "done"}]}
    if window is not None:
        script["contextWindow"] = window
    path = tmp_path / f"{schedule}-{window}.json"
    path.write_text(json.dumps(script))
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    config = validate_config({"adaptive": {"pruneSchedule": schedule}, "slice": {"fold": {"enabled": False}}})
    host = AgentHost.create(tmp_path / f"root-{schedule}-{window}", ScriptedModel(path), config,
                            HostOptions(workspace=workspace), tasks=[TASK])  # fmt: skip
    largest = 0
    original = host.hooks.pre_step

    def measured(turn: int, step: int):  # type: ignore[no-untyped-def]
        nonlocal largest
        plan = original(turn, step)
        largest = max(largest, host.session.surface_chars)
        return plan

    host.hooks.pre_step = measured  # type: ignore[method-assign]
    try:
        [outcome] = host.run()
    finally:
        host.close()
    assert outcome.reason == {"kind": "completed"}, outcome
    return largest


@pytest.mark.parametrize("schedule", ["cache-aware", "step"])
def test_a_turn_without_a_known_window_is_pruned_like_the_seed(tmp_path: Path, schedule: str) -> None:
    largest = _largest_surface(tmp_path, schedule, None)
    print(f"\nlargest request surface, {schedule}, no window: {largest:,} chars")
    # 19 results of 30,001 chars would be 570,019 chars unpruned; the tiers keep it at 146,692 (571,197 before the fallback).
    assert largest < 200_000
