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

The file is one JSON object: ``{"version": 1, "session": <key>, "notes": {"<seq>": {"text": …, "time": <ms>}}}``
(``session`` is absent from older sidecars, which read as before). Writers take an exclusive ``flock`` on a lock
file next to it, read, change and write a temporary file that replaces the sidecar atomically, so concurrent
writers never lose each other's notes and readers never see half a file. Anything else in the file is refused
with a message that names the file and what is wrong.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

from core.log.layout import resolve_log_path
from core.log.reader import read_header
from core.shared.errors import TapedeckError
from core.shared.fdwrite import replace_file
from core.shared.regular import open_regular

SUFFIX = ".notes.json"
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
    home = os.environ.get("TAPEDECK_HOME")
    if home:
        return Path(home) / "notes"
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "tapedeck" / "notes"


def _safe_id(header: dict[str, object]) -> str:
    sid = header.get("id") if isinstance(header.get("id"), str) else "log"
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in sid)[:80] or "log"  # type: ignore[union-attr]


def _identity(log: Path) -> str:
    digest = hashlib.sha256(str(log.resolve()).encode()).hexdigest()[:16]
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


def sidecar_paths(path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """The sidecar beside the log and the one in the data directory, for a log file or session directory; a
    symbolic link to the log stands for the log it names, so every path to one log finds the same notes."""
    log = Path(os.path.realpath(resolve_log_path(path)))
    return log.with_name(log.name + SUFFIX), data_dir() / _identity(log)


def sidecar_for_writing(path: str | os.PathLike[str]) -> Path:
    """The sidecar a write goes to: the existing one, else beside the log when its directory is writable."""
    beside, kept = sidecar_paths(path)
    if beside.exists() or (not kept.exists() and os.access(beside.parent, os.W_OK)):
        return beside
    return kept


def sidecar_for_reading(path: str | os.PathLike[str]) -> Path | None:
    """The sidecar that holds the log's notes: its own (beside it, else in the data directory), else the one last
    written for its session (a log moved or renamed away from its sidecar); None when it has none."""
    own = next((p for p in sidecar_paths(path) if p.exists()), None)
    return own if own is not None else _followed(path)


def _followed(path: str | os.PathLike[str]) -> Path | None:
    """The sidecar last written for the session of the log at ``path``, when it still is that session's."""
    key = session_key(path)
    if key is None:
        return None
    try:
        sidecar = Path(_pointer(key).read_text(encoding="utf-8"))
        return sidecar if _recorded(_read_sidecar(sidecar)) == key else None
    except (OSError, ValueError, NotesError):
        return None


def _recorded(data: bytes) -> str | None:
    """The session a sidecar's bytes say they are for (None: none, or not a sidecar)."""
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    session = doc.get("session") if isinstance(doc, dict) else None
    return session if isinstance(session, str) else None


def parse_notes(data: bytes, where: str) -> dict[int, Note]:
    """The notes of a sidecar's bytes; NotesError says what is wrong with anything else."""
    if not data.strip():
        return {}
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise NotesError(f"{where}: not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise NotesError(f"{where}: expected an object with a 'notes' object, found {type(doc).__name__}")
    if doc.get("version", VERSION) != VERSION:
        raise NotesError(
            f"{where}: unknown notes version {doc.get('version')!r} (this tapedeck reads {VERSION})"
        )
    entries = doc.get("notes", {})
    if not isinstance(entries, dict):
        raise NotesError(f"{where}: 'notes' must be an object keyed by seq, found {type(entries).__name__}")
    out: dict[int, Note] = {}
    for key, entry in entries.items():
        if not (key.isascii() and key.isdigit()):
            raise NotesError(f"{where}: note key {key[:40]!r} is not a seq (a non-negative integer)")
        if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
            raise NotesError(f"{where}: note at seq {key} has no text string")
        stamp = entry.get("time")
        if not isinstance(stamp, int) or isinstance(stamp, bool):
            stamp = 0
        out[int(key)] = Note(int(key), entry["text"], stamp)
    return out


def _read_sidecar(sidecar: Path) -> bytes:
    """The bytes of ``sidecar`` when it is a regular file, not through a symbolic link (a FIFO would wait for a
    writer for ever); NotesError otherwise."""
    try:
        with open_regular(sidecar, follow=False) as f:
            return f.read()
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ELOOP):  # no regular file; a symbolic link (O_NOFOLLOW)
            raise NotesError(f"{sidecar}: not a regular file; notes are kept in one, so this is not read") from None
        raise NotesError(f"{sidecar}: cannot read ({exc.strerror or exc})") from None


def load_notes(path: str | os.PathLike[str]) -> dict[int, Note]:
    """Every note of the log at ``path`` by seq ({} when it has none)."""
    sidecar = sidecar_for_reading(path)
    if sidecar is None:
        return {}
    return parse_notes(_read_sidecar(sidecar), str(sidecar))


def _dump(notes: dict[int, Note], key: str | None) -> bytes:
    entries = {str(seq): {"text": n.text, "time": n.time} for seq, n in sorted(notes.items())}
    doc = {"version": VERSION, **({"session": key} if key is not None else {}), "notes": entries}
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


def set_note(path: str | os.PathLike[str], seq: int, text: str) -> Path:
    """Add or replace the note at ``seq`` (empty or blank ``text`` removes it); returns the sidecar written.

    Only the form of ``seq`` is checked here; the CLI checks that the log has such an event."""
    if seq < 0:
        raise NotesError(f"seq {seq} is not an event: seqs start at 0")
    if len(text) > MAX_TEXT:
        raise NotesError(f"a note holds at most {MAX_TEXT} characters (this one has {len(text)})")
    sidecar = sidecar_for_writing(path)
    key = session_key(path)
    try:
        sidecar.parent.mkdir(parents=True, exist_ok=True)
        with open(sidecar.with_name(sidecar.name + ".lock"), "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            moved = None if sidecar.exists() else _followed(path)  # the notes a moved log left behind
            source = sidecar if moved is None else moved
            notes = parse_notes(_read_sidecar(source), str(source)) if os.path.lexists(source) else {}
            if text.strip():
                notes[seq] = Note(seq, text, int(time.time() * 1000))
            else:
                notes.pop(seq, None)
            replace_file(sidecar, _dump(notes, key), prefix=sidecar.name + ".", sync=True)
    except OSError as exc:
        raise NotesError(f"{sidecar}: cannot write ({exc.strerror or exc})") from None
    if key is not None:
        _leave_pointer(key, sidecar, moved)
    return sidecar


def _leave_pointer(key: str, sidecar: Path, moved: Path | None) -> None:
    """Name ``sidecar`` as the one last written for session ``key``; remove ``moved``, the sidecar its notes came
    from, when the log beside it is gone (they moved with the log). Best effort: the notes are written already."""
    try:
        pointer = _pointer(key)
        pointer.parent.mkdir(parents=True, exist_ok=True)
        replace_file(pointer, str(sidecar.resolve()).encode(), prefix=pointer.name + ".")
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
