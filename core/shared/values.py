"""Typed reads of decoded JSON values, where a wrong type reads as absent, and a run of digits from any text (a
log's, a file's on another machine) as a number, None past what ``int()`` converts."""

from __future__ import annotations

import math
import re
import sys
from typing import Any

MAX_SAFE_INTEGER = 2**53 - 1  # JavaScript's Number.MAX_SAFE_INTEGER: the largest count a seed's config holds exactly
_JS_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")  # a decimal string Number() reads


def int_or_none(value: Any) -> int | None:
    """``value`` when it is an integer (a bool is not one), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def str_or_none(value: Any) -> str | None:
    """``value`` when it is a string, else None."""
    return value if isinstance(value, str) else None


def whole_number(value: object) -> int | None:
    """``value`` as an int when it is an integer in JavaScript's sense (``2.0`` counts, ``True`` does not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        return None
    return int(value)


def js_integer(value: Any) -> int | None:
    """``Number(value)`` when it is an integer, as the seed's recall tools read a turn, a step, a call or a seq:
    numbers and numeric strings (``3``, ``"3"``, ``" 2.0 "``, ``"1e1"``; ``""`` is 0); booleans, null and anything
    else are refused (None)."""
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return 0
        if not _JS_NUMBER.fullmatch(text):
            return None
        value = float(text)
    return whole_number(value)


def whole_digits(digits: str) -> int | None:
    """A run of ASCII digits as an int; None when it has more digits than Python converts (such a number stands
    for no turn, step or line a log holds)."""
    most = sys.get_int_max_str_digits()
    return int(digits) if not most or len(digits) <= most else None
