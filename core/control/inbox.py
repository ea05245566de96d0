"""The control inbox: requests an operator sends to the host that runs a session.

The inbox is ``control.jsonl`` beside the session log. Each request is one JSON line
``{"id", "op", "args", "at", "queued"?, "expires"?, "origin"?, "to"?}`` (``at`` and ``expires`` in epoch milliseconds;
``queued`` marks a request meant for the next resume of a host that is not running; ``origin`` names what sent it
when it was not the operator by hand, such as ``alert:budget`` for the budget alert's action, and comes back in
the outcome; ``to``, on a request for a DSH bridge, the identity of the directory that bridge serves, so that a copy
of the directory never runs it). A sender that gives up on a request
appends ``{"withdraw": id, "at"}``. Writers append whole lines under an exclusive ``flock`` to a regular file
(never through a symlink) kept at mode 0600 (the host's reader restores it too); an exiting host holds that lock
from its last read until it has released its log, so a writer that checks the host under it is never late. The host reads new complete lines with an ``InboxReader`` and
answers each request id in the session log with ``tapedeck/control`` outcome events: at most one ``pending``
(acknowledged, applied at the next boundary), then exactly one final outcome, ``applied``, ``rejected``,
``cancelled`` (withdrawn, or sent to a host that is gone) or ``expired``. ``answered_ids`` lets a restarted host
skip requests that already have their final outcome.

Ops and their arguments (``OPS``):

- ``checkpoint`` ``{objective?}``: place a checkpoint mark at the current end of the log.
- ``rewind`` ``{markId?, preview?}``: fold everything after a checkpoint mark (default: the newest) into a
  report; ``preview`` (``{seq, nodes, chars}``, what the sender was shown) comes back in the outcome.
- ``expand`` ``{seq}``: put the original of a folded tool result back on the surface.
- ``config.set`` ``{key, value}``: change one dotted policy config key (``value`` null restores the default; a
  ``host`` key is set only at start, and a value the log cannot record, such as NaN or Infinity, is refused).
- ``pause`` / ``resume`` ``{}``: hold the host at its next safe point, and let it go on.
- ``message`` ``{text, kind?}``: ``steer`` (default) shows the model an operator message; ``note`` only logs it.
- ``stop`` ``{reason?}``: end the run now: the model stream and any running tool are interrupted.

A session run by the real DSH reads the same inbox through the bridge plugin; ``validate_request(..., kind="dsh")``
checks its variant (``message`` also takes ``mode``, ``config.set`` only the keys of ``core.bridge.ops``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import math
import os
import re
import stat
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypedDict, Unpack

import orjson

from core.bridge.files import served_dir
from core.bridge.ops import dsh_config_error
from core.control.config import check_section, is_start_only
from core.control.config_values import check_loggable
from core.control.ops import DSH_OPS, OPS, ArgSpec
from core.log.layout import resolve_log_path
from core.log.vocabulary import (  # noqa: F401  (APPLIED … UNKNOWN: the outcomes, imported from here too)
    APPLIED,
    CANCELLED,
    CONTROL_EVENT,
    EXPIRED,
    FINAL,
    MAX_ID_CHARS,
    OUTCOMES,
    PENDING,
    REJECTED,
    UNKNOWN,
)
from core.shared.clock import IMPLAUSIBLE, utc_time
from core.shared.errors import ConfigError, TapedeckError
from core.shared.fdwrite import write_all
from core.shared.fingerprint import FINGERPRINT, remembered, still_holds
from core.shared.text import js_json, json_line_problem, nearest, quoted, quoted_path, shown
from core.shared.values import MAX_SAFE_INTEGER, int_or_none

INBOX_NAME = "control.jsonl"
INBOX_MODE = 0o600
MAX_LINE_BYTES = 1 << 20
READ_BYTES = 1 << 22  # the most the host's reader takes from the inbox at once
MAX_DEPTH = (
    32  # nesting a request line may have; the log's encoder stops far below the 1,000s a hostile line holds
)
MAX_ORIGIN_CHARS = 100
LOCK_RETRY_SECONDS = 0.01
MAX_EXPIRY_SECONDS = 1e12  # far beyond any wait, and its epoch milliseconds stay an integer the log can hold
ORIGIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]*\Z")
# The id of a line that cannot be decoded (too deep, too long, a lone surrogate), read from where writers put it.
_LEADING_ID = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"id"\s*:\s*"([A-Za-z0-9._:-]{1,%d})"' % MAX_ID_CHARS)  # after an editor's byte order mark too

class ControlError(TapedeckError):
    """A control request is malformed (unknown op, wrong arguments) or the inbox cannot be written."""


def inbox_path(session_path: str | os.PathLike[str]) -> Path:
    """The inbox beside a session log (``session_path`` may be the log file, a symbolic link to it, or its session
    directory): where the host that writes the log reads it."""
    return resolve_log_path(session_path).resolve().parent / INBOX_NAME


def _arg_error(op: str, name: str, spec: ArgSpec, value: Any) -> str | None:
    if spec.kind == "string":
        if not isinstance(value, str):
            return f"{op}: {name!r} must be a string (got {shown(value)})"
        if spec.required and not value.strip():
            return f"{op}: {name!r} must not be empty"
        if spec.choices and value not in spec.choices:
            return f"{op}: {name!r} must be one of {', '.join(spec.choices)} (got {shown(value)})"
    elif spec.kind == "integer" and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        return f"{op}: {name!r} must be a non-negative integer (got {_number_given(value)})"
    return None


def _number_given(value: Any) -> str:
    """``value`` as a message names it: a number beyond 64 bits, which JSON's reader made a float, by its size
    (the float's digits are not the ones sent); a whole one written with a fraction or an exponent (``2.0``, which
    JSON writes ``2``) saying so; any other value cut as ``shown`` cuts it."""
    if isinstance(value, float) and value.is_integer():
        if abs(value) >= 2**63:
            return f"a number beyond what 64 bits hold, about {value:.0e}"
        return f"{shown(value)}, written with a fraction or an exponent"
    return shown(value)


def op_args(op: object, kind: str = "tapedeck") -> dict[str, ArgSpec]:
    """The arguments ``op`` takes on a host of ``kind`` (``tapedeck`` or ``dsh``), by name; a ControlError
    listing the valid ops when ``op`` is unknown."""
    table = DSH_OPS if kind == "dsh" else OPS
    if op is None:
        raise ControlError(f"the request names no op; valid ops: {', '.join(table)}")
    if not isinstance(op, str) or op not in table:
        near = nearest(op, table) if isinstance(op, str) else None
        hint = f" (did you mean {near}?)" if near else ""
        raise ControlError(f"unknown control op {shown(op)}{hint}; valid ops: {', '.join(table)}")
    return {s.name: s for s in table[op].args}


def validate_request(op: object, args: object, kind: str = "tapedeck") -> dict[str, Any]:
    """The checked arguments of a request for a host of ``kind``, or a ControlError naming what is wrong."""
    specs = op_args(op, kind)
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise ControlError(f"{op}: args must be a JSON object (got {shown(args)})")
    unknown = [k for k in args if k not in specs]
    if unknown:
        takes = f"it takes {', '.join(specs)}" if specs else "it takes no arguments"
        # the first by code point, not by place: JavaScript (the DSH bridge's decoder) puts keys like "0" first
        raise ControlError(f"{op}: unknown argument {shown(min(unknown))} ({takes})")
    for name, spec in specs.items():
        if name not in args:
            if spec.required:
                raise ControlError(f"{op} needs the argument {name!r} ({spec.description})")
            continue
        problem = _arg_error(op, name, spec, args[name])
        if problem:
            raise ControlError(problem)
    preview = args.get("preview") if op == "rewind" else None
    if preview is not None and (
        not isinstance(preview, Mapping)
        or set(preview) != {"seq", "nodes", "chars"}
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in preview.values())
    ):
        raise ControlError("rewind: 'preview' must be an object {seq, nodes, chars} of non-negative integers")
    if op == "config.set":
        try:
            check_loggable(args["value"], args["key"])
        except ConfigError as exc:
            raise ControlError(f"config.set: {exc}") from None
    if op == "config.set" and kind == "dsh":
        problem = dsh_config_error(args["key"], args["value"])
        if problem:
            raise ControlError(problem)
    elif op == "config.set":
        section, _, rest = args["key"].partition(".")
        try:
            check_section(section)  # the one wording of an unknown section, as `tapedeck control` says it
        except ConfigError as exc:
            raise ControlError(f"config.set: {exc}") from None
        if not rest or "" in rest.split("."):
            raise ControlError(
                f"config.set: key {shown(args['key'])} must be <section>.<key>, such as {section}.<key>"
            )
        if is_start_only(args["key"]):
            raise ControlError(
                f"config.set: {quoted(args['key'])} is set only when the host starts (its --config file); a running host "
                "keeps it"
            )
    return dict(args)


def _now_ms() -> int:
    return int(time.time() * 1000)


def origin_error(origin: object) -> str | None:
    """Why ``origin`` cannot name a request's sender (None when it can): a string of 1 to ``MAX_ORIGIN_CHARS``
    letters, digits and ``. _ : / -``, such as ``alert:budget``."""
    if not isinstance(origin, str):
        return f"'origin' must be a string (got {shown(origin)})"
    if not 0 < len(origin) <= MAX_ORIGIN_CHARS or not ORIGIN.match(origin):
        return (
            f"'origin' must be 1 to {MAX_ORIGIN_CHARS} letters, digits and . _ : / - starting with a letter or "
            f"digit (got {shown(origin, MAX_ORIGIN_CHARS)})"  # whole up to the most it may have: what is wrong shows
        )
    return None


class RequestOptions(TypedDict, total=False):
    """The options of ``make_request`` that the functions sending a request pass through to it."""

    queued: bool
    expires_in: float | None
    kind: str
    origin: str | None
    to: str | None


def make_request(
    op: str,
    args: Mapping[str, Any] | None = None,
    *,
    queued: bool = False,
    expires_in: float | None = None,
    kind: str = "tapedeck",
    origin: str | None = None,
    to: str | None = None,
) -> dict[str, Any]:
    """A validated request for a host of ``kind`` with a fresh id and the current time (``expires_in`` seconds
    from now, if given; ``origin`` naming the sender when it is not the operator by hand; ``to`` the identity of
    the session directory a DSH bridge serves, ``core.bridge.files.served_dir``, so that a copy of the directory
    never runs it)."""
    checked = validate_request(op, args, kind)
    if origin is not None and (problem := origin_error(origin)):
        raise ControlError(f"{op}: {problem}")
    now = _now_ms()
    request: dict[str, Any] = {"id": f"req-{uuid.uuid4().hex[:16]}", "op": op, "args": checked, "at": now}
    if origin is not None:
        request["origin"] = origin
    if to is not None:
        request["to"] = to
    if queued:
        request["queued"] = True
    if expires_in is not None:
        if not math.isfinite(expires_in) or not 0 < expires_in <= MAX_EXPIRY_SECONDS:
            raise ControlError(
                f"a request's expiry must be a positive number of seconds, at most {MAX_EXPIRY_SECONDS:g} "
                f"(got {expires_in:g})"
            )
        request["expires"] = now + math.ceil(expires_in * 1000)  # never at once: a sub-millisecond expiry is 1 ms
    try:
        js_json(request)
    except TypeError:
        raise ControlError(f"{op}: the arguments are not valid UTF-8 text") from None
    return request


def is_expired(request: Mapping[str, Any], now_ms: int | None = None) -> bool:
    """Whether ``request`` carries an expiry that has passed."""
    expires = request.get("expires")
    return isinstance(expires, int) and (_now_ms() if now_ms is None else now_ms) >= expires


def expiry_error(request: Mapping[str, Any]) -> str:
    """The error of an expired request's outcome."""
    when = utc_time(request["expires"]) or IMPLAUSIBLE
    return f"it expired at {when} before a host could apply it"


