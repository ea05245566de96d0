"""Shared CLI plumbing: output in text or JSON, and error exits."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from itertools import islice
from typing import Any

import orjson

from core.log.bulk import gc_paused
from core.log.records import PackedRow
from core.shared.errors import TapedeckError
from core.shared.jsonout import dumps, inert
from core.shared.text import path_text, printable, quoted_path


def dumps_indented(value: Any) -> bytes:
    """``orjson.dumps(value, option=OPT_INDENT_2)`` for any value (``core.shared.jsonout.dumps``), with nothing in
    it a terminal acts on (``inert``)."""
    return inert(dumps(value, orjson.OPT_INDENT_2))


def for_terminal(text: str) -> str:
    """``text`` as a text report prints it: a path in it that is not UTF-8 as ``path_text`` names it; when stdout is
    a terminal, with the control characters of what it quotes from a log drawn (``printable``), never run; piped or
    redirected, as it is."""
    text = path_text(text)
    return printable(text) if sys.stdout.isatty() else text


SEQ_WIDTH = 6  # places a text table's seq column takes at least


def seq_width(seqs: Iterable[int]) -> int:
    """The places of a text table's seq column that prints ``seqs``: ``SEQ_WIDTH``, or the digits of the largest
    when it has more (a log past a million events), so every row lines up."""
    return max(SEQ_WIDTH, len(str(max(seqs, default=0))))


def column(text: str, width: int) -> str:
    """``text`` as a cell of a text table's column ``width`` terminal cells wide, whatever the rows
    before and after it hold, so rows printed as they come line up: a text with a tab, a line break or a control
    character has its whitespace collapsed to single spaces and its controls drawn (``printable``); it is padded
    with spaces, and a longer one cut in the middle with ``…``, keeping its first third and its tail, where names
    that share a prefix differ (``plugin:@dee…k-ai/dsh-system-prompt``; ``--json`` keeps it whole). Cells are
    counted by ``rich.cells``, as the TUI draws them."""
    if not text.isprintable():  # a tab or a line break would break the row: collapsed as ``one_line`` does
        text = printable(" ".join(text.split()))
    if text.isascii():  # one cell a character, measured without Rich
        if len(text) <= width:
            return text + " " * (width - len(text))
        head = (width - 1) // 3
        return f"{text[:head]}…{text[len(text) - (width - 1 - head) :]}"
    from rich.cells import split_graphemes  # a wide character takes 2 cells, a combining mark none

    spans, cells = split_graphemes(text)
    if cells <= width:
        return text + " " * (width - cells)
    head_cells, tail_cells = (width - 1) // 3, width - 1 - (width - 1) // 3
    head = used = 0
    for _, end, size in spans:  # whole graphemes from the start, as many as fit
        if used + size > head_cells:
            break
        head, used = end, used + size
    tail = len(text)
    taken = 0
    for start, _, size in reversed(spans):  # … and from the end
        if taken + size > tail_cells:
            break
        tail, taken = start, taken + size
    return f"{text[:head]}…{text[tail:]}" + " " * (width - 1 - used - taken)


def emit(payload: Any, as_json: bool, render: Callable[[Any], str]) -> None:
    """Print ``payload`` as indented JSON when ``as_json`` is set, else as ``render(payload)`` (``for_terminal``)."""
    if as_json:
        write_bytes(dumps_indented(payload))
        write_text("\n")
    else:
        text = for_terminal(render(payload))
        write_text(text if text.endswith("\n") else text + "\n")


def write_text(text: str) -> None:
    """Write ``text`` to stdout and flush it (``output_failed`` when it cannot be written)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as exc:
        raise output_failed(exc) from None


def output_failed(exc: OSError) -> Exception:
    """What a write to stdout that failed with ``exc`` raises: a closed pipe as it is (it ends a command quietly);
    else (a full disk, a terminal gone) a TapedeckError saying so, stdout silenced, which no guard of a read takes
    for its file's error."""
    if isinstance(exc, BrokenPipeError):
        return exc
    quiet_stdout()
    return TapedeckError(f"could not write its output ({exc.strerror or exc})")


RULE_SECTIONS = (
    "model",
    "alerts",
)  # the config sections ``cost``, ``alerts`` and ``sessions`` read (prices, rules):
# without a config file only these are imported and validated (``load_config(None, only=...)``)
WRITE_BATCH = 1 << 16  # bytes of items ``emit_json_list_field`` holds before it writes them


