"""Writing an export: rows go to a spool file while the log is read, then the document is written around them.

The spool keeps memory flat whatever the log's size: only the small sections (header, surface, one request,
cost, chart, cuts, notes) are held until the pass ends, and the rows are copied after the head in slices.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any, BinaryIO, Protocol

import orjson

from core.export.build import ExportOptions, ExportPass
from core.shared.errors import TapedeckError

FORMATS = ("html", "md", "json")


class Format(Protocol):
    """A format: renders each row as it comes and writes the document around the spooled rows."""

    def row(self, row: dict[str, Any]) -> bytes:
        """The bytes of one row."""
        ...

    def head(self, doc: dict[str, Any]) -> bytes:
        """What goes before the rows."""
        ...

    def tail(self, doc: dict[str, Any]) -> bytes:
        """What goes after them."""
        ...


class JsonFormat:
    """One JSON object: the document's sections, then ``events``, the rows in seq order."""

    def __init__(self) -> None:
        self.first = True

    def row(self, row: dict[str, Any]) -> bytes:
        """A row, after a comma unless it is the first."""
        sep, self.first = (b"\n" if self.first else b",\n"), False
        return sep + orjson.dumps(row)

    def head(self, doc: dict[str, Any]) -> bytes:
        """The sections and the opening of ``events``."""
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2)[:-2] + b',\n  "events": ['

    def tail(self, doc: dict[str, Any]) -> bytes:
        """The end of ``events`` and of the object."""
        return b"\n]}\n"


def make_format(name: str, log_name: str) -> Format:
    """The writer of format ``name`` (``html``, ``md`` or ``json``)."""
    if name == "json":
        return JsonFormat()
    if name == "md":
        from core.export.markdown import MarkdownFormat

        return MarkdownFormat(log_name)
    if name == "html":
        from core.export.html import HtmlFormat

        return HtmlFormat(log_name)
    raise TapedeckError(f"unknown export format {name!r}: use one of {', '.join(FORMATS)}")


def export(path: str | os.PathLike[str], out: BinaryIO, fmt: str, options: ExportOptions) -> dict[str, Any]:
    """Export the log at ``path`` to ``out`` in ``fmt``; returns the document (without its rows)."""
    writer = make_format(fmt, os.fspath(path))
    with tempfile.TemporaryFile() as spool:
        run = ExportPass(path, options, lambda row: spool.write(writer.row(row)))
        doc = run.run()
        out.write(writer.head(doc))
        spool.seek(0)
        shutil.copyfileobj(spool, out, 1 << 20)
        out.write(writer.tail(doc))
    return doc
