"""Patterns from text tapedeck did not write (a model's tool arguments) compiled by RE2, whose matching time is
linear in the text: a pattern that backtracks catastrophically under Python's ``re`` cannot stall a reader."""

from __future__ import annotations

import re2

NO_BACKTRACKING = " (lookarounds and backreferences are not supported: matching runs in linear time)"


class RegexRefused(ValueError):
    """A pattern RE2 cannot take: ``why`` is RE2's reason, ``hint`` is ``NO_BACKTRACKING`` when it asks for a
    feature only a backtracking engine has, else empty."""

    def __init__(self, why: str, hint: str) -> None:
        super().__init__(f"{why}{hint}")
        self.why, self.hint = why, hint


def linear_regex(pattern: str, *, ignore_case: bool = False) -> re2._Regexp:
    """``pattern`` compiled by RE2; ``RegexRefused`` when it cannot be (bad syntax, a lookaround, a backreference)."""
    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = not ignore_case
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        why = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        hint = NO_BACKTRACKING if "perl operator" in why or "escape sequence" in why else ""
        raise RegexRefused(why, hint) from exc
