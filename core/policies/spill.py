"""Spilled tool results: finding the stored-text locator in a logged result and reading the full text back.

A spilled result is logged as a preview; the full text lives in a file outside the log. Two writers produce them:

- the fold's spill arm logs a digest whose first line ends ``· full text (N bytes) stored at <locator> — <hint>]``;
- DSH's native spill policy keeps a head/tail preview and ends the text with the notice
  ``(Omitted N bytes. Full formatted result stored at: <path>. Use read with offset/limit, or grep this path to
  search within it.)``. That policy stores the whole formatted content, so when the notice closes the last of
  several text parts it previews all of them together.

``logged_text_parts`` turns a result's content into text parts, each marked with the stored text it previews;
``hydrate`` reads a part's full text back, from this session's own stores only (``SpillStores``): the locator is
text inside a tool result, which the tool's output (the model's choice) can forge, so a locator naming any other
file is refused rather than read.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from core.shared.errors import TapedeckError
from core.shared.regex import linear_regex
from core.shared.values import whole_digits

# by RE2, in time linear in the line: the first line of a tool's output is the tool's to choose, and under Python's
# re a crafted one (a 74 KB line of ' · full text (1 bytes) stored at a — ') took 50 s
_FOLD_SPILL = linear_regex(r"\[.* · full text \((\d+) bytes\) stored at (.+?) — .*\]")
_NATIVE_SPILL = re.compile(
    r"(?:\A|\n\n)\(Omitted \d+ bytes\.(?: Omitted \d+ images\.)? Full formatted result stored at: ([^\n]+)\. "
    r"Use read with offset/limit, or grep this path to search within it\.\)\Z",
    re.ASCII,
)


SPILL_DIR = "spill"  # where tapedeck's host stores a spilled result, beside the session log
DSH_SESSION_HASH_CHARS = 12  # DSH's spill directory: session-<the first 12 hex digits of sha256(session id)>


class SpillUnavailable(TapedeckError):
    """The stored full text of a spilled result cannot be read."""


class SpillRefused(SpillUnavailable):
    """The locator names no spill file of this session's own stores: it is not read (``SpillStores``)."""


@dataclass(frozen=True, slots=True)
class StoredText:
    """Where a spilled result's full text was stored; ``size`` is its byte count when the preview says so."""

    locator: str
    size: int | None = None


@dataclass(frozen=True, slots=True)
class LoggedPart:
    """One text part of a logged result and, when it is a spill preview, the stored text it stands for."""

    text: str
    preview: StoredText | None = None


def fold_spill_locator(text: str) -> StoredText | None:
    """The locator named by a fold spill header on the first line of ``text``."""
    end = text.find("\n")
    match = _FOLD_SPILL.fullmatch(text if end < 0 else text[:end])
    size = whole_digits(match.group(1)) if match else None  # a size too long to convert: no header of ours
    return StoredText(match.group(2), size) if match and size is not None else None


def native_spill_locator(text: str) -> StoredText | None:
    """The path named by DSH's native spill notice at the end of ``text``."""
    match = _NATIVE_SPILL.search(text)
    return StoredText(match.group(1)) if match else None


def stored_text_locator(text: str) -> StoredText | None:
    """The stored text a logged text part previews, if any (fold header first, then the native notice)."""
    return fold_spill_locator(text) or native_spill_locator(text)


def logged_text_parts(content: Sequence[Any] | None) -> list[LoggedPart]:
    """The text parts of a logged result's content, each marked with the stored text it previews."""
    texts = [
        part["text"]
        for part in content or ()
        if isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("text"), str)
    ]
    if len(texts) > 1 and fold_spill_locator(texts[-1]) is None:
        native = native_spill_locator(texts[-1])
        if native is not None:
            return [LoggedPart("\n".join(texts), native)]
    return [LoggedPart(text, stored_text_locator(text)) for text in texts]


@dataclass(frozen=True, slots=True)
class SpillStores:
    """This session's own spill stores, the only places a spilled result's full text is read from.

    ``log_dir`` holds tapedeck's ``spill/`` (relative locators ``spill/<name>``); ``dsh_dir`` is the name of DSH's
    directory for this session (``session-<sha256(id) prefix>``, absolute locators). None: no such store.
    """

    log_dir: Path | None
    dsh_dir: str | None

    @classmethod
    def of(cls, log_path: Path | None, header: Mapping[str, Any]) -> SpillStores:
        """The stores of the session whose log is at ``log_path`` and whose header is ``header``."""
        sid = header.get("id")
        digest = hashlib.sha256(sid.encode("utf-8", "replace")).hexdigest() if isinstance(sid, str) else None
        return cls(log_path.parent if log_path is not None else None,
                   f"session-{digest[:DSH_SESSION_HASH_CHARS]}" if digest else None)  # fmt: skip


def _refused(stored: StoredText, why: str) -> SpillRefused:
    return SpillRefused(f"not one of this session's spill files ({why}); not read: {stored.locator}")


def _store_file(stored: StoredText, stores: SpillStores) -> tuple[Path, str]:
    """The store directory and the file name in it that ``stored`` names, or ``SpillUnavailable`` saying why not."""
    path = PurePosixPath(stored.locator)
    if ".." in path.parts or path.name in ("", ".", ".."):
        raise _refused(stored, "a path through '..'" if ".." in path.parts else "no file name")
    if not path.is_absolute():
        if path.parent != PurePosixPath(SPILL_DIR):
            raise _refused(stored, f"not in {SPILL_DIR}/ beside the log")
        if stores.log_dir is None:
            raise _refused(stored, f"no log file, so no {SPILL_DIR}/ beside it")
        return stores.log_dir / SPILL_DIR, path.name
    if stores.dsh_dir is None:
        raise _refused(stored, "no session id, so no DSH spill directory")
    if path.parent.name != stores.dsh_dir:
        raise _refused(stored, f"not in its DSH spill directory {stores.dsh_dir}")
    return Path(path.parent), path.name


def _is_link(name: str | Path, dir_fd: int | None) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def _open_unlinked(stored: StoredText, name: str | Path, flags: int, dir_fd: int | None = None) -> int:
    """``os.open`` of ``name`` (relative to ``dir_fd``) that refuses a symbolic link in its last component."""
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(name, dir_fd):
            raise _refused(stored, "a symbolic link") from exc
        raise SpillUnavailable(f"cannot read {stored.locator}: {exc.strerror or exc}") from exc
    except ValueError as exc:  # a NUL or a lone surrogate: no name a file can have
        raise SpillUnavailable(f"cannot read {stored.locator}: {exc}") from exc


def read_stored(stored: StoredText, stores: SpillStores) -> str:
    """The full stored text (UTF-8, invalid bytes replaced); ``SpillUnavailable`` says why it cannot be read.

    Only a regular file of this session's stores is read, opened without following a symbolic link at the file or
    at its store directory (so nothing planted there leads out of it).
    """
    directory, name = _store_file(stored, stores)
    dir_fd = _open_unlinked(stored, directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        # non-blocking: opening a FIFO to read would wait for a writer
        fd = _open_unlinked(stored, name, os.O_RDONLY | os.O_NONBLOCK, dir_fd)
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _refused(stored, "not a regular file")
        try:
            return file.read().decode("utf-8", "replace")
        except OSError as exc:
            raise SpillUnavailable(f"cannot read {stored.locator}: {exc.strerror or exc}") from exc


def hydrate(part: LoggedPart, stores: SpillStores) -> str:
    """A logged part's full text: the stored original when it is a spill preview, else its own text."""
    return part.text if part.preview is None else read_stored(part.preview, stores)
