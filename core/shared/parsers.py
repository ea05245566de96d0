"""The standard library's JSON and TOML parsers with their three ways to fail told apart. Each stops on bad syntax
(``json.JSONDecodeError``, ``tomllib.TOMLDecodeError``), on nesting past the interpreter's recursion limit
(``RecursionError``), or on an integer of more digits than Python converts (a plain ``ValueError``, the only other
error either raises); ``Unparsable`` says which, and each caller words it for its own reader."""

from __future__ import annotations

import enum
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from core.shared.regular import MAX_CONFIG_BYTES, TooLarge, read_config
from core.shared.text import quoted_path


class Failure(enum.Enum):
    """Why a parser stopped."""

    SYNTAX = "syntax"
    DEPTH = "depth"
    DIGITS = "digits"


class Unparsable(ValueError):
    """A text the parser could not read. ``failure`` says why; ``str()`` is the parser's own message for bad syntax
    (position included); ``reason`` is that message without the position and ``position`` the character offset,
    where the parser gives them (JSON's does, TOML's only from Python 3.14); ``digits`` is the most digits Python
    converts."""

    def __init__(self, failure: Failure, message: str, reason: str = "", position: int | None = None) -> None:
        super().__init__(message)
        self.failure = failure
        self.reason = reason or message
        self.position = position
        self.digits = sys.get_int_max_str_digits()


class NotUtf8(ValueError):
    """A file a person wrote whose bytes are not UTF-8 text; ``str()`` names the first such byte."""


BOM = b"\xef\xbb\xbf"  # the UTF-8 byte-order mark, which some editors (Windows ones) put first in a file they save


def user_text(data: bytes, fix: str = "save it as UTF-8") -> str:
    """``data``, the bytes of a file a person wrote (a policy config, a keymap, a script, a tool's output), as its
    text: UTF-8, the byte-order mark an editor may have put first left out; ``NotUtf8`` naming the first byte that is
    not UTF-8 (its offset in the file and its value) and ``fix``, what to do."""
    skip = len(BOM) if data.startswith(BOM) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = skip + exc.start
        raise NotUtf8(f"not UTF-8 text: the byte at offset {at} (0x{data[at]:02x}) cannot be decoded; {fix}") from None


def parse_json(text: str) -> Any:
    """``text`` parsed as JSON; ``Unparsable`` when the parser cannot read it."""
    return _parsed(json.loads, text, json.JSONDecodeError)


def parse_toml(text: str) -> dict[str, Any]:
    """``text`` parsed as TOML; ``Unparsable`` when the parser cannot read it."""
    import tomllib  # only when asked: the module compiles regular expressions as it is imported

    return _parsed(tomllib.loads, text, tomllib.TOMLDecodeError)


def _parsed(loads: Callable[[str], Any], text: str, syntax: type[ValueError]) -> Any:
    try:
        return loads(text)
    except RecursionError:
        raise Unparsable(Failure.DEPTH, "nested too deeply to read") from None
    except ValueError as exc:
        if isinstance(exc, syntax):
            raise Unparsable(Failure.SYNTAX, str(exc), getattr(exc, "msg", ""), getattr(exc, "pos", None)) from None
        raise Unparsable(Failure.DIGITS, f"a number has more than {sys.get_int_max_str_digits()} digits") from None


class Wording(NamedTuple):
    """How a reader of a file words each way it can fail: ``str.format`` templates given ``path``, ``kind`` (JSON or
    TOML), ``why`` (the error's own text) and ``digits`` (the most digits Python converts)."""

    unreadable: str
    too_large: str
    not_utf8: str
    syntax: str
    depth: str
    digits: str


def load_document(
    path: Path, kind: str, what: str, wording: Wording, error: Callable[[str], Exception], limit: int = MAX_CONFIG_BYTES
) -> Any:
    """The file a user named at ``path``, read as ``what`` (``read_config``: at most ``limit`` bytes), decoded
    (``user_text``) and parsed as ``kind`` (``JSON``, else TOML); every failure raised as ``error`` of the message
    ``wording`` gives it, naming the file as ``quoted_path`` does."""
    named = quoted_path(path)
    try:
        data = read_config(path, what, limit)
    except OSError as exc:
        raise error(wording.unreadable.format(path=named, why=exc.strerror or exc)) from exc
    except TooLarge as exc:
        raise error(wording.too_large.format(path=named, why=exc)) from None
    try:
        text = user_text(data)
    except NotUtf8 as exc:
        raise error(wording.not_utf8.format(path=named, why=exc)) from None
    try:
        return parse_json(text) if kind == "JSON" else parse_toml(text)
    except Unparsable as why:
        template = {Failure.SYNTAX: wording.syntax, Failure.DEPTH: wording.depth}.get(why.failure, wording.digits)
        raise error(template.format(path=named, kind=kind, why=why, digits=why.digits)) from None
