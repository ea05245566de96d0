"""``conftest.runs_python``, the DSH harness's check that it started no Python process: it names the Python
interpreters by their installed names (CPython's and PyPy's) and tapedeck's console script, where the argv runs a
program (first, after a wrapper's options, after ``--``), and nothing else."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import commands_run, runs_python

# DshHome.argv's wrapper: mounts, then runs what follows ``--``
MOUNT = 'while [ "$1" != -- ]; do mount --bind "$1" "$2"; shift 2; done; shift; exec "$@"'
WRAPPED = ["unshare", "--mount", "sh", "-c", MOUNT, "sh"]


@pytest.mark.parametrize(
    "argv",
    [
        [sys.executable, "-m", "core.cli", "inspect", "x.jsonl"],
        ["python", "x.py"],
        ["/usr/bin/python3", "x.py"],
        ["python3.12", "-c", "pass"],
        ["python2.7"],
        ["pypy"],
        ["pypy3", "x.py"],
        ["/opt/pypy/bin/pypy3.10", "x.py"],
        ["tapedeck", "watch"],
        ["/work/.venv/bin/tapedeck", "export", "x.jsonl"],
        ["unshare", "--mount", "--pid", "--fork", "--mount-proc", "pypy3", "bin.js"],
        [*WRAPPED, "/tmp/id", "/etc/machine-id", "--", "python3", "bin.js"],
        ["env", "-i", "HOME=/tmp", "python3.11", "x.py"],
    ],
)
def test_a_python_interpreter_or_tapedeck_run_is_found(argv: list[str]) -> None:
    assert runs_python(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["node", "bin.js", "run", "--cwd", "/work/python3"],  # a directory named as an interpreter
        ["node", "bin.js", "python", "is", "the", "task"],  # a word of the task
        ["node", "bin.js", "--sessions", "/home/me/tapedeck"],  # tapedeck's checkout, not its console script
        ["node", "bin.js", "-m", "core.cli"],
        ["python-config", "--includes"],
        ["python3-config", "--libs"],
        ["python3.", "x.py"],
        ["python3..12", "x.py"],
        ["python33", "x.py"],
        ["pypy3x"],
        ["ipython"],
        ["cpython"],
        ["grep", "-r", "python3", "."],
        [*WRAPPED, "/tmp/python3", "/etc/machine-id", "--", "node", "bin.js"],
    ],
)
def test_another_program_is_not_taken_for_python(argv: list[str]) -> None:
    assert not runs_python(argv)


def test_the_programs_an_argv_runs() -> None:
    assert commands_run(["node", "bin.js", "--", "x"]) == ["node", "x"]
    assert commands_run(["unshare", "--mount", "--pid", "node", "bin.js"]) == ["unshare", "node"]
    assert commands_run(["env", "-i", "A=1", "node", "--", "x"]) == ["env", "node", "x"]
    assert commands_run([]) == []
