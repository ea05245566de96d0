"""File tools: ``read_file``, ``list_dir``, ``write_file`` and ``edit_file``."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.host.tools.base import CallContext, Param, WorkspaceTool, cut_note, fit
from core.host.tools.outcome import (
    EDIT_NO_MATCH,
    EDIT_NOT_UNIQUE,
    FS_IS_DIRECTORY,
    FS_NOT_TEXT,
    INVALID_ARGUMENTS,
    ToolFailure,
    ToolOutcome,
)
from core.host.tools.textfile import check_text, numbered_lines
from core.host.tools.workspace import Workspace
from core.shared.beneath import OPEN_FILE
from core.shared.text import quoted

MAX_LINES_LISTED = 10
EDIT_MAX_BYTES = 16 << 20
TEMP_TOKEN_BYTES = 6


def read_text(workspace: Workspace, path: Path, raw: str, tool: str) -> str:
    """The whole text of the resolved file ``path`` as ``edit_file`` reads it (ToolFailure: not text, too big)."""
    with workspace.open_file(path, raw) as fd:
        check_text(fd, raw, tool)
        size = os.fstat(fd).st_size
        if size > EDIT_MAX_BYTES:
            raise ToolFailure(
                INVALID_ARGUMENTS,
                f"'{quoted(raw)}' is {size / 2**20:.0f} MiB; {tool} holds a whole file in memory and takes files up "
                f"to {EDIT_MAX_BYTES >> 20} MiB: change a larger one with bash (sed, a script)",
            )
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolFailure(
            FS_NOT_TEXT, f"'{quoted(raw)}' is not UTF-8 text (byte {exc.start}); it was left as it is"
        ) from exc


def _temp_name(name: str) -> str:
    return f".{name}.{secrets.token_hex(TEMP_TOKEN_BYTES)}.tmp"


def remove_temp_files(workspace: Workspace, path: Path, raw: str) -> list[str]:
    """Delete the temporary files a write to ``path`` that was killed before its rename left beside it (named as
    ``_write_text`` names them); their names, relative to the workspace."""
    pattern = re.compile(rf"\.{re.escape(path.name)}\.[0-9a-f]{{{2 * TEMP_TOKEN_BYTES}}}\.tmp")
    removed = []
    with contextlib.suppress(ToolFailure, OSError), workspace.directory(path.parent, raw) as parent:
        for name in os.listdir(parent):
            if pattern.fullmatch(name):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=parent)
                    removed.append(workspace.display(path.parent / name))
    return removed


def _write_text(tool: WorkspaceTool, path: Path, raw: str, text: str) -> bool:
    """Replace ``path`` with ``text`` in one step (temp file + rename beneath the workspace), keeping an existing
    file's mode; True when the file was created. A link in the way is replaced, never followed."""
    data = text.encode("utf-8")
    with tool.workspace.directory(path.parent, raw, create=True) as parent:
        try:
            old = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and stat.S_ISDIR(old.st_mode):
            raise ToolFailure(FS_IS_DIRECTORY, f"'{quoted(raw)}' is a directory; give a file path")
        tmp = _temp_name(path.name)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | OPEN_FILE, 0o666, dir_fd=parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                if old is not None and stat.S_ISREG(old.st_mode):
                    os.fchmod(f.fileno(), stat.S_IMODE(old.st_mode))
                f.flush()
                os.fsync(f.fileno())  # the text is on disk before the name points at it (a power cut, not a kill)
            os.replace(tmp, path.name, src_dir_fd=parent, dst_dir_fd=parent)
            with contextlib.suppress(OSError):  # the rename is done; a file system that cannot sync a directory
                os.fsync(parent)  # only leaves the new name less durable
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=parent)
            raise
    return old is None


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


