"""Run one command so that no process it starts outlives it: ``python reaper.py HOST_PID PROGRAM ARGS...``.

The reaper makes itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``), so every descendant that is
orphaned, even one that left with ``setsid`` or a double fork, becomes its child instead of init's. When the
command exits, or SIGTERM arrives (the tool's deadline, the operator's ``stop``, or the death of the host
``HOST_PID`` that started it, however it died: ``prctl(PR_SET_PDEATHSIG)``), it kills every remaining child until
none is left, then exits with the command's status. It runs as a plain script with ``-I -S``
(standard library only) so starting it costs little.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1


def _children(me: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rpartition(b")")[2].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            found.append(int(name))
    return found


def _kill_descendants() -> None:
    """SIGKILL every child, reap it; its orphans become children in turn, until none is left."""
    me = os.getpid()
    while True:
        for pid in _children(me):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return


def main(argv: list[str]) -> int:
    """Run ``argv[1:]`` for the host ``argv[0]``, then kill what it left; the command's exit status (or its
    signal) is returned."""
    host, argv = int(argv[0]), argv[1:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("tapedeck reaper: cannot become a child subreaper", file=sys.stderr)

    def on_term(_signum: int, _frame: object) -> None:
        _kill_descendants()
        os._exit(128 + signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_term)  # before the fork: no moment where SIGTERM would skip the cleanup
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != host:  # the host died before that took hold: nothing runs for it
        return 128 + signal.SIGTERM
    child = os.fork()
    if child == 0:
        try:
            os.execvp(argv[0], argv)  # exec resets the handler to the default
        finally:
            os._exit(127)
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == child:
            break
    _kill_descendants()
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
