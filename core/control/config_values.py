"""Checks every config value gets before its section's validator sees it, whatever the key.

A value must survive the session log unchanged (``tapedeck/config`` events are JSON): no NaN or infinity, no
integer beyond 64 bits, no text that is not UTF-8 (a lone surrogate), no nesting deeper than ``MAX_DEPTH``. And a value whose key has a
default must have the default's JSON type, so "must be a number, got true" is said before a range check can
say something misleading. Lists of tables are addressed by an entry's name (``taskProfiles.read``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from core.shared.config_ranges import NUMBER_RANGES as NUMBER_RANGES  # where README points
from core.shared.config_ranges import number_range, out_of_range
from core.shared.errors import ConfigError
from core.shared.text import describe, js_number, quoted, shown

MAX_DEPTH = 32
INT_RANGE = range(-(2**63), 2**64)  # the integers a JSON event holds (signed or unsigned 64 bits)
ENTRY_NAMES = ("taskClass", "name")


def check_loggable(value: Any, key: str) -> None:
    """Raise ConfigError naming ``key`` (and the place inside it) for a value the log could not keep. A section's
    validator that turns a whole float into an int (``1e+23``) never makes one beyond 64 bits: every such key has a
    range (``NUMBER_RANGES``, the alerts' own) that refuses the float before the validator sees it."""
    stack: list[tuple[Any, str, int]] = [(value, key, 0)]
    while stack:
        node, where, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ConfigError(f"{quoted(key)}: the value is nested too deeply (more than {MAX_DEPTH} levels)")
        if isinstance(node, float) and not math.isfinite(node):
            raise ConfigError(
                f"{quoted(where)}: {js_number(node)} is not a finite number (NaN, Infinity and numbers beyond ±1.8e308 are "
                "refused: the session log could not record them)"
            )
        if isinstance(node, int) and node not in INT_RANGE:
            raise ConfigError(
                f"{quoted(where)}: {shown(node)} is an integer beyond 64 bits, which the session log could not record"
            )
        if isinstance(node, str):
            _utf8(node, where)
        elif isinstance(node, Mapping):
            for name, child in node.items():
                _utf8(str(name), where)
                stack.append((child, f"{where}.{name}", depth + 1))
        elif isinstance(node, list | tuple):
            stack.extend((child, f"{where}[{i}]", depth + 1) for i, child in enumerate(node))


def check_ranges(value: Any, key: str) -> None:
    """Raise ConfigError naming the key, the value and the allowed range for a number (anywhere inside ``value``,
    given for the dotted ``key``) past the top of its key's range (``number_range``); the first one in order."""
    stack: list[tuple[Any, str, int]] = [(value, key, 0)]
    while stack:
        node, where, depth = stack.pop()
        if isinstance(node, int | float) and not isinstance(node, bool):
            bounds = number_range(where)
            if bounds is not None and node > bounds[1]:
                raise out_of_range(where, bounds, node)
        elif depth < MAX_DEPTH and isinstance(node, Mapping):
            items = reversed(list(node.items()))
            stack.extend((child, f"{where}.{name}", depth + 1) for name, child in items)
        elif depth < MAX_DEPTH and isinstance(node, list | tuple):
            stack.extend(reversed([(child, f"{where}[{i}]", depth + 1) for i, child in enumerate(node)]))


def _utf8(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ConfigError(
            f"{quoted(where)}: the text holds a character UTF-8 cannot encode (at {exc.start})"
        ) from exc


def check_type(value: Any, default: Any, key: str) -> None:
    """Raise ConfigError when ``value`` has another JSON type than ``default`` (None: any type goes)."""
    if default is None or value is None:
        return
    if isinstance(default, bool):
        ok, want = isinstance(value, bool), "true or false"
    elif isinstance(default, int | float):
        ok, want = isinstance(value, int | float) and not isinstance(value, bool), "a number"
    elif isinstance(default, str):
        ok, want = isinstance(value, str), "a string"
    elif isinstance(default, Mapping):
        ok, want = isinstance(value, Mapping), "a table"
    elif isinstance(default, list | tuple):
        ok, want = isinstance(value, list | tuple), "a list"
    else:
        return
    if not ok:
        raise ConfigError(f"{quoted(key)} must be {want}, got {describe(value)}")
    if isinstance(default, Mapping):
        for name, child in value.items():
            if name in default:
                check_type(child, default[name], f"{key}.{name}")
    elif isinstance(default, list | tuple) and default and isinstance(default[0], Mapping):
        for i, entry in enumerate(value):
            check_type(entry, default[0], f"{key}[{i}]")


def child(node: Any, part: str, key: str) -> Any:
    """``node[part]`` for a table, or the entry named ``part`` (or at index ``part``) of a list of tables;
    None when a table has no such key; ConfigError for a list without such an entry or a plain value."""
    if isinstance(node, Mapping):
        return node.get(part)
    if isinstance(node, list):
        for i, entry in enumerate(node):
            if part == str(i) or (isinstance(entry, Mapping) and part in (entry.get(n) for n in ENTRY_NAMES)):
                return entry
        names = [str(e.get(n)) for e in node if isinstance(e, Mapping) for n in ENTRY_NAMES if n in e]
        raise ConfigError(
            f"{quoted(key)}: no entry named {quoted(part)} (entries: {quoted(', '.join(names)) or 'none'})"
        )
    raise ConfigError(f"{quoted(key)}: {quoted(part)} is inside a plain value, not a table")
