"""Reading workspace text files through a descriptor, in bounded memory: a binary sniff and streamed lines."""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Iterator

from core.host.tools.base import CallContext
from core.host.tools.outcome import FS_IS_DIRECTORY, FS_NOT_REGULAR_FILE, FS_NOT_TEXT, ToolFailure
from core.shared.text import quoted

SNIFF_BYTES = 8192
READ_CHUNK = 1 << 16


def check_text(fd: int, raw: str, tool: str) -> None:
    """Refuse a descriptor that is not a regular text file (directories, pipes, devices, binary data)."""
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        raise ToolFailure(FS_IS_DIRECTORY, f"'{quoted(raw)}' is a directory; use list_dir to see what it holds")
    if not stat.S_ISREG(mode):
        raise ToolFailure(FS_NOT_REGULAR_FILE, f"'{quoted(raw)}' is not a regular file (a pipe, socket or device)")
    if b"\x00" in os.pread(fd, SNIFF_BYTES, 0):
        raise ToolFailure(FS_NOT_TEXT, f"'{quoted(raw)}' looks like a binary file; {tool} works on text files")


def is_text(fd: int) -> bool:
    """Whether a descriptor is a regular file whose first bytes hold no NUL (what searches read)."""
    return stat.S_ISREG(os.fstat(fd).st_mode) and b"\x00" not in os.pread(fd, SNIFF_BYTES, 0)


def numbered_lines(fd: int, ctx: CallContext, what: str, keep: int) -> Iterator[tuple[int, str, int]]:
    """``(number, text, cut)`` for each line read from ``fd``: at most ``keep`` characters of its text (line
    end and a ``\\r`` before it removed) and how many more it had. Memory stays bounded however long a line is;
    undecodable bytes read as U+FFFD. ``ctx`` is checked between chunks."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    number = 0
    kept: list[str] = []
    have = cut = 0
    last = ""
    while True:
        ctx.check(what)
        chunk = os.read(fd, READ_CHUNK)
        text = decoder.decode(chunk, final=not chunk)
        start = 0
        while True:
            end = text.find("\n", start)
            piece = text[start:] if end < 0 else text[start:end]
            if piece:
                take = piece[: max(0, keep - have)]
                if take:
                    kept.append(take)
                    have += len(take)
                cut += len(piece) - len(take)
                last = piece[-1]
            if end < 0:
                break
            number += 1
            yield number, *_finish(kept, cut, last)
            kept, have, cut, last = [], 0, 0, ""
            start = end + 1
        if not chunk:
            break
    if have or cut:
        yield number + 1, *_finish(kept, cut, last)


def _finish(kept: list[str], cut: int, last: str) -> tuple[str, int]:
    line = "".join(kept)
    if last != "\r":
        return line, cut
    if cut:
        return line, cut - 1
    return line[:-1], 0
