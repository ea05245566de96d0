"""What every workspace tool shares: declared parameters, argument checks and the limits on output size."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from core.host.tools.outcome import FS_ERROR, INVALID_ARGUMENTS, ToolFailure, ToolOutcome
from core.host.tools.workspace import Workspace

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
            return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
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


def cut_line(line: str, limit: int) -> str:
    """``line`` shortened to ``limit`` characters, saying how much was cut."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]}…[line cut: {len(line) - limit} more characters]"


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

    def run(self, args: Mapping[str, Any]) -> ToolOutcome:
        """Check ``args`` against the declared parameters and run the tool; every failure is a tool error."""
        try:
            return self.execute(self._checked(args))
        except ToolFailure as failure:
            return ToolOutcome(f"Error: {failure.message}", True, failure.code)
        except OSError as exc:
            where = f" ({self.workspace.display(exc.filename)})" if exc.filename else ""
            return ToolOutcome(f"Error: {self.name}: {exc.strerror or exc}{where}", True, FS_ERROR)
        except UnicodeError as exc:
            return ToolOutcome(
                f"Error: {self.name}: text that cannot be encoded ({exc})", True, INVALID_ARGUMENTS
            )

    def _checked(self, args: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(args, Mapping):
            raise ToolFailure(INVALID_ARGUMENTS, f"{self.name} arguments must be a JSON object")
        known = {p.name: p for p in self.params}
        unknown = sorted(set(args) - set(known))
        if unknown:
            raise ToolFailure(
                INVALID_ARGUMENTS,
                f"{self.name} does not take {', '.join(map(repr, unknown))} (parameters: {', '.join(known)})",
            )
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
                    f"{self.name}: {param.name!r} must be {TYPE_WORDS[param.type]} (got {type(value).__name__} {value!r:.60})",
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
    def execute(self, args: dict[str, Any]) -> ToolOutcome:
        """Run with checked arguments; raise ToolFailure for a model-visible error."""
