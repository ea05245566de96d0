"""What orjson writes for a value nested deeper than it writes (254 levels): the same bytes, written here."""

from __future__ import annotations

from typing import Any

import orjson

TOO_DEEP = "Recursion limit reached"  # orjson's refusal of a value nested deeper than 254 levels


def deep_dumps(value: Any, option: int = 0) -> bytes:
    """The bytes ``orjson.dumps(value, option=option)`` writes, for a value nested deeper than it writes too: each
    container it refuses as too deep is written here in its format (``OPT_INDENT_2``'s too), its members by orjson
    where it takes them, so UTF-8 and every escape are orjson's. ``option`` may hold ``OPT_INDENT_2`` and
    ``OPT_NON_STR_KEYS``; a str holding a surrogate is refused, as orjson refuses it."""
    return _written(value, option, b"")


def _written(value: Any, option: int, indent: bytes) -> bytes:
    try:
        data = orjson.dumps(value, option=option)
    except orjson.JSONEncodeError as exc:
        if str(exc) != TOO_DEEP:
            raise
    else:
        return data.replace(b"\n", b"\n" + indent) if indent else data  # a string's newlines are escaped
    pretty = option & orjson.OPT_INDENT_2
    inner = indent + b"  " if pretty else b""
    if isinstance(value, dict):
        colon = b": " if pretty else b":"
        members = [_key(key, option) + colon + _written(item, option, inner) for key, item in value.items()]
        opening, closing = b"{", b"}"
    else:  # a list or a tuple: only containers nest
        members = [_written(item, option, inner) for item in value]
        opening, closing = b"[", b"]"
    if not pretty:
        return opening + b",".join(members) + closing
    return opening + b"\n" + inner + (b",\n" + inner).join(members) + b"\n" + indent + closing


def _key(key: Any, option: int) -> bytes:
    """An object key as orjson writes it (a key that is no str as ``OPT_NON_STR_KEYS`` names it)."""
    if isinstance(key, str):
        return orjson.dumps(key)
    return orjson.dumps({key: None}, option=option & orjson.OPT_NON_STR_KEYS)[1 : -len(b":null}")]
