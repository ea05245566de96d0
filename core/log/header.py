"""Session header (line 1) validation with DSH's version rules."""

from __future__ import annotations

from typing import Any

from core.shared.diagnostics import Diagnostic
from core.shared.text import quoted, shown

SUPPORTED_VERSION = 0


class HeaderError(ValueError):
    """The first line is not a usable session header."""


def validate_header(obj: Any, name: str) -> tuple[dict[str, Any], list[Diagnostic]]:
    """Check a decoded header line; return it with warnings, or raise HeaderError naming ``name``.

    Fatal: not an object, ``type`` not ``"session"``, a version other than 0, a missing id. Lenient (warning):
    a missing version or ``delegationDepth`` and a non-absolute ``cwd``, which committed fixtures use.
    """
    if not isinstance(obj, dict) or obj.get("type") != "session":
        raise HeaderError(
            f'{name}: line 1 is not a session header (expected an object with "type": "session")'
        )
    warnings: list[Diagnostic] = []
    sid = obj.get("id")
    if not isinstance(sid, str) or not sid:
        raise HeaderError(f'{name}: session header has no string "id"')
    version = obj.get("version")
    if version is None:
        warnings.append(
            Diagnostic("header-no-version", "header has no version; reading it as v0", 0, None, "warning")
        )
    elif not isinstance(version, int) or isinstance(version, bool):
        raise HeaderError(f"{name}: session header version must be an integer, got {shown(version)}")
    elif version > SUPPORTED_VERSION:
        raise HeaderError(
            f'{name}: session "{quoted(sid)}" uses log format v{version}, but tapedeck reads only v{SUPPORTED_VERSION}: '
            "the log was written by a newer harness"
        )
    elif version < SUPPORTED_VERSION:
        raise HeaderError(f'{name}: session "{quoted(sid)}" uses log format v{version}, older than the supported v0')
    depth = obj.get("delegationDepth")
    if depth is None:
        warnings.append(
            Diagnostic(
                "header-no-delegation-depth",
                "header has no delegationDepth (DSH requires it)",
                0,
                None,
                "warning",
            )
        )
    elif not isinstance(depth, int) or isinstance(depth, bool) or depth < 0:
        warnings.append(
            Diagnostic(
                "header-bad-delegation-depth", f"delegationDepth {shown(depth)} is not a non-negative integer", 0
            )
        )
    cwd = obj.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or not cwd.startswith("/")) and cwd != "{{cwd}}":
        warnings.append(
            Diagnostic("header-relative-cwd", f"cwd {shown(cwd)} is not an absolute path", 0, None, "warning")
        )
    for retired in ("sandboxMode", "approvalPolicy"):
        if retired in obj:
            warnings.append(
                Diagnostic("header-retired-field", f"retired header field {retired!r} (DSH rejects it)", 0)
            )
    return obj, warnings
