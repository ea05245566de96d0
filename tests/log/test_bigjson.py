"""``core.log.bigjson.loads`` gives exactly ``orjson.loads``'s value or error, however a line is sliced."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.log import bigjson

# Escapes, quotes, backslashes, non-ASCII and astral characters (surrogate pairs when escaped), control chars.
chars = st.sampled_from(['"', "\\", "\n", "\x01", "é", "€", "😀", "\u2028", "/", "a", "b", " "])
texts = st.lists(chars, max_size=400).map("".join) | st.text(max_size=400)
values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**63 - 1) | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)


def outcome(data: bytes, loads: Any) -> tuple[str, Any]:
    try:
        return "ok", loads(data)
    except orjson.JSONDecodeError as exc:
        return "error", str(exc)


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bigjson, "LIMIT", 16)
    monkeypatch.setattr(bigjson, "PIECE", 24)


@settings(max_examples=300, deadline=None)
@given(value=values)
def test_valid_lines_parse_to_the_same_value(value: Any) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bigjson, "LIMIT", 16)
        mp.setattr(bigjson, "PIECE", 24)
        line = orjson.dumps(value)
        assert bigjson.loads(line) == orjson.loads(line)
        assert bigjson.loads(bytearray(line)) == orjson.loads(line)


@settings(max_examples=300, deadline=None)
@given(value=values, cut=st.integers(min_value=0), junk=st.binary(max_size=3), at=st.integers(min_value=0))
def test_broken_lines_fail_with_the_same_error(value: Any, cut: int, junk: bytes, at: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bigjson, "LIMIT", 16)
        mp.setattr(bigjson, "PIECE", 24)
        line = orjson.dumps(value)
        broken = line[: cut % (len(line) + 1)]
        spliced = line[: at % (len(line) + 1)] + junk + line[at % (len(line) + 1) :]
        for data in (broken, spliced):
            assert outcome(data, bigjson.loads) == outcome(data, orjson.loads)


def test_a_long_string_is_decoded_in_pieces(tiny: None) -> None:
    text = "x" * 1000 + '"\\é😀' * 50
    line = orjson.dumps({"type": "tool/result", "data": {"text": text, "more": [text, 1]}})
    calls: list[int] = []
    assert bigjson.loads(line, lambda: calls.append(1)) == orjson.loads(line)
    assert calls  # the caller's pace ran between pieces


def test_long_keys_and_top_level_strings(tiny: None) -> None:
    key = "k" * 100
    for value in ({key: "v" * 100}, "s" * 100, ["a" * 100, {"b": "c" * 100}]):
        line = orjson.dumps(value)
        assert bigjson.loads(line) == value
