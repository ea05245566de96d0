"""A tool call's raw JSON arguments as a model sent them, read by the standard library's parser (whose wording the
host's messages quote), with every way that parser fails on hostile text turned into one ``ValueError``."""

from __future__ import annotations

from typing import Any

from core.shared.parsers import Failure, Unparsable, parse_json


def loads_arguments(text: str) -> Any:
    """``text`` parsed (a blank string is ``{}``). ``ValueError`` whose message completes "arguments are …" when
    the parser cannot read it: bad syntax, nesting past the interpreter's recursion limit, or an integer of more
    digits than Python converts (``sys.get_int_max_str_digits``)."""
    if not text.strip():
        return {}
    try:
        return parse_json(text)
    except Unparsable as why:
        if why.failure is Failure.SYNTAX:
            raise ValueError(f"not valid JSON ({why.reason} at char {why.position})") from None
        if why.failure is Failure.DEPTH:
            raise ValueError("nested too deeply to read") from None
        raise ValueError(f"not readable (a number longer than {why.digits} digits)") from None
