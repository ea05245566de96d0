"""Every process a test starts is killed, with its process group, and reaped when the test ends, failed or not: a
host left running by a test that failed early holds its log, its workspace and a core until someone kills it."""

from __future__ import annotations

import ast
import os
import re
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.conftest import Processes, process_gone

TESTS = Path(__file__).resolve().parent
# a Python process: tapedeck (its modules or console script), or a script that runs it
PYTHON = re.compile(r"\b(sys\.executable|core\.cli|tui\.cli|TAPEDECK)\b")  # whole names: not TAPEDECK_HOME


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


def _given(statements: Iterable[ast.AST]) -> dict[str, list[ast.expr]]:
    """The values the assignments among ``statements`` give each name."""
    given: dict[str, list[ast.expr]] = {}
    for node in statements:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    given.setdefault(target.id, []).append(node.value)
    return given


def bare_popens(source: str) -> list[int]:
    """The lines of the ``Popen`` calls in ``source`` that start a Python process, told by the words of the call or of
    what the names it passes were given in its functions or at the module's top (``argv = [str(TAPEDECK), …]`` then
    ``Popen(argv)``: the spelling the check once missed, which left a failed test's tapedeck running)."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
    for call in calls:
        if call.func.attr != "Popen":
            continue
        given = _given(tree.body)
        scope = parents.get(call)
        while scope is not None:
            if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
                for name, values in _given(ast.walk(scope)).items():
                    given.setdefault(name, []).extend(values)
            scope = parents.get(scope)
        texts, todo, seen = [], [call], set()
        while todo:
            node = todo.pop()
            texts.append(ast.get_source_segment(source, node) or "")
            for name in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - seen:
                seen.add(name)
                todo += given.get(name, [])
        if any(PYTHON.search(text) for text in texts):
            found.append(call.lineno)
    return found


def test_tests_start_tapedeck_processes_only_through_the_processes_fixture() -> None:
    """A ``subprocess.Popen`` of a Python process (``tapedeck``'s ``core.cli`` or ``tui.cli``, its console script, or
    a script that runs its code) anywhere else in the tests is a process nothing reaps when its test fails before it
    ends."""
    bare = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name == "conftest.py" and path.parent == TESTS:
            continue
        bare += [f"{path.relative_to(TESTS.parent)}:{line}" for line in bare_popens(path.read_text())]
    assert bare == [], "start these through the processes fixture: " + ", ".join(bare)


# The two ways tests/e2e/test_tmux_fleet.py and tests/export/test_export.py started tapedeck until they went through
# the processes fixture: a host or an export that a failure before their end left running after the run.
LEAKED_HOST = """
def _host(tmp, root, sid):
    argv = [str(TAPEDECK), "run", "--sessions-root", str(root), "--session-id", sid, "--linger"]
    env = {**os.environ, "TAPEDECK_HOME": str(tmp / "home")}
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc
"""
LEAKED_EXPORT = """
ARGV = [sys.executable, "-m", "core.cli", "export"]

def test_export(tmp_path, log):
    argv = [*ARGV, str(log), "--format", "md"]
    process = subprocess.Popen(argv, cwd=tmp_path)
    assert process.wait() == 0
"""


def test_a_tapedeck_started_by_the_name_of_its_argv_is_found() -> None:
    """The check reads through a name to what it was given (here twice over), and leaves alone what is no Python
    process or goes through the fixture."""
    assert bare_popens(LEAKED_HOST) == [5]
    assert bare_popens(LEAKED_EXPORT) == [6]
    assert bare_popens(LEAKED_EXPORT.replace("subprocess.Popen(", "processes.start(")) == []
    assert bare_popens("def f():\n    argv = ['sleep', '600']\n    return subprocess.Popen(argv)\n") == []
    home = "def f(tmp):\n    env = {'TAPEDECK_HOME': str(tmp)}\n    return subprocess.Popen(['sleep', '600'], env=env)\n"
    assert bare_popens(home) == []  # an environment that names tapedeck's home starts no tapedeck


def test_the_dsh_harness_refuses_to_start_a_python_process(tmp_path: Path) -> None:
    """The DSH harness builds its argv in a call (``DshHome.argv``) whose result the reading of the source above
    cannot see: the harness checks the argv it really started instead, and kills and refuses a Python process there,
    while a DSH (any other program) runs."""
    from tests.dsh.harness import DshHome, DshInstall, run_headless, start_headless

    script = tmp_path / "bin.js"
    script.write_text("import time; time.sleep(60)\n")
    python = DshHome(DshInstall(Path(sys.executable), script), tmp_path / "python", "http://127.0.0.1:9")
    with pytest.raises(RuntimeError, match="started a Python process"):
        start_headless(python, "a task")
    other = DshHome(DshInstall(Path("/bin/true"), script), tmp_path / "true", "http://127.0.0.1:9")
    assert run_headless(other, "a task").returncode == 0
