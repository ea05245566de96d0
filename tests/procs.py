"""Processes as ``/proc`` tells of them, for the tests that look for what they started: the one reader of
``/proc/PID/stat``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple


class ProcStat(NamedTuple):
    """What ``/proc/PID/stat`` says of a process that the tests read."""

    command: str  # its comm, the bytes that are no UTF-8 kept as ``os.fsdecode`` keeps them
    state: str  # ``R``, ``S``, ``Z`` …
    parent: int  # its parent's pid
    group: int  # its process group
    start: int  # its start time, in clock ticks after the boot


def parse_stat(data: bytes) -> ProcStat:
    """``data``, the bytes of a ``/proc/PID/stat``, read. The kernel writes the command (``comm``) between
    parentheses as it is: it may hold spaces, parentheses, a newline and bytes that are no UTF-8, so it is cut out
    between the first ``(`` and the last ``)`` of the bytes, before anything is split or decoded; the fields after it
    are counted from the state on."""
    head, _, rest = data.rpartition(b")")
    # from the state on: the parent is the second field, the group the third, the start time the twentieth
    fields = rest.split()
    command = os.fsdecode(head.partition(b"(")[2])
    return ProcStat(command, fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[19]))


def proc_stat(pid: int | str) -> ProcStat | None:
    """What ``/proc/PID/stat`` says of process ``pid``; None once it is gone."""
    try:
        data = Path("/proc", str(pid), "stat").read_bytes()
    except OSError:
        return None
    return parse_stat(data)


def process_gone(pid: int) -> bool:
    """Whether no process ``pid`` runs (a zombie counts as gone: it runs nothing); reads ``/proc``."""
    found = proc_stat(pid)
    return found is None or found.state == "Z"
