"""A tool call's outcome, the failure a tool raises to produce an error outcome, and the error codes used."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Error codes a workspace tool reports in ``ToolOutcome.error_code`` (the log's ``data.error.code``). The
# ``FS_*`` ones are the codes DSH's own file tools use for the same failures.
INVALID_ARGUMENTS = "INVALID_ARGUMENTS"
FS_ERROR = "FS_ERROR"
FS_NOT_FOUND = "FS_NOT_FOUND"
FS_SANDBOX_DENIED = "FS_SANDBOX_DENIED"
FS_NOT_TEXT = "FS_NOT_TEXT"
FS_NOT_REGULAR_FILE = "FS_NOT_REGULAR_FILE"
FS_IS_DIRECTORY = "FS_IS_DIRECTORY"
FS_NOT_DIRECTORY = "FS_NOT_DIRECTORY"
EDIT_NO_MATCH = "EDIT_NO_MATCH"
EDIT_NOT_UNIQUE = "EDIT_NOT_UNIQUE"
COMMAND_FAILED = "COMMAND_FAILED"
COMMAND_TIMEOUT = "COMMAND_TIMEOUT"
# A running call ended by the operator's ``stop`` (DSH's code for an aborted running call).
ABORTED = "ABORTED"
TOOL_TIMEOUT = "TOOL_TIMEOUT"
TOOL_FAILED = "TOOL_FAILED"
# host.shell.sandbox is "required" and this machine cannot sandbox commands (DSH's code).
SANDBOX_UNAVAILABLE = "SANDBOX_UNAVAILABLE"


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """The result of one tool call: model-visible ``text``, its ``is_error`` flag, and log-only details.

    ``error_code`` names the failure for the log (never shown to the model); ``meta`` is a small JSON payload
    for viewers (paths, line counts, exit codes).
    """

    text: str
    is_error: bool = False
    error_code: str | None = None
    meta: dict[str, Any] | None = None


class ToolFailure(Exception):
    """Raised inside a tool to end the call with a model-visible error and a log error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
