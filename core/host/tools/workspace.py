"""The workspace boundary: every path a tool touches is resolved (symlinks included) and must stay inside, and
is then opened beneath the workspace without following any link.

``Workspace.resolve`` is the only way a tool turns a model-given path into a filesystem path. It resolves the
path as the operating system would (``..``, absolute paths, symbolic links at any depth, dangling links) and
refuses anything that lands outside the workspace root. The resolved path is then opened by ``directory`` and
``open_file``, which start from a descriptor of the root and open one component at a time with ``O_NOFOLLOW``:
if a directory was swapped for a symbolic link after ``resolve`` looked at it, the open fails and the call is
refused, so no read or write can be redirected outside between the check and the use. ``walk`` lists files for
searches with ``os.fwalk`` (descriptor-based, never entering a directory link) and skips file links that lead
out.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import re2

from core.host.tools.outcome import (
    FS_NOT_DIRECTORY,
    FS_NOT_FOUND,
    FS_SANDBOX_DENIED,
    INVALID_ARGUMENTS,
    ToolFailure,
)
from core.shared import beneath
from core.shared.errors import TapedeckError
from core.shared.regex import RegexRefused, linear_regex
from core.shared.text import quoted, quoted_path, unquoted

# Directories that searches skip unless the search starts inside one of them.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        "node_modules",
        ".venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)


class WorkspaceError(TapedeckError):
    """The workspace root itself is unusable (missing, not a directory)."""


class Workspace:
    """A directory the tools are confined to."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        path = Path(root)
        if not path.is_dir():
            raise WorkspaceError(f"workspace {quoted_path(path)} is not an existing directory")
        self.root = path.resolve()

    def resolve(self, raw: object, param: str = "path") -> Path:
        """The real path ``raw`` names, or a ToolFailure when it is not a usable path inside the workspace."""
        if not isinstance(raw, str) or not raw.strip():
            raise ToolFailure(INVALID_ARGUMENTS, f"{param} must be a non-empty path")
        if "\x00" in raw:
            raise ToolFailure(INVALID_ARGUMENTS, f"{param} must not contain a NUL character")
        given = self._as_listed(Path(raw))
        lexical = Path(os.path.normpath(given if given.is_absolute() else self.root / given))
        real = Path(os.path.realpath(given if given.is_absolute() else self.root / given))
        if self.contains(real):
            return real
        if self.contains(lexical):
            why = "it goes through a symbolic link that leads out of the workspace"
        elif given.is_absolute():
            why = "absolute paths must point inside the workspace"
        else:
            why = "'..' climbs out of the workspace"
        raise ToolFailure(
            FS_SANDBOX_DENIED,
            f"{param} '{quoted(raw)}' is outside the workspace {quoted(self.root, None)} ({why}); nothing was done",
        )

    def _as_listed(self, given: Path) -> Path:
        """``given`` with each part that names nothing read as the tools list a name (``quoted``: its control
        characters as escapes) where that is there: a path passed back as a listing wrote it opens what it named, and
        a new file in a listed directory goes into that directory."""
        if "\\" not in str(given):
            return given
        here = self.root / given.anchor  # given.anchor: '/' for an absolute path, '' for a relative one
        parts = []
        for part in given.parts[1:] if given.anchor else given.parts:
            plain = unquoted(part)
            if plain != part and not os.path.lexists(here / part) and os.path.lexists(here / plain):
                part = plain
            parts.append(part)
            here /= part
        return Path(given.anchor, *parts)

    def contains(self, path: Path) -> bool:
        """Whether an already resolved ``path`` is the root or below it."""
        return path == self.root or path.is_relative_to(self.root)

    def display(self, path: str | os.PathLike[str]) -> str:
        """``path`` relative to the root (POSIX style) when inside it, else as given."""
        p = Path(path)
        if p.is_absolute() and self.contains(p):
            rel = p.relative_to(self.root).as_posix()
            return rel or "."
        return str(path)

    def parts(self, real: Path) -> tuple[str, ...]:
        """The components of a resolved ``real`` path below the root (empty for the root itself)."""
        return real.relative_to(self.root).parts

    def _swapped(self, raw: str) -> ToolFailure:
        return ToolFailure(
            FS_SANDBOX_DENIED,
            f"'{quoted(raw)}' changed into a symbolic link while it was being opened; nothing was done",
        )

    @contextlib.contextmanager
    def directory(self, real: Path, raw: str, *, create: bool = False) -> Iterator[int]:
        """A descriptor of the resolved directory ``real``, opened from the root one component at a time.

        No component may be a symbolic link (a swap after ``resolve`` is refused). ``create`` makes missing
        directories on the way. ``raw`` is the model's spelling, for messages.
        """
        try:
            fd = beneath.open_dir(self.root, self.parts(real), create=create)
        except OSError as exc:
            raise self._refusal(exc, raw) from exc
        yield from _held(fd)

    def _refusal(self, exc: OSError, raw: str) -> Exception:
        if isinstance(exc, beneath.LinkRefused):
            return self._swapped(raw)
        if exc.errno == errno.ENOENT:
            return ToolFailure(FS_NOT_FOUND, f"'{quoted(raw)}' does not exist in the workspace")
        if exc.errno == errno.ENOTDIR:
            return ToolFailure(FS_NOT_DIRECTORY, f"'{quoted(raw)}' is a file, not a directory")
        return exc

    @contextlib.contextmanager
    def open_file(self, real: Path, raw: str, flags: int = os.O_RDONLY) -> Iterator[int]:
        """A descriptor of the resolved file ``real`` (``flags`` added to no-follow, non-blocking opening)."""
        with self.directory(real.parent, raw) as parent:
            try:
                fd = beneath.open_file(parent, real.name, flags)
            except OSError as exc:
                raise self._refusal(exc, raw) from exc
        yield from _held(fd)

    def walk(self, base: Path) -> Iterator[WalkEntry]:
        """Files under the resolved directory ``base``, sorted, never leaving the workspace.

        Regular files come with their directory's descriptor (valid until the next entry); a link that stays
        inside comes with its resolved path instead, to be opened with ``open_file``.
        """
        with self.directory(base, self.display(base)) as top:
            for dirpath, dirnames, filenames, dir_fd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
                here = base / os.path.normpath(dirpath)
                for name in sorted(filenames):
                    entry = self._entry(here / name, name, dir_fd)
                    if entry is not None:
                        yield entry

    def _entry(self, path: Path, name: str, dir_fd: int) -> WalkEntry | None:
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            return None
        if stat.S_ISREG(info.st_mode):
            return WalkEntry(path, name, dir_fd, None)
        if not stat.S_ISLNK(info.st_mode):
            return None
        real = Path(os.path.realpath(path))
        if self.contains(real) and real.is_file():
            return WalkEntry(path, name, dir_fd, real)
        return None


