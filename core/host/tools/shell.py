"""The ``bash`` tool: one shell command in the workspace, with a timeout and a cap on the output it keeps.

The command runs in its own process group with the workspace as its working directory, no stdin, and an
environment without the provider API keys (``*_API_KEY``). stdout and stderr are merged in order. Output is
capped while it is read: the first and last halves of the cap are kept and the middle is counted, so a command
that prints gigabytes costs no more memory than one that prints the cap. When the command ends (or times out)
the whole process group is killed, so background jobs never outlive the call. The shell itself is not
sandboxed: path confinement applies to the file tools, not to what a command does.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
from io import BufferedReader
from typing import Any

from core.host.tools.base import CallContext, Param, WorkspaceTool
from core.host.tools.outcome import (
    COMMAND_FAILED,
    COMMAND_TIMEOUT,
    INVALID_ARGUMENTS,
    ToolFailure,
    ToolOutcome,
)

READ_CHUNK = 65536
READER_GRACE_SECONDS = 5.0


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


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.upper().endswith("_API_KEY")}


class Bash(WorkspaceTool):
    """Run a shell command in the workspace."""

    name = "bash"
    description = (
        "Run a bash command with the workspace root as the working directory and return its combined "
        "stdout/stderr and exit code. Long output keeps its beginning and end. The command is killed after "
        "timeout seconds; background processes do not survive the call."
    )
    params = (
        Param("command", "string", "the bash command line to run", required=True),
        Param("timeout", "number", "seconds before the command is killed", minimum=1),
        Param("description", "string", "a few words on what the command is for"),
    )

    def execute(self, args: dict[str, Any], ctx: CallContext) -> ToolOutcome:
        command = args["command"]
        if not command.strip():
            raise ToolFailure(INVALID_ARGUMENTS, "command must not be empty")
        timeout = float(args.get("timeout", self.limits.bash_timeout))
        if timeout > self.limits.bash_max_timeout:
            raise ToolFailure(
                INVALID_ARGUMENTS,
                f"timeout must be at most {self.limits.bash_max_timeout:g} seconds (got {timeout:g})",
            )
        output = CappedOutput(self.limits.output_chars)
        proc = subprocess.Popen(
            [shutil.which("bash") or "/bin/bash", "-c", command],
            cwd=self.workspace.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=_environment(),
            start_new_session=True,
        )
        assert proc.stdout is not None
        reader = threading.Thread(target=_pump, args=(proc.stdout, output), daemon=True)
        reader.start()
        timed_out = False
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc.pid)
            code = proc.wait()
        _kill_group(proc.pid)
        reader.join(READER_GRACE_SECONDS)
        proc.stdout.close()
        return self._outcome(output, code, timed_out, timeout)

    @staticmethod
    def _outcome(output: CappedOutput, code: int, timed_out: bool, timeout: float) -> ToolOutcome:
        body = (output.text() or "(no output)").rstrip("\n")
        if timed_out:
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
        error = COMMAND_TIMEOUT if timed_out else COMMAND_FAILED if code != 0 else None
        return ToolOutcome(f"{body}\n{status}", error is not None, error, meta)
