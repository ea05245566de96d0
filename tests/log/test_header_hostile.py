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


def test_a_header_field_is_quoted_as_the_json_the_log_holds() -> None:
    """A header's version, delegationDepth and cwd were quoted as Python writes them ('0', True, None), and the id
    of a newer or older log whole and as it came: they read as the log's JSON, the id cut with its controls escaped."""
    header = {"type": "session", "id": "s", "version": 0, "delegationDepth": True, "cwd": "rel"}
    _, warnings = validate_header(header, "log")
    assert [w.message for w in warnings] == ["delegationDepth true is not a non-negative integer",
                                             'cwd "rel" is not an absolute path']  # fmt: skip
    with pytest.raises(HeaderError) as info:
        validate_header({**header, "version": "0"}, "log")
    assert str(info.value) == 'log: session header version must be an integer, got "0"'
    for sid in ("k" * 100_000, "a\x1b[2Jb"):
        with pytest.raises(HeaderError) as info:
            validate_header({**header, "id": sid, "version": 1}, "log")
        assert len(str(info.value)) < 300 and "\x1b" not in str(info.value), str(info.value)[:300]