def _symlink_error(path: Path) -> ControlError:
    return ControlError(f"the control inbox {quoted_path(path)} is a symbolic link; refusing to follow it")


def _not_regular_error(path: Path) -> ControlError:
    return ControlError(f"the control inbox {quoted_path(path)} is not a regular file")


def _open_inbox(path: Path) -> int:
    """Open (creating) the inbox for appending: never through a symlink, always mode 0600."""
    flags = os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags | os.O_CREAT, INBOX_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _symlink_error(path) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular_error(path)
        try:
            os.fchmod(fd, INBOX_MODE)
        except OSError as exc:
            raise ControlError(
                f"cannot set mode {INBOX_MODE:04o} on the control inbox {quoted_path(path)} (it has mode "
                f"{stat.S_IMODE(mode):04o}): fchmod failed: {exc.strerror or exc}; nothing was written"
            ) from exc
    except BaseException:
        os.close(fd)
        raise
    return fd


def inbox_line(obj: Mapping[str, Any]) -> bytes:
    """``obj`` as one line of an inbox, newline included."""
    return (js_json(obj) + "\n").encode("utf-8")


def withdrawal(request_id: str) -> dict[str, Any]:
    """The line by which a sender gives up on request ``request_id``."""
    return {"withdraw": request_id, "at": _now_ms()}


