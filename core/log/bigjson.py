"""``orjson.loads`` for multi-MB lines, in slices: no single C call holds the GIL for long.

Parsing a 10 MB line with one ``orjson.loads`` call holds the GIL for ~25 ms, and a UI thread that needs the GIL
dozens of times per frame waits for each such call. ``loads`` gives exactly ``orjson.loads``'s result (and its
error) but, for a line longer than ``LIMIT``, parses it as a small skeleton in which every long string literal
is a placeholder, decodes each long string in ``PIECE``-sized pieces and puts them back. A piece never ends
inside an escape sequence, a surrogate pair or a UTF-8 sequence. Anything unusual (invalid JSON, a long object
key, a string with no safe cut) falls back to one ``orjson.loads`` call, so results never differ.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any

import orjson

LIMIT = 1 << 20  # lines up to this size are parsed in one call (~2 ms)
PIECE = 1 << 18  # bytes of a long string decoded per call
# A safe cut: the 12 bytes before it hold no backslash (no escape or \uXXXX\uXXXX pair spans it) and the byte
# at it does not continue a UTF-8 sequence.
_CUT = re.compile(rb"[^\\]{12}(?=[^\x80-\xbf])")
_SPACE = b" \t\r\n"


def loads(data: bytes | bytearray, pace: Callable[[], None] | None = None) -> Any:
    """``orjson.loads(data)``, in bounded slices when ``data`` is long; ``pace`` is called between slices."""
    if len(data) <= LIMIT:
        return orjson.loads(data)
    try:
        spans = _long_strings(data, pace)
        if not spans:  # None (too many strings to walk) or no long string
            return orjson.loads(data)
        token = f"\x00bigjson-{uuid.uuid4().hex}-"
        parts: list[bytes] = []
        values: dict[str, str] = {}
        pos = 0
        for k, (start, end) in enumerate(spans):
            value = _decode_string(data, start, end, pace)
            if value is None:
                return orjson.loads(data)
            name = f"{token}{k}"
            values[name] = value
            parts.append(bytes(data[pos : start - 1]))
            parts.append(orjson.dumps(name))
            pos = end + 1
        parts.append(bytes(data[pos:]))
        skeleton = orjson.loads(b"".join(parts))
        found = _put_back(skeleton, values)
    except (orjson.JSONDecodeError, RecursionError):
        return orjson.loads(data)  # the same error (or, should the slicing have misjudged, the same result)
    return found if len(values) == 0 else orjson.loads(data)


def _long_strings(data: bytes | bytearray, pace: Callable[[], None] | None) -> list[tuple[int, int]] | None:
    """``(start, end)`` of the body of every string value longer than ``PIECE``: ``data[start - 1]`` and
    ``data[end]`` are its quotes. Quotes are found with ``find`` (memchr speed); None when the line has so many
    strings or escaped quotes that walking them would cost more than parsing the line in one call."""
    spans: list[tuple[int, int]] = []
    budget = max(64, len(data) >> 10)  # quotes visited: about one per KB
    find = data.find
    pos = 0
    while True:
        quote = find(b'"', pos)
        if quote < 0:
            return spans
        start = end = quote + 1
        while True:
            budget -= 1
            if budget < 0:
                return None
            end = find(b'"', end)
            if end < 0:
                raise orjson.JSONDecodeError("unterminated string", "", 0)  # loads() reports the real error
            k = end - 1
            while data[k] == 0x5C:  # count the backslashes before the quote: an odd run escapes it
                k -= 1
            if (end - 1 - k) % 2 == 0:
                break
            end += 1
        pos = end + 1
        if end - start > PIECE and not _is_key(data, pos):
            spans.append((start, end))
        if pace is not None and end - start > PIECE:
            pace()


def _is_key(data: bytes | bytearray, pos: int) -> bool:
    while pos < len(data) and data[pos] in _SPACE:
        pos += 1
    return pos < len(data) and data[pos] == 0x3A


def _decode_string(
    data: bytes | bytearray, start: int, end: int, pace: Callable[[], None] | None
) -> str | None:
    """The string whose body is ``data[start:end]``, decoded piece by piece; None when no safe cut exists."""
    pieces: list[str] = []
    pos = start
    while pos < end:
        cut = end
        if end - pos > PIECE:
            m = _CUT.search(data, max(pos, pos + PIECE - 12), min(end, pos + 2 * PIECE))
            if m is None:
                return None
            cut = m.end()
        pieces.append(orjson.loads(b'"' + bytes(data[pos:cut]) + b'"'))
        pos = cut
        if pace is not None:
            pace()
    return "".join(pieces)


def _put_back(node: Any, values: dict[str, str]) -> Any:
    """Replace the placeholders in ``node`` (in place) by their strings, removing each from ``values``."""
    stack = [node]
    while stack and values:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if isinstance(value, str):
                    if value in values:
                        item[key] = values.pop(value)
                elif isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(item, list):
            for i, value in enumerate(item):
                if isinstance(value, str):
                    if value in values:
                        item[i] = values.pop(value)
                elif isinstance(value, (dict, list)):
                    stack.append(value)
    if isinstance(node, str) and node in values:  # the whole line is one long string
        return values.pop(node)
    return node
