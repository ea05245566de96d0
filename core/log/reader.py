"""One-shot reading of a whole session log."""

from __future__ import annotations

import os
from dataclasses import field
from pathlib import Path
from typing import Any

from core.log.decoder import Consumer, LogDecoder
from core.log.layout import is_compressed, resolve_log_path
from core.shared.diagnostics import Diagnostic
from core.shared.errors import LogFormatError, LogIncompleteError
from core.shared.records import record
from core.shared.regular import open_regular
from core.shared.text import quoted_path

CHUNK = 1 << 20
HEADER_LIMIT = 1 << 24  # a first line or frame longer than this is no session header


@record()
class LogData:
    """A decoded log: header, events (seq == index) and every diagnostic met on the way."""

    path: Path
    compressed: bool
    header: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)  # or PackedRow items, with packed_rows
    diagnostics: list[Diagnostic] = field(default_factory=list)
    size: int = 0


def read_log(path: str | os.PathLike[str], packed_rows: bool = False) -> LogData:
    """Read a log file or session directory completely. Raises LogFormatError only when no header is usable.

    With ``packed_rows`` a packed chunk row stays one ``PackedRow`` in ``events`` (standing for its members).
    """
    p = resolve_log_path(path)
    compressed = is_compressed(p)
    decoder = LogDecoder(str(p), compressed, consumer=Consumer(packed_rows=packed_rows))
    events: list[dict[str, Any]] = []
    diagnostics: list[Diagnostic] = []
    size = 0
    try:
        with open_regular(p) as f:  # a FIFO swapped in since the stat is not waited on
            while chunk := f.read(CHUNK):
                size += len(chunk)
                batch = decoder.feed(chunk)
                events.extend(batch.events)
                diagnostics.extend(batch.diagnostics)
    except OSError as exc:
        raise LogFormatError(f"{quoted_path(p)}: cannot read ({exc.strerror or exc})") from exc
    batch = decoder.finish()
    events.extend(batch.events)
    diagnostics.extend(batch.diagnostics)
    if decoder.fatal:
        raise LogFormatError(decoder.fatal)
    if decoder.header is None:
        raise decoder.no_header(p)
    return LogData(p, compressed, decoder.header, events, diagnostics, size)


def read_log_header(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The validated header of a log file or session directory; LogFormatError says precisely why not.

    Only the first line (raw) or frame (zstd) is decoded, with the same decoder and messages as ``read_log``: the
    bytes read are fed a line or a frame at a time, up to the one that holds the header. A file that ends before
    its first line or frame does (empty, or a header still being written) raises ``LogIncompleteError``, which a
    follower waits on; a last line without its newline that is a whole header is one.
    """
    p = resolve_log_path(path)
    compressed = is_compressed(p)
    decoder = LogDecoder(str(p), compressed)
    read = 0
    head = b""
    rest = bytearray()  # bytes read and not fed yet
    torn = long = False
    try:
        with open_regular(p) as f:  # a FIFO swapped in since the stat is not waited on
            while decoder.header is None and not decoder.fatal:
                end = _unit_end(rest, compressed)
                if end:
                    decoder.feed(bytes(rest[:end]))
                    del rest[:end]
                    continue
                if read >= HEADER_LIMIT:
                    long = True  # what was read holds no whole first line or frame
                    break
                chunk = f.read(1 << 16)
                if not chunk:
                    decoder.feed(bytes(rest))
                    decoder.finish()
                    # the file ended inside its first line or frame, and what is there can still become one
                    torn = decoder.header is None and _may_grow_into_header(head, compressed)
                    break
                if len(head) < _HEAD_BYTES:
                    head += chunk[: _HEAD_BYTES - len(head)]
                read += len(chunk)
                rest += chunk
    except OSError as exc:
        raise LogFormatError(f"{quoted_path(p)}: cannot read ({exc.strerror or exc})") from exc
    if torn:
        what = "empty log" if read == 0 else "no complete first line or frame yet"
        raise LogIncompleteError(f"{quoted_path(p)}: {what} (no session header)")
    if decoder.fatal:
        raise LogFormatError(decoder.fatal)
    if long:
        what = f"its first line or frame runs past {HEADER_LIMIT >> 20} MiB, more than a session header takes"
        raise LogFormatError(f"{quoted_path(p)}: {what} (no session header)")
    if decoder.header is None:
        raise LogFormatError(f"{quoted_path(p)}: no complete first line or frame (no session header)")
    return decoder.header


_HEAD_BYTES = 4096
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _may_grow_into_header(head: bytes, compressed: bool) -> bool:
    """Whether the first bytes of a file that ends inside its first line or frame can be the start of one: a
    zstd frame's magic number, or a JSON object (only whitespace before its brace); ``\\x00\\x01`` cannot."""
    if compressed:
        return _ZSTD_MAGIC.startswith(head[:4])
    start = head.lstrip(b" \t\r\n")
    return not start or start.startswith(b"{")


def _unit_end(data: bytearray, compressed: bool) -> int:
    """How much of ``data`` (the start of what is still to be fed) to feed next: up to the end of its first line
    (raw; all of it when no line ends there: the decoder keeps a partial line, decoding none of it) or of its first
    frame (zstd; all of it when it is no frame: the decoder says why), 0 when a frame's end is not read yet."""
    if not compressed:
        return data.find(b"\n") + 1 or len(data)
    from core.log.frames import FrameError, frame_end  # a zstd log's alone: a raw one never imports it

    try:
        return frame_end(data, 0) or 0
    except FrameError:
        return len(data)


def read_header(path: Path) -> dict[str, Any] | None:
    """Only the header of a log (first line or first frame), or None when it is unreadable for any reason."""
    try:
        return read_log_header(path)
    except LogFormatError:
        return None
