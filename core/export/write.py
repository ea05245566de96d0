"""Writing an export: each row is written while the log is read, the gathered sections after the last one.

Memory stays flat whatever the log's size: only the small sections (header, the surface's seqs, one request's
head, cost, chart, cuts, notes) are held until the pass ends; the surface's rows and the request's messages are
read back and written one at a time. The HTML page shows those sections above the rows with CSS alone.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, suppress
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import orjson

from core.bridge.files import BRIDGE_FILE, BRIDGE_STATE_FILE, OUTCOMES_FILE, STANDBY_FILE
from core.control.host_state import STATE_FILE
from core.control.inbox import INBOX_NAME
from core.export.build import FOUND, ExportOptions, ExportPass, count_shown, in_step
from core.export.redact import KINDS, Counts
from core.export.split import split_export, splits
from core.export.spool import WRITE_CHUNK, NodeSpool, Pieces, RowChunks, replay, spool, waiting
from core.log.layout import DAMAGED, LOG_NAMES, REPAIR_SUFFIX, resolve_log_path
from core.log.writer import LOCK_NAME
from core.policies.spill import SPILL_DIR
from core.read.index import (
    CHECKPOINT_SUFFIX,
    TEMPORARY,
    checkpoint_dir,
    index_dir,
    index_path,
    is_checkpoint_of,
)
from core.read.index import SUFFIX as INDEX_SUFFIX
from core.read.notes import LOCK, SUFFIX, sidecar_paths, temporary_prefix
from core.shared.errors import TapedeckError
from core.shared.fdwrite import is_temporary, name_file, unnamed_file
from core.shared.jsonout import dumps, inert
from core.shared.text import path_text, quoted_path

FORMATS = ("html", "md", "json")


class Format(Protocol):
    """A format: what opens the document, each row as it comes, and what closes it once the pass is over."""

    messages: bool  # ``closing`` writes the request's messages (else the document has none, only their count)
    costs: bool  # ``closing`` writes each request's cost (its size and cause too), not only the sums and cuts
    late: bool  # ``opening`` shows what the pass learns (HTML's title): the rows wait in a file until it is over
    unshown: frozenset[str]  # the fields of the document's ``session`` it does not show
    problems_shown: int | None  # how many of the log's problems (``diagnostics``) it lists (None: all)

    def opening(self, doc: dict[str, Any] | None) -> bytes:
        """What goes before the first row: asked before the log is read (``doc`` None), or, when ``late``, once
        the pass is over (``doc``: the document's sections)."""
        ...

    def row(self, row: dict[str, Any]) -> bytes:
        """The bytes of one row (which it takes its ``FOUND`` out of, counting it in ``found`` where it shows it)."""
        ...

    found: list[int]  # what redacting the rows it shows replaced, by kind (``core.export.build.count_shown``)

    def closing(self, doc: dict[str, Any]) -> Iterable[bytes]:
        """What goes after the rows: the sections the pass gathered, in pieces written one at a time. The
        surface's ``nodes`` and the request's ``messages`` are read once, as they are written (a writer of
        ``messages`` gets them as its ``Pieces``); ``doc["redaction"]`` is there only once the messages were read."""
        ...

    def shown(self, doc: dict[str, Any]) -> int:
        """How many of the ``doc["rows"]`` rows the document shows (once it is closed)."""
        ...


ITEM_INDENT = b"    "  # how far the key of a list of surface rows or request messages is indented
# An item of such a list as ``OPT_INDENT_2`` writes it there, after its comma, is cut from one dump at its depth,
# ``[[[0, item]]]``: these are the bytes before the comma and after the item.
_AT_DEPTH = (len(b"[\n  [\n    [\n      0"), len(b"\n    ]\n  ]\n]"))


class JsonFormat:
    """One JSON object: ``events``, the rows in seq order, then the document's sections, with nothing a terminal acts on
    (``inert``: a log's DEL, C1 and BiDi controls and U+2028/U+2029 as ``\\u`` escapes)."""

    messages = True
    costs = True
    late = False
    unshown: frozenset[str] = frozenset()
    problems_shown = None
    joined = True  # its pieces carry the comma before them: several may come as one block

    def __init__(self) -> None:
        self.first = True
        self.found = [0] * len(KINDS)

    def opening(self, doc: dict[str, Any] | None) -> bytes:
        """The opening of ``events``."""
        return b'{"events": ['

    def row(self, row: dict[str, Any]) -> bytes:
        """A row, after a comma unless it is the first."""
        sep, self.first = (b"\n" if self.first else b",\n"), False
        if FOUND in row:
            count_shown(self.found, row.pop(FOUND))
        return sep + inert(orjson.dumps(row))

    def surface_piece(self, row: dict[str, Any]) -> bytes:
        """A surface row as ``OPT_INDENT_2`` writes it in its list, after its comma."""
        return inert(_item(row))

    def message_piece(self, message: dict[str, Any]) -> bytes:
        """A request message as ``OPT_INDENT_2`` writes it in its list, after its comma."""
        return inert(_item(message))

    def closing(self, doc: dict[str, Any]) -> Iterator[bytes]:
        """The end of ``events`` and the sections, as ``orjson.dumps(doc, option=OPT_INDENT_2)`` writes them (the
        redaction summary last), the surface's rows and the request's messages one at a time, the cost's
        requests a group at a time."""
        request = doc["request"]
        shallow = {key: value for key, value in doc.items() if key != "redaction"}
        shallow["surface"] = {**doc["surface"], "nodes": []}
        shallow["cost"] = {**doc["cost"], "requests": []}
        if request is not None:
            shallow["request"] = {**request, "messages": []}
        whole = inert(dumps(shallow, orjson.OPT_INDENT_2)[1:].lstrip())
        yield b"\n],\n"
        cut = _after(whole, b'\n    "nodes": [')  # the surface's (a key of a section is indented by four)
        yield whole[:cut]
        messages = _items(request["messages"] if request is not None else ())
        with spool() as ahead:  # messages read in step with the surface, when some are read back from the log
            if request is not None and request["messages"].read_back:
                yield from _items(in_step(doc["surface"]["nodes"], messages, ahead.write))
            else:
                yield from _items(doc["surface"]["nodes"])
            at = cut
            if request is not None:
                cut = _after(whole, b'\n    "messages": [', at)
                yield whole[at:cut]
                at = cut
                yield from replay(ahead)
                yield from messages
        cut = _after(whole, b'\n    "requests": [', at)  # the cost's (the only such key after the request's)
        yield whole[at:cut]
        yield from _items(map(inert, _groups(doc["cost"]["requests"])))
        yield whole[cut : whole.rindex(b"\n}")]  # the summary counts what the messages' redaction replaced too
        redaction = orjson.dumps(doc["redaction"], option=orjson.OPT_INDENT_2).replace(b"\n", b"\n  ")
        yield b',\n  "redaction": ' + redaction + b"\n}\n"


    @staticmethod
    def shown(doc: dict[str, Any]) -> int:
        """Every row."""
        return int(doc["rows"])


def _after(whole: bytes, opening: bytes, start: int = 0) -> int:
    """Where the empty list that ``opening`` opens (the first from ``start``) is closed in ``whole``."""
    return whole.index(opening + b"]", start) + len(opening)


def _item(value: Any) -> bytes:
    """``value`` as ``OPT_INDENT_2`` writes it as an item of a list whose key is indented by ``ITEM_INDENT``,
    after its comma."""
    return orjson.dumps([[[0, value]]], option=orjson.OPT_INDENT_2)[_AT_DEPTH[0] : -_AT_DEPTH[1]]


def _groups(values: Iterable[Any], size: int = 256) -> Iterator[bytes]:
    """The ``_item`` of each of ``values``, joined, ``size`` items at a time (one dump per group)."""
    values = iter(values)
    while group := list(islice(values, size)):
        yield orjson.dumps([[[0, *group]]], option=orjson.OPT_INDENT_2)[_AT_DEPTH[0] : -_AT_DEPTH[1]]


def _items(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """The items of a JSON list whose key is indented by ``ITEM_INDENT``, from their pieces (``_item``s, or blocks
    of them), between its brackets as ``OPT_INDENT_2`` writes them, one at a time (nothing for no item: the list
    stays ``[]``): the first without its comma."""
    first = True
    for piece in pieces:
        yield piece[1:] if first else piece
        first = False
    if not first:
        yield b"\n" + ITEM_INDENT


def make_format(
    name: str, log_name: str, at: int | None = None, cut: bool = False, filtered: bool = False,
    log_found: Counts | None = None,
) -> Format:  # fmt: skip
    """The writer of format ``name`` (``html``, ``md`` or ``json``); ``at``: the export's moment, where an HTML list
    ends when ``cut``; ``filtered``: the rows are those a filter let through (an HTML page links only to those);
    ``log_found``: what redacting ``log_name`` replaced (a writer that names the log counts it where it does)."""
    if name == "json":
        return JsonFormat()
    if name == "md":
        from core.export.markdown import MarkdownFormat

        return MarkdownFormat(log_name, at, log_found)
    if name == "html":
        from core.export.html import HtmlFormat

        return HtmlFormat(log_name, at, cut, filtered)
    raise TapedeckError(f"unknown export format {name!r}: use one of {', '.join(FORMATS)}")


def export(
    path: str | os.PathLike[str], out: BinaryIO, fmt: str, options: ExportOptions,
    beside: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Export the log at ``path`` to ``out`` in ``fmt``, the rows written as the pass reads their events (in
    chunks of about ``WRITE_CHUNK`` bytes); returns the document's sections, with ``shown``: how many of its rows
    the document shows (a Markdown transcript leaves some out), and ``toolsSeen``: the tools the log's events are
    about, gathered only when the filter names tools (``ExportPass.tools_seen``). A writer whose opening waits for the pass
    (``Format.late``) has them wait in a file in ``beside`` (else the temp directory), copied after it. A big log
    is rendered by a second process beside the pass when a second CPU is there (``core.export.split``): the same
    bytes, sooner."""
    # a writer names the log (Markdown's commands): redacted as the header's path is, counted where it is named
    name = path_text(path)
    (redacted,), found = ([name], None) if options.redactor is None else options.redactor.aside([name])

    def fresh() -> Format:
        return make_format(fmt, redacted, options.at, options.cut,
                           options.filter is not None and options.filter.active, found)  # fmt: skip

    if splits(path, options):
        doc = split_export(path, out, fresh(), options, beside)
        if doc is not None:
            return doc
    writer = fresh()
    late = writer.late
    with ExitStack() as stack:
        ahead = stack.enter_context(waiting(beside)) if late else out  # where the rows go as they come
        sink = RowChunks(writer, ahead, None if late else writer.opening(None))
        rows, messages = stack.enter_context(spool()), stack.enter_context(spool())  # the surface's nodes as read
        nodes = NodeSpool(rows, messages, writer) if isinstance(writer, Pieces) and writer.messages else None
        projector = ExportPass(path, options, sink.put, writer.messages, writer.costs, nodes, shown=lambda: writer.found,
                               unshown=writer.unshown, problems_shown=writer.problems_shown)  # fmt: skip
        doc = projector.run()
        if late:
            out.write(writer.opening(doc))
            ahead.seek(0)
            shutil.copyfileobj(ahead, out, WRITE_CHUNK)
        out.write(sink.rest())
        for data in writer.closing(doc):
            out.write(data)
    doc["shown"] = writer.shown(doc)
    doc["toolsSeen"] = projector.tools_seen
    return doc


# the files that tapedeck, its host and the DSH bridge keep in a session directory beside its log (named where each
# is written or read), none of which an export may replace
SESSION_FILES = (
    *LOG_NAMES, INBOX_NAME, STATE_FILE, LOCK_NAME, BRIDGE_FILE, BRIDGE_STATE_FILE, STANDBY_FILE, OUTCOMES_FILE
)


def _kept(real: Path, log: Path) -> str | None:
    """What the file at ``real`` (a real path) is when the session of ``log`` keeps it (None: none it keeps): a file
    of ``SESSION_FILES`` in its directory, the temporary name its writer gives one before renaming it into place (the
    host's ``.host.json.<machine>.<pid>.tmp``, the bridge's ``.bridge.json.<pid>.tmp``, a new log's
    ``session.jsonl.<random>.tmp``: an export renamed over it while its writer works would be renamed into that
    file's place), a result the host stored in ``spill/``, the log's index, or its notes sidecar's lock or the
    temporary name a note is written under (``_holds_notes`` takes the sidecar itself), or a name a repair writes
    the log under or keeps the damaged log under; in the cache, the temporary name any index is written under (the
    writer renames it into an index's place, and ``cache clear`` removes it), the log's alert checkpoints and the
    temporary name any is written under."""
    if real == Path(os.path.realpath(index_path(log))):
        return "its index"
    if real.parent == Path(os.path.realpath(index_dir())) and is_temporary(real.name, TEMPORARY, INDEX_SUFFIX):
        return "a temporary name an index is written under"
    if is_checkpoint_of(real, log):
        return "its alert checkpoint"
    if real.parent == Path(os.path.realpath(checkpoint_dir())) and is_temporary(real.name, TEMPORARY, CHECKPOINT_SUFFIX):
        return "a temporary name an alert checkpoint is written under"
    for sidecar in sidecar_paths(log):
        if real.parent == sidecar.parent and real.name == sidecar.name + LOCK:
            return "the lock its notes are written under"
        if real.parent == sidecar.parent and is_temporary(real.name, temporary_prefix(sidecar)):
            return "a temporary name its notes are written under"
    if real.parent == log.parent / SPILL_DIR:
        return f"a tool output stored in {SPILL_DIR}/"
    if real.parent != log.parent:
        return None
    if real.name == log.name + REPAIR_SUFFIX or is_temporary(real.name, f".{log.name}.", REPAIR_SUFFIX):
        return "a name a repair writes the log under"
    if real.name.startswith(log.name + DAMAGED):
        return "the damaged log a repair kept"
    if real.name in SESSION_FILES:
        return real.name
    if real.name.endswith(".tmp"):
        kept = next((name for name in SESSION_FILES if real.name.startswith((f".{name}.", f"{name}."))), None)
        if kept is not None:
            return f"a temporary name {kept} is written under"
    return None


def _holds_notes(real: Path, log: Path) -> bool:
    """Whether the file at ``real`` (a real path) is a notes sidecar of ``log``: its own, beside it or in the data
    directory, or one beside it that another session's notes were moved aside to (``<log>.<session>.notes.json``)."""
    if real in sidecar_paths(log):
        return True
    return real.parent == log.parent and real.name.startswith(log.name + ".") and real.name.endswith(SUFFIX)


def export_to_file(
    path: str | os.PathLike[str], target: str | os.PathLike[str], fmt: str, options: ExportOptions
) -> dict[str, Any]:
    """``export`` into the file ``target``, written beside it under a temporary name and renamed when complete;
    never over the log it reads. A symlink is followed (the link stays, the file it names is replaced); a device,
    FIFO or socket (``/dev/stdout``, a named pipe) is written into as it is, since nothing can take its place."""
    target = Path(target)
    real = Path(os.path.realpath(target))
    log = Path(os.path.realpath(resolve_log_path(path)))
    if real == log:
        raise TapedeckError(f"{quoted_path(target)} is the session log being exported: write the export to another file")
    if _holds_notes(real, log):
        raise TapedeckError(f"{quoted_path(target)} holds the notes of the session log being exported: write the export to "
                            "another file")  # fmt: skip
    what = _kept(real, log)
    if what is not None:
        raise TapedeckError(f"{quoted_path(target)} is a file the session keeps ({what}): write the export to another file")
    try:
        kind = os.stat(target).st_mode
    except OSError:
        kind = None
    if kind is not None and stat.S_ISDIR(kind):
        raise TapedeckError(f"{quoted_path(target)}: is a directory; name a file to write the export to")
    if kind is not None and not stat.S_ISREG(kind):
        try:
            with open(target, "wb") as out:
                return export(path, out, fmt, options)
        except OSError as exc:
            raise TapedeckError(f"{quoted_path(target)}: cannot write ({exc.strerror or exc})") from None
    tmp = real.with_name(f".{real.name}.{os.getpid()}.part")
    try:
        try:  # with no name until it is whole: an export killed meanwhile leaves nothing beside the output
            unnamed = unnamed_file(real.parent, os.O_WRONLY, 0o666)
        except OSError:  # told as the named file's making tells it, below
            unnamed = None
        try:
            made = open(tmp if unnamed is None else unnamed, "wb")  # noqa: SIM115 (closed by the with below)
        except FileNotFoundError:
            if not real.parent.is_dir():
                raise
            raise TapedeckError(  # its strerror, No such file or directory, names neither the file nor its directory
                f"{quoted_path(target)}: cannot write: the export is first written to a new file in "
                f"{quoted_path(real.parent if target.is_symlink() else target.absolute().parent)}, then renamed over it, and that "
                "directory's file system makes no new files (as /proc and /sys do not)"
            ) from None
        with made as out:
            doc = export(path, out, fmt, options, real.parent)
            if unnamed is not None:  # whole: named for the moment until it takes the output's
                out.flush()
                with suppress(FileNotFoundError):  # one an export with this pid left before
                    tmp.unlink()
                name_file(unnamed, tmp)
        os.replace(tmp, real)
    except OSError as exc:
        raise TapedeckError(f"{quoted_path(target)}: cannot write ({exc.strerror or exc})") from None
    finally:
        with suppress(OSError):  # not made (``-o FILE/x``: NotADirectoryError) or renamed: nothing to remove
            tmp.unlink()
    return doc
