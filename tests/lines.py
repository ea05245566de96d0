"""Reading a child process's output line by line with a deadline: a child that goes silent fails its test after the
bound instead of holding the whole run in a blocking ``readline``."""

from __future__ import annotations

import os
import select
import time
from typing import IO, Any


class Lines:
    """The lines written to ``pipe`` (a child's stdout or stderr), read straight from its descriptor: once one is
    given to ``Lines``, nothing else may read the pipe but ``communicate`` after the last line wanted."""

    def __init__(self, pipe: IO[Any]) -> None:
        self._fd = pipe.fileno()
        self._buffer = b""
        self._ended = False

    def next(self, timeout: float = 60.0) -> str:
        """The next line with its newline (the last one maybe without, then ``""`` once the pipe is closed); a
        TimeoutError when no whole line came within ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer and not self._ended:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._fd], [], [], left)[0]:
                raise TimeoutError(f"no whole line within {timeout:g} s; so far: {self._buffer[-500:]!r}")
            chunk = os.read(self._fd, 65536)
            self._ended = not chunk
            self._buffer += chunk
        line, newline, self._buffer = self._buffer.partition(b"\n")
        return (line + newline).decode("utf-8", "replace")

    def rest(self, timeout: float = 60.0) -> str:
        """Everything left until the pipe is closed; a TimeoutError when it is still open after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        lines = []
        while line := self.next(max(0.0, deadline - time.monotonic())):
            lines.append(line)
        return "".join(lines)