def _lock(fd: int, target: Path, wait: float | None) -> None:
    """Take the inbox's exclusive ``flock``, waiting for it as long as it takes or at most ``wait`` seconds."""
    deadline = None if wait is None else time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if deadline is None else fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if deadline is None or time.monotonic() >= deadline:
                raise ControlError(f"another process held the control inbox {quoted_path(target)} locked for {wait:g} s") from None
            time.sleep(LOCK_RETRY_SECONDS)
        except OSError as exc:
            raise ControlError(f"cannot lock the control inbox {quoted_path(target)}: {exc.strerror or exc}") from exc


@contextlib.contextmanager
def locked_inbox(path: str | os.PathLike[str], wait: float | None = None) -> Iterator[int]:
    """The inbox at ``path`` open for appending (created, mode 0600) under its exclusive ``flock``: every writer
    appends under it, and a host takes it for its last read as it exits (``core.host.loop.AgentHost.close``).
    ``wait``: the most seconds to wait for another holder (a ControlError after them); None waits as needed."""
    target = Path(path)
    try:
        fd = _open_inbox(target)
    except ControlError:
        raise
    except OSError as exc:
        raise ControlError(f"cannot open the control inbox {quoted_path(target)}: {exc.strerror or exc}") from exc
    try:
        _lock(fd, target, wait)
        yield fd
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _append_line(target: Path, obj: Mapping[str, Any], check: Callable[[], None] | None = None) -> None:
    data = inbox_line(obj)
    with locked_inbox(target) as fd:
        if check is not None:
            check()
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # a torn line left by a crashed writer must not swallow this request
            write_all(fd, data)
            os.fsync(fd)
        except OSError as exc:
            raise ControlError(f"cannot write the control inbox {quoted_path(target)}: {exc.strerror or exc}") from exc


