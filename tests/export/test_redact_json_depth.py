"""Redaction of a quoted value in text that JSON wrote several times over (a tool's output quoting a log that quotes
an event): the export stays JSON wherever its input was, and the value goes."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.export.redact import Redactor


def _encoded(text: str, depth: int) -> str:
    """``text`` as JSON text writes it ``depth`` times over."""
    for _ in range(depth):
        text = json.dumps(text)
    return text


def _decoded(text: str, depth: int) -> str:
    """``text`` read back ``depth`` times as a JSON string; it raises where it is no JSON."""
    for _ in range(depth):
        text = json.loads(text)
    return text


@pytest.mark.parametrize("depth", [2, 3, 4])
@pytest.mark.parametrize("text", ["password='abc def'", "password='hunter2'", "token='Zx81 kq' done"])
def test_a_single_quoted_value_at_a_json_string_s_end_keeps_its_closing_quotes(text: str, depth: int) -> None:
    """``"\\"password='abc def'\\""``: the quote that closes the inner JSON string after the value was read as one a
    backslash escapes in the shell's word the value is, so the value took it and the export was no JSON."""
    out = Redactor(environ={}).text(_encoded(text, depth))
    assert _decoded(out, depth) == text.replace(text.split("'")[1], "[redacted key]")


_KEYS = st.sampled_from(["password", "token", "secret", "api_key", "passwd", "client_secret"])
_SIGNS = st.sampled_from(["=", ": ", " = ", "="])
_SECRETS = st.from_regex(r"[A-Za-z]{3,8}[0-9]{2,4}[A-Za-z0-9]{2,8}( [A-Za-z0-9]{4,8})?", fullmatch=True)
_BEFORE = st.sampled_from(["", "x ", "echo ", "run: ", "a\n", '{"c": 1} '])
_AFTER = st.sampled_from(["", " y", "\n", ";", " && ls", ", next"])


@settings(max_examples=300, deadline=None)
@given(
    key=_KEYS,
    sign=_SIGNS,
    quote=st.sampled_from(["'", '"']),
    secret=_SECRETS,
    before=_BEFORE,
    after=_AFTER,
    depth=st.integers(0, 4),
)
@example(key="password", sign="=", quote="'", secret="abc1 def2", before="", after="", depth=2)
def test_a_planted_secret_at_any_json_depth_goes_and_the_export_still_parses(
    key: str, sign: str, quote: str, secret: str, before: str, after: str, depth: int
) -> None:
    """A secret planted as a quoted value, in text JSON wrote ``depth`` times over, is gone from the redacted text,
    which reads back as JSON as many times as its input did."""
    text = f"{before}{key}{sign}{quote}{secret}{quote}{after}"
    out = Redactor(environ={}).text(_encoded(text, depth))
    decoded = _decoded(out, depth)
    assert secret not in decoded and secret.split()[0] not in decoded, decoded
