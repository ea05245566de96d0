"""Redaction of quoted values at the edges: where a line starts for the quotes counted before a key (``_line_start``)."""

from __future__ import annotations

from typing import Any

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
        (b"ab\rcd", 4, 3),
        (b"ab\r\ncd", 5, 4),
        (b"a\rb\\ncd", 6, 5),
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
@given(
    data=st.binary(max_size=40).map(lambda b: bytes(b'ab\n\\" \r'[x % 7] for x in b)), at=st.integers(0, 40)
)
@example(data=b"", at=0)
@example(data=b"a\\nb", at=1)
@example(data=b"a\rb", at=3)
def test_a_line_starts_after_the_last_break_before_it_or_at_the_text_s_start(data: bytes, at: int) -> None:
    """Whatever the text, the line holding ``at`` starts just after the last line break before it, itself (``\\n``,
    ``\\r``: an HTTP header's line too, ``_header_opening``) or as JSON text escapes a newline (``\\n``), else at 0."""
    at = min(at, len(data))
    breaks = [i + 1 for i in range(at) if data[i : i + 1] in (b"\n", b"\r")]
    breaks += [i + 2 for i in range(at - 1) if data[i : i + 2] == b"\\n"]
    assert redact._line_start(data, at) == max(breaks, default=0)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ('password="\'"', 'password="[redacted key]"'),
        ("password='\"'", "password='[redacted key]'"),
        ("token: \"''\"", 'token: "[redacted key]"'),
        ('DB_PASSWORD="\'"\nUSER=bob', 'DB_PASSWORD="[redacted key]"\nUSER=bob'),
        ('password="\\\\"', 'password="[redacted key]"'),
        ("password: '\\'", "password: '[redacted key]'"),
        ("password: '\\\\' # two", "password: '[redacted key]' # two"),
        ('password: "\n  hunter2 pw"\nuser: x', 'password: "\n  [redacted key]"\nuser: x'),
        ('token: "\n  abc123xyz" done', 'token: "\n  [redacted key]" done'),
        ("secret = '\n    Abc def'", "secret = '\n    [redacted key]'"),
    ],
)
def test_a_value_of_quotes_or_backslashes_alone_or_on_the_next_line_goes(text: str, out: str) -> None:
    """A quoted value of one quote (``password="'"``) or of backslashes (``password="\\\\"``, YAML's and a shell's
    ``'\\'``) matched nothing, as a value had to hold a character of a value; nor did one that its opening quote's
    line left for the next (``password: "`` then ``  hunter2 pw"``). Each goes, to its closing quote."""
    _redacts(text, out)


@pytest.mark.parametrize(
    "text",
    ['password=""', "password=''", 'x = "password: "\nfoo = 1', 'print("password: "\n      password)'],
)
def test_an_empty_value_and_a_quote_that_closes_a_string_stay(text: str) -> None:
    """Nothing between the quotes is no secret, and a quote that ends its line closing a string the line opened
    before the key (``"password: "``) opens no value on the next."""
    _redacts(text, text, keys=0)


def test_a_key_on_the_line_after_a_quote_that_opened_no_value_is_still_read() -> None:
    """The next line's own key (``token = "…"``) is read, not taken as the value the quote before it did not open."""
    _redacts('x = "password: "\ntoken = "abc123xyz"', 'x = "password: "\ntoken = "[redacted key]"')


BARE_KEYS = st.sampled_from(["password=", "password: ", "DB_PASSWORD=", "api_key = ", "  secret: ", "psk="])
# a quoted value's inside, as written between its quotes, of each class: quotes of the other kind, backslashes
# (in double quotes each written escaped, ``\\\\``; in single quotes as they are), words on the next line
BARE_VALUES = st.one_of(
    st.integers(1, 3).map(lambda n: ("other", n)),
    st.integers(1, 2).map(lambda n: ("backslash", n)),
    st.tuples(
        st.sampled_from(["", "  ", "\t"]),
        st.from_regex(r"[A-Za-z][a-z]{2,6}[0-9]{0,2}( [a-z]{2,5})?", fullmatch=True),
    ),
)


@settings(max_examples=200, deadline=None)
@given(key=BARE_KEYS, quote=st.sampled_from(['"', "'"]), value=BARE_VALUES,
       after=st.sampled_from(["", "\nuser: bob", " # set", ";"]))  # fmt: skip
@example(key="password=", quote='"', value=("other", 1), after="")
@example(key="password: ", quote="'", value=("backslash", 1), after="")
@example(key="password: ", quote='"', value=("  ", "hunter pw"), after="\nuser: bob")
def test_a_quoted_value_of_any_class_goes_to_its_closing_quote(
    key: str, quote: str, value: tuple[Any, Any], after: str
) -> None:
    """Whatever a quoted value after a key word is made of (quotes of the other kind, backslashes alone, words on
    the line after its opening quote), it goes, and the key, the quotes and what follows stay; as JSON text too."""
    if value[0] == "other":
        inside, lead = ("'" if quote == '"' else '"') * value[1], ""
    elif value[0] == "backslash":
        inside, lead = "\\" * (2 * value[1] if quote == '"' else value[1]), ""
    else:
        inside, lead = value[1], "\n" + value[0]
    _redacts(f"{key}{quote}{lead}{inside}{quote}{after}", f"{key}{quote}{lead}[redacted key]{quote}{after}")
