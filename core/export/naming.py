"""The name an export is given in a directory (``export LOG -o DIR``, the TUI's ``X``)."""

from __future__ import annotations


def export_name(session_id: str, stem: str, at: int | None, fmt: str) -> str:
    """``tapedeck-ID[-at-SEQ].FMT``: the session's id (else ``stem``, the log's name) reduced to letters, digits,
    ``-``, ``_`` and ``.``, so that it names a file in that directory and nowhere else, then the moment and the
    format."""
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id or stem)[:60] or "session"
    return f"tapedeck-{name}{f'-at-{at}' if at is not None else ''}.{fmt}"
