"""JSON written for any value tapedeck holds, whatever a log put in it.

orjson reads JSON nested up to 1,024 levels deep but writes only 254, and refuses a str holding surrogates (a path
of bytes that are not UTF-8, as Python reads one). ``dumps`` writes the first as orjson would (``deep_dumps``),
so a hostile line that was read can always be written back out, and such a str as ``path_text`` names it (each byte
that is not UTF-8 as ``\\xNN``), as an export and stderr do."""

from __future__ import annotations

import re
import sys
from typing import Any

import orjson

from core.shared.deepjson import TOO_DEEP, deep_dumps
from core.shared.text import path_text

DEEPEST_READ = 1024  # levels of nesting orjson reads; it refuses a line nested deeper
# The Python walkers over decoded values (summaries, redaction, the standard encoder's indented mode) take up to
# two frames a level: the interpreter's default of 1,000 frames stops them on a line orjson still reads. Not more:
# the standard library's parsers (a tool call's arguments, a config file) still stop at about this depth, and
# those who read them say "nested too deeply" then (tests/cli/test_deep_nesting.py walks the deepest line).
WALK_FRAMES = 2 * DEEPEST_READ + 500


# what orjson writes as itself but a terminal showing the JSON acts on: DEL, a C1 control (U+0080-U+009F; 0x9b is a
# CSI) and a BiDi embedding, override or isolate (U+202A-U+202E, U+2066-U+2069), and the line and paragraph
# separators (U+2028, U+2029: a line break to editors and older JavaScript), in UTF-8 (each from a lead byte)
_ACTIVE = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]")
# the same, each led by its literal first byte (a text full of '…' and '·' holds lead bytes everywhere: the
# alternation above tests a set of bytes at each of them)
_C1 = re.compile(rb"\xc2[\x80-\x9f]")
_BIDI = re.compile(rb"\xe2(?:\x80[\xa8-\xae]|\x81[\xa6-\xa9])")  # and the separators
_PROBES = 8  # lead bytes a pattern is tried at, each found by ``find``, before the regex engine searches the rest


def inert(data: bytes) -> bytes:
    """JSON text ``data`` with each DEL, C1 and BiDi control and U+2028/U+2029 written as its ``\\uXXXX`` escape: the
    same JSON value, with nothing in it that a terminal it is printed on would act on (orjson escapes only the C0
    controls)."""
    # DEL as an int: ``bytes in bytes`` first tries its operand as an int, which raises (and formats) a TypeError
    if 0x7F not in data and not _holds(data, b"\xc2", _C1) and not _holds(data, b"\xe2", _BIDI):  # most texts
        return data
    return _ACTIVE.sub(lambda m: b"\\u%04x" % ord(m.group().decode()), data)


def _holds(data: bytes, lead: bytes, pattern: re.Pattern[bytes]) -> bool:
    """Whether ``pattern``, which starts with the byte ``lead``, occurs in ``data``. ``find`` goes to each lead byte
    (memchr's pace: the regex engine's search steps through every byte, 5 instructions each) and the pattern is
    tried there; past ``_PROBES`` of them (a text of box drawing or dashes) the regex engine searches the rest."""
    at, probes = data.find(lead), _PROBES
    while at >= 0:
        if pattern.match(data, at) is not None:
            return True
        probes -= 1
        if not probes:
            return pattern.search(data, at + 1) is not None
        at = data.find(lead, at + 1)
    return False


def allow_deepest_walks() -> None:
    """Raise the interpreter's recursion limit so that every value a log can hold can be walked and written."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), WALK_FRAMES))


def dumps(value: Any, option: int = 0) -> bytes:
    """``orjson.dumps(value, option=option)`` byte for byte wherever orjson can write ``value``. A dict with a key
    that is no str is retried with ``OPT_NON_STR_KEYS`` (not asked for at first: it sends every dict's keys down a
    slower path); a str with surrogates is written as ``path_text`` names it; nesting deeper than orjson writes is
    written by ``deep_dumps``, in the same bytes orjson would write."""
    try:
        return orjson.dumps(value, option=option)
    except orjson.JSONEncodeError:
        try:
            return orjson.dumps(value, option=option | orjson.OPT_NON_STR_KEYS)
        except orjson.JSONEncodeError as exc:
            if "surrogates" in str(exc):
                value = _named(value)
                try:
                    return orjson.dumps(value, option=option | orjson.OPT_NON_STR_KEYS)
                except orjson.JSONEncodeError as again:
                    exc = again
            if str(exc) != TOO_DEEP:
                raise
            return deep_dumps(_named(value), option | orjson.OPT_NON_STR_KEYS)


def _named(value: Any) -> Any:
    """``value`` with each str (a key too) as ``path_text`` writes it: no surrogate left for orjson to refuse."""
    if isinstance(value, str):
        return path_text(value)
    if isinstance(value, dict):
        return {_named(k): _named(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_named(v) for v in value]
    return value