def emit_json_list_field(payload: dict[str, Any], key: str, group: int = 1) -> None:
    """``emit(payload, True, …)`` byte for byte, with the list ``payload[key]`` written a few items at a time
    (``WRITE_BATCH`` bytes, or one item longer than that): the whole JSON text is never held (a seal preview's
    entries are megabytes of text). Its items are dumped ``group`` at a time (as a list, re-indented one level
    deeper: small items, such as cost rows, take one call a group instead of one each)."""
    items = payload[key]
    whole = dumps_indented({**payload, key: []})
    mark = (
        b"\n  " + orjson.dumps(key) + b": []"
    )  # a nested or string occurrence is indented deeper or escaped
    at = whole.index(mark) + len(mark) - 1
    if not items:
        at += 1
    pending: list[bytes | memoryview] = [whole[:at]]
    size = at  # written a batch at a time: a write per item is a syscall per item
    rest = iter(items)
    lead = b""
    while (dumped := dumps_indented(list(islice(rest, group)))) != b"[]":  # no group held once dumped
        # ``[\n  a,\n  b\n]`` indented one level deeper, less its brackets: ``\n    a,\n    b``
        piece = memoryview(dumped.replace(b"\n", b"\n  "))[1:-4]
        del dumped  # a seal entry's megabytes are held once
        if lead:
            pending.append(lead)
            size += 1
        lead = b","
        if (
            len(piece) >= WRITE_BATCH
        ):  # a long one goes out as it is (not copied into a batch), after the others
            write_bytes(b"".join(pending), piece)
            pending, size = [], 0
            continue
        pending.append(piece)
        size += len(piece)
        if size >= WRITE_BATCH:
            write_bytes(b"".join(pending))
            pending, size = [], 0
    pending.append((b"\n  " if items else b"") + whole[at:])
    write_bytes(b"".join(pending))
    write_text("\n")


def write_bytes(*pieces: bytes | memoryview) -> None:
    """Write UTF-8 ``pieces`` to stdout, one after the other: straight to its byte buffer when it has one (a
    multi-MB JSON text is not also held as a str), else decoded. The text written before goes out first: the
    first call makes stdout pass text on to the buffer as it is written (``write_through``), so no later call
    has to flush it, which also emptied the buffer into a system call per piece."""
    stdout = sys.stdout
    out = getattr(stdout, "buffer", None)
    try:
        if out is None:
            for data in pieces:
                stdout.write(bytes(data).decode())
            return
        if not getattr(stdout, "write_through", False):
            reconfigure = getattr(stdout, "reconfigure", None)
            if reconfigure is not None:
                reconfigure(write_through=True)  # which flushes what text it holds first
            else:
                stdout.flush()
        for data in pieces:
            out.write(data)
    except OSError as exc:
        raise output_failed(exc) from None


def json_member(item: Any) -> memoryview:
    """``item`` as ``emit`` prints a member of a list: a newline and the item indented one level (orjson indents
    the only member of a list so, nothing to re-indent: a string's newlines are escaped), the brackets cut off
    without a copy."""
    data = dumps_indented([item])
    return memoryview(data)[1 : len(data) - 2]


# a member of a list as ``dumps_indented`` writes it: what comes before its seq and between its seq and time
_MEMBER_SEQ = b'\n  {\n    "type": "assistant/chunk",\n    "seq": '
_MEMBER_TIME = b',\n    "time": '
_MEMBER_END = b"\n      }\n    }\n  }"  # after its delta, the last value of its chunk


# a packed row's members rendered at a time: a row of a million members is never held rendered whole
ROW_MEMBERS = 1 << 14


def row_members(row: PackedRow) -> Iterator[bytes | memoryview]:
    """The members of ``row`` as ``dumps_indented(row.events())`` writes them between its brackets, in pieces of
    ``ROW_MEMBERS`` members (to be joined by commas), made from the row: a piece's first member's event dumped for
    what every member shares, then each member's seq, time and delta put in (no event built per member). A piece
    orjson would not write so (a delta with surrogates) is dumped event by event."""
    _, _, deltas = row.deltas()
    times = row.times()
    for start in range(0, row.count, ROW_MEMBERS):
        stop = min(start + ROW_MEMBERS, row.count)
        yield _members(row, deltas[start:stop], times[start:stop], row.seq0 + start)


def _members(row: PackedRow, deltas: list[str], times: list[int], seq0: int) -> bytes | memoryview:
    """``row_members``' piece of the members ``deltas`` and ``times`` from ``seq0`` on."""
    k = seq0 - row.seq0
    try:  # a row's times and seqs are integers orjson writes (``PackedRow`` refuses a row whose times are not)
        first = dumps_indented([row.event(k)])
        head = b"%s%d%s%d" % (_MEMBER_SEQ, seq0, _MEMBER_TIME, times[0])
        # a string is the same JSON text at any indent
        tail = inert(orjson.dumps(deltas[0])) + _MEMBER_END
        shared = first[len(head) + 1 : len(first) - 2 - len(tail)]  # what lies between the time and the delta
        if first[1 : len(head) + 1] == head and first.endswith(tail + b"\n]"):
            between = shared.replace(b"%", b"%%")
            form = b"%s%%d%s%%d%s%%s%s" % (_MEMBER_SEQ, _MEMBER_TIME, between, _MEMBER_END)
            # each delta's dump let go once put in (orjson hands out each in a buffer of some KiB)
            members = zip(range(seq0, seq0 + len(deltas)), times, map(orjson.dumps, deltas), strict=True)
            return inert(b",".join([form % member for member in members]))
    except orjson.JSONEncodeError:
        pass
    data = dumps_indented([row.event(j) for j in range(k, k + len(deltas))])
    return memoryview(data)[1 : len(data) - 2]


