"""Redaction of quoted values at the edges: where a line starts for the quotes counted before a key (``_line_start``)."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.export import redact
from core.export.redact import KINDS, Redactor


def _redacts(text: str, out: str, keys: int = 1) -> None:
    """``text`` redacts to ``out`` with ``keys`` secrets replaced, and so does its JSON text (a tool call's
    arguments)."""
    for form, expected in (
        (text, out),
        (orjson.dumps({"c": text}).decode(), orjson.dumps({"c": out}).decode()),
    ):
        r = Redactor(environ={}, home="/home/ann")
        found = r.text(form)
        assert found == expected and r.summary() == {**dict.fromkeys(KINDS, 0), "key": keys}, found


@pytest.mark.parametrize(
    ("data", "at", "start"),
    [
        (b"", 0, 0),
        (b"password: x", 0, 0),
        (b"password: x", 5, 0),
        (b'"password: " + pw', 11, 0),
        (b"ab\ncd", 4, 3),
        (b"ab\ncd", 3, 3),
        (b"ab\\ncd", 5, 4),
        (b"ab\\ncd\nef", 8, 7),
        (b"ab\ncd\\nef", 8, 7),
    ],
)
def test_a_line_starts_at_the_text_s_start_or_after_its_last_break(data: bytes, at: int, start: int) -> None:
    """With no line break before ``at`` the line starts where the text does (0): it said 1, as a missing
    escaped break (``\\n``, -1 from ``rfind``) counted two on."""
    assert redact._line_start(data, at) == start


@pytest.mark.parametrize(
    "text",
    ['"password: " + pw + "!"', '"password=" + pw + "&x=1"', "'token: ' + tok + '.'"],
)
def test_a_quote_that_opens_the_text_before_a_key_is_counted(text: str) -> None:
    """A string the text opens with, before the key word, closes at the quote after the key: the value is code
    that joins strings, not a secret (``"password: " + pw + "!"`` lost `` + pw + `` to ``[redacted key]``, as the
    quote at offset 0 was not counted; one a blank or a line break comes before was)."""
    for form in (text, " " + text, "x\n" + text):
        _redacts(form, form, keys=0)


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=40).map(lambda b: bytes(b'ab\n\\" '[x % 6] for x in b)), at=st.integers(0, 40))
@example(data=b"", at=0)
@example(data=b"a\\nb", at=1)
def test_a_line_starts_after_the_last_break_before_it_or_at_the_text_s_start(data: bytes, at: int) -> None:
    """Whatever the text, the line holding ``at`` starts just after the last line break before it, itself or as
    JSON text escapes it (``\\n``), else at 0."""
    at = min(at, len(data))
    breaks = [i + 1 for i in range(at) if data[i : i + 1] == b"\n"]
    breaks += [i + 2 for i in range(at - 1) if data[i : i + 2] == b"\\n"]
    assert redact._line_start(data, at) == max(breaks, default=0)
