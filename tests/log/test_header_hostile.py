"""A session header whose fields hold what no writer puts there: a diagnostic or refusal, never a traceback."""

from __future__ import annotations

import orjson
import pytest

from core.log.header import HeaderError, validate_header

DEEP = orjson.loads(b"[" * 1000 + b"]" * 1000)  # as deep as orjson reads a log line


@pytest.mark.parametrize("field", ["cwd", "delegationDepth"])
@pytest.mark.parametrize("value", [DEEP, {"a": DEEP}, "x" * 100_000], ids=["list", "object", "long"])
def test_a_field_nested_deep_or_long_is_a_short_warning(field: str, value: object) -> None:
    """The warning quoted the field's repr: one nested 1000 deep (line 1 of a forged or damaged log) ended every
    reader ('inspect', 'events', 'export', the TUI) in a RecursionError, and a long one was quoted whole."""
    header = {"type": "session", "version": 0, "id": "s", "cwd": "/w", "delegationDepth": 0, field: value}
    _, warnings = validate_header(header, "log")
    assert len(warnings) == 1 and len(warnings[0].message) < 200, warnings


@pytest.mark.parametrize("value", [DEEP, "9" * 100_000], ids=["list", "long"])
def test_a_version_nested_deep_or_long_is_refused_in_a_short_message(value: object) -> None:
    with pytest.raises(HeaderError) as info:
        validate_header({"type": "session", "version": value, "id": "s"}, "log")
    assert "version must be an integer" in str(info.value) and len(str(info.value)) < 200
