"""The demo's scripted model copes with an operator acting at any point: the session still completes."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from core.control import inbox as control
from core.control.config import load_config
from core.host.demo_scenario import TASKS, write_script
from core.host.demo_workspace import create_demo_workspace
from core.host.loop import AgentHost, HostOptions
from core.host.providers import make_provider


def _run_demo_with(tmp_path: Path, at_seq: int, op: str, args: dict[str, object]) -> list[str]:
    workspace = create_demo_workspace(tmp_path / "ws")
    script = write_script(tmp_path / "script.json")
    host = AgentHost.create(
        tmp_path / "root", make_provider(f"scripted:{script}"), load_config(None),
        HostOptions(workspace=workspace), tasks=TASKS,
    )  # fmt: skip
    inbox = control.inbox_path(host.writer.path)

    def operator() -> None:
        deadline = time.monotonic() + 60
        while host.session.next_seq < at_seq and time.monotonic() < deadline:
            time.sleep(0.005)
        control.append_request(inbox, op, args)

    thread = threading.Thread(target=operator, daemon=True)
    thread.start()
    try:
        outcomes = host.run()
    finally:
        host.close()
    thread.join(60)
    return [o.reason["kind"] for o in outcomes]


@pytest.mark.parametrize(
    ("op", "args", "at_seq"),
    [
        ("checkpoint", {"objective": "operator mark"}, 40),
        ("message", {"text": "Operator: keep going."}, 40),
        ("message", {"text": "Operator: keep going."}, 160),
        ("checkpoint", {"objective": "operator mark"}, 160),
    ],
    ids=["checkpoint-early", "message-early", "message-late", "checkpoint-late"],
)
def test_an_operator_action_mid_turn_still_completes_the_demo(
    tmp_path: Path, op: str, args: dict[str, object], at_seq: int
) -> None:
    assert _run_demo_with(tmp_path, at_seq, op, args) == ["completed"] * len(TASKS)
