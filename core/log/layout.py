"""The DSH on-disk layout: ``<root>/--<project-key>--/<encoded-id>/session.jsonl[.zstd]``."""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path

from core.log.skipped import UNLISTED, skip_note
from core.shared.envdirs import own_dir
from core.shared.errors import LogFormatError, LogNotFoundError, NoLogInDirectoryError
from core.shared.regular import open_regular
from core.shared.text import quoted_path

RAW_NAME = "session.jsonl"
ZSTD_NAME = "session.jsonl.zstd"
LOG_NAMES = (ZSTD_NAME, RAW_NAME)  # a session directory's log is the first of these it holds
REPAIR_SUFFIX = ".repair"  # after a log's name: what ``repair`` writes it under before it takes the log's place
DAMAGED = ".damaged-"  # after a log's name, before a time: the damaged log ``repair`` keeps
_KEEP = re.compile(r"[A-Za-z0-9._-]")


def _escape(ch: str) -> str:
    return "".join(f"~{unit:04X}" for unit in _utf16_units(ch))


def _utf16_units(ch: str) -> list[int]:
    code = ord(ch)
    if code <= 0xFFFF:
        return [code]
    code -= 0x10000
    return [0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)]


def project_key(cwd: str | None) -> str:
    """DSH's ``projectKey(cwd)``: a lossy, filesystem-safe slug wrapped as ``--<slug>--`` (``_no-cwd`` without cwd)."""
    if not cwd:
        return "_no-cwd"
    out: list[str] = []
    for ch in cwd:
        if ch in "/\\:":
            if not out or out[-1] != "-":
                out.append("-")
        elif _KEEP.fullmatch(ch):
            out.append(ch)
        else:
            out.append(_escape(ch))
    slug = "".join(out).lstrip("-") or "root"
    return f"--{slug[:251]}--"


def encode_segment(session_id: str) -> str:
    """DSH's injective ``encodeSegment(id)``; ``.`` and ``..`` are escaped, an empty id is refused."""
    if not session_id:
        raise ValueError("session id must not be empty")
    if session_id in (".", ".."):
        return "~002E" * len(session_id)
    return "".join(ch if _KEEP.fullmatch(ch) else _escape(ch) for ch in session_id)


def log_path(root: Path, cwd: str | None, session_id: str, compressed: bool) -> Path:
    """The exact path DSH expects for a session's log (its identity check compares against this)."""
    return (
        Path(root) / project_key(cwd) / encode_segment(session_id) / (ZSTD_NAME if compressed else RAW_NAME)
    )


def is_sessions_root(path: Path) -> bool:
    """True for a directory of sessions: a directory without a session log of its own (a log file or a session
    directory is one session; ``resolve_log_path`` finds its log)."""
    return os.path.isdir(path) and session_dir_log(path) is None  # a name too long for a path here: none (no OSError)


def dir_log_name(mtimes: Mapping[str, int]) -> str | None:
    """The name of a session directory's log, given the last-write time of each log file it holds by name: the one
    written last, so that a session still writing one is read from it and not from a stale copy beside it
    (``zstd -o session.jsonl.zstd session.jsonl`` run while it ran, or ``zstd -d`` of a growing zstd log); the zstd
    one when both were last written at once (``zstd`` gives its copy the original's time: the two hold one text).
    None when it holds neither."""
    return max((name for name in LOG_NAMES if name in mtimes), key=mtimes.__getitem__, default=None)


def dir_log(sdir: str, found: Mapping[str, tuple[int, int]]) -> tuple[str | None, str | None]:
    """The name of a session directory's log (``dir_log_name`` of its regular files), given the file type
    (``stat.S_IFMT``) and last-write time of what it holds by each log name, after links; else None, and why what it
    holds by a log's name is no log (None when it holds nothing by those names). The one rule of the local and the
    remote listings."""
    name = dir_log_name({n: mtime for n, (fmt, mtime) in found.items() if fmt == stat.S_IFREG})
    if name is not None or not found:
        return name, None
    odd = next(n for n in LOG_NAMES if n in found)
    return None, not_a_log(posixpath.join(sdir, odd), found[odd][0])


def session_dir_log(sdir: Path, skipped: list[str] | None = None) -> Path | None:
    """The log file of the local session directory ``sdir`` (None: it holds none, or it cannot be looked into, or
    what it holds by a log's name is no regular file or a link to nothing, which ``skipped`` receives a note of
    when given)."""
    try:
        found = _dir_logs(sdir)
    except LogFormatError as exc:
        if skipped is not None:
            skipped.append(skip_note(UNLISTED, sdir, str(exc)))
        return None
    name, why = dir_log(str(sdir), _types(found))
    if name is None and skipped is not None and (why := why or _dangling(sdir)) is not None:
        skipped.append(skip_note(UNLISTED, sdir, why))
    return None if name is None else sdir / name


def _dir_logs(sdir: Path) -> dict[str, os.stat_result]:
    """The stat of each log name that is there in ``sdir`` (a ``LogFormatError`` when one cannot be looked at)."""
    return {name: st for name in LOG_NAMES if (st := stat_or_none(sdir / name)) is not None}


def _types(found: Mapping[str, os.stat_result]) -> dict[str, tuple[int, int]]:
    """The file type and last-write time of each log ``found`` (by name, with its stat), as ``dir_log`` takes them."""
    return {name: (stat.S_IFMT(st.st_mode), st.st_mtime_ns) for name, st in found.items()}


