"""What orjson writes for a value nested deeper than it writes (254 levels): the same bytes, written here."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

TOO_DEEP = "Recursion limit reached"  # orjson's refusal of a value nested deeper than 254 levels
DEEPEST = 254  # containers one in another that orjson writes; one more and it refuses the whole value


def deep_dumps(value: Any, option: int = 0) -> bytes:
    """The bytes ``orjson.dumps(value, option=option)`` writes, for a value nested deeper than it writes too: each
    container too deep for it is written here in its format (``OPT_INDENT_2``'s too), its members by orjson where
    it takes them, so UTF-8 and every escape are orjson's. In time linear in the bytes: orjson is given only what it
    writes, found by height first (given a container too deep, it writes 254 levels of it before it refuses), and
    a container's bytes are never copied into its parent's (each level did, so a 10 MB line of 1,000 levels took
    seconds). ``option`` may hold ``OPT_INDENT_2``, ``OPT_NON_STR_KEYS`` and ``OPT_SORT_KEYS`` (for str keys); a
    str holding a surrogate is refused, as orjson refuses it."""
    out: list[bytes] = []
    _written(value, option, b"", _heights(value), out)
    return b"".join(out)


def _heights(value: Any) -> dict[int, int]:
    """How many containers nest in each container of ``value``, itself included, by its id (valid while ``value``
    lives); found without recursion, children before their parent."""
    heights: dict[int, int] = {}
    todo: list[tuple[Any, bool]] = [(value, False)]
    while todo:
        item, children_done = todo.pop()
        if not isinstance(item, dict | list | tuple):
            continue
        members = item.values() if isinstance(item, dict) else item
        if children_done:
            heights[id(item)] = 1 + max((heights.get(id(member), 0) for member in members), default=0)
        elif id(item) not in heights:
            todo.append((item, True))
            todo.extend((member, False) for member in members)
    return heights


def _written(value: Any, option: int, indent: bytes, heights: dict[int, int], out: list[bytes]) -> None:
    """Add the bytes of ``value`` to ``out`` (each byte once: a container's are never joined into its parent's)."""
    if heights.get(id(value), 0) <= DEEPEST:
        try:
            data = orjson.dumps(value, option=option)
        except orjson.JSONEncodeError as exc:
            if str(exc) != TOO_DEEP:  # too deep after all (another orjson's limit): written here, in its bytes
                raise
        else:
            out.append(data.replace(b"\n", b"\n" + indent) if indent else data)  # a string's newlines are escaped
            return
    pretty = option & orjson.OPT_INDENT_2
    inner = indent + b"  " if pretty else b""
    between, colon = (b",\n" + inner, b": ") if pretty else (b",", b":")
    is_dict = isinstance(value, dict)
    out.append(b"{" if is_dict else b"[")
    if pretty and value:
        out.append(b"\n" + inner)
    members: Iterable[tuple[Any, Any]] = value.items() if is_dict else ((None, item) for item in value)
    if is_dict and option & orjson.OPT_SORT_KEYS:
        members = sorted(members, key=lambda member: member[0])
    for n, (key, item) in enumerate(members):
        if n:
            out.append(between)
        if is_dict:
            out.append(_key(key, option) + colon)
        _written(item, option, inner, heights, out)
    if pretty and value:
        out.append(b"\n" + indent)
    out.append(b"}" if is_dict else b"]")


def _key(key: Any, option: int) -> bytes:
    """An object key as orjson writes it (a key that is no str as ``OPT_NON_STR_KEYS`` names it)."""
    if isinstance(key, str):
        return orjson.dumps(key)
    return orjson.dumps({key: None}, option=option & orjson.OPT_NON_STR_KEYS)[1 : -len(b":null}")]
