"""Session discovery: every log under a sessions root in the DSH layout, each with its parent session."""

from __future__ import annotations

import errno
import os
import shlex
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.log.layout import RAW_NAME, ZSTD_NAME, is_sessions_root, session_dir_log
from core.log.reader import read_header, read_log_header
from core.log.skipped import UNLISTED, UNREADABLE, skip_note
from core.shared.errors import LogFormatError, LogIncompleteError, NoLogInDirectoryError, TapedeckError
from core.shared.text import quoted_path


@dataclass(frozen=True)
class SessionRef:
    """A session found under a sessions root."""

    path: Path
    id: str
    cwd: str | None
    created_at: int
    parent: str | None
    depth: int
    origin: str | None
    size: int
    mtime: float

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for ``--json`` output."""
        return {**self.__dict__, "path": str(self.path)}


def discover_sessions(root: str | os.PathLike[str], skipped: list[str] | None = None) -> list[SessionRef]:
    """Every session log under ``root`` in the DSH layout (children included), newest first.

    A project or session directory that cannot be listed, or whose log is no regular file or cannot be read, is left
    out; ``skipped`` (when given) receives one note per one left out, naming it and why.
    """
    refs = [ref for log in session_logs(root, skipped) if (ref := session_ref(log, skipped)) is not None]
    refs.sort(key=lambda r: (r.mtime, r.created_at), reverse=True)
    return refs


def session_logs(root: str | os.PathLike[str], skipped: list[str] | None = None) -> list[Path]:
    """The log files under ``root`` in the DSH layout (``ROOT/PROJECT/SESSION/session.jsonl[.zstd]``), unread; a
    directory that cannot be listed, or a log's name on what is no log (a FIFO), ``root``'s own included, is noted in
    ``skipped``."""
    logs: list[Path] = []
    base = Path(root).expanduser()
    if not base.is_dir():
        return logs
    session_dir_log(base, skipped)  # ``base`` a session directory whose log is no log: noted as the ones under it
    for project in _listing(base, skipped):
        if not _of_kind(project, skipped):
            continue
        for sdir in _listing(project, skipped):
            if not _of_kind(sdir, skipped):
                continue
            if (log := session_dir_log(sdir, skipped)) is not None:
                logs.append(log)
    return logs


def layout_note(root: Path, command: str) -> str | None:
    """What a local directory that holds no session in the sessions root layout holds instead, and the commands
    that read it (``tapedeck COMMAND …``, which takes session directories and logs): one project's session
    directories, or session logs lying in it loose (None: neither, or it has sessions)."""
    if not is_sessions_root(root) or session_logs(root):
        return None
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return None  # the listing noted it
    sessions = [e for e in entries if _of_kind(e) and not is_sessions_root(e)]
    logs = [] if sessions else [e for e in entries if _of_kind(e, kind=stat.S_ISREG) and read_header(e) is not None]
    return layout_text(root, root.parent, command, sessions, logs)


def layout_text(root: str | Path, parent: str | Path, command: str, sessions: Sequence[str | Path],
                logs: Sequence[str | Path], shell_expands: bool = True) -> str | None:  # fmt: skip
    """``layout_note``'s words for the directory ``root`` (here, or ``host:PATH``; ``parent`` holds it), which holds
    the session directories ``sessions`` of one project, else the session logs ``logs`` loose (None: neither).
    Without ``shell_expands`` (a path on another machine, which no shell here expands) the commands offered name
    one of them instead of a pattern."""
    layout = f"ROOT/PROJECT/SESSION/{RAW_NAME} or {ZSTD_NAME}"
    where = _argument(root)
    if sessions:
        n = len(sessions)
        dirs = f"session director{'y' if n == 1 else 'ies'}"
        these = (f"`tapedeck {command} {where}/*/` reads its {n} {dirs}" if shell_expands else
                 f"`tapedeck {command} {_argument(sessions[0])}` reads {'its' if n == 1 else f'one of its {n}'} {dirs}")
        return (f"{quoted_path(root)} is one project's directory, not a sessions root ({layout}): {these}, "
                f"`tapedeck {command} {_argument(parent)}` every project's")  # fmt: skip
    if not logs:
        return None
    n = len(logs)
    kinds = sorted({"*" + "".join(Path(log).suffixes[-2:]) if str(log).endswith(".zstd") else "*" + Path(log).suffix
                    for log in logs})  # fmt: skip
    these = f"`tapedeck {command} {' '.join(f'{where}/{kind}' for kind in kinds)}` reads {'it' if n == 1 else 'them'}, "
    return (f"{quoted_path(root)} holds {n} session log{'' if n == 1 else 's'} of its own but no session directories, which a "
            f"sessions root holds ({layout}); a log is read where it lies: {these if shell_expands else ''}`tapedeck "
            f"inspect {_argument(logs[0])}` reads {'it' if n == 1 else 'one'}")  # fmt: skip


def no_session_note(directory: Path) -> str | None:
    """What a local directory given for one session, which holds no log of its own, holds instead, and what to pass:
    a sessions root's sessions (``sessions_root_note``: each file once, as the fleet lists it), else what
    ``layout_note`` says of it (None: neither)."""
    if n := len({os.path.realpath(log) for log in session_logs(directory)}):  # a file by two names: once
        return sessions_root_note(directory, n)
    return layout_note(directory, "sessions")


def told(exc: TapedeckError) -> str:
    """The message of ``exc`` as a person is shown it: a directory given for one session that holds none of its own
    is followed by what it holds instead and what to pass (``no_session_note`` for a local one, else its own
    ``NoLogInDirectoryError.note``)."""
    if isinstance(exc, NoLogInDirectoryError):
        note = no_session_note(Path(exc.directory)) if exc.local else exc.note()
        if note:
            return f"{exc}; {note}"
    return str(exc)


def sessions_root_note(root: str | Path, n: int) -> str:
    """Says that the sessions root ``root`` (here, or ``host:PATH``), given for one session, holds ``n`` sessions,
    and how to list them."""
    return (f"it is a sessions root, holding {n} session{'' if n == 1 else 's'}: `tapedeck sessions {_argument(root)}` "
            "lists them; give one's session directory or log")  # fmt: skip


def _argument(path: str | Path) -> str:
    """``path`` as a shell word for a command line: quoted, and a relative one that starts with ``-`` (DSH names a
    project's directory so: ``--home-ann-proj--``) from ``./``, so that it is not taken for an option; its control
    characters as ``quoted_path`` escapes them."""
    text = quoted_path(path)
    return shlex.quote(f"./{text}" if text.startswith("-") else text)


def session_ref(log: Path, skipped: list[str] | None = None) -> SessionRef | None:
    """The ``SessionRef`` of one log from its header and its stat (None: no readable header, or it is gone). A log
    that cannot be read (its permissions, an I/O error) or is no session log (its first line garbage, a link to
    some other file) is noted in ``skipped`` when given (once), as a remote one is
    (``core.remote.sessions.remote_refs``); one gone, or with no complete first line yet (a session being
    created), is not."""
    try:
        header = read_log_header(log)
    except LogIncompleteError:
        return None
    except LogFormatError as exc:
        note = skip_note(UNREADABLE, log, str(exc))
        if not isinstance(exc.__cause__, FileNotFoundError) and skipped is not None and note not in skipped:
            skipped.append(note)
        return None
    try:
        st = log.stat()
    except OSError:
        return None  # removed while we looked
    return ref_from_header(log, header, st.st_size, st.st_mtime)


def ref_from_header(log: Path, header: dict[str, Any], size: int, mtime: float) -> SessionRef:
    """The ``SessionRef`` of a log whose header was read (locally or from another machine)."""
    def text(key: str) -> str | None:  # a field of another type is left out, as if absent
        value = header.get(key)
        return value if isinstance(value, str) else None

    depth, created = header.get("delegationDepth"), header.get("createdAt")
    return SessionRef(
        path=log,
        id=str(header.get("id")),
        cwd=text("cwd"),
        created_at=created if type(created) is int else 0,
        parent=text("parentSession"),
        depth=depth if type(depth) is int else 0,
        origin=text("origin"),
        size=size,
        mtime=mtime,
    )


def _of_kind(path: Path, skipped: list[str] | None = None, kind: Callable[[int], bool] = stat.S_ISDIR) -> bool:
    """Whether ``path`` is a file of ``kind`` (a directory unless said; through a link). One that cannot be looked at (a link into a place this user may not see, where pathlib's ``is_dir`` raises) is not, and
    ``skipped`` gets a note of it; one gone, or a link to nothing or to itself, is not, without a note, as
    ``is_dir`` says."""
    try:
        return kind(path.stat().st_mode)
    except OSError as exc:
        if skipped is not None and exc.errno not in _GONE:
            skipped.append(skip_note(UNLISTED, path, f"{quoted_path(path)}: {exc.strerror or exc}"))
        return False


_GONE = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)  # what pathlib's is_dir takes for "not a directory"


def _listing(directory: Path, skipped: list[str] | None) -> list[Path]:
    try:
        return sorted(directory.iterdir())
    except OSError as exc:
        if skipped is not None:
            skipped.append(skip_note(UNLISTED, directory, f"{quoted_path(directory)}: {exc.strerror or exc}"))
        return []