def append_request(
    path: str | os.PathLike[str],
    op: str,
    args: Mapping[str, Any] | None = None,
    *,
    check: Callable[[], None] | None = None,
    **options: Unpack[RequestOptions],
) -> dict[str, Any]:
    """Validate a request (``make_request``) and append it to the inbox file ``path`` as one line; returns the
    request. ``check``, called under the inbox's lock just before the write, refuses it by raising (nothing is
    written): a sender that checks there that the host is live never leaves a request that nobody will read, since
    an exiting host holds that lock from its last read of the inbox until it has released its log. A request for
    a DSH bridge names the directory it serves (``to``)."""
    if options.get("kind") == "dsh":
        options["to"] = served_dir(Path(path).parent)
    request = make_request(op, args, **options)
    _append_line(Path(path), request, check)
    return request


def withdraw_request(path: str | os.PathLike[str], request_id: str) -> None:
    """Withdraw a request: the host answers it ``cancelled`` unless it already has a final outcome."""
    _append_line(Path(path), withdrawal(request_id))


@dataclass(frozen=True)
class InboxEntry:
    """One line of the inbox.

    ``request`` is the request when the line has an id (so the host can answer it); ``error`` says why the
    line cannot be applied. A line with an id and an error should be answered ``rejected``; a line without
    an id (torn, not JSON) can only be reported.
    """

    line: int
    offset: int
    request: dict[str, Any] | None
    error: str | None = None
    withdraw: str | None = None  # a withdrawal line: the id of the request its sender gave up on
    digest: str = ""  # a line only reported (no request): a digest of its bytes, by which one read again is known


