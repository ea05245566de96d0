"""Prolong memory: a verbatim, greppable narrative log of the session, kept in the workspace (seed 003).

The host feeds every event to ``ProlongMemory.observe``. Durable narrative events become *sections* of
``<workspace>/<logFile>`` (default ``log.txt``); streamed chunks, ``request/header``, ``request/context`` and
``step/start``/``step/end`` are left out. Surface replacements (rewind reports, tape entries, folds, prunes) are
durable events too and get sections naming the span they replaced. Writing never blocks the agent loop: sections go through a bounded queue to a flush thread, a full queue
spills to an in-memory overflow (counted, never dropped), and ``close()`` drains everything.

File format
-----------
Sections follow each other, each being one header line, exactly ``lines`` payload lines, then one blank line::

    === seq=41 turn=3 step=2 type=tool/call tool=bash call=call_7 lines=2
    $ pytest -x tests/test_io.py
    {"command":"pytest -x tests/test_io.py"}

    === seq=43 turn=3 step=2 type=tool/result tool=bash call=call_7 status=error lines=2
    FAILED tests/test_io.py::test_read - KeyError: 'size'
    exit code 1

The header starts with ``=== `` and holds space-separated ``key=value`` fields: ``seq``, ``turn``, ``step`` and
``type`` always come first and ``lines`` always comes last; in between, depending on the event, ``tool`` and
``call`` (tool calls and results), ``status`` (``ok``/``error``) and ``code`` (the internal error code) for
results, ``from`` (the message source) for user messages, ``reason`` for ``turn/end``, ``session`` for the probe,
``replaces`` (the surface span ``S-E``) and ``by`` (the policy) for replacements.
Values never contain whitespace (it becomes ``_``); ``-`` means unknown. Payloads are verbatim: message text,
``[reasoning]`` blocks, ``[call <tool> <id>]`` markers, ``$ <command>`` plus the raw arguments of a call, the
result text, or compact JSON of the event data for other types. The first section a host writes for a session
is its write probe (``type=prolong/probe session=<id>``); the sections after it belong to that session.

Reading it back takes a few lines of Python (``parse_sections`` does exactly this; split on ``"\\n"`` only, since
payloads may hold other line breaks)::

    lines, i = text.split("\\n"), 0
    while i < len(lines):
        if lines[i].startswith("=== "):
            fields = dict(f.split("=", 1) for f in lines[i][4:].split() if "=" in f)
            n = int(fields["lines"])
            payload = "\\n".join(lines[i + 1 : i + 1 + n])
            i += n
        i += 1

A host resumed after a crash first cuts a section the kill left half written, then writes the sections of
every narrative event newer than the last one the file holds for the session (those were still queued), so
the file has one section per narrative event, no gap and no repeat (``ProlongMemory.catch_up``).

``logWindow`` N > 0 keeps the probe and the last N sections by rewriting the file from the sections this
process wrote (a restart starts the window afresh); -1 writes no file at all. The workspace is assumed to belong
to one session at a time: two live sessions sharing a workspace would interleave their sections, which ``status``
(it credits each section to the probe before it) cannot tell apart, and a windowed rewrite keeps only the writing
session's sections.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import os
import queue
import re
import stat
import sys
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.log.vocabulary import HOST_EVENT
from core.policies.prolong_config import ProlongConfig
from core.policies.report import command_of, first_line, tool_arguments
from core.read.session import Session, op_span
from core.shared import beneath
from core.shared.errors import TapedeckError
from core.shared.fdwrite import write_all
from core.shared.text import (
    js_json,
    quoted,
    quoted_path,
    shown,
    text_of_blocks,
    tool_result_block,
    tool_result_is_error,
)
from core.shared.values import int_or_none, whole_digits

log = logging.getLogger(__name__)

HEADER_MARK = "=== "
PROBE_TYPE = "prolong/probe"
SKIPPED_TYPES = frozenset({"assistant/chunk", "request/header", "request/context", "step/start", "step/end"})
QUEUE_SIZE = 1024
DENIED_ARGUMENT_CHARS = 160

WriteFn = Callable[[Path, str, bool], None]
WarnFn = Callable[[str], None]


class ProlongError(TapedeckError):
    """The prolong log cannot be located or read."""


# sections ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Section:
    """One parsed section: its header fields (strings) and its verbatim payload."""

    fields: dict[str, str]
    payload: str

    @property
    def type(self) -> str:
        """The event type (``prolong/probe`` for a write probe)."""
        return self.fields.get("type", "-")

    @property
    def seq(self) -> int | None:
        """The event seq, or None for the probe and unknown values."""
        return _number(self.fields.get("seq", "-"))


@dataclass(frozen=True, slots=True)
class SectionContext:
    """What the formatter needs beyond the event itself: the current turn/step and the tool's name."""

    turn: int | None = None
    step: int | None = None
    tool: str | None = None