class ReadFile(WorkspaceTool):
    """Numbered lines of a text file, a page at a time."""

    name = "read_file"
    description = (
        "Read a text file from the workspace. Each line comes back prefixed with its line number and '|'. "
        "Large files are returned a page at a time: pass offset (first line, 1-based) and limit to continue."
    )
    params = (
        Param("path", "string", "file path, relative to the workspace root", required=True),
        Param("offset", "integer", "first line to return (1-based, default 1)", minimum=1),
        Param("limit", "integer", "how many lines to return at most", minimum=1),
    )

    def execute(self, args: dict[str, Any], ctx: CallContext) -> ToolOutcome:
        """The page of ``limit`` lines from ``offset``, numbered, with how to read on when more follow."""
        raw = args["path"]
        path = self.workspace.resolve(raw)
        offset = args.get("offset", 1)
        limit = min(args.get("limit", self.limits.read_lines), self.limits.read_lines)
        rows: list[str] = []
        size = total = 0
        last = offset - 1
        full = False
        with self.workspace.open_file(path, raw) as fd:
            check_text(fd, raw, self.name)
            for number, body, cut in numbered_lines(fd, ctx, self.name, self.limits.line_chars):
                total = number
                if number < offset or full or len(rows) >= limit:
                    continue
                row = f"{number:>6}|{cut_note(body, cut)}"
                if rows and size + len(row) + 1 > self.limits.output_chars:
                    full = True
                    continue
                rows.append(row)
                size += len(row) + 1
                last = number
        rel = self.workspace.display(path)
        meta = {"path": rel, "offset": offset, "lines": len(rows), "totalLines": total}
        if total == 0:
            return ToolOutcome(f"{quoted(rel)} is empty (0 lines)", meta=meta)
        if offset > total:
            raise ToolFailure(
                INVALID_ARGUMENTS, f"offset {offset} is past the end of {quoted(rel)}, which has {total} lines"
            )
        text = "\n".join(rows)
        if last < total:
            text += f"\n[lines {offset}-{last} of {total}; read on with offset={last + 1}]"
        return ToolOutcome(text, meta=meta)


class ListDir(WorkspaceTool):
    """The entries of one directory."""

    name = "list_dir"
    description = (
        "List a workspace directory: sub-directories end with '/', symbolic links show their target. "
        "Use glob to find files by pattern across many directories."
    )
    params = (Param("path", "string", "directory, relative to the workspace root (default: the root)"),)

    def execute(self, args: dict[str, Any], ctx: CallContext) -> ToolOutcome:
        """The directory's entries, sorted, directories marked ``/`` and links with their target."""
        raw = args.get("path", ".")
        path = self.workspace.resolve(raw)
        with self.workspace.directory(path, raw) as fd:
            entries = []
            with os.scandir(fd) as it:
                for entry in it:
                    ctx.check(self.name)
                    entries.append((entry.name, _entry_suffix(entry, fd)))
        entries.sort()
        rel = self.workspace.display(path)
        rows = fit(
            [quoted(name, None) + suffix for name, suffix in entries[: self.limits.list_entries]],
            self.limits.list_entries,
            self.limits.output_chars,
        )
        if len(entries) > len(rows):
            rows.append(f"[{len(entries) - len(rows)} more entries not shown; use glob to narrow down]")
        head = f"{quoted(rel)}/ holds {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
        return ToolOutcome("\n".join([head, *rows]), meta={"path": rel, "entries": len(entries)})


def _entry_suffix(entry: os.DirEntry[str], dir_fd: int) -> str:
    if entry.is_symlink():
        return f" -> {quoted(os.readlink(entry.name, dir_fd=dir_fd), None)}"
    return "/" if entry.is_dir() else ""


