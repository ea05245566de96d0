"""A big log's export in two processes: the pass projects the log in this one while a second one, forked once the
imports are done, renders the event-list rows (redaction, summaries, the writer's bytes) and the surface nodes'
pieces from what the pass sends it of each event, in order. The bytes are those of the export in one process.

The pass sends each event (the bytes of its line, when it has them) with what only the projection knows of it at
that moment (``Facts``) and each stream's row as it made it; the renderer writes the rows to a file of its own and, once the pipe closes, sends back what
the sections need of its work (counts, marks, the title, what redacting the nodes replaced, its writer's state:
what redacting the rows it shows replaced among it).
Nothing reaches the output before the renderer has finished and its count of rows is the pass's: a renderer that
dies, stops taking events for ``WAIT`` seconds, or reports a wrong count is killed and the export is done again
in this process (slower, the same bytes). ``TAPEDECK_EXPORT_JOBS=1`` keeps every export in one process.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import select
import shutil
import signal
import struct
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import replace
from threading import active_count
from typing import Any, BinaryIO

import orjson

from core.export.build import ExportOptions, ExportPass, result_call
from core.export.spool import WRITE_CHUNK, NodeSpool, Pieces, RowChunks, Spool, waiting
from core.log.layout import resolve_log_path
from core.read.notes import readable_notes
from core.read.session import Session, ToolCall
from core.rebuild.cost import CostTally
from core.shared.errors import TapedeckError

SPLIT_BYTES = 16 << 20  # a log at least this big is rendered in a second process (when a second CPU is there)
BUSY = 0.5  # a machine whose load average is within this of its CPUs has no core to spare (``splits``)
WAIT = 30.0  # seconds the pass waits for a renderer that takes nothing before it gives up on it
BATCH = 1 << 16  # bytes of events (about) the pass sends at a time
PIPE_BYTES = 1 << 20  # what the pipe holds (Linux's most for anyone, ``/proc/sys/fs/pipe-max-size``)
_LENGTH = struct.Struct("<Q")


def splits(path: str | os.PathLike[str], options: ExportOptions) -> bool:
    """Whether the export of ``path`` with ``options`` is rendered in a second process: ``TAPEDECK_EXPORT_JOBS``
    says so (``1``: never; ``2`` or more: always, whatever the log), else a log of at least ``SPLIT_BYTES`` on a machine
    that gives this process two CPUs and is not busy (the last minute's load average below their number less
    ``BUSY``: on a busy one the two processes share a core and take longer, at more CPU). An export at a moment (``--at``) or through a filter stays in one process,
    and so does one from a process that runs other threads (the TUI's worker), which a fork would leave half-copied."""
    if options.at is not None or (options.filter is not None and options.filter.active) or not hasattr(os, "fork"):
        return False
    if active_count() > 1:
        return False
    jobs = os.environ.get("TAPEDECK_EXPORT_JOBS", "").strip().lstrip("0")
    if jobs.isascii() and jobs.isdigit():  # a count above 0, read as written (int() takes at most 4,300 digits)
        return jobs != "1"
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1  # Linux's
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load to judge by: one process, as on a busy machine
        return False
    if cpus < 2 or load > cpus - BUSY:  # as ``make -l``: no second process on a busy machine
        return False
    try:
        return os.path.getsize(resolve_log_path(path)) >= SPLIT_BYTES
    except OSError:
        return False


# what the pass knows of an event when it is applied: on the surface, its call (a tool result's), what it
# shadowed, whether a cut came before, its turn, whether it is a replacement, its node's characters
Facts = tuple[bool, ToolCall | None, list[int] | None, bool, int, bool, int]


class _Seen:
    """The session as ``ExportPass._event`` asks it about one event, answered from the pass's ``Facts``."""

    def __init__(self) -> None:
        self.shadowed: dict[int, list[int]] = {}
        self.next_seq = 0
        self.facts: Facts = (False, None, None, False, 0, False, 0)

    def take(self, seq: int, facts: Facts) -> None:
        """Answer for the event ``seq``."""
        self.facts, self.next_seq = facts, seq + 1
        self.shadowed = {seq: facts[2]} if facts[2] is not None else {}

    @property
    def cuts(self) -> bool:
        return self.facts[3]

    def on_surface(self, seq: int) -> bool:
        return self.facts[0]

    def tool_call_at(self, turn: int, step: int, call_id: str) -> ToolCall | None:
        return self.facts[1]

    def turn_of(self, seq: int) -> int:
        return self.facts[4]

    def is_replacement(self, seq: int) -> bool:
        return self.facts[5]

    def node_chars(self, seq: int) -> int:
        return self.facts[6]


class _Lost(Exception):
    """The renderer died, stopped taking events or gave a wrong account: the export is done in one process."""


class _Renderer:
    """The forked renderer, seen from the pass: a pipe to send it events, its process."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd = fd
        os.set_blocking(fd, False)
        self.ready = select.poll()
        self.ready.register(fd, select.POLLOUT)
        self.held: list[bytes] = []
        self.size = 0
        self.sent = 0  # rows sent

    def send(self, item: Any) -> None:
        """Send ``item`` (a row, or an event and its facts), in batches of about ``BATCH`` bytes."""
        data = pickle.dumps(item, protocol=5)
        self.held += (_LENGTH.pack(len(data)), data)
        self.sent += 1
        self.size += len(data)
        if self.size >= BATCH:
            self.flush()

    def flush(self) -> None:
        """Send what is held."""
        if not self.held:
            return
        view = memoryview(b"".join(self.held))
        self.held.clear()
        self.size = 0
        while view:
            if not self.ready.poll(WAIT * 1000):
                raise _Lost("the renderer took nothing")
            try:
                view = view[os.write(self.fd, view) :]
            except BrokenPipeError:
                raise _Lost("the renderer is gone") from None

    def finish(self) -> None:
        """Close the pipe and wait (at most ``WAIT`` seconds) for the renderer to end well."""
        self.flush()
        os.close(self.fd)
        self.fd = -1
        deadline, pause = time.monotonic() + WAIT, 0.001
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.pid = 0
                if os.waitstatus_to_exitcode(status) != 0:
                    raise _Lost("the renderer failed")
                return
            if time.monotonic() > deadline:
                raise _Lost("the renderer did not finish")
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def end(self) -> None:
        """Kill the renderer if it still runs, and reap it."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self.pid:
            with suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.pid = 0


class _Projector(ExportPass):
    """The pass, which sends each row's event to the renderer (``renderer``) instead of rendering it, and takes
    the renderer's account (``account``) before it gathers the sections."""

    makes_nodes = False  # the renderer makes them (and their wire messages: sending them costs more, see README)
    renderer: _Renderer
    account: BinaryIO  # where the renderer leaves its account
    writer: Any  # the writer, which takes the state of the renderer's

    def _event(self, session: Session, event: dict[str, Any], seq: int, raw: bytes | None = None) -> None:
        surface = session.on_surface(seq)
        facts = (surface, result_call(session, event), session.shadowed.get(seq), bool(session.cuts),
                 session.turn_of(seq), surface and session.is_replacement(seq), session.node_chars(seq) if surface else 0)  # fmt: skip
        self.renderer.send((seq, event if raw is None else None, raw, facts))  # its line makes it again there

    def _emit(self, row: dict[str, Any]) -> None:
        self.renderer.send(row)

    def _document(self, session: Session, tally: CostTally) -> dict[str, Any]:
        self.renderer.finish()
        self.account.seek(0)
        try:
            made = pickle.load(self.account)
        except Exception:
            raise _Lost("no account from the renderer") from None
        if made["count"] != self.renderer.sent:
            raise _Lost("the renderer's count of rows is wrong")
        self.count = made["count"]
        self._found, self._marks, self._title = made["found"], made["marks"], made["title"]
        self._anchors.update(made["anchors"])
        redactor = self.options.redactor
        if redactor is not None:
            redactor.add(made["counts"])
        if self.nodes is not None:
            self.nodes.where, self.nodes.found = made["where"], made["nodes_found"]
            self.nodes.rows.size, self.nodes.messages.size = made["sizes"]
        vars(self.writer).update(made["writer"])
        return super()._document(session, tally)


def split_export(
    path: str | os.PathLike[str], out: BinaryIO, writer: Any, options: ExportOptions,
    beside: str | os.PathLike[str] | None = None,
) -> dict[str, Any] | None:  # fmt: skip
    """``core.export.write.export`` with a renderer process beside the pass (``writer``: a fresh writer of the
    format); None when the renderer failed, with nothing written: it is to be done in one process. An export that
    fails raises its error, as in one process: done again, it would read anew a log another program cut or replaced
    while the pass read it, and export what is left of it."""
    if options.filter is not None:  # an inactive filter (``splits``), dropped as the pass drops it
        options = replace(options, filter=None)
    with ExitStack() as stack:
        rows = stack.enter_context(waiting(beside))  # the renderer's rows
        account = stack.enter_context(waiting())
        keeps = isinstance(writer, Pieces) and writer.messages
        nodes = NodeSpool(Spool(stack.enter_context(waiting())), Spool(stack.enter_context(waiting())), writer) if keeps else None  # fmt: skip
        notes, problem = readable_notes(path)
        opening = None if writer.late else writer.opening(None)
        projector = _Projector(path, options, _no_row, writer.messages, writer.costs, nodes, notes,
                               unshown=writer.unshown, problems_shown=writer.problems_shown,
                               shown=lambda: writer.found)  # fmt: skip
        projector.account, projector.writer, projector.notes_unread = account, writer, problem is not None
        try:
            with _forked(lambda fd: _render(fd, rows, account, writer, projector)) as renderer:
                projector.renderer = renderer
                doc = projector.run()
        # the export's own failure, as in one process (done again, it would read anew a log another program cut)
        except TapedeckError:
            raise
        except Exception:  # no fork, or a renderer lost (``_Lost``): done again in one process
            return None
        out.write(writer.opening(doc) if opening is None else opening)
        rows.seek(0)
        shutil.copyfileobj(rows, out, WRITE_CHUNK)
        for data in writer.closing(doc):
            out.write(data)
    doc["shown"] = writer.shown(doc)
    doc["toolsSeen"] = projector.tools_seen  # none: a filter that names tools is never split
    return doc


def _no_row(row: dict[str, Any]) -> None:
    """The pass hands out no row: the renderer's sink takes them."""


@contextmanager
def _forked(child: Any) -> Iterator[_Renderer]:
    """A renderer forked to run ``child(fd)`` (``fd``: the pipe's end it reads) and leave with its status; killed
    and reaped however the block ends, unless it ended and was reaped before."""
    read, write = os.pipe()
    if hasattr(fcntl, "F_SETPIPE_SZ"):  # Linux's
        with suppress(OSError):  # room for several batches: the pass goes on while the renderer is behind
            fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        raise
    if pid == 0:  # the renderer: nothing of the parent's (its atexit, its buffered output) runs or is flushed here
        code = 1
        try:
            os.close(write)
            child(read)
            code = 0
        finally:
            os._exit(code)
    os.close(read)
    renderer = _Renderer(pid, write)
    try:
        yield renderer
    finally:
        renderer.end()


def _render(fd: int, rows: BinaryIO, account: BinaryIO, writer: Any, model: _Projector) -> None:
    """The renderer: each row the pass sends, or its event's row made as ``ExportPass._event`` makes it, to
    ``writer`` into ``rows``; then its account."""
    sink = RowChunks(writer, rows)
    made = ExportPass(model.path, model.options, sink.put, model.messages, model.costs, model.nodes, model.notes)
    made._noted = sorted(model.notes or ())
    seen = _Seen()
    session: Any = seen
    redactor = made.options.redactor
    before = redactor.tally() if redactor is not None else ()
    with os.fdopen(fd, "rb") as pipe:
        while head := pipe.read(_LENGTH.size):
            item = pickle.loads(pipe.read(_LENGTH.unpack(head)[0]))
            if item.__class__ is dict:
                made._emit(item)
            else:
                seq, event, raw, facts = item
                if event is None:  # the line as parsed, numbered as the decoder numbers it (``ParsedObserver``)
                    event = orjson.loads(raw)
                    event["seq"] = seq
                    if event.get("time") is None:
                        event["time"] = 0
                seen.take(seq, facts)
                made._event(session, event, seq, raw)
    rows.write(sink.rest())
    rows.flush()
    nodes = made.nodes
    if nodes is not None:
        for kept in (nodes.rows, nodes.messages):
            kept.spooled.flush()
            kept.spooled.f.flush()
    pickle.dump({
        "count": made.count, "found": made._found, "marks": made._marks, "title": made._title,
        "anchors": made._anchors, "counts": tuple(n - b for n, b in zip(redactor.tally(), before, strict=True)) if redactor is not None else None,
        "where": nodes.where if nodes is not None else None, "nodes_found": nodes.found if nodes is not None else None,
        "sizes": (nodes.rows.size, nodes.messages.size) if nodes is not None else None, "writer": vars(writer),
    }, account, protocol=5)  # fmt: skip
    account.flush()
