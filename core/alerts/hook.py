"""``--exec CMD``: a command run once per alert with the alert's JSON on stdin, off the stream's thread.

Commands run one at a time in the order the alerts came, each under a time limit; a command that fails, times
out or cannot start is reported through ``warn`` and the next alert's command runs as usual.
"""

from __future__ import annotations

import queue
import subprocess
import threading
from collections.abc import Callable

import orjson

from core.alerts.engine import Alert

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
        """Run the command for one alert and report how it failed, if it did."""
        what = f"--exec for the {alert.cause} alert of {alert.session or alert.path}"
        try:
            done = subprocess.run(
                ["/bin/sh", "-c", self.command],
                input=orjson.dumps(alert.to_dict()) + b"\n",
                capture_output=True,
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            self.warn(f"{what}: stopped after the {self.timeout:g} s time limit")
            return
        except OSError as exc:
            self.warn(f"{what}: could not start: {exc.strerror or exc}")
            return
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            tail = f": {said[-1]}" if said else ""
            self.warn(f"{what}: exit status {done.returncode}{tail}")

    def _work(self) -> None:
        while (alert := self._queue.get()) is not _DONE:
            self.run_one(alert)