def _value(value: object) -> str:
    text = "-" if value is None or value == "" else str(value)
    return re.sub(r"\s", "_", text)


def render_section(fields: Sequence[tuple[str, object]], payload: str) -> str:
    """One section's text: the header with ``lines=N`` appended, the payload, a blank line."""
    count = payload.count("\n") + 1 if payload else 0
    header = HEADER_MARK + " ".join(f"{key}={_value(value)}" for key, value in [*fields, ("lines", count)])
    return f"{header}\n{payload}\n\n" if payload else f"{header}\n\n"


def _number(field: str) -> int | None:
    """A header field's ASCII digits as a number; None for anything else (``²`` is a digit to ``isdigit``) or for
    more digits than Python converts (the file is in the workspace, where any command writes)."""
    return whole_digits(field) if field.isascii() and field.isdigit() else None


def parse_sections(text: str) -> list[Section]:
    """Parse a prolong log back into sections (lines outside sections are ignored; a torn tail is kept)."""
    sections: list[Section] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(HEADER_MARK):
            fields = dict(part.split("=", 1) for part in line[len(HEADER_MARK) :].split() if "=" in part)
            count = _number(fields.get("lines", "")) or 0
            sections.append(Section(fields, "\n".join(lines[i + 1 : i + 1 + count])))
            i += count
        i += 1
    return sections


def _blocks_text(blocks: Iterable[Any] | None) -> list[str]:
    parts = []
    for block in blocks or ():
        if not isinstance(block, Mapping):
            continue
        btype = block.get("type")
        if btype == "text":
            parts.append(str(block.get("text") or ""))
        elif btype == "reasoning":
            parts.append("[reasoning]\n" + str(block.get("text") or ""))
        elif btype == "tool-call":
            parts.append(f"[call {_value(block.get('name'))} {_value(block.get('id'))}]")
        elif btype == "tool-result":
            parts.extend(_blocks_text(block.get("content")))
        elif btype == "image":
            attachment = block.get("attachment") if isinstance(block.get("attachment"), Mapping) else {}
            name = attachment.get("name")
            parts.append(f"[image {attachment.get('mediaType', '?')}{f' {name}' if name else ''}]")
    return parts


def format_section(seq: int, event: Mapping[str, Any], context: SectionContext) -> str:
    """Format one narrative event as a section (see the module docstring for the layout)."""
    etype = str(event.get("type"))
    data = event.get("data") if isinstance(event.get("data"), Mapping) else {}
    fields: list[tuple[str, object]] = [
        ("seq", seq),
        ("turn", data.get("turn", context.turn)),
        ("step", data.get("step", context.step)),
        ("type", etype),
    ]
    if etype == "user/message":
        source = data.get("source") if isinstance(data.get("source"), Mapping) else {}
        origin = source.get("kind")
        if source.get("plugin"):
            origin = f"{origin}:{source['plugin']}"
        fields.append(("from", origin))
        payload = "\n".join(_blocks_text(data.get("content")))
    elif etype == "assistant/message":
        message = data.get("message") if isinstance(data.get("message"), Mapping) else {}
        payload = "\n".join(_blocks_text(message.get("content")))
    elif etype == "tool/call":
        arguments = data.get("arguments")
        arguments = arguments if isinstance(arguments, str) else js_json(arguments)
        fields += [("tool", data.get("name")), ("call", data.get("callId"))]
        command = command_of(tool_arguments(arguments))
        payload = f"$ {command}\n{arguments}" if command else arguments
    elif etype == "tool/result":
        message = data.get("message") if isinstance(data.get("message"), Mapping) else {}
        block = tool_result_block(message) or {}
        error = data.get("error") if isinstance(data.get("error"), Mapping) else {}
        fields += [
            ("tool", context.tool),
            ("call", block.get("toolCallId") or (message.get("source") or {}).get("callId")),
            ("status", "error" if tool_result_is_error(message) else "ok"),
        ]
        if error.get("code"):
            fields.append(("code", error["code"]))
        payload = (
            text_of_blocks(block.get("content"), "\n")
            if block
            else "\n".join(_blocks_text(message.get("content")))
        )
    elif etype == "turn/end":
        reason = data.get("reason") if isinstance(data.get("reason"), Mapping) else {}
        fields.append(("reason", reason.get("kind")))
        payload = js_json(reason) if set(reason) - {"kind"} else ""
    elif etype == "turn/start":
        payload = ""
    else:
        payload = js_json(data) if data else ""
    span = op_span(event.get("surfaceOp"))
    if span is not None:  # a replacement: a tape entry, a rewind report, a fold, a prune, an expansion
        meta = data.get("meta") if isinstance(data.get("meta"), Mapping) else {}
        fields.append(("replaces", f"{span[0]}-{span[1]}"))
        if meta.get("policy"):
            fields.append(("by", meta["policy"]))
    return render_section(fields, payload)