def _depth_exceeds(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in item)
    return False


def _leading_id(raw: bytes) -> str | None:
    match = _LEADING_ID.match(raw[: MAX_ID_CHARS + 64])
    return match.group(1).decode("ascii") if match else None


def _unreadable(line: int, offset: int, raw: bytes, problem: str) -> InboxEntry:
    """A line that cannot be decoded: rejected by id when its id is readable, else only reported."""
    request_id = _leading_id(raw)
    where = f"control inbox line {line}"
    if request_id is None:
        return InboxEntry(line, offset, None, f"{where} {problem}; skipped")
    return InboxEntry(
        line, offset, {"id": request_id, "op": None, "args": {}, "at": None}, f"{where} {problem}"
    )


def _entry(line: int, offset: int, raw: bytes) -> InboxEntry:
    where = f"control inbox line {line}"
    if len(raw) > MAX_LINE_BYTES:
        return _unreadable(line, offset, raw, InboxReader._too_long)
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return _unreadable(line, offset, raw, f"is {json_line_problem(raw, exc)}")
    if not isinstance(obj, dict):
        return InboxEntry(line, offset, None, f"{where} is not a JSON object; skipped")
    request_id = obj.get("id")
    withdrawn = obj.get("withdraw")
    if request_id is None and isinstance(withdrawn, str) and 0 < len(withdrawn) <= MAX_ID_CHARS:
        return InboxEntry(line, offset, None, withdraw=withdrawn)
    if not isinstance(request_id, str) or not request_id or len(request_id) > MAX_ID_CHARS:
        return InboxEntry(
            line, offset, None, f"{where} has no request id (a string of 1 to {MAX_ID_CHARS} chars); skipped"
        )
    op, args, at = obj.get("op"), obj.get("args"), obj.get("at")
    request = {"id": request_id, "op": op if isinstance(op, str) else None, "args": {}, "at": int_or_none(at)}
    if obj.get("queued") is True:
        request["queued"] = True
    if "at" in obj and not (request["at"] is not None and 1 <= request["at"] <= MAX_SAFE_INTEGER):
        return InboxEntry(line, offset, request, f"{where}: its 'at' is no time (epoch milliseconds after 1970)")
    expires = int_or_none(obj.get("expires"))
    if expires is not None and expires < 1:  # no deadline that passed: a line no sender of ours could write
        return InboxEntry(line, offset, request, f"{where}: its 'expires' is no time (epoch milliseconds after 1970)")
    if expires is not None:
        request["expires"] = expires
    if "origin" in obj:
        if problem := origin_error(obj["origin"]):
            return InboxEntry(line, offset, request, f"{where}: {problem}")
        request["origin"] = obj["origin"]
    if _depth_exceeds(obj, MAX_DEPTH):
        return InboxEntry(line, offset, request, f"{where} is nested deeper than {MAX_DEPTH} levels")
    try:
        request["args"] = validate_request(op, args)
    except ControlError as exc:
        return InboxEntry(line, offset, request, str(exc))
    return InboxEntry(line, offset, request)


def _known(entry: InboxEntry, raw: bytes) -> InboxEntry:
    """``entry``, read from ``raw``, with the digest of its bytes when it can only be reported."""
    if entry.request is not None or entry.error is None:
        return entry
    return replace(entry, digest=hashlib.blake2b(raw, digest_size=8).hexdigest())


