"""Workspace tools for the reference host: ``read_file``, ``list_dir``, ``glob``, ``grep``, ``bash``,
``write_file`` and ``edit_file``.

Each tool has an OpenAI-style ``schema`` (``{name, description, parameters}``) and ``run(args) -> ToolOutcome``;
``run`` never raises for bad input: wrong arguments, missing files, paths outside the workspace and failing
commands all come back as error outcomes the model can read and recover from.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from core.host.host_config import ShellSettings
from core.host.tools.base import Param, ToolLimits, WorkspaceTool
from core.host.tools.files import EditFile, ListDir, ReadFile, WriteFile
from core.host.tools.outcome import ToolFailure, ToolOutcome
from core.host.tools.search import Glob, Grep
from core.host.tools.shell import Bash
from core.host.tools.workspace import Workspace, WorkspaceError

TOOL_CLASSES: tuple[type[WorkspaceTool], ...] = (ReadFile, ListDir, Glob, Grep, Bash, WriteFile, EditFile)


def workspace_tools(
    workspace: str | os.PathLike[str] | Workspace,
    limits: ToolLimits | None = None,
    shell: Callable[[], ShellSettings] = ShellSettings,
) -> list[WorkspaceTool]:
    """One instance of every workspace tool, confined to ``workspace``; ``shell`` gives the current
    ``host.shell`` settings (read at each ``bash`` call, so a config change applies to the next one)."""
    ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
    limits = limits or ToolLimits()
    return [Bash(ws, limits, shell) if cls is Bash else cls(ws, limits) for cls in TOOL_CLASSES]


__all__ = [
    "TOOL_CLASSES",
    "Param",
    "ToolFailure",
    "ToolLimits",
    "ToolOutcome",
    "Workspace",
    "WorkspaceError",
    "WorkspaceTool",
    "workspace_tools",
]
