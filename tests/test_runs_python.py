"""``conftest.runs_python``, the DSH harness's check that it started no Python process: it names the Python
interpreters by their installed names (CPython's and PyPy's) and tapedeck's console script, where the argv runs a
program (first, after a wrapper's options, after ``--``), and nothing else."""

from __future__ import annotations

import shlex
import sys

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

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


def test_a_wrapper_options_value_or_a_shell_script_is_looked_through() -> None:
    """``env -u NAME python3`` was read as the program NAME, and ``sh -c 'cd x && python3 …'`` as ``sh`` alone."""
    assert commands_run(["env", "-u", "NAME", "python3", "x.py"]) == ["env", "python3"]
    assert commands_run(["env", "-iuNAME", "--chdir", "/tmp", "node"]) == ["env", "node"]
    assert commands_run(["env", "-S", "python3 -u", "x.py"]) == ["env", "python3"]
    assert commands_run(["sh", "-c", "cd /tmp && A=1 exec python3 x.py; echo python3", "sh", "python3"]) == [
        "sh", "cd", "exec", "python3", "echo"
    ]  # fmt: skip
    assert commands_run(["bash", "-o", "pipefail", "-ec", "if true; then\n  node x\nfi"]) == [
        "bash",
        "true",
        "node",
    ]
    assert commands_run(["sh", "script.sh", "python3"]) == ["sh"]  # a script file: its words are arguments
    assert commands_run(["sh", "-c", "'open quote python3"]) == ["sh", "'open", "quote", "python3"]


PYTHONS = [
    "python",
    "python3",
    "python3.12",
    "/usr/bin/python3",
    "pypy3",
    "tapedeck",
    "/venv/bin/tapedeck",
    sys.executable,
]
OTHERS = [
    "node",
    "/usr/bin/node",
    "grep",
    "true",
    "ipython",
    "python3-config",
    "cpython",
    "/work/python3/bin/node",
]
# a program's arguments, which name no program it runs (interpreters' names among them)
ARGUMENTS = st.lists(st.sampled_from(["x.py", "-u", "-c", "pass", "python3", "/usr/bin/pypy3", "tapedeck", "a b"]),
                     max_size=3)  # fmt: skip
NAMES = st.from_regex(r"[A-Z_][A-Z0-9_]{0,4}", fullmatch=True)
ENV_OPTIONS = st.one_of(
    st.sampled_from([["-i"], ["-C", "/tmp"], ["--chdir=/tmp"], ["--ignore-signal"]]),
    NAMES.map(lambda n: ["-u", n]),
    NAMES.map(lambda n: [f"-u{n}"]),
    NAMES.map(lambda n: ["-iu", n]),
    NAMES.map(lambda n: ["--unset", n]),
    NAMES.map(lambda n: [f"--unset={n}"]),
    NAMES.map(lambda n: [f"{n}=python3"]),
)
UNSHARE_OPTIONS = st.sampled_from([["--mount"], ["--pid", "--fork"], ["-S", "0"], ["--setgid=0"],
                                   ["--propagation", "private"], ["--mount-proc"]])  # fmt: skip
# a shell script around a command: what comes before it and after it
SCRIPTS = st.sampled_from([("", ""), ("exec ", ""), ("cd /tmp && ", ""), ("A=1 B=2 ", " || exit 3"),
                           ("set -e; ", "; echo done"), ("if true; then\n  ", "\nfi"), ("( ", " )")])  # fmt: skip
SHELL_OPTIONS = st.sampled_from([["-c"], ["-ec"], ["-o", "pipefail", "-c"], ["-e", "-c"], ["-c", "--"]])


@st.composite
def _wrapped(draw: st.DrawFn, argv: list[str]) -> list[str]:
    """``argv`` run by a wrapper or a shell's script, as the DSH harness or a test could start it."""
    how = draw(st.sampled_from(["env", "env -S", "unshare", "setsid", "nohup", "sh -c", "mount"]))
    if how == "env":
        return ["env", *sum(draw(st.lists(ENV_OPTIONS, max_size=3)), []), *argv]
    if how == "env -S":
        return ["env", "-S", shlex.join(argv)]
    if how == "unshare":
        return ["unshare", *sum(draw(st.lists(UNSHARE_OPTIONS, max_size=2)), []), *argv]
    if how in ("setsid", "nohup"):
        return [how, *argv]
    if how == "mount":
        return [*WRAPPED, "/tmp/id", "/etc/machine-id", "--", *argv]
    before, after = draw(SCRIPTS)
    shell = draw(st.sampled_from(["sh", "/bin/sh", "bash", "dash"]))
    return [
        shell,
        *draw(SHELL_OPTIONS),
        before + shlex.join(argv) + after,
        *draw(st.sampled_from([[], ["sh", "python3"]])),
    ]


@st.composite
def command_lines(draw: st.DrawFn) -> tuple[list[str], bool]:
    """A command line and whether the program it runs at its core is Python."""
    python = draw(st.booleans())
    argv = [draw(st.sampled_from(PYTHONS if python else OTHERS)), *draw(ARGUMENTS)]
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        argv = draw(_wrapped(argv))
    return argv, python


@given(command_lines())
@example((["env", "-u", "PATH", "python3", "x.py"], True))
@example((["env", "-u", "PYTHONPATH", "node", "python3"], False))
@example((["sh", "-c", "cd /tmp && exec python3 -u x.py"], True))
@example((["sh", "-c", "exec node bin.js python3", "sh", "python3"], False))
def test_a_command_line_runs_python_when_the_program_it_wraps_is_python(line: tuple[list[str], bool]) -> None:
    argv, python = line
    assert runs_python(argv) == python
