"""The DSH harness stops a process group only while the number it signals is that group's."""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest

from tests.conftest import Processes, proc_stat
from tests.dsh.harness import _stop_group, wait_for


def test_a_group_whose_leader_exited_at_once_is_signalled_only_before_the_leader_is_reaped(
    processes: Processes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group whose leader exits at once: every signal to its number is sent while the leader, exited but not
    reaped, still holds it (its /proc entry is there, a zombie of the start time it had). The harness reaped the
    leader first and then sent SIGKILL to the group's number, free by then for any new process and its group."""
    proc = processes.start(["sh", "-c", "exit 0"])
    began = proc_stat(proc.pid)
    assert began is not None
    wait_for(
        lambda: (found := proc_stat(proc.pid)) is not None and found.state == "Z", 60, "the leader's exit"
    )
    held: list[tuple[int, Any]] = []
    real = os.killpg

    def killpg(group: int, sig: int) -> None:
        found = proc_stat(group)
        held.append((sig, found is not None and found.start == began.start and found.group == group))
        real(group, sig)

    monkeypatch.setattr(os, "killpg", killpg)
    _stop_group(proc, grace=60)
    assert proc.returncode == 0
    assert held and all(mine for _, mine in held), held
    assert signal.SIGKILL in [sig for sig, _ in held], held
