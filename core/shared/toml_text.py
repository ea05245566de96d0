"""TOML text a person wrote (the TUI's keymap and settings files), parsed so that every way the standard library's
parser fails is one ``ValueError`` with a message for that person."""

from __future__ import annotations

import sys
import tomllib
from typing import Any


def loads_toml(text: str) -> dict[str, Any]:
    """``text`` parsed; ValueError saying why it cannot be: bad syntax (the parser's own words), nesting past the
    interpreter's recursion limit, or an integer of more digits than Python converts."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(str(exc)) from None
    except RecursionError:
        raise ValueError("nested too deeply to read") from None
    except ValueError:
        raise ValueError(f"a number has more than {sys.get_int_max_str_digits()} digits") from None