class JsonList:
    """Prints a JSON array item by item, byte for byte what ``emit(items, True, …)`` prints for the list."""

    def __init__(self) -> None:
        self.count = 0

    def add(self, item: Any) -> None:
        """Print the next item."""
        write_bytes(b"," if self.count else b"[", json_member(item))
        self.count += 1

    def extend(self, items: list[Any]) -> None:
        """Print the next items: the bytes ``add`` would print for each, in one write (orjson indents the members
        of a list as ``json_member`` indents its only one)."""
        if items:
            data = dumps_indented(items)
            write_bytes(b"," if self.count else b"[", memoryview(data)[1 : len(data) - 2])
            self.count += len(items)

    def extend_row(self, row: PackedRow) -> None:
        """``extend(row.events())``, written from the row a piece at a time (``row_members``)."""
        before = b"," if self.count else b"["
        for piece in row_members(row):
            write_bytes(before, piece)
            before = b","
        self.count += row.count

    def close(self) -> None:
        """End the array (``[]`` when nothing was added)."""
        write_text("\n]\n" if self.count else "[]\n")


def warn(message: str) -> None:
    """Write ``message`` to stderr as ``tapedeck: <message>``, a path in it that is not UTF-8 as ``path_text``
    names it; on a terminal the control characters of what it quotes from a log (a session's id, a title) are
    drawn, as ``for_terminal`` draws them on stdout."""
    line = path_text(f"tapedeck: {message}\n")
    sys.stderr.write(printable(line) if sys.stderr.isatty() else line)
    sys.stderr.flush()


def quiet_stdout() -> None:
    """Send what is left to write to stdout nowhere: whoever read it is gone, or it takes no more (a full disk), and
    the flush as the process exits would fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def fail(message: str, code: int = 2) -> int:
    """Report ``message`` on stderr (``warn``) and return the exit code."""
    warn(message)
    return code


_ENDS_AFTER = [False]  # the process ends when the command it runs does (``ends_after_command``)


def ends_after_command() -> None:
    """Say that this process ends with the command it runs (the console script, ``python -m core.cli``)."""
    _ENDS_AFTER[0] = True


def collector_off() -> AbstractContextManager[None]:
    """The cyclic GC off for the block, then back as it was (``core.log.bulk.gc_paused``). A command that reads a
    log keeps nearly all it makes until it ends, and turned back on, the collector's next passes walked all of it
    (tens of thousands of objects, 15-25 ms on a 100 MB log) to free next to nothing: in a process that ends with
    the command (``ends_after_command``) what the block made is frozen instead, out of the collector's way until
    the process exits. Anywhere else (the tests, a caller that goes on) nothing is frozen: the collector frees the
    command's garbage as it would have."""
    return gc_paused(freeze=_ENDS_AFTER[0])


def _flushed() -> bool:
    """Whether stdout took what was left to write (it works: what was written is kept)."""
    try:
        sys.stdout.flush()
    except OSError:
        return False
    return True


def guarded(handler: Callable[[Any], int | None], paused: bool = False) -> Callable[[Any], int]:
    """Wrap a subcommand handler so that tapedeck errors become a clean message and exit code 2 (or the
    error's own ``exit_code``); with ``paused`` it runs with the cyclic GC off (``collector_off``)."""

    def run(args: Any) -> int:
        try:
            if paused:
                with collector_off():
                    return handler(args) or 0
            return handler(args) or 0
        except TapedeckError as exc:
            from core.log.sessions import told  # it may list a directory: only a refusal shown needs it

            return fail(told(exc), getattr(exc, "exit_code", 2))
        except (
            BrokenPipeError
        ):  # the reader is gone (`| head`): what stdout still holds would fail again at exit
            quiet_stdout()
            return 0
        except OSError as exc:  # a full disk under stdout or -o FILE: what was written is all there is
            why = exc.strerror or exc
            if isinstance(
                exc.filename, str | bytes
            ):  # a file no message wraps (in a place this user may not look at)
                return fail(f"{quoted_path(os.fsdecode(exc.filename))}: {why}")
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO):
                raise
            if (
                exc.errno == errno.EIO and _flushed()
            ):  # a read gives EIO too, and nothing here says which it was
                return fail(f"an input/output error stopped it ({why}); a read or a write failed")
            quiet_stdout()
            return fail(f"could not write its output ({why})")

    return run
