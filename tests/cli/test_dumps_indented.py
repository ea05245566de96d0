"""``dumps_indented`` writes what ``orjson.dumps(value, option=OPT_INDENT_2 | OPT_NON_STR_KEYS)`` writes, but for DEL,
the C1 controls, the BiDi controls and U+2028/U+2029, which it writes as their escapes (the same value)."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.cli.common import dumps_indented

BOTH = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
ACTIVE = re.compile("[\x7f-\x9f\u2028-\u202e\u2066-\u2069]")  # what a terminal acts on and orjson writes as it is
_KEYS = st.text(max_size=4) | st.integers(-5, 5) | st.booleans() | st.none() | st.floats(allow_nan=False)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**64), 2**64) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3)
    | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


@given(_VALUES | st.text(st.sampled_from("a\x7f\x85\x9b\u202e\u2069\u2028é\\\"")).map(lambda text: {text: [text]}))
def test_the_same_bytes_or_the_same_refusal(value: Any) -> None:
    try:
        expected = orjson.dumps(value, option=BOTH)
    except orjson.JSONEncodeError:  # an int over 64 bits: refused either way
        with pytest.raises(orjson.JSONEncodeError):
            dumps_indented(value)
        return
    written = dumps_indented(value)
    assert orjson.loads(written) == orjson.loads(expected) and not ACTIVE.search(written.decode())
    assert written == expected or ACTIVE.search(expected.decode())


def test_keys_that_are_no_strings_are_written_as_the_option_writes_them() -> None:
    class Key(str):
        pass

    for value in ({1: [{None: 2.5}]}, {Key("k"): 1}, [{"a": {True: "b"}}]):
        assert dumps_indented(value) == orjson.dumps(value, option=BOTH)


# lead bytes of characters a terminal does not act on ('·', '…', '—', '─') among those it does, in runs longer
# than the lead bytes ``inert`` tries the patterns at before it lets the regex engine search the rest
_LEADS = st.text(st.sampled_from("a·…—─\x7f\x85\x9b\u202a\u202e\u2066\u2069\u2028"), max_size=40)


@given(_LEADS)
def test_a_text_full_of_lead_bytes_is_written_inert(text: str) -> None:
    written = dumps_indented([text])
    assert orjson.loads(written) == [text] and not ACTIVE.search(written.decode())
    assert written == orjson.dumps([text], option=BOTH) or ACTIVE.search(text)


class _Unsearched:
    """A pattern that may be tried at a place, but not searched for (the regex engine steps through each byte)."""

    def __init__(self, pattern: re.Pattern[bytes]) -> None:
        self.pattern = pattern

    def match(self, data: bytes, pos: int = 0) -> re.Match[bytes] | None:
        return self.pattern.match(data, pos)

    def search(self, data: bytes, pos: int = 0) -> re.Match[bytes] | None:
        raise AssertionError(f"searched {len(data) - pos} bytes")


def test_a_text_with_a_few_lead_bytes_is_not_searched_byte_by_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    """A row of a surface with a '…' or '·' in it (most of them) is checked at those characters alone: the regex
    engine's search went through every byte of every row, 7% of ``surface --json``'s instructions."""
    from core.shared import jsonout

    monkeypatch.setattr(jsonout, "_C1", _Unsearched(jsonout._C1))
    monkeypatch.setattr(jsonout, "_BIDI", _Unsearched(jsonout._BIDI))
    text = "x" * 5000 + "a summary cut…, a·b — done" + "y" * 5000
    assert dumps_indented({"summary": text}) == orjson.dumps({"summary": text}, option=BOTH)
    assert b"\\u202e" in dumps_indented({"summary": text + "\u202e"})
