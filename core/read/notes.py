"""Notes on events: an operator's remarks anchored to seqs, kept in a sidecar file, never in the log.

The sidecar is ``<log file>.notes.json`` beside the log when its directory is writable. A log in a directory
tapedeck cannot write to (a read-only DSH home, another user's sessions) gets its sidecar in tapedeck's data
directory instead (``$TAPEDECK_HOME/notes`` or ``$XDG_DATA_HOME/tapedeck/notes``), named for the log's identity:
its session id and a hash of its resolved path. Readers look beside the log first.

Notes follow their session when its log is moved or renamed: each sidecar records the session it is for (its
header's id and a hash of the whole header, ``session_key``: a copy, a compressed copy or the log at another path
is the same session), and a writer leaves in the data directory (``sessions/<key>``) the path of the sidecar it
wrote last for that session. A log with no sidecar of its own reads the notes that one names, when it is for the
same session; its first note gives it a sidecar of its own that starts from them (the old one is removed when its
log is gone: the notes moved with it; kept when that log is still there: two copies each keep their own notes).
A sidecar at a log's place that records another session (the log was replaced by another session's) is not the
log's: its notes are not shown (``Found.notice`` says where they are), and the log's first note moves it aside,
to ``<log>.<its session>.notes.json`` beside it, which its session's pointer then names, so no note is lost.

The file is one JSON object: ``{"version": 1, "session": <key>, "notes": {"<seq>": {"text": …, "time": <ms>}}}``
(``session`` is absent from older sidecars, which read as before). Writers take an exclusive ``flock`` on a lock
file next to it, read, change and write a temporary file that replaces the sidecar atomically, so concurrent
writers never lose each other's notes and readers never see half a file. Anything else in the file is refused
with a message that names the file and what is wrong.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import io
import itertools
import json
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import orjson

from core.log.layout import resolve_log_path
from core.log.reader import read_header
from core.log.validate import kind_of
from core.shared.envdirs import own_dir, xdg_dir
from core.shared.errors import TapedeckError
from core.shared.fdwrite import replace_file
from core.shared.regular import open_regular
from core.shared.text import quoted, quoted_path, shown
from core.shared.values import whole_digits

SUFFIX = ".notes.json"
LOCK = ".lock"  # after a sidecar's name: the file its writers lock
VERSION = 1
MAX_TEXT = 20_000  # code points of one note


class NotesError(TapedeckError):
    """A sidecar that cannot be read or written, with the reason."""


@dataclass(frozen=True, slots=True)
class Note:
    """One note: the event it is anchored to, its text and when it was last written (ms since the epoch)."""

    seq: int
    text: str
    time: int

    def to_dict(self) -> dict[str, object]:
        """The ``notes --json`` object."""
        return {"seq": self.seq, "text": self.text, "time": self.time}


def data_dir() -> Path:
    """Where notes of logs in unwritable directories go."""
    home = own_dir("TAPEDECK_HOME")
    return home / "notes" if home else xdg_dir("XDG_DATA_HOME", Path.home() / ".local" / "share") / "tapedeck" / "notes"


def _safe_id(header: dict[str, object], limit: int = 80) -> str:
    sid = header.get("id") if isinstance(header.get("id"), str) else "log"
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in sid)[:limit] or "log"  # type: ignore[union-attr]


def _identity(log: Path) -> str:
    digest = hashlib.sha256(os.fsencode(log.resolve())).hexdigest()[:16]  # a path's bytes, UTF-8 or not
    return f"{_safe_id(read_header(log) or {})}-{digest}{SUFFIX}"


def session_key(path: str | os.PathLike[str]) -> str | None:
    """The session a log holds, wherever it lies: its header's id and a hash of the whole header (two sessions may
    share an id, as logs made from one template do); None for a log without a readable header."""
    header = read_header(Path(resolve_log_path(path)))
    if not header:
        return None
    check = hashlib.sha256(json.dumps(header, sort_keys=True).encode()).hexdigest()[:16]
    return f"{_safe_id(header)}-{check}"


def _pointer(key: str) -> Path:
    """Where the path of the sidecar last written for session ``key`` is kept."""
    return data_dir() / "sessions" / key


def temporary_prefix(sidecar: Path) -> str:
    """What the temporary name a note is written under before it replaces ``sidecar`` starts with."""
    return sidecar.name + "."


def sidecar_paths(path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """The sidecar beside the log and the one in the data directory, for a log file or session directory; a
    symbolic link to the log stands for the log it names, so every path to one log finds the same notes."""
    log = Path(os.path.realpath(resolve_log_path(path)))
    return log.with_name(log.name + SUFFIX), data_dir() / _identity(log)


@dataclass(frozen=True, slots=True)
class Found:
    """Where the notes of a log are: ``sidecar`` holds them (None: it has none), its own (at its place) or, when
    ``own`` is false, the one last written for its session at another path; ``other``, a sidecar at the log's place
    that records another session (the log was replaced), whose notes are not this log's."""

    sidecar: Path | None
    own: bool
    other: Path | None
    data: bytes = b""  # the bytes ``sidecar`` held when it was found

    def notes(self) -> dict[int, Note]:
        """The notes ``sidecar`` held, by seq ({} when there is none)."""
        return {} if self.sidecar is None else parse_notes(self.data, quoted_path(self.sidecar))

    @property
    def notice(self) -> str | None:
        """One line on notes shown from elsewhere or not shown at all; None when the log's own are shown."""
        if self.other is not None:
            return (f"{quoted_path(self.other)} holds the notes of another session, not this log's (the log was replaced): "
                    "not shown, and kept; this log's first note moves them aside, to a file named for their session")  # fmt: skip
        if self.sidecar is not None and not self.own:
            return (f"these notes are in {quoted_path(self.sidecar)}, written for this session at another path (a log moved or "
                    "copied); the next note gives this log its own")  # fmt: skip
        return None


