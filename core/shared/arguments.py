"""A tool call's raw JSON arguments as a model sent them, read by the standard library's parser (whose wording the
host's messages quote), with every way that parser fails on hostile text turned into one ``ValueError``; and a
run of digits from any text (a log's, a file's on another machine) as a number, None past what ``int()`` converts."""

from __future__ import annotations

import json
import sys
from typing import Any


def loads_arguments(text: str) -> Any:
    """``text`` parsed (a blank string is ``{}``). ``ValueError`` whose message completes "arguments are …" when
    the parser cannot read it: bad syntax, nesting past the interpreter's recursion limit, or an integer of more
    digits than Python converts (``sys.get_int_max_str_digits``)."""
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at char {exc.pos})") from None
    except RecursionError:
        raise ValueError("nested too deeply to read") from None
    except ValueError:
        raise ValueError(f"not readable (a number longer than {sys.get_int_max_str_digits()} digits)") from None


def whole_digits(digits: str) -> int | None:
    """A run of ASCII digits as an int; None when it has more digits than Python converts (such a number stands
    for no turn, step or line a log holds)."""
    most = sys.get_int_max_str_digits()
    return int(digits) if not most or len(digits) <= most else None
