"""A value nested deeper than orjson writes (254 levels) is written in the bytes orjson would write: the standard
library's encoder wrote it instead, with non-ASCII as ASCII escapes, floats as Python spells them (``1.5e-07``) and,
in js_json, not at all (a TypeError)."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from core.shared.jsonout import allow_deepest_walks, dumps
from core.shared.text import js_json

CUT = 254  # the deepest orjson writes
allow_deepest_walks()  # as the CLI and the TUI do: the nests here are walked in Python
_TEXT = st.text(st.sampled_from("aé😀\x00\x1f\x7f\x85\u2028\\\"/\n\t"), max_size=6) | st.text(max_size=4)
_LEAVES = (st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | _TEXT
           | st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([1e23, 1.5e-7, -0.0, 1e16]))  # fmt: skip
_VALUES = st.recursive(
    _LEAVES, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3), max_leaves=6
)
_WRAPS = st.lists(st.none() | _TEXT | st.integers(-9, 9), min_size=CUT - 8, max_size=CUT + 8)  # None: a list


def _nest(value: Any, wraps: list[Any]) -> Any:
    for key in reversed(wraps):
        value = [value] if key is None else {key: value}
    return value


def _key(key: Any) -> bytes:
    return orjson.dumps(key) if isinstance(key, str) else b'"%d"' % key


def _expected(value: Any, wraps: list[Any], pretty: bool, level: int = 0) -> bytes:
    """orjson's bytes for ``_nest(value, wraps)``, built around its bytes for ``value``: its format for a list or an
    object of one member (``OPT_INDENT_2``'s too), which it writes itself up to the cut."""
    if level == len(wraps):
        if not pretty:
            return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).replace(b"\n", b"\n" + b"  " * level)
    inner = _expected(value, wraps, pretty, level + 1)
    key = wraps[level]
    pad, end = (b"\n" + b"  " * (level + 1), b"\n" + b"  " * level) if pretty else (b"", b"")
    if key is None:
        return b"[" + pad + inner + end + b"]"
    return b"{" + pad + _key(key) + (b": " if pretty else b":") + inner + end + b"}"


@settings(deadline=None, max_examples=150)
@given(value=_VALUES, wraps=_WRAPS, pretty=st.booleans())
def test_values_around_the_cut_are_written_as_orjson_writes_them(value: Any, wraps: list[Any], pretty: bool) -> None:
    option = orjson.OPT_INDENT_2 if pretty else 0
    assert dumps(_nest(value, wraps), option) == _expected(value, wraps, pretty)


@settings(deadline=None, max_examples=100)
@given(value=_VALUES, wraps=st.lists(st.none() | _TEXT, min_size=CUT - 8, max_size=CUT + 8))
def test_js_json_writes_values_around_the_cut_as_orjson_writes_them(value: Any, wraps: list[Any]) -> None:
    assert js_json(_nest(value, wraps)) == _expected(value, wraps, False).decode()


def test_the_deepest_value_orjson_reads_is_written_back_byte_for_byte() -> None:
    line = b'{"a":' * 500 + '["é\\u0000",1.5e-7,{"1":null}]'.encode() + b"}" * 500
    assert dumps(orjson.loads(line)) == line


def test_orjson_is_given_only_what_it_writes_so_no_byte_is_written_twice(monkeypatch) -> None:
    """Each container too deep for orjson was first given to it whole, and it wrote 254 levels of it before it
    refused, so every member near the deep path was written again for each level above it; and each level joined
    its members' bytes into its own (with both, a 10 MB line of 1,000 levels, each with a 10 kB string beside the
    next, took five seconds). orjson is given only what it writes, once: it refuses nothing and writes no more than
    comes out."""
    from core.shared.deepjson import deep_dumps

    value: Any = None
    for _ in range(600):
        value = {"text": "x" * 100, "next": value}
    real, refused, written = orjson.dumps, [], []

    def counted(item: Any, option: int = 0) -> bytes:
        try:
            data = real(item, option=option)
        except orjson.JSONEncodeError:
            refused.append(1)
            raise
        written.append(len(data))
        return data

    monkeypatch.setattr(orjson, "dumps", counted)
    for option in (0, orjson.OPT_INDENT_2):
        out = deep_dumps(value, option)
        assert len(refused) == 0 and sum(written) <= len(out), (len(refused), sum(written), len(out))
        written.clear()


def test_sorted_keys_are_sorted_in_the_containers_written_here_too() -> None:
    deep: Any = []
    for _ in range(CUT + 40):
        deep = [deep]
    value = {"é": 0, "b": deep, "a": 1, "c": {"z": 1, "y": 2}}
    lists = b"[" * (CUT + 41) + b"]" * (CUT + 41)
    assert dumps(value, orjson.OPT_SORT_KEYS) == b'{"a":1,"b":' + lists + b',"c":{"y":2,"z":1},"\xc3\xa9":0}'
