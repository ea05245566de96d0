"""Spilled tool results: finding the stored-text locator in a logged result and reading the full text back.

A spilled result is logged as a preview; the full text lives in a file outside the log. Two writers produce them:

- the fold's spill arm logs a digest whose first line ends ``· full text (N bytes) stored at <locator> — <hint>]``;
- DSH's native spill policy keeps a head/tail preview and ends the text with the notice
  ``(Omitted N bytes. Full formatted result stored at: <path>. Use read with offset/limit, or grep this path to
  search within it.)``. That policy stores the whole formatted content, so when the notice closes the last of
  several text parts it previews all of them together.

``logged_text_parts`` turns a result's content into text parts, each marked with the stored text it previews;
``hydrate`` reads a part's full text back. Relative locators are read from the session log's directory.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
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


class SpillUnavailable(TapedeckError):
    """The stored full text of a spilled result cannot be read."""


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


def read_stored(stored: StoredText, base_dir: Path | None) -> str:
    """The full stored text (UTF-8, invalid bytes replaced); ``SpillUnavailable`` says why it cannot be read."""
    path = Path(stored.locator).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError as exc:
        raise SpillUnavailable(f"cannot read {stored.locator}: {exc.strerror or exc}") from exc


def hydrate(part: LoggedPart, base_dir: Path | None) -> str:
    """A logged part's full text: the stored original when it is a spill preview, else its own text."""
    return part.text if part.preview is None else read_stored(part.preview, base_dir)


def session_dir(path: Path | None) -> Path | None:
    """The directory relative spill locators are read from: the one holding the session log."""
    return path.parent if path is not None else None