@dataclass(frozen=True, slots=True)
class WalkEntry:
    """A file found by ``Workspace.walk``: its path as listed, and how to open it without leaving."""

    path: Path
    name: str
    dir_fd: int
    link_target: Path | None


_GLOB_TOKEN = re.compile(r"\*\*/|\*\*|\*|\?|\[!?[^\]/]+\]|\{[^{}/]*\}|[^*?\[{]+|.")


def compile_regex(pattern: str, what: str, *, ignore_case: bool = False) -> re2._Regexp:
    """``pattern`` compiled by RE2 (``core.shared.regex``: no catastrophic backtracking); a pattern RE2 cannot take
    (bad syntax, or a backreference or lookaround, which need backtracking) is a ToolFailure naming the problem."""
    try:
        return linear_regex(pattern, ignore_case=ignore_case)
    except RegexRefused as exc:
        raise ToolFailure(INVALID_ARGUMENTS, f"invalid {what} '{quoted(pattern)}': {exc}") from exc


def glob_regex(pattern: str) -> re2._Regexp:
    """A regex for a glob over POSIX relative paths: ``*``, ``?``, ``[...]``, ``{a,b}`` and ``**`` across dirs.

    An invalid pattern (such as the reversed class ``[z-a]``) is a ToolFailure, never an exception."""
    out: list[str] = []
    for token in _GLOB_TOKEN.findall(pattern):
        if token == "**/":
            out.append("(?:.*/)?")
        elif token == "**":
            out.append(".*")
        elif token == "*":
            out.append("[^/]*")
        elif token == "?":
            out.append("[^/]")
        elif token.startswith("[") and len(token) > 2:
            body = token[1:-1].replace("\\", "\\\\")
            out.append("[^" + body[1:] + "]" if body.startswith("!") else "[" + body + "]")
        elif token.startswith("{") and len(token) > 1:
            out.append("(?:" + "|".join(re2.escape(alt) for alt in token[1:-1].split(",")) + ")")
        else:
            out.append(re2.escape(token))
    return compile_regex("".join(out) + "$", f"glob '{quoted(pattern)}', read as the regex")


_SURROGATE = re.compile("[\ud800-\udfff]")


def glob_subject(rel: str) -> str:
    """A relative path as a glob is matched against it: each byte of a name that is no UTF-8 (a lone surrogate as
    Python reads it, which RE2 cannot take) as U+FFFD, one character, as ``?`` counts it."""
    return rel if rel.isascii() else _SURROGATE.sub("\ufffd", rel)


def literal_prefix(pattern: str) -> tuple[str, str]:
    """Split a glob into its leading literal directories and the rest (``src/a/*.py`` → ``src/a``, ``*.py``)."""
    parts = pattern.split("/")
    literal: list[str] = []
    while len(parts) > 1 and not re.search(r"[*?\[{]", parts[0]):
        literal.append(parts.pop(0))
    return "/".join(literal), "/".join(parts)


def _held(fd: int) -> Iterator[int]:
    """Yield ``fd``, and close it once the caller is done with it."""
    try:
        yield fd
    finally:
        os.close(fd)
