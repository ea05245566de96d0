"""Where a line of JSON text is inside a string, as the redaction's judges tell it (``_in_json_string``): as a JSON
parser reads the line, a quote a backslash escapes (``\\"``) inside a string neither ending it nor opening one."""

from __future__ import annotations

import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.export import redact
from core.export.redact import KINDS, Redactor

# strings of the characters JSON text escapes or that end a string, quotes and backslashes most of all
TEXTS = st.text(alphabet=st.sampled_from(list('ab"\\\n\t :{},') + ["é"]), max_size=12)
VALUES = st.recursive(
    st.none() | st.integers(-5, 5) | TEXTS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXTS, inner, max_size=4),
    max_leaves=12,
)


def _parsed_inside(data: bytes) -> list[bool]:
    """For each offset of ``data``, JSON text, from its first byte to just past its last: whether a JSON parser,
    having read the bytes before it, is inside a string."""
    inside, escaped, states = False, False, [False]
    for byte in data:
        if escaped:
            escaped = False
        elif inside and byte == 0x5C:
            escaped = True
        elif byte == 0x22:
            inside = not inside
        states.append(inside)
    return states


@settings(max_examples=300, deadline=None)
@given(value=VALUES, indent=st.sampled_from([None, 2]), ascii_only=st.booleans())
@example(value={"k": 'a"b', "password": "x"}, indent=None, ascii_only=True)
@example(value=["a\\", "b"], indent=None, ascii_only=True)
@example(value={"a": "x\n", "b": 1}, indent=None, ascii_only=True)
def test_a_line_of_json_is_in_a_string_where_a_json_parser_reads_one(
    value: object, indent: int | None, ascii_only: bool
) -> None:
    """``_in_json_string`` counted every ``"`` before an offset, ``\\"`` inside a string too, so after ``"a\\"b"``
    the next key was judged inside a string and its value outside one; and after a ``\\n`` escape it said inside
    to the line's end, past the quote that closed the string. At every offset of ``json.dumps`` of any value (on
    one line or indented), it answers as a JSON parser reads the text."""
    data = json.dumps(value, indent=indent, ensure_ascii=ascii_only).encode()
    redact._kept.forget()  # (asked in order, as the judges ask: ``_quotes_before`` counts on)
    try:
        found = [redact._in_json_string(data, at) for at in range(len(data) + 1)]
    finally:
        redact._kept.forget()
    assert found == _parsed_inside(data)


@settings(max_examples=200, deadline=None)
@given(before=TEXTS, after=TEXTS)
@example(before='a"b', after="x)")
@example(before='a\\"b\\', after="")
def test_a_value_after_a_string_with_escaped_quotes_is_judged_inside_its_own_string(
    before: str, after: str
) -> None:
    """``{"k": "a\\"b", "c": "password: Abc(defg1", "d": "x)"}`` kept the password: with the ``\\"`` counted, its
    value was judged outside a JSON string, so the ``)`` of another string closed its ``(`` and it read as a call.
    The value's string ends at its own closing quote, whatever the strings before and after it hold."""
    line = json.dumps({"k": before, "c": "password: Abc(defg1", "d": after + ")"})
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(line) == line.replace("Abc(defg1", "[redacted key]")
    assert r.summary() == {**dict.fromkeys(KINDS, 0), "key": 1}