def probe_section(session_id: str, path: Path) -> str:
    """The write probe: the first section of a session, naming it and explaining the layout to readers."""
    note = (
        f"prolong log of session {session_id}, kept by the host at {path}.\n"
        "Every event below is one section: a '=== seq=... type=...' header line, then 'lines' lines of verbatim content."
    )
    return render_section(
        [("seq", None), ("turn", None), ("step", None), ("type", PROBE_TYPE), ("session", session_id)], note
    )


def is_narrative(event: Mapping[str, Any]) -> bool:
    """True for the durable events the log keeps: everything but chunks, request bookkeeping and steps.

    Replacements count (seed 003: every durable event is appended): a rewind report, a tape entry, a fold or
    a prune is logged with ``replaces=S-E``, the surface span it took the place of.
    """
    return event.get("type") not in SKIPPED_TYPES


def log_path(workspace: str | os.PathLike[str], config: ProlongConfig) -> Path:
    """``<workspace>/<logFile>``."""
    return Path(workspace) / config.log_file


# writing -------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def open_log(root: Path, path: Path, flags: int, *, create: bool = False) -> Iterator[tuple[int, int]]:
    """``(directory fd, file fd)`` of ``path``, opened beneath ``root`` with no symbolic link followed at any
    depth (``beneath.LinkRefused`` otherwise); ``create`` makes missing directories. Only a regular file is
    given out (a FIFO or device is refused before anything blocks on it)."""
    *dirs, name = path.relative_to(root).parts
    dir_fd = beneath.open_dir(root, dirs, create=create)
    try:
        fd = beneath.open_file(dir_fd, name, flags, 0o644)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, "not a regular file", str(path))
            yield dir_fd, fd
        finally:
            os.close(fd)
    finally:
        os.close(dir_fd)