_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
InboxPosition = tuple[int, int, int, str]
"""How far a reader took an inbox: its device, inode, offset and ``head_digest`` of its bytes up to there."""


def head_digest(head: bytes) -> str:
    """The digest of an inbox's first bytes (at most ``FINGERPRINT``) by which a position names its file."""
    return hashlib.blake2b(head[:FINGERPRINT], digest_size=8).hexdigest()


class InboxReader:
    """Reads an inbox incrementally: each ``read`` returns the complete lines added since the last one.

    A partial last line is kept until its newline arrives. A file that was replaced or truncated, or removed and
    made again, is read again from the start (answered ids make the replay harmless): one with another inode or
    shorter than what was read, and one that keeps both (written again in place, or made again with the inode
    number a file system handed out anew) whose first ``FINGERPRINT`` bytes, or the ``FINGERPRINT`` before where
    the reader stands, are not the ones it read there. A line longer than ``MAX_LINE_BYTES`` is reported and
    skipped.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.generation = -1  # how many times it started its file over: an offset names a line in one generation
        self._restart(None)

    @property
    def position(self) -> InboxPosition | None:
        """Where this reader stands: the inbox file's device and inode, the end offset of the last line it
        returned and the digest of the file's first bytes up to there (``head_digest``); None before it found the
        file."""
        if self._identity is None:
            return None
        return (*self._identity, self._taken, head_digest(self._head[: self._taken]))

    def continues(self, position: InboxPosition) -> bool:
        """Whether ``position`` (this reader's, or an earlier reader's as ``host.json`` kept it) is one in the file
        this reader reads: the same device and inode, and the same first bytes."""
        dev, ino, offset, digest = position
        head = min(offset, FINGERPRINT)
        return (dev, ino) == self._identity and len(self._head) >= head and head_digest(self._head[:head]) == digest

    def _restart(self, identity: tuple[int, int] | None) -> None:
        self.generation += 1
        self._identity = identity
        self._head = b""  # the first FINGERPRINT bytes read of the file
        self._tail = b""  # the last FINGERPRINT bytes read of it, up to _offset
        self._offset = 0
        self._taken = 0
        self._line = 0
        self._pending = b""
        self._pending_at = 0
        self._overlong: tuple[int, bytes] | None = None  # (offset, first bytes) of a line past the limit

    def read(self) -> list[InboxEntry]:
        """The entries of the lines completed since the previous call (none when the inbox does not exist)."""
        try:
            st = os.lstat(self.path)
            if stat.S_ISLNK(st.st_mode):
                raise _symlink_error(self.path)
            if not stat.S_ISREG(st.st_mode):  # a FIFO would hold an open until a writer came: never opened
                raise _not_regular_error(self.path)
            identity = (st.st_dev, st.st_ino)
            if stat.S_IMODE(st.st_mode) != INBOX_MODE:
                self._restore_mode(stat.S_IMODE(st.st_mode))
            if identity != self._identity or st.st_size < self._offset:
                self._restart(identity)
            if st.st_size == 0:
                return []
            entries: list[InboxEntry] = []
            fd = os.open(self.path, _READ_FLAGS)  # one swapped in since the lstat: refused by pread, never waited on
            try:
                if self._offset and not still_holds(fd, self._head, self._tail, self._offset):
                    self._restart(identity)  # written again in place: a new file where the old one's inode was
                # In pieces: what was dumped into the inbox must not grow the host's memory with its size.
                while self._offset < st.st_size:
                    data = os.pread(fd, min(READ_BYTES, st.st_size - self._offset), self._offset)
                    if not data:
                        break
                    self._head, self._tail = remembered(self._head, self._tail, data)
                    self._offset += len(data)
                    entries += self._split(data)
            finally:
                os.close(fd)
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                # The next file to take its name is read from its start, also where it gets the inode number of
                # this one (a file system hands a freed one out again at once): what it repeats is skipped by id.
                # Once, as the file goes: a missing inbox is no new file at each poll.
                if self._identity is not None:
                    self._restart(None)
                return []
            if exc.errno == errno.ELOOP:
                raise _symlink_error(self.path) from None
            raise ControlError(f"cannot read the control inbox {quoted_path(self.path)}: {exc.strerror or exc}") from exc
        return entries

    def _restore_mode(self, mode: int) -> None:
        """Put the inbox back to mode 0600 (someone widened it to ``mode``). One that cannot be (another owner's, a
        read-only mount) raises ``ControlError`` and is not read: others may write it, until it is 0600 or replaced."""
        fd = os.open(self.path, _READ_FLAGS)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise _not_regular_error(self.path)
            os.fchmod(fd, INBOX_MODE)
        except OSError as exc:
            raise ControlError(
                f"cannot restore mode 0600 of the control inbox {quoted_path(self.path)}: {exc.strerror or exc}; "
                f"it has mode {mode:04o} and is not read until it is 0600 again or replaced"
            ) from exc
        finally:
            os.close(fd)

    def _split(self, data: bytes) -> list[InboxEntry]:
        entries: list[InboxEntry] = []
        buf = self._pending + data
        base = self._pending_at  # the offset of buf's first byte
        start = 0
        while (end := buf.find(b"\n", start)) != -1:
            self._line += 1
            offset = base + start
            if self._overlong is not None:
                # The line outgrew the limit in an earlier read: answer it the way a whole read would.
                first = self._overlong[1]
                entries.append(_known(_unreadable(self._line, self._overlong[0], first, self._too_long), first))
                self._overlong = None
            elif raw := buf[start:end].strip():
                entries.append(_known(_entry(self._line, offset, raw), raw))
            start = end + 1
            self._taken = base + start
        self._pending_at += start
        self._pending = buf[start:]
        if self._overlong is None and len(self._pending) > MAX_LINE_BYTES:
            self._overlong = (self._pending_at, self._pending[: MAX_ID_CHARS + 64].lstrip())
        if self._overlong is not None:
            self._pending_at += len(self._pending)
            self._pending = b""
        return entries

    _too_long = f"is longer than {MAX_LINE_BYTES} bytes"


def outcome_event(
    request: Mapping[str, Any], outcome: str, error: str | None = None, detail: Any = None
) -> dict[str, Any]:
    """The planned ``tapedeck/control`` event that answers ``request``."""
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)} (got {outcome!r})")
    data: dict[str, Any] = {"requestId": request["id"], "op": request.get("op"), "outcome": outcome}
    if isinstance(request.get("origin"), str):
        data["origin"] = request["origin"]
    if error is not None:
        data["error"] = error
    if detail is not None:
        data["detail"] = detail
    return {"type": CONTROL_EVENT, "data": data, "ignorable": True}


def _ids_with(events: Iterable[Mapping[str, Any]], outcomes: tuple[str, ...]) -> set[str]:
    out = set()
    for e in events:
        if e.get("type") != CONTROL_EVENT:
            continue
        data = e.get("data")
        if isinstance(data, Mapping) and data.get("outcome") in outcomes and isinstance(data.get("requestId"), str):
            out.add(data["requestId"])
    return out


def final_outcome_in(lines: bytes, request_id: str) -> dict[str, Any] | None:
    """The data of the final ``tapedeck/control`` outcome of ``request_id`` among raw JSONL ``lines`` (a stretch of
    a session log; a line cut at either end is skipped), or None when they hold none."""
    needle = orjson.dumps(request_id)
    for line in lines.split(b"\n"):
        if needle not in line or CONTROL_EVENT.encode() not in line:
            continue
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(event, dict) and request_id in _ids_with([event], FINAL):
            return event["data"]
    return None


def answered_ids(events: Iterable[Mapping[str, Any]]) -> set[str]:
    """Ids of the requests that already have their final outcome in ``events``."""
    return _ids_with(events, FINAL)


def acknowledged_ids(events: Iterable[Mapping[str, Any]]) -> set[str]:
    """Ids of the requests acknowledged ``pending`` in ``events`` (final or not)."""
    return _ids_with(events, (PENDING,))
