"""Notes on events: an operator's remarks anchored to seqs, kept in a sidecar file, never in the log.

The sidecar is ``<log file>.notes.json`` beside the log when its directory is writable. A log in a directory
tapedeck cannot write to (a read-only DSH home, another user's sessions) gets its sidecar in tapedeck's data
directory instead (``$TAPEDECK_HOME/notes`` or ``$XDG_DATA_HOME/tapedeck/notes``), named for the log's identity:
its session id and a hash of its resolved path. Readers look beside the log first.

The file is one JSON object: ``{"version": 1, "notes": {"<seq>": {"text": …, "time": <ms>}}}``. Writers take an
exclusive ``flock`` on a lock file next to it, read, change and write a temporary file that replaces the
sidecar atomically, so concurrent writers never lose each other's notes and readers never see half a file.
Anything else in the file is refused with a message that names the file and what is wrong.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

from core.log.layout import resolve_log_path
from core.log.reader import read_header
from core.shared.errors import TapedeckError
from core.shared.fdwrite import replace_file

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


def _identity(log: Path) -> str:
    header = read_header(log) or {}
    sid = header.get("id") if isinstance(header.get("id"), str) else "log"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in sid)[:80] or "log"
    digest = hashlib.sha256(str(log.resolve()).encode()).hexdigest()[:16]
    return f"{safe}-{digest}{SUFFIX}"


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
    """The sidecar that holds the log's notes, or None when it has none."""
    return next((p for p in sidecar_paths(path) if p.exists()), None)


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


def load_notes(path: str | os.PathLike[str]) -> dict[int, Note]:
    """Every note of the log at ``path`` by seq ({} when it has none)."""
    sidecar = sidecar_for_reading(path)
    if sidecar is None:
        return {}
    try:
        data = sidecar.read_bytes()
    except OSError as exc:
        raise NotesError(f"{sidecar}: cannot read ({exc.strerror or exc})") from None
    return parse_notes(data, str(sidecar))


def _dump(notes: dict[int, Note]) -> bytes:
    entries = {str(seq): {"text": n.text, "time": n.time} for seq, n in sorted(notes.items())}
    return orjson.dumps({"version": VERSION, "notes": entries}, option=orjson.OPT_INDENT_2) + b"\n"


def set_note(path: str | os.PathLike[str], seq: int, text: str) -> Path:
    """Add or replace the note at ``seq`` (empty or blank ``text`` removes it); returns the sidecar written.

    Only the form of ``seq`` is checked here; the CLI checks that the log has such an event."""
    if seq < 0:
        raise NotesError(f"seq {seq} is not an event: seqs start at 0")
    if len(text) > MAX_TEXT:
        raise NotesError(f"a note holds at most {MAX_TEXT} characters (this one has {len(text)})")
    sidecar = sidecar_for_writing(path)
    try:
        sidecar.parent.mkdir(parents=True, exist_ok=True)
        with open(sidecar.with_name(sidecar.name + ".lock"), "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            notes = parse_notes(sidecar.read_bytes(), str(sidecar)) if sidecar.exists() else {}
            if text.strip():
                notes[seq] = Note(seq, text, int(time.time() * 1000))
            else:
                notes.pop(seq, None)
            replace_file(sidecar, _dump(notes), prefix=sidecar.name + ".", sync=True)
    except OSError as exc:
        raise NotesError(f"{sidecar}: cannot write ({exc.strerror or exc})") from None
    return sidecar
