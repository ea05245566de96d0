"""The DSH on-disk layout: ``<root>/--<project-key>--/<encoded-id>/session.jsonl[.zstd]`` and session discovery."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.shared.errors import LogFormatError, LogNotFoundError

RAW_NAME = "session.jsonl"
ZSTD_NAME = "session.jsonl.zstd"
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


def resolve_log_path(path: str | os.PathLike[str]) -> Path:
    """Accept a log file or a session directory; return the log file path or raise LogFormatError.

    The log must be a regular file this process can open: a FIFO, a device or a socket is refused before
    anything would block on it, and a permission problem is named as one. LogNotFoundError means it does not
    exist (yet).
    """
    p = Path(path).expanduser()
    st = stat_or_none(p)
    if st is None:
        raise LogNotFoundError(f"{p}: no such file or directory")
    if stat.S_ISDIR(st.st_mode):
        for name in (ZSTD_NAME, RAW_NAME):
            candidate = p / name
            found = stat_or_none(candidate)
            if found is not None:
                return _readable(candidate, found)
        raise LogNotFoundError(f"{p}: no {RAW_NAME} or {ZSTD_NAME} in this directory")
    return _readable(p, st)


_SPECIAL = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
            stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a directory"}  # fmt: skip


def stat_or_none(p: Path) -> os.stat_result | None:
    """``os.stat(p)``, None when nothing is there; any other failure is a LogFormatError naming it."""
    try:
        return os.stat(p)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise LogFormatError(f"{p}: cannot read ({exc.strerror or exc})") from exc


def _readable(p: Path, st: os.stat_result) -> Path:
    if not stat.S_ISREG(st.st_mode):
        kind = _SPECIAL.get(stat.S_IFMT(st.st_mode), "a special file")
        raise LogFormatError(f"{p}: is {kind}, not a session log file")
    try:
        os.close(os.open(p, os.O_RDONLY | os.O_NONBLOCK))
    except OSError as exc:
        raise LogFormatError(f"{p}: cannot read ({exc.strerror or exc})") from exc
    return p


def is_compressed(path: Path) -> bool:
    """zstd when the name ends in ``.zstd``/``.zst`` or the file starts with the zstd magic number."""
    if path.name.endswith((".zstd", ".zst")):
        return True
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x28\xb5\x2f\xfd"
    except OSError:
        return False


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


def read_header(path: Path) -> dict[str, Any] | None:
    """Only the header of a log (first line or first frame), or None when it is unreadable for any reason."""
    from core.log.reader import read_log_header

    try:
        return read_log_header(path)
    except LogFormatError:
        return None


def discover_sessions(root: str | os.PathLike[str], skipped: list[str] | None = None) -> list[SessionRef]:
    """Every session log under ``root`` in the DSH layout (children included), newest first.

    A project or session directory that cannot be listed is left out; ``skipped`` (when given) receives one
    note per directory left out, naming it and why.
    """
    refs: list[SessionRef] = []
    base = Path(root).expanduser()
    if not base.is_dir():
        return refs
    for project in _listing(base, skipped):
        if not project.is_dir():
            continue
        for sdir in _listing(project, skipped):
            if not sdir.is_dir():
                continue
            for name in (ZSTD_NAME, RAW_NAME):
                log = sdir / name
                if not log.is_file():
                    continue
                header = read_header(log)
                if header is None:
                    continue
                try:
                    st = log.stat()
                except OSError:
                    continue  # removed while we looked
                depth = header.get("delegationDepth")
                refs.append(
                    SessionRef(
                        path=log,
                        id=str(header.get("id")),
                        cwd=header.get("cwd"),
                        created_at=int(header.get("createdAt") or 0),
                        parent=header.get("parentSession"),
                        depth=depth if isinstance(depth, int) else 0,
                        origin=header.get("origin"),
                        size=st.st_size,
                        mtime=st.st_mtime,
                    )
                )
    refs.sort(key=lambda r: (r.mtime, r.created_at), reverse=True)
    return refs


def _listing(directory: Path, skipped: list[str] | None) -> list[Path]:
    try:
        return sorted(directory.iterdir())
    except OSError as exc:
        if skipped is not None:
            skipped.append(f"skipped {directory}: {exc.strerror or exc}")
        return []


def session_tree(refs: list[SessionRef]) -> list[tuple[SessionRef, int]]:
    """``(ref, depth)`` in display order: top-level sessions as given (newest first), each followed by its
    children (oldest first), so a subagent child always sits under its real parent."""
    ids = {ref.id for ref in refs}
    children: dict[str, list[SessionRef]] = {}
    roots = []
    for ref in refs:
        if ref.parent and ref.parent in ids and ref.parent != ref.id:
            children.setdefault(ref.parent, []).append(ref)
        else:
            roots.append(ref)
    out: list[tuple[SessionRef, int]] = []
    seen: set[str] = set()

    def visit(ref: SessionRef, depth: int) -> None:
        if ref.id in seen:
            return
        seen.add(ref.id)
        out.append((ref, depth))
        for child in sorted(children.get(ref.id, []), key=lambda r: r.created_at):
            visit(child, depth + 1)

    for ref in roots:
        visit(ref, 0)
    return out


def default_sessions_root() -> Path:
    """``$TAPEDECK_HOME/sessions`` when set, else ``~/.tapedeck/sessions``."""
    home = os.environ.get("TAPEDECK_HOME")
    return Path(home).expanduser() / "sessions" if home else Path.home() / ".tapedeck" / "sessions"
