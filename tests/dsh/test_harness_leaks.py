"""The DSH harness's leak check counts the process groups it started, not whoever got their number next."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import Processes, proc_stat
from tests.dsh.harness import STARTED, leaked


def _sleeper(processes: Processes) -> subprocess.Popen[bytes]:
    return processes.start([sys.executable, "-c", "import time; time.sleep(60)"])


def test_a_group_the_harness_started_is_a_leak_while_it_runs(processes: Processes) -> None:
    proc = _sleeper(processes)
    try:
        found = proc_stat(proc.pid)
        assert found is not None
        STARTED[proc.pid] = found.start
        assert any(line.startswith(f"{proc.pid} ") for line in leaked()), leaked()
    finally:
        STARTED.pop(proc.pid, None)


def test_a_group_number_handed_out_again_is_not_taken_for_a_leak(processes: Processes) -> None:
    """ci29 failed on 'DSH processes left running: 6229 (bash), 6231 (sleep)': a shell of another program, started
    after a DSH the harness had started as pid 6229 was gone, leading a group of the same number."""
    proc = _sleeper(processes)
    try:
        found = proc_stat(proc.pid)
        assert found is not None
        STARTED[proc.pid] = found.start - 1  # the harness's process of that pid started earlier, and is gone
        assert not any(line.startswith(f"{proc.pid} ") for line in leaked()), leaked()
    finally:
        STARTED.pop(proc.pid, None)
