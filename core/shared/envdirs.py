"""tapedeck's directories as the environment names them. ``TAPEDECK_HOME`` and ``TAPEDECK_CACHE_DIR`` must be
absolute (after ``~``): a relative one would be read from whichever directory a command runs in, giving each its own
sessions, notes or cache that a command run elsewhere never finds. An XDG base directory that is relative is
ignored, as the XDG base directory spec asks."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from core.shared.errors import TapedeckError
from core.shared.text import shown

OWN = ("TAPEDECK_HOME", "TAPEDECK_CACHE_DIR")


def own_dir(name: str) -> Path | None:
    """The directory ``$name`` names, ``~`` expanded; None when it is unset or empty; a ``TapedeckError`` when it is
    relative."""
    value = os.environ.get(name)
    if not value:
        return None
    path = Path(value).expanduser()
    if not path.is_absolute():
        raise TapedeckError(
            f"{name} is a relative path ({shown(value)}); give an absolute one (such as {shown(str(path.absolute()))})"
        )
    return path


def check_own_dirs() -> None:
    """A ``TapedeckError`` naming the first of ``OWN`` that is relative."""
    for name in OWN:
        own_dir(name)


def xdg_dir(name: str, default: Path) -> Path:
    """The XDG base directory ``$name`` (``~`` expanded), or ``default`` when it is unset, empty or relative."""
    value = os.environ.get(name)
    path = Path(value).expanduser() if value else None
    return path if path is not None and path.is_absolute() else default


def in_the_way(path: Path) -> tuple[Path, str] | None:
    """What keeps ``path`` from being a directory tapedeck makes and keeps files in, as ``(place, why)``: the first of
    ``path`` and its parents that is there and is no directory (a file, a link to nothing or to itself: ``is not a
    directory``), or that this user may not look at (``cannot be looked at (Permission denied)``); None when nothing
    does."""
    for step in (path, *path.parents):
        try:
            if os.path.lexists(step) and not stat.S_ISDIR(os.stat(step).st_mode):
                return step, "is not a directory"
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):  # a place this user may not look at
                return step, f"cannot be looked at ({exc.strerror or exc})"
            return step, "is not a directory"  # a link to nothing, or to itself
    return None
