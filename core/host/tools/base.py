"""What every workspace tool shares: declared parameters, argument checks and the limits on output size."""

from __future__ import annotations

import math
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from core.host.tools.outcome import (
    ABORTED,
    FS_ERROR,
    INVALID_ARGUMENTS,
    TOOL_FAILED,
    TOOL_TIMEOUT,
    ToolFailure,
    ToolOutcome,
)
from core.host.tools.workspace import Workspace
from core.shared.text import quoted, shown
from core.shared.values import whole_number

ParamType = Literal["string", "integer", "number", "boolean"]
TYPE_WORDS = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false"}


@dataclass(frozen=True)
class ToolLimits:
    """Caps applied while a tool's output is produced, so no result is ever bigger than this."""

    output_chars: int = 30_000
    line_chars: int = 2_000
    read_lines: int = 2_000
    bash_timeout: float = 120.0
    bash_max_timeout: float = 600.0
    grep_matches: int = 200
    glob_results: int = 500
    list_entries: int = 500
    call_seconds: float = 60.0


class CallContext:
    """One tool call's deadline and the event that cancels it (set by the host when ``stop`` arrives).

    Tools call :meth:`check` between units of work (a file, a line, a directory entry); it raises a ToolFailure
    once the call is cancelled (``ABORTED``) or past its deadline (``TOOL_TIMEOUT``), so no tool runs on after
    either.
    """

    def __init__(self, seconds: float, cancel: threading.Event | None = None) -> None:
        self.seconds = seconds
        self.cancel = cancel if cancel is not None else threading.Event()
        self.deadline = time.monotonic() + seconds

    def remaining(self) -> float:
        """Seconds left before the deadline (never negative)."""
        return max(0.0, self.deadline - time.monotonic())

    def check(self, what: str) -> None:
        """Raise the call's ending failure when it is cancelled or out of time; ``what`` names the tool."""
        if self.cancel.is_set():
            raise ToolFailure(ABORTED, f"{what} was stopped by the operator before it finished")
        if time.monotonic() >= self.deadline:
            raise ToolFailure(
                TOOL_TIMEOUT,
                f"{what} did not finish within {self.seconds:g} s and was stopped; narrow the request",
            )


@dataclass(frozen=True)
class Param:
    """One declared parameter of a tool."""

    name: str
    type: ParamType
    description: str
    required: bool = False
    minimum: float | None = None

    def schema(self) -> dict[str, Any]:
        """The JSON-schema property for this parameter."""
        out: dict[str, Any] = {"type": self.type, "description": self.description}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        return out

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` has this parameter's JSON type (booleans are not numbers)."""
        if self.type == "string":
            return isinstance(value, str)
        if self.type == "boolean":
            return isinstance(value, bool)
        if isinstance(value, bool):
            return False
        if self.type == "integer":
            return whole_number(value) is not None
        return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def fit(rows: list[str], max_rows: int, max_chars: int) -> list[str]:
    """The leading ``rows`` that fit in both ``max_rows`` and ``max_chars`` (newlines counted; at least one)."""
    kept: list[str] = []
    size = 0
    for row in rows[:max_rows]:
        if kept and size + len(row) + 1 > max_chars:
            break
        kept.append(row)
        size += len(row) + 1
    return kept


def cut_note(kept: str, cut: int) -> str:
    """A line's kept text, saying how many more characters it had when ``cut`` is not zero."""
    return f"{kept}…[line cut: {cut} more characters]" if cut else kept


class WorkspaceTool(ABC):
    """A model tool that works inside one workspace. Subclasses declare ``name``, ``description``, ``params``."""

    name: ClassVar[str]
    description: ClassVar[str]
    params: ClassVar[tuple[Param, ...]]

    def __init__(self, workspace: Workspace, limits: ToolLimits) -> None:
        self.workspace = workspace
        self.limits = limits

    @property
    def schema(self) -> dict[str, Any]:
        """The OpenAI-style tool schema ``{name, description, parameters}``."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": {
                "type": "object",
                "properties": {p.name: p.schema() for p in self.params},
                "required": [p.name for p in self.params if p.required],
                "additionalProperties": False,
            },
        }

    def run(self, args: Mapping[str, Any], cancel: threading.Event | None = None) -> ToolOutcome:
        """Check ``args`` and run the tool under its deadline; never raises, every failure is a tool error.

        ``cancel`` is the host's stop event: once it is set the call ends with an ``ABORTED`` error.
        """
        try:
            checked = self.checked(args)
            ctx = CallContext(self.seconds_for(checked), cancel)
            ctx.check(self.name)
            return self.execute(checked, ctx)
        except ToolFailure as failure:
            return ToolOutcome(f"Error: {failure.message}", True, failure.code)
        except OSError as exc:
            where = f" ({quoted(self.workspace.display(exc.filename))})" if exc.filename else ""
            return ToolOutcome(f"Error: {self.name}: {exc.strerror or exc}{where}", True, FS_ERROR)
        except UnicodeError as exc:
            return ToolOutcome(
                f"Error: {self.name}: text that cannot be encoded ({exc})", True, INVALID_ARGUMENTS
            )
        except Exception as exc:  # the last line of defence: a tool bug must not take the host down
            return ToolOutcome(
                f"Error: {self.name} failed unexpectedly ({type(exc).__name__}: {quoted(exc, 200)})", True, TOOL_FAILED
            )

    def seconds_for(self, args: dict[str, Any]) -> float:
        """The deadline of a call with these checked arguments (``ToolLimits.call_seconds`` unless overridden)."""
        return self.limits.call_seconds

    def checked(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """``args`` with each declared parameter checked (integers made ``int``); a ToolFailure explains a bad one."""
        if not isinstance(args, Mapping):
            raise ToolFailure(INVALID_ARGUMENTS, f"{self.name} arguments must be a JSON object")
        known = {p.name: p for p in self.params}
        unknown = sorted(set(args) - set(known))
        if unknown:
            names = ", ".join(f"'{quoted(name)}'" for name in unknown)  # a model's names, cut and escaped
            raise ToolFailure(INVALID_ARGUMENTS, f"{self.name} does not take {names} (parameters: {', '.join(known)})")
        out: dict[str, Any] = {}
        for param in self.params:
            value = args.get(param.name)
            if value is None:
                if param.required:
                    raise ToolFailure(
                        INVALID_ARGUMENTS, f"{self.name} needs {param.name!r} ({param.description})"
                    )
                continue
            if not param.accepts(value):
                raise ToolFailure(
                    INVALID_ARGUMENTS,
                    f"{self.name}: {param.name!r} must be {TYPE_WORDS[param.type]} (got {shown(value)})",
                )
            if param.type == "integer":
                value = int(value)
            if param.minimum is not None and value < param.minimum:
                raise ToolFailure(
                    INVALID_ARGUMENTS, f"{self.name}: {param.name!r} must be at least {param.minimum:g}"
                )
            out[param.name] = value
        return out

    @abstractmethod
    def execute(self, args: dict[str, Any], ctx: CallContext) -> ToolOutcome:
        """Run with checked arguments, calling ``ctx.check`` between units of work; raise ToolFailure for a
        model-visible error."""
