"""``--exec CMD``: a command run once per alert with the alert's JSON on stdin, off the stream's thread.

Commands run one at a time in the order the alerts came, each under a time limit; a command that fails, times
out or cannot start is reported through ``warn`` and the next alert's command runs as usual.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import threading
from collections.abc import Callable

from core.alerts.engine import Alert
from core.shared.text import quoted, quoted_path

_DONE = None


class HookRunner:
    """Runs ``command`` (through ``/bin/sh -c``) for each alert given to ``submit``."""

    def __init__(self, command: str, timeout: float, warn: Callable[[str], None]) -> None:
        self.command = command
        self.timeout = timeout
        self.warn = warn
        self._queue: queue.Queue[Alert | None] = queue.Queue()
        self._thread = threading.Thread(target=self._work, name="tapedeck-alert-exec", daemon=True)
        self._thread.start()

    def submit(self, alert: Alert) -> None:
        """Queue the command for ``alert``."""
        self._queue.put(alert)

    def close(self, wait: float | None = None) -> None:
        """Run what is queued (waiting at most ``wait`` seconds for it), then stop."""
        self._queue.put(_DONE)
        self._thread.join(wait)

    def run_one(self, alert: Alert) -> None:
        """Run the command for one alert and report how it failed, if it did. The command runs in a process group
        of its own: at its time limit the whole group is killed (what a compound command or a background job
        started too), and nothing left holding its output is waited for."""
        named = quoted(alert.session) if alert.session else quoted_path(alert.path)  # the log's words: one line
        what = f"--exec for the {alert.cause} alert of {named}"
        try:
            proc = subprocess.Popen(
                ["/bin/sh", "-c", self.command],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            self.warn(f"{what}: could not start: {exc.strerror or exc}")
            return
        try:
            _, err = proc.communicate(alert.to_json() + b"\n", timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _stop(proc)
            self.warn(f"{what}: stopped after the {self.timeout:g} s time limit")
            return
        if proc.returncode != 0:
            said = err.decode("utf-8", "replace").strip().splitlines()
            tail = f": {said[-1]}" if said else ""
            self.warn(f"{what}: exit status {proc.returncode}{tail}")

    def _work(self) -> None:
        while (alert := self._queue.get()) is not _DONE:
            self.run_one(alert)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc``'s process group (its session's: ``start_new_session``), reap ``proc`` and close its pipes
    unread: a process that left the group may still hold them open."""
    with contextlib.suppress(ProcessLookupError):  # every process of the group has exited already
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    for pipe in (proc.stdin, proc.stderr):
        if pipe is not None:
            pipe.close()
