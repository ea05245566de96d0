"""The ``prolong`` config section (seed 003 keys verbatim) and its validator."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath

from core.policies.rewind_config import check_keys
from core.shared.errors import ConfigError
from core.shared.text import shown
from core.shared.values import whole_number

KEYS = ("logFile", "logWindow", "promptOrder", "registerPrompt", "registerCommand", "denyKeep")
PROMPT_ORDER_BAND = (100, 199)


@dataclass(frozen=True, slots=True)
class ProlongConfig:
    """Validated prolong-memory settings; the defaults are the seed's.

    ``log_window``: 0 keeps every section, N > 0 keeps the last N, -1 disables the log file.
    """

    log_file: str = "log.txt"
    log_window: int = 0
    prompt_order: int = 150
    register_prompt: bool = True
    register_command: bool = True
    deny_keep: int = 20

    def to_dict(self) -> dict[str, object]:
        """The effective values under the seed's key names."""
        return {
            "logFile": self.log_file,
            "logWindow": self.log_window,
            "promptOrder": self.prompt_order,
            "registerPrompt": self.register_prompt,
            "registerCommand": self.register_command,
            "denyKeep": self.deny_keep,
        }

    @property
    def disabled(self) -> bool:
        """True when ``logWindow`` is -1 (no log file at all)."""
        return self.log_window == -1


def check_log_file(value: object) -> str:
    """Accept a workspace-relative file name; reject absolute paths, ``..`` and other escapes."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"prolong.logFile must be a non-empty workspace-relative path (got {shown(value)})")
    if "\0" in value:
        raise ConfigError("prolong.logFile must not contain NUL characters")
    windows = PureWindowsPath(value)
    if value.startswith(("/", "\\", "~")) or windows.drive or windows.root:
        raise ConfigError(
            f"prolong.logFile must be relative to the workspace, not an absolute path (got {shown(value)})"
        )
    parts = [part for part in re.split(r"[\\/]", value) if part not in ("", ".")]
    if ".." in parts:
        raise ConfigError(
            f"prolong.logFile must stay inside the workspace: '..' is not allowed (got {shown(value)})"
        )
    if not parts:
        raise ConfigError(f"prolong.logFile must name a file (got {shown(value)})")
    return str(PurePosixPath(*parts))


def _int(raw: Mapping[str, object], key: str, default: int, low: int, high: int | None, rule: str) -> int:
    value = raw.get(key, default)
    number = whole_number(value)
    if number is None or number < low or (high is not None and number > high):
        raise ConfigError(f"prolong.{key} must be {rule} (got {shown(value)})")
    return number


def _bool(raw: Mapping[str, object], key: str) -> bool:
    value = raw.get(key, True)
    if not isinstance(value, bool):
        raise ConfigError(f"prolong.{key} must be true or false (got {shown(value)})")
    return value


def validate(raw: Mapping[str, object]) -> ProlongConfig:
    """Check a raw ``prolong`` mapping and return the frozen config; raises ConfigError naming the key."""
    check_keys("prolong", raw, KEYS)
    low, high = PROMPT_ORDER_BAND
    return ProlongConfig(
        log_file=check_log_file(raw.get("logFile", "log.txt")),
        log_window=_int(
            raw, "logWindow", 0, -1, None, "-1 (disabled), 0 (keep all) or a positive section count"
        ),
        prompt_order=_int(
            raw, "promptOrder", 150, low, high, f"an integer in the tool-guidance band {low}-{high}"
        ),
        register_prompt=_bool(raw, "registerPrompt"),
        register_command=_bool(raw, "registerCommand"),
        deny_keep=_int(raw, "denyKeep", 20, 0, None, "a non-negative integer"),
    )