def missing_path(path: str | os.PathLike[str]) -> str:
    """The refusal of a ``path`` that is not there: a link to nothing is named as one, and ``-`` (a pipe's name in
    other tools) says that no log is read from stdin (a file named ``-`` is read as ``./-``)."""
    if (dangling := _link_to_nothing(Path(path))) is not None:
        return dangling
    hint = "; a log is read from its path, never from stdin" if os.fspath(path) == "-" else ""
    return f"{quoted_path(path)}: no such file or directory{hint}"


def resolve_log_path(path: str | os.PathLike[str]) -> Path:
    """Accept a log file or a session directory; return the log file path or raise LogFormatError.

    The log must be a regular file this process can open: a FIFO, a device or a socket is refused before
    anything would block on it, and a permission problem is named as one. LogNotFoundError means it does not
    exist (yet).
    """
    p = Path(path).expanduser()
    st = stat_or_none(p)
    if st is None:
        raise LogNotFoundError(missing_path(p))
    if stat.S_ISDIR(st.st_mode):
        found = _dir_logs(p)
        name = dir_log(str(p), _types(found))[0] or next(iter(found), None)  # no regular file: refused as what it is
        if name is None and (dangling := _dangling(p)) is not None:
            raise LogNotFoundError(dangling)
        if name is None:
            raise NoLogInDirectoryError(f"{quoted_path(p)}: no {RAW_NAME} or {ZSTD_NAME} in this directory", str(p))
        return _readable(p / name, found[name])
    return _readable(p, st)


def _dangling(sdir: Path) -> str | None:
    """What a session directory holds by a log's name when that is a link to nothing (None: it does not)."""
    return next(filter(None, (_link_to_nothing(sdir / name) for name in LOG_NAMES)), None)


def _link_to_nothing(p: Path) -> str | None:
    """Says that ``p``, where nothing is, is a link to something that is not there (None: it is no link)."""
    try:
        return link_to_nothing(str(p), os.readlink(p))
    except OSError:  # no link (or nothing) there
        return None


_SPECIAL = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
            stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a directory"}  # fmt: skip


def stat_or_none(p: Path) -> os.stat_result | None:
    """``os.stat(p)``, None when nothing is there; any other failure is a LogFormatError naming it."""
    try:
        return os.stat(p)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise LogFormatError(f"{quoted_path(p)}: cannot read ({exc.strerror or exc})") from exc


def special_file(fmt: int) -> str:
    """What a file of the type ``fmt`` (``stat.S_IFMT``), no regular file, is: ``a FIFO``, ``a directory`` …"""
    return _SPECIAL.get(fmt, "a special file")


def not_a_log(path: str, fmt: int) -> str:
    """Why ``path``, of the file type ``fmt`` (``stat.S_IFMT``) and no regular file, is no log."""
    return f"{quoted_path(path)}: is {special_file(fmt)}, not a session log file"


def link_to_nothing(path: str, target: str) -> str:
    """Why ``path``, a link to ``target``, where nothing is, is no log."""
    return f"{quoted_path(path)}: a link to {quoted_path(target)}, which is not there"


def _readable(p: Path, st: os.stat_result) -> Path:
    if not stat.S_ISREG(st.st_mode):
        raise LogFormatError(not_a_log(str(p), stat.S_IFMT(st.st_mode)))
    try:
        os.close(os.open(p, os.O_RDONLY | os.O_NONBLOCK))
    except OSError as exc:
        raise LogFormatError(f"{quoted_path(p)}: cannot read ({exc.strerror or exc})") from exc
    return p


def is_compressed(path: Path) -> bool:
    """zstd when the name ends in ``.zstd``/``.zst`` or the file starts with the zstd magic number."""
    if path.name.endswith((".zstd", ".zst")):
        return True
    try:  # a FIFO swapped in for the log is not waited on
        with open_regular(path) as f:
            return f.read(4) == b"\x28\xb5\x2f\xfd"
    except OSError:
        return False


def _names_a_file(root: str | os.PathLike[str]) -> bool:
    """Whether a root names a log file rather than a directory: a local path that is there and no directory, else
    (gone, or on another machine) one whose name ends as a log's does."""
    text = os.fspath(root)
    try:
        return not stat.S_ISDIR(os.stat(text).st_mode)
    except (OSError, ValueError):  # not there, not to be looked at (a wording never fails), a NUL in its name
        return text.endswith((".jsonl", ".zstd", ".zst"))


def sessions_under(n: int, roots: Sequence[str | os.PathLike[str]]) -> str:
    """How many sessions were found in ``roots`` (``no sessions under …``), in the one wording every command and
    screen uses: the head of `tapedeck sessions`'s listing, what `tapedeck alerts` adds to 'no alerts' when it found
    no log to read, `tapedeck watch`'s refusal of an empty default root and the empty fleet table's status. A log
    file is named as one, ``in`` it; a directory ``under`` it (each kind in the order the first of it came)."""
    kinds: dict[str, list[str]] = {}
    for root in roots:
        kinds.setdefault("in" if _names_a_file(root) else "under", []).append(quoted_path(root))
    where = " and ".join(f"{kind} {', '.join(names)}" for kind, names in kinds.items())
    return f"{n} session{'' if n == 1 else 's'} {where}" if n else f"no sessions {where}"


def default_sessions_root() -> Path:
    """``$TAPEDECK_HOME/sessions`` when set, else ``~/.tapedeck/sessions``."""
    return (own_dir("TAPEDECK_HOME") or Path.home() / ".tapedeck") / "sessions"