def write_file(path: Path, text: str, replace: bool, *, root: Path | None = None) -> None:
    """Append ``text`` to ``path`` or, with ``replace``, atomically rewrite the file with it.

    The file is opened beneath ``root`` (default: its own directory) without following a symbolic link in
    any component, so a linked ``log.txt`` or a linked directory on its way never leads out of the workspace.
    """
    root = path.parent if root is None else root
    data = text.encode("utf-8", "replace")
    if not replace:
        with open_log(root, path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, create=True) as (_, fd):
            write_all(fd, data)
        return
    tmp = path.with_name(f".{path.name}.tmp")
    with open_log(root, tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, create=True) as (dir_fd, fd):
        write_all(fd, data)
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISLNK(os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
                raise beneath.LinkRefused(
                    errno.ELOOP, "a symbolic link is in the way (links are not followed)", str(path)
                )
        os.replace(tmp.name, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def intact_length(data: bytes) -> int:
    """Bytes of ``data`` up to the end of its last complete section; a torn final section is cut before its header."""
    pos = good = 0
    while True:
        nl = data.find(b"\n", pos)
        if nl < 0:
            return good
        line = data[pos:nl]
        pos = nl + 1
        count = re.search(rb" lines=(\d+)$", line) if line.startswith(HEADER_MARK.encode()) else None
        if count is None:
            good = pos  # a stray line outside any section is kept as it is
            continue
        start = nl - len(line)
        lines = whole_digits(count[1].decode())
        if lines is None:  # more lines than any file holds: torn here
            return start
        for _ in range(lines):
            nl = data.find(b"\n", pos)
            if nl < 0:
                return start
            pos = nl + 1
        if not data.startswith(b"\n", pos):
            return start
        pos = good = pos + 1


_STOP = object()


class SectionWriter:
    """The flush thread behind the log file: probe first, then sections in order, windowed if configured.

    The first failed write (the probe or any later one) marks the log unwritable, logs one warning, and stops
    all further writes for this session; the sections that could not be written are counted in ``unwritten``.
    """

    def __init__(
        self,
        path: Path,
        session_id: str,
        window: int = 0,
        *,
        write: WriteFn = write_file,
        warn: WarnFn | None = None,
        queue_size: int = QUEUE_SIZE,
    ) -> None:
        """Prepare the writer; nothing touches the disk until ``start``."""
        self.path = path
        self.session_id = session_id
        self._write = write
        self._warn = warn or log.warning
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=queue_size)
        self._overflow: deque[Any] = deque()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._window: deque[str] | None = (
            deque(maxlen=min(window, sys.maxsize)) if window > 0 else None
        )  # no deque holds more
        self._probe = probe_section(session_id, path)
        self.writable: bool | None = None
        self.sections = 0
        self.last_seq: int | None = None
        self.overflowed = 0
        self.unwritten = 0
        self.closed = False

    def start(self) -> None:
        """Start the flush thread (once); its first act is the write probe."""
        with self._lock:
            if self._thread is None and not self.closed:
                self._thread = threading.Thread(
                    target=self._run, name=f"prolong-{self.session_id}", daemon=True
                )
                self._thread.start()

    def submit(self, seq: int, event: Mapping[str, Any], context: SectionContext) -> None:
        """Queue one event for writing. Never blocks: a full queue spills to the overflow. Ignored once closed."""
        self.start()
        with self._lock:
            if not self.closed:
                self._put((seq, event, context))

    def _put(self, item: Any) -> None:
        """Enqueue under ``self._lock``; once anything waits in the overflow, later items queue behind it."""
        if not self._overflow:
            try:
                self._queue.put_nowait(item)
                return
            except queue.Full:
                pass
        self._overflow.append(item)
        if item is not _STOP:
            self.overflowed += 1

    def close(self, timeout: float | None = None) -> None:
        """Write everything still queued, then stop the thread."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            thread = self._thread
            if thread is not None:
                self._put(_STOP)
        if thread is not None:
            thread.join(timeout)

    def _take(self) -> list[Any]:
        """Wait for work, then take everything queued plus the overflow (which is always the newest)."""
        batch = [self._queue.get()]
        with self._lock:
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            batch.extend(self._overflow)
            self._overflow.clear()
        return batch

    def _run(self) -> None:
        self._attempt(self._probe, replace=self._window is not None)
        while True:
            batch = self._take()
            items = [item for item in batch if item is not _STOP]
            if items:
                self._flush(items)
            if len(items) < len(batch):
                return

    def _attempt(self, text: str, replace: bool) -> bool:
        try:
            self._write(self.path, text, replace)
        except Exception as exc:  # any failure of the host-side write means the log is not writable
            if self.writable is not False:
                self._warn(f"prolong: cannot write {self.path}: {exc}")
            self.writable = False
            return False
        self.writable = True
        return True

    def _flush(self, items: list[tuple[int, Mapping[str, Any], SectionContext]]) -> None:
        if self.writable is False:
            self.unwritten += len(items)
            return
        texts = [format_section(seq, event, context) for seq, event, context in items]
        if self._window is not None:
            self._window.extend(texts)
            ok = self._attempt(self._probe + "".join(self._window), replace=True)
            count = len(self._window)
        else:
            ok = self._attempt("".join(texts), replace=False)
            count = self.sections + len(texts)
        if ok:
            self.sections, self.last_seq = count, items[-1][0]
        else:
            self.unwritten += len(items)


# the deny counter ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeniedCall:
    """A tool call a policy refused before it ran, whose arguments referenced the log file."""

    seq: int
    call_id: str
    tool: str
    turn: int | None
    step: int | None
    arguments: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for ``--json``."""
        return {
            "seq": self.seq,
            "callId": self.call_id,
            "tool": self.tool,
            "turn": self.turn,
            "step": self.step,
            "arguments": self.arguments,
            "reason": self.reason,
        }


class DenyCounter:
    """Pairs tool calls with results and counts policy denials of calls that reference the log file.

    A denial is a ``tool/result`` whose message is ``isError`` and that has no ``data.error`` (aborts and tool
    exceptions carry one). Results pair with calls by ``callId``; a result without a known ``callId`` takes the
    oldest unpaired call of the same (turn, step). Calls still unpaired at their ``step/end`` are forgotten.
    """

    TYPES = ("tool/call", "tool/result", "step/end")  # the only events ``observe`` reacts to

    def __init__(self, log_file: str, keep: int = 20) -> None:
        """Count denials of calls whose arguments mention ``log_file`` (its base name, as a whole word)."""
        name = re.escape(Path(log_file).name)
        self._pattern = re.compile(rf"(?<![\w.-]){name}(?![\w.-])")
        self._pending: dict[tuple[int | None, int | None], OrderedDict[str, tuple[str, str]]] = {}
        self._step_of: dict[str, tuple[int | None, int | None]] = {}
        self.denied = 0
        self.recent: deque[DeniedCall] = deque(maxlen=min(keep, sys.maxsize))  # no deque holds more

    def observe(self, seq: int, event: Mapping[str, Any]) -> None:
        """Feed one event (any type)."""
        etype = event.get("type")
        data = event.get("data") if isinstance(event.get("data"), Mapping) else {}
        key = (int_or_none(data.get("turn")), int_or_none(data.get("step")))
        if etype == "tool/call":
            arguments = data.get("arguments")
            call_id = str(data.get("callId"))
            self._pending.setdefault(key, OrderedDict())[call_id] = (
                str(data.get("name")),
                arguments if isinstance(arguments, str) else js_json(arguments),
            )
            self._step_of[call_id] = key
        elif etype == "tool/result" and (event.get("surfaceOp") in (None, "append")):
            self._result(seq, data, key)
        elif etype == "step/end":
            for call_id in self._pending.pop(key, {}):
                self._step_of.pop(call_id, None)

    def _result(self, seq: int, data: Mapping[str, Any], key: tuple[int | None, int | None]) -> None:
        message = data.get("message") if isinstance(data.get("message"), Mapping) else {}
        source = message.get("source") if isinstance(message.get("source"), Mapping) else {}
        claimed = source.get("callId") or (tool_result_block(message) or {}).get("toolCallId")
        call_id = str(claimed) if claimed is not None else None
        if call_id in self._step_of:
            key = self._step_of[call_id]
        pending = self._pending.get(key)
        if not pending:
            return
        if call_id in pending:
            name, arguments = pending.pop(call_id)
        else:
            call_id, (name, arguments) = pending.popitem(last=False)
        self._step_of.pop(call_id, None)
        if not tool_result_is_error(message) or data.get("error"):
            return
        if not self._pattern.search(arguments):
            return
        self.denied += 1
        output = text_of_blocks((tool_result_block(message) or {}).get("content"), "\n")
        reason = first_line(output)
        short = (
            arguments
            if len(arguments) <= DENIED_ARGUMENT_CHARS
            else arguments[: DENIED_ARGUMENT_CHARS - 1] + "…"
        )
        self.recent.append(DeniedCall(seq, call_id, name, key[0], key[1], short, reason))


# status -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionStatus:
    """The prolong state of one session. ``writable`` is None before the probe ran (or with the log disabled)."""

    session_id: str
    path: Path
    writable: bool | None
    sections: int
    last_seq: int | None
    denied: int
    recent_denied: tuple[DeniedCall, ...] = ()
    overflowed: int = 0
    unwritten: int = 0
    note: str | None = None
    probed: bool = True  # False when no write probe ran at all (a log no tapedeck host wrote)

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for ``--json``."""
        return {
            "session": self.session_id,
            "path": str(self.path),
            "writable": self.writable,
            "sections": self.sections,
            "lastSeq": self.last_seq,
            "denied": self.denied,
            "recentDenied": [d.to_dict() for d in self.recent_denied],
            "overflowed": self.overflowed,
            "unwritten": self.unwritten,
            "note": self.note,
            "probed": self.probed,
            "hints": status_hints(self),
        }


@dataclass(frozen=True)
class StatusReport:
    """The ``/prolong status`` report: the config in force and one entry per known session."""

    config: ProlongConfig
    sessions: tuple[SessionStatus, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for ``--json``."""
        return {
            "logFile": self.config.log_file,
            "window": window_label(self.config),
            "logWindow": self.config.log_window,
            "sessions": [s.to_dict() for s in self.sessions],
        }


def window_label(config: ProlongConfig) -> str:
    """``full``, ``last N sections`` or ``disabled``."""
    if config.disabled:
        return "disabled"
    return "full" if config.log_window == 0 else f"last {config.log_window} sections"


def status_hints(status: SessionStatus) -> list[str]:
    """Which kind of restriction the numbers point at, in the seed's words ("suspect a …"), if any."""
    hints = []
    if status.writable is False:
        hints.append(
            "suspect a permission/sandbox plugin: the write probe failed, so the host itself cannot write the "
            "log file"
        )
    if status.denied:
        hints.append(
            "suspect a tools/pre-execute policy plugin: the agent's own calls touching the log were refused "
            "before they ran"
        )
    return hints


def _yes_no(status: SessionStatus, config: ProlongConfig) -> str:
    if config.disabled:
        return "disabled"
    if not status.probed:
        return "unknown (no probe ran)"
    return {True: "yes", False: "NO", None: "pending"}[status.writable]


def render_status(report: StatusReport) -> str:
    """The human-readable status report, listing every denial kept (the last ``denyKeep``) per session."""
    lines = [
        "prolong-memory status",
        f"log file: {quoted_path(report.config.log_file)} (per-session workspace)",  # the logged config's: one line
        f"window: {window_label(report.config)}",
    ]
    if not report.sessions:
        lines.append("no session observed yet")
    for status in report.sessions:
        last = "-" if status.last_seq is None else status.last_seq
        lines += [
            f"session {quoted(status.session_id)}",  # the log's words (its id, its workspace), quoted: one line each
            f"path: {quoted_path(status.path)}",
            f"writable={_yes_no(status, report.config)} sections={status.sections} lastSeq={last}",
            f"denied tool calls referencing the log: {status.denied}",
        ]
        for denied in status.recent_denied:
            reason = f" ({quoted(denied.reason, DENIED_ARGUMENT_CHARS)})" if denied.reason else ""
            call = f"{quoted(denied.tool)} {quoted(denied.call_id)}: {quoted(denied.arguments, None)}"  # cut already
            lines.append(f"  seq {denied.seq} {call}{reason}")
        if status.overflowed:
            lines.append(f"queue overflow: {status.overflowed} section(s) waited in memory")
        if status.note:
            lines.append(f"note: {status.note}")
        if status.unwritten:
            lines.append(f"not written: {status.unwritten} section(s)")
        lines += [f"hint: {hint}" for hint in status_hints(status)]
    return "\n".join(lines)


def render_status_off(config: ProlongConfig) -> str:
    """What a session whose ``prolong.registerCommand`` is false shows instead of its status report: the seed
    registers no status command then, so no report; the log file is kept as configured all the same."""
    return "\n".join(
        [
            "prolong-memory status: off for this session",
            "prolong.registerCommand is false, so the status command is not registered (tapedeck status refuses it too)",
            f"log file: {quoted_path(config.log_file)} (per-session workspace)",
            f"window: {window_label(config)}",
        ]
    )


def session_workspace(session: Session) -> Path:
    """The workspace a session's prolong log file is in: the one its newest ``tapedeck/host`` event names (a resume
    with ``--relocate`` moves a session to another, and its host keeps the log file there), else the header's
    absolute ``cwd`` (a DeepSeek Harness log); a ``ProlongError`` when neither names an absolute path."""
    events = session.events
    for seq in reversed(list(session.seqs_of((HOST_EVENT,)))):
        data = events[seq].get("data")
        workspace = data.get("workspace") if isinstance(data, Mapping) else None
        if isinstance(workspace, str) and Path(workspace).is_absolute():
            return Path(workspace)
    cwd = session.header.get("cwd")
    if isinstance(cwd, str) and Path(cwd).is_absolute():
        return Path(cwd)
    raise ProlongError(
        f"this session names no workspace: no {HOST_EVENT} event names one, and the header's cwd ({shown(cwd)}) is "
        "not an absolute path"
    )


def workspace_gone(workspace: str | os.PathLike[str], config: ProlongConfig) -> str | None:
    """Why no log file can be looked for in a session's ``workspace``: it is not a directory any more (None while
    it is, or with the log disabled). A probe cannot be judged there, nor a sandbox blamed."""
    if config.disabled or Path(workspace).is_dir():
        return None
    return (
        f"the session's workspace {quoted_path(workspace)} is not there any more (moved or removed since the "
        "session ran), so its prolong log file cannot be read"
    )


def session_status_text(session: Session, workspace: str | os.PathLike[str], config: ProlongConfig) -> str:
    """The status command's answer for a session: its report, the notice that the command is off, or that its
    workspace is gone."""
    if not config.register_command:
        return render_status_off(config)
    report = render_status(status_from_log(session, workspace, config))
    gone = workspace_gone(workspace, config)
    return report if gone is None else f"prolong-memory status: workspace gone\n{gone}"


# the host-facing object --------------------------------------------------------------------------------


class ProlongMemory:
    """Everything prolong does for one live session: the log writer, the deny counter and the status."""

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        config: ProlongConfig,
        session_id: str,
        *,
        write: WriteFn | None = None,
        warn: WarnFn | None = None,
        queue_size: int = QUEUE_SIZE,
    ) -> None:
        """Set up for ``<workspace>/<logFile>``; nothing is written before the first event."""
        self.config = config
        self.session_id = session_id
        self.root = Path(workspace)
        self.path = log_path(workspace, config)
        write = write or functools.partial(write_file, root=self.root)
        self.deny = DenyCounter(config.log_file, config.deny_keep)
        self.writer = (
            None
            if config.disabled
            else SectionWriter(
                self.path, session_id, config.log_window, write=write, warn=warn, queue_size=queue_size
            )
        )
        self._turn: int | None = None
        self._step: int | None = None
        self._tools: dict[str, str] = {}  # every call's tool by call id: a fold or prune comes steps later

    def observe(self, event: Mapping[str, Any]) -> None:
        """Feed one appended event (hot path: bookkeeping and a non-blocking enqueue only)."""
        seq = event.get("seq")
        seq = seq if isinstance(seq, int) else -1
        self.deny.observe(seq, event)
        context = self._track(event)
        if self.writer is not None:
            self.writer.start()
            if is_narrative(event):
                self.writer.submit(seq, event, context)

    def catch_up(self, events: Sequence[Mapping[str, Any]]) -> int:
        """On resume: follow the log's events and write the sections a crash kept out of the file.

        A torn final section is cut first; then every narrative event newer than the newest section this
        session has in the file is submitted (none that is already there). Returns how many were submitted.
        """
        if self.writer is None:
            return 0
        newest = self._newest_written()
        missing = 0
        for event in events:
            context = self._track(event)
            seq = event.get("seq")
            if isinstance(seq, int) and seq > newest and is_narrative(event):
                self.writer.submit(seq, event, context)
                missing += 1
        return missing

    def _newest_written(self) -> int:
        """The newest seq of this session's sections in the file, after cutting a torn final section."""
        try:
            with open_log(self.root, self.path, os.O_RDWR) as (_, fd):
                with os.fdopen(os.dup(fd), "rb") as f:
                    data = f.read()
                keep = intact_length(data)
                if keep < len(data):
                    os.ftruncate(fd, keep)
        except OSError:
            return -1  # no file (or one the writer will refuse): every section is missing
        sections = sections_by_session(parse_sections(data[:keep].decode("utf-8", "replace")))
        return max((s.seq for s in sections.get(self.session_id, []) if s.seq is not None), default=-1)

    def _track(self, event: Mapping[str, Any]) -> SectionContext:
        etype = event.get("type")
        data = event.get("data") if isinstance(event.get("data"), Mapping) else {}
        if etype == "turn/start":
            self._turn, self._step = int_or_none(data.get("turn")), None
        elif etype == "step/start":
            self._step = int_or_none(data.get("step"))
        elif etype == "step/end":
            self._step = None
        elif etype == "tool/call":
            self._tools[str(data.get("callId"))] = str(data.get("name"))
        tool = None
        if etype == "tool/result":
            message = data.get("message") if isinstance(data.get("message"), Mapping) else {}
            call_id = (
                (message.get("source") or {}).get("callId")
                if isinstance(message.get("source"), Mapping)
                else None
            )
            tool = self._tools.get(str(call_id))
        return SectionContext(self._turn, self._step, tool)

    def close(self, timeout: float | None = None) -> None:
        """Drain the queue and stop the flush thread (a clean stop loses nothing)."""
        if self.writer is not None:
            self.writer.close(timeout)

    def status(self) -> SessionStatus:
        """The live status of this session."""
        writer = self.writer
        return SessionStatus(
            self.session_id,
            self.path,
            None if writer is None else writer.writable,
            0 if writer is None else writer.sections,
            None if writer is None else writer.last_seq,
            self.deny.denied,
            tuple(self.deny.recent),
            0 if writer is None else writer.overflowed,
            0 if writer is None else writer.unwritten,
        )

    def report(self) -> StatusReport:
        """The ``/prolong status`` report for this session."""
        return StatusReport(self.config, (self.status(),))


