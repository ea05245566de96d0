"""The host's view of tool execution: outcomes, argument parsing and the workspace tool registry."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.host.host_config import ShellSettings
from core.host.tools.base import ToolLimits
from core.host.tools.outcome import ToolOutcome
from core.host.tools.sandbox import ShellMode, shell_mode
from core.shared.arguments import loads_arguments
from core.shared.text import quoted


@dataclass
class CallResult:
    """A tool call's result as the host logs it (workspace tools, recall tools and policy tools alike).

    ``error`` is the internal failure identity (``data.error``: name and code, never model-visible); ``before``
    holds policy events that must land before the result (a checkpoint mark, a rewind's report).
    """

    text: str
    is_error: bool = False
    error: dict[str, str] | None = None
    meta: Any = None
    before: list[dict[str, Any]] = field(default_factory=list)


def parse_arguments(name: str, arguments: str) -> dict[str, Any] | CallResult:
    """The JSON object a tool call carries, or a CallResult error explaining why it is not one."""
    try:
        parsed = loads_arguments(arguments)
    except ValueError as exc:
        return CallResult(f"Error: {name} arguments are {exc}", True,
                           {"name": "ArgumentError", "code": "BAD_ARGUMENTS"})  # fmt: skip
    if not isinstance(parsed, dict):
        return CallResult(f"Error: {name} arguments must be a JSON object", True,
                           {"name": "ArgumentError", "code": "BAD_ARGUMENTS"})  # fmt: skip
    return parsed


def call_result(outcome: ToolOutcome) -> CallResult:
    """A workspace tool's outcome as the host logs it."""
    error = {"name": "WorkspaceToolError", "code": outcome.error_code} if outcome.error_code else None
    return CallResult(outcome.text, outcome.is_error, error, outcome.meta)


class ToolBox:
    """The workspace tools, by name, and the event that stops a running call.

    ``interrupt()`` may be called from any thread (the host calls it when ``stop`` arrives): the running call
    ends at once with an ``ABORTED`` error (a shell command's whole process tree is killed), and so does every
    later call.
    """

    def __init__(
        self, workspace: Path, shell: Callable[[], ShellSettings] = ShellSettings, limits: ToolLimits | None = None
    ) -> None:
        from core.host.tools import workspace_tools

        self.workspace = workspace
        self.shell = shell
        self.tools = {tool.name: tool for tool in workspace_tools(workspace, limits, shell=shell)}
        self.cancel = threading.Event()

    def shell_mode(self) -> ShellMode:
        """How the ``bash`` tool is confined under the current settings on this machine."""
        return shell_mode(self.shell())

    def protect(self, path: Path) -> None:
        """Keep ``path`` read-only for sandboxed shell commands even when it lies inside the workspace."""
        bash = self.tools["bash"]
        bash.read_only = (*bash.read_only, path.resolve())  # type: ignore[attr-defined]

    def interrupt(self) -> None:
        """Stop the running tool call, if any, and refuse later ones (thread-safe)."""
        self.cancel.set()

    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI-style schemas of every workspace tool."""
        return [tool.schema for tool in self.tools.values()]

    def run(self, name: str, arguments: str) -> CallResult:
        """Run a workspace tool; unknown names and bad arguments become tool errors."""
        tool = self.tools.get(name)
        if tool is None:
            return self.unavailable(name, set(self.tools))
        args = parse_arguments(name, arguments)
        if isinstance(args, CallResult):
            return args
        return call_result(tool.run(args, self.cancel))

    @staticmethod
    def unavailable(name: str, available: set[str]) -> CallResult:
        """The result for a call to a tool that is not offered in this step."""
        names = ", ".join(sorted(available)) or "none in this step"
        return CallResult(f"Error: no tool named '{quoted(name)}' is available (available: {names})", True,
                           {"name": "ToolNotFoundError", "code": "TOOL_NOT_FOUND"})  # fmt: skip
