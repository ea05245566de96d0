"""Patterns from text tapedeck did not write (a model's tool arguments) compiled by RE2, whose matching time is
linear in the text: a pattern that backtracks catastrophically under Python's ``re`` cannot stall a reader."""

from __future__ import annotations

import re

import re2

from core.shared.text import clip

_SURROGATE = re.compile("[\ud800-\udfff]")
WHY_CHARS = 120  # of RE2's reason, which quotes the rest of the pattern from where it went wrong
NO_BACKTRACKING = " (lookarounds and backreferences are not supported: matching runs in linear time)"
PAST_LIMITS = (  # a pattern a backtracking engine takes, too big for RE2's
    " (past the limits of matching in linear time: a counted repetition goes to 1000 at most, and a pattern's "
    "compiled size is bounded)"
)


class RegexRefused(ValueError):
    """A pattern RE2 cannot take: ``why`` is RE2's reason (cut at ``WHY_CHARS``), ``hint`` is ``NO_BACKTRACKING`` when it asks for a
    feature only a backtracking engine has, ``PAST_LIMITS`` when it is too big for RE2 (a repetition counted past
    1000, a program past RE2's size), else empty."""

    def __init__(self, why: str, hint: str) -> None:
        super().__init__(f"{why}{hint}")
        self.why, self.hint = why, hint


def linear_regex(pattern: str, *, ignore_case: bool = False) -> re2._Regexp:
    """``pattern`` compiled by RE2; ``RegexRefused`` when it cannot be (bad syntax, a lookaround, a backreference,
    a lone surrogate, which no UTF-8 holds: JSON's ``"\\udc80"`` or a non-UTF-8 byte of argv gives one)."""
    if (lone := _SURROGATE.search(pattern)) is not None:
        raise RegexRefused(f"lone surrogate U+{ord(lone.group()):04X} at offset {lone.start()}: not valid UTF-8", "")
    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = not ignore_case
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        why = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        if "perl operator" in why or "escape sequence" in why:
            hint = NO_BACKTRACKING
        else:
            hint = PAST_LIMITS if "repetition size" in why or "pattern too large" in why else ""
        raise RegexRefused(clip(why, WHY_CHARS), hint) from exc


_REPEAT = re.compile(r"\{[0-9]+(?:,[0-9]*)?\}")  # RE2's counted repetition; any other ``{`` is a literal
_OCTAL = re.compile(r"[0-7]{1,3}")
_HEX = re.compile(r"\{([0-9A-Fa-f]+)\}|([0-9A-Fa-f]{2})")
_C_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "a": "\a", "f": "\f", "v": "\v"}
_UNNAMED_ESCAPES = frozenset("dDsSwWbBAzC")  # classes and assertions: no character of their own


def own_characters(pattern: str) -> frozenset[str] | None:
    """The characters ``pattern`` names itself, read in RE2's syntax (the grammar the filter matches with): its
    literals, escaped or not (``\\x{51}``, ``\\101``, ``\\Q…\\E``, a ``{`` that starts no repetition), also in a
    class (``[Q]``), but not what a range, a class escape (``\\w``, ``\\pL``), a POSIX class (``[[:alpha:]]``), ``.``
    or an assertion stands for; None when RE2 does not take ``pattern`` (it may name any character). A parser of
    our own over the syntax RE2 documents: RE2 checks the pattern first, so only its valid forms are read here."""
    try:
        linear_regex(pattern)
    except RegexRefused:
        return None
    named: set[str] = set()
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if pattern.startswith("\\Q", i):  # literals up to ``\E`` or the end
                end = pattern.find("\\E", i + 2)
                named.update(pattern[i + 2 : n if end < 0 else end])
                i = n if end < 0 else end + 2
                continue
            i = _escape(pattern, i, named)
        elif c == "[":
            i = _class(pattern, i, named)
        elif c == "(" and pattern.startswith("(?", i):  # a named group's name, or flags: no characters
            i = (pattern.index(">", i) if pattern.startswith(("(?P<", "(?<"), i)
                 else min(j for j in (pattern.find(":", i), pattern.find(")", i)) if j >= 0)) + 1  # fmt: skip
        elif c == "{" and (m := _REPEAT.match(pattern, i)) is not None:
            i = m.end()
        elif c in ".^$|()*+?":
            i += 1
        else:
            named.add(c)
            i += 1
    return frozenset(named)


def _escape(pattern: str, i: int, named: set[str] | None) -> int:
    """Read the escape at ``i`` (outside a class or in one), adding the character it names to ``named`` (None: a
    range's end, named by no one); where the pattern goes on."""
    c = pattern[i + 1]
    if c in "pP":  # a Unicode class: ``\pL`` or ``\p{Greek}``
        return pattern.index("}", i) + 1 if pattern.startswith("{", i + 2) else i + 3
    if c in _UNNAMED_ESCAPES:
        return i + 2
    if c in "01234567":
        m = _OCTAL.match(pattern, i + 1)
        char, end = chr(int(m.group(), 8)), m.end()  # type: ignore[union-attr]  # a digit is there
    elif c == "x":
        m = _HEX.match(pattern, i + 2)
        char, end = chr(int(m.group(1) or m.group(2), 16)), m.end()  # type: ignore[union-attr]  # RE2 took it
    else:
        char, end = _C_ESCAPES.get(c, c), i + 2
    if named is not None:
        named.add(char)
    return end


def _class(pattern: str, i: int, named: set[str]) -> int:
    """Read the class that opens at ``i``, adding its single characters to ``named``; where the pattern goes on."""
    i += 2 if pattern.startswith("[^", i) else 1
    first = True  # a ``]`` first is a character
    while first or pattern[i] != "]":
        first = False
        if pattern.startswith("[:", i) and (end := pattern.find(":]", i + 2)) >= 0:  # ``[:alpha:]``
            i = end + 2
            continue
        if pattern[i] == "\\" and pattern[i + 1] in "pPdDsSwW":
            i = _escape(pattern, i, None)
            continue
        char: set[str] = set()
        if pattern[i] == "\\":
            i = _escape(pattern, i, char)
        else:
            char.add(pattern[i])
            i += 1
        if pattern[i] == "-" and pattern[i + 1] != "]":  # a range: ``a-z`` names neither end
            i = _escape(pattern, i + 1, None) if pattern[i + 1] == "\\" else i + 2
        else:
            named |= char
    return i + 1


def names_any(pattern: str, text: str) -> bool:
    """True when ``pattern`` names a character of ``text`` itself (``own_characters``), in any case RE2's folding
    takes it to (``k`` names the Kelvin sign, ``ß`` its capital), or when RE2 does not take ``pattern``."""
    named = own_characters(pattern)
    if named is None:
        return True
    if not named:
        return False
    folded = "(?i)[" + "".join(f"\\x{{{ord(c):x}}}" for c in sorted(named)) + "]"
    return linear_regex(folded).search(text) is not None