def sections_by_session(sections: Iterable[Section]) -> dict[str, list[Section]]:
    """Group sections under the probe that precedes them (sections before any probe go under ``""``)."""
    grouped: dict[str, list[Section]] = {}
    current = ""
    for section in sections:
        if section.type == PROBE_TYPE:
            current = section.fields.get("session", "")
            grouped.setdefault(current, [])
        else:
            grouped.setdefault(current, []).append(section)
    return grouped


def _read_problem(exc: OSError) -> str:
    """Why the log file could not be opened, in words: a link refused, a directory, a file in its way."""
    if isinstance(exc, beneath.LinkRefused):
        return "a symbolic link is in its place or on its way, and links are never followed"
    if exc.errno == errno.ENOTDIR:
        return "a file stands where one of its directories should be"
    if exc.errno in (errno.EISDIR, errno.EINVAL):
        return "it is not a regular file"
    return exc.strerror or str(exc)


def status_from_log(
    session: Session, workspace: str | os.PathLike[str], config: ProlongConfig
) -> StatusReport:
    """Rebuild a session's status from its session log and the workspace log file (for ``tapedeck status``)."""
    deny = DenyCounter(config.log_file, config.deny_keep)
    for seq in session.seqs_of(DenyCounter.TYPES):  # on a huge log the type column skips the chunks undecoded
        deny.observe(seq, session.events[seq])
    path = log_path(workspace, config)
    writable: bool | None = None
    note: str | None = None
    mine: list[Section] = []
    if not config.disabled and session.next_seq:
        try:
            with open_log(Path(workspace), path, os.O_RDONLY) as (_, fd), os.fdopen(os.dup(fd), "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except FileNotFoundError:
            text = None
            note = "no log file at this path: prolong was not running for this session, or its probe failed"
        except OSError as exc:
            # A directory, a link or a file in its way: the host could not have written it there either.
            text = None
            note = (
                f"the log file cannot be read ({_read_problem(exc)}), so no section of this session is there"
            )
        grouped = sections_by_session(parse_sections(text)) if text is not None else {}
        writable = session.id in grouped
        mine = grouped.get(session.id, [])
        if text is not None and not writable:
            note = (
                "the log file holds no probe for this session (another session wrote it, or the probe failed)"
            )
    probed = True
    if writable is False and next(iter(session.seqs_of((HOST_EVENT,))), None) is None:
        probed, writable = False, None
        note = (
            "no write probe ran: no tapedeck host ran this session (DeepSeek Harness wrote its log), so this "
            "says nothing about whether the log file can be written"
        )
    seqs = [s.seq for s in mine if s.seq is not None]
    status = SessionStatus(
        session.id,
        path,
        writable,
        len(mine),
        max(seqs, default=None),
        deny.denied,
        tuple(deny.recent),
        note=note,
        probed=probed,
    )
    return StatusReport(config, (status,))


# the prompt section -------------------------------------------------------------------------------------


def prompt_section(config: ProlongConfig) -> str | None:
    """System-prompt guidance telling the model the log exists and how to search it (None when not wanted)."""
    if not config.register_prompt or config.disabled:
        return None
    name = config.log_file
    kept = (
        "It holds the whole session."
        if config.log_window == 0
        else f"It holds the most recent {config.log_window} events."
    )
    return "\n".join(
        [
            f"Session record: `{name}` in the workspace.",
            "The host appends each event of this session to that file as it happens: your messages, every tool "
            "call with its exact arguments and command line, and every tool result word for word (exit codes, "
            f"paths, error text). Compaction never shortens it. {kept}",
            "When something from earlier seems to be missing — a command you ran, an error message, a path, a "
            "number — look it up there rather than guessing or re-running work:",
            "- each entry starts with a header line such as "
            "`=== seq=41 turn=3 step=2 type=tool/result tool=bash call=call_7 status=error lines=12`, "
            "followed by that many lines of verbatim content;",
            f"- `grep -n 'type=tool/call' {name}` lists the calls and commands; "
            f"`grep -n -A 20 'status=error' {name}` shows failures with their output;",
            f"- `grep -n '^=== seq=41 ' {name}` jumps to one event; plain `grep -n 'some text' {name}` finds any detail;",
            "- for anything structured, a few lines of Python that split the file on lines starting with `=== ` "
            "and read `lines=N` payload lines after each header do the job.",
            "The host maintains the file: read it, never edit it.",
        ]
    )
