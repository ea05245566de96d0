"""Search tools: ``glob`` (files by path pattern) and ``grep`` (lines by regular expression)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import re2

from core.host.tools.base import CallContext, Param, WorkspaceTool, cut_note, fit
from core.host.tools.outcome import (
    FS_NOT_FOUND,
    FS_SANDBOX_DENIED,
    INVALID_ARGUMENTS,
    ToolFailure,
    ToolOutcome,
)
from core.host.tools.textfile import is_text, numbered_lines
from core.host.tools.workspace import WalkEntry, compile_regex, glob_regex, glob_subject, literal_prefix
from core.shared.beneath import OPEN_FILE
from core.shared.text import quoted

# grep matches the first this many characters of a line (RE2 keeps the time linear; this keeps memory bounded).
GREP_LINE_CHARS = 1_000_000
PREFILTER_BYTES = 8 << 20


def _join(base: str, rel: str) -> str:
    return rel if base == "." else f"{base}/{rel}"


def _relative_glob(pattern: str, what: str) -> str:
    pattern = pattern.strip()
    if not pattern:
        raise ToolFailure(INVALID_ARGUMENTS, f"{what} must not be empty")
    if pattern.startswith("/") or ".." in pattern.split("/"):
        raise ToolFailure(
            FS_SANDBOX_DENIED,
            f"{what} '{quoted(pattern)}' must be relative and must not use '..'; pass a directory inside the workspace "
            "as path instead",
        )
    return pattern


class Glob(WorkspaceTool):
    """Workspace files whose relative path matches a glob pattern."""

    name = "glob"
    description = (
        "Find files by path pattern, relative to path (default: the workspace root). '*' and '?' stay within "
        "one directory, '**/' spans any number of directories, '{a,b}' matches either. Example: '**/*.py'."
    )
    params = (
        Param("pattern", "string", "glob pattern such as '**/*.py' or 'src/*.{ts,tsx}'", required=True),
        Param(
            "path", "string", "directory to search from, relative to the workspace root (default: the root)"
        ),
    )

    def execute(self, args: dict[str, Any], ctx: CallContext) -> ToolOutcome:
        """The files under ``path`` whose path relative to it matches ``pattern``."""
        pattern = _relative_glob(args["pattern"], "pattern")
        regex = glob_regex(pattern)
        raw = args.get("path", ".")
        base = _directory(self, raw)
        prefix, _ = literal_prefix(pattern)
        start = self.workspace.resolve(str(base / prefix)) if prefix else base
        where = self.workspace.display(base)
        found: list[str] = []
        total = 0
        if start.is_dir():
            for entry in self.workspace.walk(start):
                ctx.check(self.name)
                rel = entry.path.relative_to(start).as_posix()
                rel = f"{prefix}/{rel}" if prefix else rel
                if regex.match(glob_subject(rel)):
                    total += 1
                    if len(found) < self.limits.glob_results:
                        found.append(quoted(_join(where, rel), None))  # whole: a name the model passes back
        meta = {"pattern": pattern, "path": where, "matches": total}
        if not found:
            return ToolOutcome(f"No files match '{quoted(pattern)}' under {quoted(where)}/", meta=meta)
        found = fit(found, self.limits.glob_results, self.limits.output_chars)
        if total > len(found):
            found.append(f"[{total - len(found)} more files match; use a narrower pattern or path]")
        return ToolOutcome("\n".join(found), meta=meta)


def _directory(tool: WorkspaceTool, raw: str) -> Path:
    path = tool.workspace.resolve(raw)
    with tool.workspace.directory(path, raw):
        return path


class Grep(WorkspaceTool):
    """Lines matching a regular expression, as ``path:line:text``."""

    name = "grep"
    description = (
        "Search file contents with a regular expression (RE2 syntax: like Python's, without lookarounds or "
        "backreferences). Prints matching lines as "
        "path:line:text. path may be a file or a directory; glob filters file names ('*.py') or relative "
        "paths ('src/**/*.ts'). Binary files are skipped."
    )
    params = (
        Param("pattern", "string", "regular expression to look for", required=True),
        Param(
            "path",
            "string",
            "file or directory to search, relative to the workspace root (default: the root)",
        ),
        Param("glob", "string", "only search files matching this glob"),
        Param("ignore_case", "boolean", "match without regard to case"),
    )

    def execute(self, args: dict[str, Any], ctx: CallContext) -> ToolOutcome:
        """The ``path:line:text`` of each line under ``path`` the RE2 ``pattern`` matches."""
        pattern = args["pattern"]
        ignore_case = bool(args.get("ignore_case"))
        regex = compile_regex(pattern, "regex", ignore_case=ignore_case)
        # Whole-file prefilter: one search per small file skips the line-by-line pass where nothing matches.
        # Line anchors become multi-line ones; \A and \z would not, so such patterns go line by line.
        whole = None if "\\A" in pattern or "\\z" in pattern else compile_regex(f"(?m){pattern}", "regex", ignore_case=ignore_case)
        name_glob = _relative_glob(args["glob"], "glob") if "glob" in args else None
        raw = args.get("path", ".")
        target = self.workspace.resolve(raw)
        if not target.exists():
            raise ToolFailure(FS_NOT_FOUND, f"'{quoted(raw)}' does not exist in the workspace")
        files: Iterable[WalkEntry | Path] = [target] if target.is_file() else self.workspace.walk(target)
        if name_glob is not None:
            files = self._filtered(files, target, name_glob)
        rows: list[str] = []
        size = 0
        stopped = False
        matched_files: set[str] = set()
        for item in files:
            ctx.check(self.name)
            path = item if isinstance(item, Path) else item.path
            shown = quoted(self.workspace.display(path), None)  # whole: a name the model passes back
            for number, line, cut in self._lines(item, ctx, whole):
                if not regex.search(line):
                    continue
                row = f"{shown}:{number}:{cut_note(line[: self.limits.line_chars], cut + max(0, len(line) - self.limits.line_chars))}"
                if len(rows) >= self.limits.grep_matches or size + len(row) > self.limits.output_chars:
                    stopped = True
                    break
                rows.append(row)
                size += len(row) + 1
                matched_files.add(shown)
            if stopped:
                break
        where = self.workspace.display(target)
        meta = {
            "pattern": pattern,
            "path": where,
            "matches": len(rows),
            "files": len(matched_files),
            "complete": not stopped,
        }
        if not rows:
            return ToolOutcome(f"No matches for /{quoted(pattern)}/ in {quoted(where)}", meta=meta)
        if stopped:
            rows.append(
                f"[stopped after {len(rows)} matches; narrow the pattern, path or glob to see the rest]"
            )
        return ToolOutcome("\n".join(rows), meta=meta)

    @staticmethod
    def _filtered(files: Iterable[WalkEntry | Path], base: Path, pattern: str) -> Iterator[WalkEntry | Path]:
        regex = glob_regex(pattern)
        by_name = "/" not in pattern
        for item in files:
            path = item if isinstance(item, Path) else item.path
            subject = path.name if by_name or not base.is_dir() else path.relative_to(base).as_posix()
            if regex.match(glob_subject(subject)):
                yield item

    def _lines(
        self, item: WalkEntry | Path, ctx: CallContext, whole: re2._Regexp | None
    ) -> Iterator[tuple[int, str, int]]:
        """Numbered lines of a text file; nothing for binary, special or unreadable files, nor for a file of at
        most ``PREFILTER_BYTES`` in which ``whole`` finds nothing (a match there may still fail line by line)."""
        with contextlib.ExitStack() as stack:
            try:
                if isinstance(item, Path) or item.link_target is not None:
                    real = item if isinstance(item, Path) else item.link_target
                    fd = stack.enter_context(self.workspace.open_file(real, self.workspace.display(real)))
                else:
                    fd = os.open(item.name, os.O_RDONLY | OPEN_FILE, dir_fd=item.dir_fd)
                    stack.callback(os.close, fd)
                if not is_text(fd):
                    return
                size = os.fstat(fd).st_size
                if whole is not None and size <= PREFILTER_BYTES:
                    text = os.pread(fd, size, 0).decode("utf-8", "replace").replace("\r\n", "\n")
                    if not whole.search(text):
                        return
            except (OSError, ToolFailure):
                return
            yield from numbered_lines(fd, ctx, self.name, GREP_LINE_CHARS)
