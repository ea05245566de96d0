"""tapedeck's directories as the environment names them. ``TAPEDECK_HOME`` and ``TAPEDECK_CACHE_DIR`` must be
absolute (after ``~``): a relative one would be read from whichever directory a command runs in, giving each its own
sessions, notes or cache that a command run elsewhere never finds. An XDG base directory that is relative is
ignored, as the XDG base directory spec asks."""

from __future__ import annotations

import os
from pathlib import Path

from core.shared.errors import TapedeckError

OWN = ("TAPEDECK_HOME", "TAPEDECK_CACHE_DIR")


def own_dir(name: str) -> Path | None:
    """The directory ``$name`` names, ``~`` expanded; None when it is unset or empty; a ``TapedeckError`` when it is
    relative."""
    value = os.environ.get(name)
    if not value:
        return None
    path = Path(value).expanduser()
    if not path.is_absolute():
        raise TapedeckError(f"{name} is a relative path ({value!r}); give an absolute one (such as {path.absolute()})")
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