def find_sidecar(path: str | os.PathLike[str]) -> Found:
    """The sidecar that holds the log's notes: its own (beside it, else in the data directory), else the one last
    written for its session (a log moved or renamed away from its sidecar, or replaced by its session's log)."""
    key = session_key(path)
    other = None
    for place in sidecar_paths(path):
        if place.exists():
            data = _read_sidecar(place)
            recorded = _recorded(data)
            if recorded is None or key is None or recorded == key:  # an older sidecar records none: taken as is
                return Found(place, True, None, data)
            other = other or place
    followed = _followed(key)
    if followed is None:
        return Found(None, False, other)
    sidecar, data = followed
    return Found(sidecar, False, other, data)


def sidecar_for_writing(path: str | os.PathLike[str], found: Found) -> Path:
    """The sidecar a write goes to: the log's own, else the one at its place holding another session's notes
    (moved aside first), else beside the log when its directory is writable."""
    if found.own:
        return found.sidecar  # type: ignore[return-value]
    if found.other is not None:
        return found.other
    beside, kept = sidecar_paths(path)
    return beside if os.access(beside.parent, os.W_OK) else kept


def _followed(key: str | None) -> tuple[Path, bytes] | None:
    """The sidecar last written for session ``key`` and its bytes, when it still is that session's."""
    if key is None:
        return None
    try:
        sidecar = Path(os.fsdecode(_pointer(key).read_bytes()))
        data = _read_sidecar(sidecar)
    except (OSError, ValueError, NotesError):
        return None
    return (sidecar, data) if _recorded(data) == key else None


def _recorded(data: bytes) -> str | None:
    """The session a sidecar's bytes say they are for (None: none, or not a sidecar)."""
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    session = doc.get("session") if isinstance(doc, dict) else None
    return session if isinstance(session, str) else None


def parse_notes(data: bytes, where: str) -> dict[int, Note]:
    """The notes of a sidecar's bytes (``where``: the sidecar as a message names it); NotesError says what is wrong
    with anything else."""
    if not data.strip():
        return {}
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise NotesError(f"{where}: not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise NotesError(f"{where}: expected an object with a 'notes' object, found {kind_of(doc)}")
    if doc.get("version", VERSION) != VERSION:
        raise NotesError(
            f"{where}: unknown notes version {shown(doc.get('version'))} (this tapedeck reads {VERSION})"
        )
    entries = doc.get("notes", {})
    if not isinstance(entries, dict):
        raise NotesError(f"{where}: 'notes' must be an object keyed by seq, found {kind_of(entries)}")
    out: dict[int, Note] = {}
    for key, entry in entries.items():
        seq = whole_digits(key) if key.isascii() and key.isdigit() else None  # None: more digits than int() takes
        if seq is None:
            raise NotesError(f"{where}: note key '{quoted(key)}' is not a seq (a non-negative integer)")
        if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
            raise NotesError(f"{where}: note at seq {key} has no text string")
        stamp = entry.get("time")
        if not isinstance(stamp, int) or isinstance(stamp, bool):
            stamp = 0
        out[seq] = Note(seq, entry["text"], stamp)
    return out


def _read_sidecar(sidecar: Path) -> bytes:
    """The bytes of ``sidecar`` when it is a regular file, not through a symbolic link (a FIFO would wait for a
    writer for ever); NotesError otherwise."""
    try:
        with open_regular(sidecar, follow=False) as f:
            return f.read()
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ELOOP):  # no regular file; a symbolic link (O_NOFOLLOW)
            raise NotesError(f"{quoted_path(sidecar)}: not a regular file; notes are kept in one, so this is not read") from None
        raise NotesError(f"{quoted_path(sidecar)}: cannot read ({exc.strerror or exc})") from None


def load_notes(path: str | os.PathLike[str]) -> dict[int, Note]:
    """Every note of the log at ``path`` by seq ({} when it has none)."""
    return find_sidecar(path).notes()


