"""Every process a test starts is killed, with its process group, and reaped when the test ends, failed or not: a
host left running by a test that failed early holds its log, its workspace and a core until someone kills it."""

from __future__ import annotations

import ast
import os
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import Processes, process_gone

TESTS = Path(__file__).resolve().parent
PYTHON = ("sys.executable", "core.cli", "tui.cli")  # a Python process: tapedeck, or a script that runs it


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_a_test_that_fails_early_leaves_no_process_behind(tmp_path: Path) -> None:
    """A process started through ``Processes``, and the child it started in its group, are gone once the test
    body raised, and the process is reaped."""
    child_pid = tmp_path / "child.pid"
    code = ("import subprocess, sys, time; c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
            f" open({str(child_pid)!r}, 'w').write(str(c.pid)); time.sleep(60)")  # fmt: skip
    procs = Processes()
    with pytest.raises(AssertionError, match="failed early"):
        try:
            proc = procs.start([sys.executable, "-c", code])
            while not child_pid.exists() or not child_pid.read_text():
                time.sleep(0.01)
            raise AssertionError("the test failed early")
        finally:
            procs.close()
    assert proc.returncode is not None  # reaped: no zombie left for the run's lifetime
    deadline = time.monotonic() + 10
    while not process_gone(int(child_pid.read_text())):
        assert time.monotonic() < deadline, "the process's child outlived the test"
        time.sleep(0.01)


def test_tests_start_tapedeck_processes_only_through_the_processes_fixture() -> None:
    """A ``subprocess.Popen`` of a Python process (``tapedeck``'s ``core.cli`` or ``tui.cli``, or a script that runs
    its code) anywhere else in the tests is a process nothing reaps when its test fails before it ends."""
    bare = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name == "conftest.py" and path.parent == TESTS:
            continue
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "Popen":
                call = ast.get_source_segment(source, node) or ""
                if any(word in call for word in PYTHON):
                    bare.append(f"{path.relative_to(TESTS.parent)}:{node.lineno}")
    assert bare == [], "start these through the processes fixture: " + ", ".join(bare)
