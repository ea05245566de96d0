"""``tests.procs``, the tests' one reader of ``/proc/PID/stat``: the command between its parentheses holds whatever
bytes a process named itself with (spaces, parentheses, a newline, bytes that are no UTF-8), and the fields after it
are read whatever it holds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.conftest import Processes
from tests.procs import ProcStat, parse_stat, proc_stat

# a comm as the kernel keeps it: up to 15 bytes, any but NUL (wider here: the reader has no limit of its own)
COMMANDS = st.binary(max_size=40).filter(lambda b: b"\0" not in b)
NUMBERS = st.integers(min_value=0, max_value=2**63 - 1)


@given(
    pid=st.integers(min_value=1, max_value=2**22),
    command=COMMANDS,
    state=st.sampled_from("RSDZTtXxKWPI"),
    numbers=st.lists(NUMBERS, min_size=49, max_size=49),
)
@example(pid=1, command=b"a) (b", state="S", numbers=list(range(49)))
@example(pid=7, command=b") Z 9 9 9 (", state="R", numbers=list(range(49)))
@example(pid=7, command=b"\xe2\x82 x\n)", state="R", numbers=list(range(49)))
def test_a_stat_line_is_read_whatever_its_command_holds(
    pid: int, command: bytes, state: str, numbers: list[int]
) -> None:
    data = b"%d (%s) %s %s\n" % (pid, command, state.encode(), b" ".join(b"%d" % n for n in numbers))
    assert parse_stat(data) == ProcStat(os.fsdecode(command), state, numbers[0], numbers[1], numbers[18])


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="no procfs")
def test_a_process_that_names_itself_with_spaces_parentheses_and_no_utf8_is_read(
    processes: Processes,
) -> None:
    """A process renamed (``/proc/self/comm``, as ``prctl(PR_SET_NAME)`` does) to a name that was cut inside a UTF-8
    character, holding ``) (``: the reader gives its name, state, parent and group."""
    name = b"\xe2\x82 x) (y"
    script = f"open('/proc/self/comm', 'wb').write({name!r}); print(flush=True); input()"
    child = processes.start([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdout is not None and child.stdout.readline() == b"\n"  # renamed
    found = proc_stat(child.pid)
    assert found is not None, "the child is gone"
    assert (found.command, found.parent, found.group) == (os.fsdecode(name), os.getpid(), child.pid)
    assert found.state in "RS", found