class WriteFile(WorkspaceTool):
    """Create or replace a whole file."""

    name = "write_file"
    description = (
        "Create a file, or replace an existing file's whole content, inside the workspace. Missing parent "
        "directories are created. To change part of a file, use edit_file instead."
    )
    params = (
        Param("path", "string", "file path, relative to the workspace root", required=True),
        Param("content", "string", "the complete new content of the file", required=True),
    )

    def execute(self, args: dict[str, Any], ctx: CallContext) -> ToolOutcome:
        """Replace ``path`` with ``content`` in one step, creating missing parent directories."""
        raw, content = args["path"], args["content"]
        path = self.workspace.resolve(raw)
        ctx.check(self.name)
        created = _write_text(self, path, raw, content)
        return write_outcome(self.workspace.display(path), content, created)


def write_outcome(rel: str, content: str, created: bool) -> ToolOutcome:
    """``write_file``'s outcome once ``content`` is at ``rel`` (``created``: no file was there before)."""
    size = len(content.encode("utf-8"))
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    verb = "Created" if created else "Replaced"
    return ToolOutcome(
        f"{verb} {quoted(rel)} ({lines} lines, {size} bytes)", meta={"path": rel, "bytes": size, "created": created}
    )


class EditFile(WorkspaceTool):
    """Replace an exact piece of text in a file."""

    name = "edit_file"
    description = (
        "Edit a text file by replacing old_text with new_text. old_text must match the file exactly, "
        "whitespace and indentation included, and must occur exactly once unless replace_all is true; "
        "include a few surrounding lines to make it unique."
    )
    params = (
        Param("path", "string", "file path, relative to the workspace root", required=True),
        Param("old_text", "string", "the exact text to replace", required=True),
        Param("new_text", "string", "the text to put in its place", required=True),
        Param("replace_all", "boolean", "replace every occurrence instead of requiring exactly one"),
    )

    def execute(self, args: dict[str, Any], ctx: CallContext) -> ToolOutcome:
        """Replace ``old_text`` by ``new_text`` (once, or everywhere with ``replace_all``)."""
        raw = args["path"]
        if not args["old_text"]:
            raise ToolFailure(
                INVALID_ARGUMENTS, "old_text must not be empty; use write_file to create a file"
            )
        if args["old_text"] == args["new_text"]:
            raise ToolFailure(
                INVALID_ARGUMENTS, "old_text and new_text are identical; there is nothing to change"
            )
        path = self.workspace.resolve(raw)
        text = read_text(self.workspace, path, raw, self.name)
        edited, outcome = edit_text(text, self.workspace.display(path), args)
        ctx.check(self.name)
        _write_text(self, path, raw, edited)
        return outcome


def edit_text(text: str, rel: str, args: Mapping[str, Any]) -> tuple[str, ToolOutcome]:
    """What ``edit_file`` with checked ``args`` makes of a file ``rel`` holding ``text``: the new text and the
    outcome it reports (a ToolFailure when ``old_text`` does not match as the call requires)."""
    old, new = args["old_text"], args["new_text"]
    count = text.count(old)
    if count == 0:
        raise ToolFailure(
            EDIT_NO_MATCH,
            f"old_text was not found in {quoted(rel)}; it must match exactly (whitespace, indentation, line "
            "endings). Read the file again and copy the text as it is now",
        )
    if count > 1 and not args.get("replace_all", False):
        starts: list[int] = []
        at = text.find(old)
        while at != -1 and len(starts) < MAX_LINES_LISTED:
            starts.append(_line_of(text, at))
            at = text.find(old, at + 1)
        more = "" if count <= MAX_LINES_LISTED else ", …"
        raise ToolFailure(
            EDIT_NOT_UNIQUE,
            f"old_text occurs {count} times in {quoted(rel)} (lines {', '.join(map(str, starts))}{more}); "
            "include more surrounding lines so it matches once, or set replace_all to true",
        )
    first = _line_of(text, text.index(old))
    return text.replace(old, new), ToolOutcome(
        f"Edited {quoted(rel)}: replaced {count} occurrence{'s' if count > 1 else ''} starting at line {first}",
        meta={"path": rel, "replacements": count, "diffs": [{"path": rel, "oldText": old, "newText": new}]},
    )
