"""Writing whole buffers: to a file descriptor (``os.write`` may write less than it is given), and to a file
that is replaced in one step (readers see the old bytes or the new, never part of them); a file with no name
until it is whole, which a process killed while writing it leaves nowhere."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from pathlib import Path


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``, calling ``os.write`` until none is left."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def replace_file(
    path: Path, data: bytes | Iterable[bytes], *, prefix: str, suffix: str = "", sync: bool = False
) -> None:
    """Write ``data`` (bytes, or pieces written one after another) to a temporary file beside ``path`` (named
    ``prefix…suffix``), fsynced first when ``sync``, then rename it over ``path``; the temporary file is removed
    when anything fails."""
    fd, temp = _create_beside(path, prefix, suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.writelines([data] if isinstance(data, bytes) else data)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


_RANDOM = 6  # bytes of a temporary name's random part, written as twice as many hex digits
_HEX = frozenset("0123456789abcdef")
# what ``tempfile.mkstemp`` opens its file with: a new file (never one a link points to), closed on exec
_NEW = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_TRIES = 100


def is_temporary(name: str, prefix: str, suffix: str = "") -> bool:
    """Whether ``name`` is one ``replace_file`` may write under for ``prefix`` and ``suffix`` (``_create_beside``)."""
    middle = name[len(prefix) : len(name) - len(suffix)]
    return (
        name.startswith(prefix) and name.endswith(suffix) and len(middle) == 2 * _RANDOM and all(c in _HEX for c in middle)
    )


def _create_beside(path: Path, prefix: str, suffix: str) -> tuple[int, str]:
    """A new file beside ``path`` named ``prefix``, 12 random hex digits and ``suffix``, readable by its owner
    alone, open for writing: its descriptor and path. What ``tempfile.mkstemp`` does, without importing
    ``tempfile``: it and its ``random`` were 6 M instructions of a first read that writes a log's index."""
    for _ in range(_TRIES):
        temp = os.path.join(os.path.abspath(path.parent), f"{prefix}{os.urandom(_RANDOM).hex()}{suffix}")
        try:
            return os.open(temp, _NEW, 0o600), temp
        except FileExistsError:
            continue  # a name taken: another one
    raise FileExistsError(errno.EEXIST, "no unused temporary file name found", str(path.parent))


def unnamed_file(directory: Path | int, flags: int, mode: int) -> int | None:
    """A new file of ``directory`` (a path, or a descriptor of it) with no name (``O_TMPFILE``), opened with
    ``flags`` added; None where the file system makes none, or no ``/proc`` is there to name it by later
    (``name_file``, ``name_file_at``)."""
    if not hasattr(os, "O_TMPFILE") or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        flags |= os.O_TMPFILE | os.O_CLOEXEC
        if isinstance(directory, int):
            return os.open(".", flags, mode, dir_fd=directory)
        return os.open(directory, flags, mode)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):  # the file system makes none
            return None
        raise


def name_file(fd: int, path: Path) -> None:
    """Give the ``unnamed_file`` open as ``fd`` the name ``path`` (which must not exist)."""
    here = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        name_file_at(fd, here, path.name)
    finally:
        os.close(here)


def name_file_at(fd: int, dir_fd: int, name: str) -> None:
    """Give the ``unnamed_file`` open as ``fd`` the name ``name`` (which must not exist) in the directory open as
    ``dir_fd``."""
    # with a dir_fd os.link is linkat(…, AT_SYMLINK_FOLLOW), which names the file the link stands for
    os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dir_fd)
