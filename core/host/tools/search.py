"""Search tools: ``glob`` (files by path pattern) and ``grep`` (lines by regular expression)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from core.host.tools.base import CallContext, Param, WorkspaceTool, cut_line, fit
from core.host.tools.outcome import (
    FS_NOT_DIRECTORY,
    FS_NOT_FOUND,
    FS_SANDBOX_DENIED,
    INVALID_ARGUMENTS,
    ToolFailure,
    ToolOutcome,
)
from core.host.tools.workspace import glob_regex, literal_prefix

SNIFF_BYTES = 8192


def _join(base: str, rel: str) -> str:
    return rel if base == "." else f"{base}/{rel}"


def _relative_glob(pattern: str, what: str) -> str:
    pattern = pattern.strip()
    if not pattern:
        raise ToolFailure(INVALID_ARGUMENTS, f"{what} must not be empty")
    if pattern.startswith("/") or ".." in pattern.split("/"):
        raise ToolFailure(
            FS_SANDBOX_DENIED,
            f"{what} {pattern!r} must be relative and must not use '..'; pass a directory inside the workspace "
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
        pattern = _relative_glob(args["pattern"], "pattern")
        raw = args.get("path", ".")
        base = _directory(self, raw)
        prefix, _ = literal_prefix(pattern)
        start = self.workspace.resolve(str(base / prefix)) if prefix else base
        regex = glob_regex(pattern)
        where = self.workspace.display(base)
        found: list[str] = []
        total = 0
        if start.is_dir():
            for path in self.workspace.walk(start):
                rel = path.relative_to(start).as_posix()
                rel = f"{prefix}/{rel}" if prefix else rel
                if regex.match(rel):
                    total += 1
                    if len(found) < self.limits.glob_results:
                        found.append(_join(where, rel))
        meta = {"pattern": pattern, "path": where, "matches": total}
        if not found:
            return ToolOutcome(f"No files match {pattern!r} under {where}/", meta=meta)
        found = fit(found, self.limits.glob_results, self.limits.output_chars)
        if total > len(found):
            found.append(f"[{total - len(found)} more files match; use a narrower pattern or path]")
        return ToolOutcome("\n".join(found), meta=meta)


def _directory(tool: WorkspaceTool, raw: str) -> Path:
    path = tool.workspace.resolve(raw)
    if not path.exists():
        raise ToolFailure(FS_NOT_FOUND, f"{raw!r} does not exist in the workspace")
    if not path.is_dir():
        raise ToolFailure(FS_NOT_DIRECTORY, f"{raw!r} is a file, not a directory")
    return path


class Grep(WorkspaceTool):
    """Lines matching a regular expression, as ``path:line:text``."""

    name = "grep"
    description = (
        "Search file contents with a regular expression (Python syntax). Prints matching lines as "
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
        pattern = args["pattern"]
        try:
            regex = re.compile(pattern, re.IGNORECASE if args.get("ignore_case") else 0)
        except re.error as exc:
            raise ToolFailure(INVALID_ARGUMENTS, f"invalid regex {pattern!r}: {exc}") from exc
        raw = args.get("path", ".")
        target = self.workspace.resolve(raw)
        if not target.exists():
            raise ToolFailure(FS_NOT_FOUND, f"{raw!r} does not exist in the workspace")
        files: Iterable[Path] = [target] if target.is_file() else self.workspace.walk(target)
        if "glob" in args:
            files = self._filtered(files, target, _relative_glob(args["glob"], "glob"))
        rows: list[str] = []
        size = 0
        stopped = False
        matched_files: set[str] = set()
        for path in files:
            shown = self.workspace.display(path)
            for number, line in _text_lines(path):
                if not regex.search(line):
                    continue
                body = cut_line(line.rstrip("\r\n"), self.limits.line_chars)
                row = f"{shown}:{number}:{body}"
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
            return ToolOutcome(f"No matches for /{pattern}/ in {where}", meta=meta)
        if stopped:
            rows.append(
                f"[stopped after {len(rows)} matches; narrow the pattern, path or glob to see the rest]"
            )
        return ToolOutcome("\n".join(rows), meta=meta)

    @staticmethod
    def _filtered(files: Iterable[Path], base: Path, pattern: str) -> Iterable[Path]:
        regex = glob_regex(pattern)
        by_name = "/" not in pattern
        for path in files:
            subject = (
                path.name if by_name else path.relative_to(base).as_posix() if base.is_dir() else path.name
            )
            if regex.match(subject):
                yield path


def _text_lines(path: Path) -> Iterable[tuple[int, str]]:
    """Numbered lines of a text file; nothing for binary or unreadable files."""
    try:
        with open(path, "rb") as f:
            if b"\x00" in f.read(SNIFF_BYTES):
                return
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            yield from enumerate(f, 1)
    except OSError:
        return
