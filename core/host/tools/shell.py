"""The ``bash`` tool: one shell command in the workspace, with a timeout and a cap on the output it keeps.

The command runs sandboxed where the machine allows it (see ``sandbox.py``: bubblewrap, with writes only to the
workspace and no network unless configured), with the workspace as its working directory, no stdin, and an
allow-listed environment. stdout and stderr are merged in order. Output is capped while it is read: the first
and last halves of the cap are kept and the middle is counted, so a command that prints gigabytes costs no more
memory than one that prints the cap. When the command ends, times out or is stopped, every process it started
is killed (a PID namespace under bubblewrap, a child-subreaper shim otherwise), ``setsid`` or not.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from io import BufferedReader
from pathlib import Path
from typing import Any

from core.host.host_config import ShellSettings
from core.host.tools.base import CallContext, Param, ToolLimits, WorkspaceTool
from core.host.tools.outcome import (
    ABORTED,
    COMMAND_FAILED,
    COMMAND_TIMEOUT,
    INVALID_ARGUMENTS,
    SANDBOX_UNAVAILABLE,
    ToolFailure,
    ToolOutcome,
)
from core.host.tools.sandbox import environment, shell_mode, start
from core.host.tools.workspace import Workspace

READ_CHUNK = 65536
READER_GRACE_SECONDS = 5.0
POLL_SECONDS = 0.05
TERM_GRACE_SECONDS = 3.0


class CappedOutput:
    """Keeps the head and tail of a byte stream within ``limit`` bytes and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.half = max(1, limit // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        """Take the next piece of output."""
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    @property
    def truncated(self) -> bool:
        """Whether bytes were dropped from the middle."""
        return self.total > len(self.head) + len(self.tail)

    def text(self) -> str:
        """The kept output as text, with a notice where the middle was dropped."""
        head = self.head.decode("utf-8", "replace")
        if not self.truncated:
            return head + self.tail.decode("utf-8", "replace")
        omitted = self.total - len(self.head) - len(self.tail)
        notice = f"\n…[{omitted:,} bytes of output cut from the middle; {self.total:,} bytes in all]…\n"
        return head + notice + self.tail.decode("utf-8", "replace")


def _pump(stream: BufferedReader, sink: CappedOutput) -> None:
    while chunk := stream.read1(READ_CHUNK):
        sink.feed(chunk)


def _kill_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _end(proc: subprocess.Popen[bytes]) -> int:
    """End a command's whole process tree: SIGTERM lets the reaper kill every descendant, SIGKILL follows."""
    _kill_group(proc.pid, signal.SIGTERM)
    try:
        return proc.wait(TERM_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid, signal.SIGKILL)
        return proc.wait()


class Bash(WorkspaceTool):
    """Run a shell command in the workspace."""

    name = "bash"
    description = (
        "Run a bash command with the workspace root as the working directory and return its combined "
        "stdout/stderr and exit code. Long output keeps its beginning and end. The command is killed after "
        "timeout seconds; background processes do not survive the call. Where the machine allows, the "
        "command is sandboxed: it can write only inside the workspace (and a private /tmp) and has no network."
    )
    params = (
        Param("command", "string", "the bash command line to run", required=True),
        Param("timeout", "number", "seconds before the command is killed", minimum=1),
        Param("description", "string", "a few words on what the command is for"),
    )

    def __init__(
        self, workspace: Workspace, limits: ToolLimits, settings: Callable[[], ShellSettings] = ShellSettings
    ) -> None:
        super().__init__(workspace, limits)
        self.settings = settings
        self.read_only: tuple[Path, ...] = ()

    def seconds_for(self, args: dict[str, Any]) -> float:
        """The command's own timeout (checked against ``bash_max_timeout`` in ``execute``)."""
        return float(args.get("timeout", self.limits.bash_timeout))

    def execute(self, args: dict[str, Any], ctx: CallContext) -> ToolOutcome:
        """Run ``command`` under the deadline and the shell settings; its output and exit code."""
        command = args["command"]
        if not command.strip():
            raise ToolFailure(INVALID_ARGUMENTS, "command must not be empty")
        timeout = ctx.seconds
        if timeout > self.limits.bash_max_timeout:
            raise ToolFailure(
                INVALID_ARGUMENTS,
                f"timeout must be at most {self.limits.bash_max_timeout:g} seconds (got {timeout:g})",
            )
        settings = self.settings()
        mode = shell_mode(settings)
        if mode.kind != "bubblewrap" and settings.sandbox == "required":
            raise ToolFailure(SANDBOX_UNAVAILABLE, f"the command was not run: {mode.warning}")
        output = CappedOutput(self.limits.output_chars)
        proc = start(command, self.workspace.root, mode, environment(settings), self.read_only)
        assert proc.stdout is not None
        reader = threading.Thread(target=_pump, args=(proc.stdout, output), daemon=True)
        reader.start()
        ended: str | None = None
        code = proc.poll()
        while code is None:
            if ctx.cancel.wait(min(POLL_SECONDS, ctx.remaining())):
                ended = ABORTED
            elif ctx.remaining() <= 0:
                ended = COMMAND_TIMEOUT
            code = proc.poll()
            if ended and code is None:
                code = _end(proc)
        _end(proc)
        reader.join(READER_GRACE_SECONDS)
        proc.stdout.close()
        return self._outcome(output, code, ended, timeout)

    @staticmethod
    def _outcome(output: CappedOutput, code: int, ended: str | None, timeout: float) -> ToolOutcome:
        body = (output.text() or "(no output)").rstrip("\n")
        timed_out = ended == COMMAND_TIMEOUT
        if ended == ABORTED:
            status = "(stopped by the operator; the command and everything it started were killed)"
        elif timed_out:
            status = f"(timed out after {timeout:g} s; the command was killed)"
        elif code < 0:
            status = f"(killed by signal {-code})"
        else:
            status = f"(exit code {code})"
        meta = {
            "exitCode": code,
            "timedOut": timed_out,
            "outputBytes": output.total,
            "truncated": output.truncated,
        }
        error = ended or (COMMAND_FAILED if code != 0 else None)
        return ToolOutcome(f"{body}\n{status}", error is not None, error, meta)
