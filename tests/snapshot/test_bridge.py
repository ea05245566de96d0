"""Snapshots of a DSH session controlled through the bridge: the header, the fleet table, Checkpoints and Config."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.bridge.conftest import compaction, dsh_log, td_pair, write_bridge
from tests.snapshot.test_main_screens import FUTURE_S, SIZE, fleet_listed, steps
from tests.tui.pilot import make_app, quiet, settle, until
from tui.screens.checkpoints import CheckpointsScreen
from tui.screens.config import ConfigScreen

CHECKPOINT = {"id": "req-1", "op": "checkpoint", "args": {"objective": "find the bug"}, "at": 1}
DONE = {"requestId": "req-1", "op": "checkpoint", "outcome": "applied", "detail": {"markId": 1, "seq": 63, "objective": "find the bug"}}  # fmt: skip


@pytest.fixture
def dsh_process() -> Iterator[int]:
    """A live process standing in for the DSH that runs the session."""
    import subprocess

    proc = subprocess.Popen(["sleep", "600"])
    yield proc.pid
    proc.kill()
    proc.wait()


def _bridged(directory: Path, pid: int, state: str, **kwargs: Any) -> Path:
    log = dsh_log(directory, **kwargs)
    write_bridge(log.parent, pid, state)
    return log


def _shown(predicate: Callable[[Any], bool]) -> Callable[[Pilot[None]], Any]:
    async def wait(pilot: Pilot[None]) -> None:
        await until(pilot, lambda: predicate(pilot.app))
        await settle(pilot)

    return wait


def test_bridged_dsh_session_paused(snap_compare: Any, tmp_path: Path, dsh_process: int) -> None:
    """The header says DSH paused: the bridge runs the session and the operator keys act."""
    log = _bridged(tmp_path / "s", dsh_process, "paused")
    assert snap_compare(make_app(log), terminal_size=SIZE, run_before=steps())


def test_fleet_with_bridged_and_plain_dsh_sessions(
    snap_compare: Any, tmp_path: Path, dsh_process: int
) -> None:
    """One DSH session through a live bridge, one whose bridge exited, one never bridged."""
    root = tmp_path / "sessions"
    live = _bridged(root / "--w--" / "live", dsh_process, "running", fixture="multi-turn")
    gone = dsh_log(root / "--w--" / "gone", fixture="error-finish", session_id="bridge-exited-1")
    write_bridge(gone.parent, None, "exited")
    plain = dsh_log(root / "--w--" / "plain", fixture="cancel-tool-calls", session_id="never-bridged-2")
    for log, mtime in ((live, FUTURE_S + 300), (gone, FUTURE_S + 200), (plain, FUTURE_S + 100)):
        os.utime(log, (mtime, mtime))

    async def listed(pilot: Pilot[None]) -> None:
        await fleet_listed(pilot, 3)

    assert snap_compare(make_app(root), terminal_size=SIZE, run_before=steps(before=listed))


def test_checkpoints_with_a_bridge_mark_a_compaction_replaced(
    snap_compare: Any, tmp_path: Path, dsh_process: int
) -> None:
    """Two bridge marks: the first one's node a compaction replaced (no longer active, as the plugin judges it),
    the second one still active, whose region the preview shows."""
    marks = [td_pair(f"c{n}", {**CHECKPOINT, "id": f"req-{n}"}, {**DONE, "requestId": f"req-{n}", "detail": {"markId": n, "seq": seq}})
             for n, seq in ((1, 5), (2, 65))]  # fmt: skip
    log = _bridged(tmp_path / "s", dsh_process, "idle", tail=[*marks[0], *marks[1], compaction(4, 63, [4, 5, 63])])
    shown = _shown(lambda app: isinstance(app.screen, CheckpointsScreen) and app.screen._view is not None)
    assert snap_compare(make_app(log), terminal_size=SIZE, run_before=_then("c", shown))


def test_checkpoints_with_a_bridge_mark(snap_compare: Any, tmp_path: Path, dsh_process: int) -> None:
    """A checkpoint placed through the bridge mid-turn, and what rewinding to it would replace."""
    log = _bridged(
        tmp_path / "s", dsh_process, "idle", after_type="tool/call", insert=td_pair("c1", CHECKPOINT, DONE)
    )
    shown = _shown(lambda app: isinstance(app.screen, CheckpointsScreen) and app.screen._view is not None)
    assert snap_compare(make_app(log), terminal_size=SIZE, run_before=_then("c", shown))


def test_config_lists_the_dsh_settings(snap_compare: Any, tmp_path: Path, dsh_process: int) -> None:
    log = _bridged(tmp_path / "s", dsh_process, "idle")
    shown = _shown(lambda app: isinstance(app.screen, ConfigScreen) and app.screen._view is not None)
    assert snap_compare(make_app(log), terminal_size=SIZE, run_before=_then("C", shown))


def _then(key: str, shown: Callable[[Pilot[None]], Any]) -> Callable[[Pilot[None]], Any]:
    async def run(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press(key)
        await shown(pilot)
        await quiet(pilot)  # the policy screen's first derivation landed and painted

    return run