def readable_notes(path: str | os.PathLike[str]) -> tuple[dict[int, Note], str | None]:
    """``load_notes``, or none and what is wrong with their sidecar (an export goes on without them)."""
    try:
        return load_notes(path), None
    except NotesError as exc:
        return {}, str(exc)


def _dump(notes: dict[int, Note], key: str | None) -> bytes:
    entries = {str(seq): {"text": n.text, "time": n.time} for seq, n in sorted(notes.items())}
    doc = {"version": VERSION, **({"session": key} if key is not None else {}), "notes": entries}
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


class Written(NamedTuple):
    """What ``set_note`` wrote: the sidecar, where the notes of another session it held before went (None: it held
    none), and whether a note was at the seq before (read under the writers' lock: added or replaced)."""

    sidecar: Path
    kept: Path | None
    replaced: bool


def set_note(path: str | os.PathLike[str], seq: int, text: str) -> Written:
    """Add or replace the note at ``seq`` (empty or blank ``text`` removes it).

    Only the form of ``seq`` is checked here; the CLI checks that the log has such an event."""
    if seq < 0:
        raise NotesError(f"seq {seq} is not an event: seqs start at 0")
    if len(text) > MAX_TEXT:
        raise NotesError(f"a note holds at most {MAX_TEXT} characters (this one has {len(text)})")
    sidecar = sidecar_for_writing(path, find_sidecar(path))
    key = session_key(path)
    kept = None
    try:
        sidecar.parent.mkdir(parents=True, exist_ok=True)
        with _open_lock(sidecar.with_name(sidecar.name + LOCK)) as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            found = find_sidecar(path)  # again, now that no other writer changes it
            if found.other == sidecar:  # another session's notes: kept whole, under a name of their own
                kept = _set_aside(sidecar)
            moved = None if found.own else found.sidecar  # the notes a moved log left behind
            notes = found.notes()
            replaced = seq in notes
            if text.strip():
                notes[seq] = Note(seq, text, int(time.time() * 1000))
            else:
                notes.pop(seq, None)
            replace_file(sidecar, _dump(notes, key), prefix=temporary_prefix(sidecar), sync=True)
    except OSError as exc:
        raise NotesError(f"{quoted_path(sidecar)}: cannot write ({exc.strerror or exc})") from None
    if key is not None:
        _leave_pointer(key, sidecar, moved)
    return Written(sidecar, kept, replaced)


def _open_lock(lock: Path) -> io.BufferedRandom:
    """The writers' lock file ``lock``, created when missing; never through a symbolic link (it would create or
    open the link's target, a file anywhere) nor anything but a regular file: NotesError then."""
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotesError(f"{quoted_path(lock)}: a symbolic link, not the notes' lock file; it is not followed (remove it)") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotesError(f"{quoted_path(lock)}: not a regular file, so not the notes' lock file (remove it)")
    return open(fd, "r+b")


def _set_aside(sidecar: Path) -> Path:
    """Move ``sidecar``, which holds another session's notes, to a free name beside it that names that session
    (``<log>.<session>.notes.json``), and point that session at it, when it pointed at ``sidecar``."""
    recorded = _recorded(_read_sidecar(sidecar))
    # the file's words, as a name: no path, no NUL, not too long (a key ``session_key`` makes is left as it is)
    session = _safe_id({"id": recorded}, 120) if recorded else "other"
    stem = sidecar.name[: -len(SUFFIX)]
    names = (f"{stem}.{session}{'' if n == 0 else f'-{n}'}{SUFFIX}" for n in itertools.count())
    kept = next(sidecar.with_name(name) for name in names if not os.path.lexists(sidecar.with_name(name)))
    os.rename(sidecar, kept)
    if session == recorded:  # a key as ``session_key`` makes one (no session has another: none points at it)
        with contextlib.suppress(OSError):  # best effort: the notes are kept already
            pointer = _pointer(session)
            if pointer.read_bytes() == os.fsencode(sidecar.resolve()):
                replace_file(pointer, os.fsencode(kept.resolve()), prefix=pointer.name + ".")
    return kept


def _leave_pointer(key: str, sidecar: Path, moved: Path | None) -> None:
    """Name ``sidecar`` as the one last written for session ``key``; remove ``moved``, the sidecar its notes came
    from, when the log beside it is gone (they moved with the log). Best effort: the notes are written already."""
    try:
        pointer = _pointer(key)
        pointer.parent.mkdir(parents=True, exist_ok=True)
        replace_file(pointer, os.fsencode(sidecar.resolve()), prefix=pointer.name + ".")
        # a sidecar in the data directory is named for no log: whether its log is gone cannot be told
        if (
            moved is not None
            and moved.parent != data_dir()
            and not moved.with_name(moved.name[: -len(SUFFIX)]).exists()
        ):
            moved.unlink()
            moved.with_name(moved.name + ".lock").unlink(missing_ok=True)
    except OSError:
        pass
