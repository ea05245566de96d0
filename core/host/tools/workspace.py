"""The workspace boundary: every path a tool touches is resolved (symlinks included) and must stay inside.

``Workspace.resolve`` is the only way a tool turns a model-given path into a filesystem path. It resolves the
path as the operating system would (``..``, absolute paths, symbolic links at any depth, dangling links) and
refuses anything that lands outside the workspace root. ``walk`` lists files for searches without following
directory links and skips file links that lead out, so a search can never read outside either.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from core.errors import TapedeckError
from core.host.tools.outcome import FS_SANDBOX_DENIED, INVALID_ARGUMENTS, ToolFailure

# Directories that searches skip unless the search starts inside one of them.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        "node_modules",
        ".venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)


class WorkspaceError(TapedeckError):
    """The workspace root itself is unusable (missing, not a directory)."""


class Workspace:
    """A directory the tools are confined to."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        path = Path(root)
        if not path.is_dir():
            raise WorkspaceError(f"workspace {path} is not an existing directory")
        self.root = path.resolve()

    def resolve(self, raw: object, param: str = "path") -> Path:
        """The real path ``raw`` names, or a ToolFailure when it is not a usable path inside the workspace."""
        if not isinstance(raw, str) or not raw.strip():
            raise ToolFailure(INVALID_ARGUMENTS, f"{param} must be a non-empty path")
        if "\x00" in raw:
            raise ToolFailure(INVALID_ARGUMENTS, f"{param} must not contain a NUL character")
        given = Path(raw)
        lexical = Path(os.path.normpath(given if given.is_absolute() else self.root / given))
        real = Path(os.path.realpath(given if given.is_absolute() else self.root / given))
        if self.contains(real):
            return real
        if self.contains(lexical):
            why = "it goes through a symbolic link that leads out of the workspace"
        elif given.is_absolute():
            why = "absolute paths must point inside the workspace"
        else:
            why = "'..' climbs out of the workspace"
        raise ToolFailure(
            FS_SANDBOX_DENIED,
            f"{param} {raw!r} is outside the workspace {self.root} ({why}); nothing was done",
        )

    def contains(self, path: Path) -> bool:
        """Whether an already resolved ``path`` is the root or below it."""
        return path == self.root or path.is_relative_to(self.root)

    def display(self, path: str | os.PathLike[str]) -> str:
        """``path`` relative to the root (POSIX style) when inside it, else as given."""
        p = Path(path)
        if p.is_absolute() and self.contains(p):
            rel = p.relative_to(self.root).as_posix()
            return rel or "."
        return str(path)

    def walk(self, base: Path) -> Iterator[Path]:
        """Regular files under the resolved directory ``base``, sorted, never leaving the workspace."""
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for name in sorted(filenames):
                path = Path(dirpath, name)
                if path.is_symlink() and not self.contains(Path(os.path.realpath(path))):
                    continue
                if path.is_file():
                    yield path


_GLOB_TOKEN = re.compile(r"\*\*/|\*\*|\*|\?|\[!?[^\]/]+\]|\{[^{}/]*\}|[^*?\[{]+|.")


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex for a glob over POSIX relative paths: ``*``, ``?``, ``[...]``, ``{a,b}`` and ``**`` across dirs."""
    out: list[str] = []
    for token in _GLOB_TOKEN.findall(pattern):
        if token == "**/":
            out.append("(?:.*/)?")
        elif token == "**":
            out.append(".*")
        elif token == "*":
            out.append("[^/]*")
        elif token == "?":
            out.append("[^/]")
        elif token.startswith("[") and len(token) > 2:
            body = token[1:-1].replace("\\", "\\\\")
            out.append("[^" + body[1:] + "]" if body.startswith("!") else "[" + body + "]")
        elif token.startswith("{") and len(token) > 1:
            out.append("(?:" + "|".join(re.escape(alt) for alt in token[1:-1].split(",")) + ")")
        else:
            out.append(re.escape(token))
    return re.compile("".join(out) + r"\Z")


def literal_prefix(pattern: str) -> tuple[str, str]:
    """Split a glob into its leading literal directories and the rest (``src/a/*.py`` → ``src/a``, ``*.py``)."""
    parts = pattern.split("/")
    literal: list[str] = []
    while len(parts) > 1 and not re.search(r"[*?\[{]", parts[0]):
        literal.append(parts.pop(0))
    return "/".join(literal), "/".join(parts)
