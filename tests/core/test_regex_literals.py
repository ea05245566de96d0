"""The characters an RE2 pattern names itself (``core.shared.regex.own_characters``), read in RE2's grammar where
it parts from Python's: the filter matches with RE2, so its regex is judged in the same grammar."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from core.host.tools.outcome import ToolFailure
from core.host.tools.workspace import compile_regex
from core.policies.recall import RecallError, _grep
from core.read.event_filter import EventFilter
from core.shared.regex import RegexRefused, linear_regex, names_any, own_characters


@pytest.mark.parametrize(("pattern", "named"), [
    ("abc", "abc"), (".", ""), ("[A-Z]", ""), (r"\w\d\s\W\D\S", ""), ("[Q]", "Q"), ("[^QR]", "QR"),
    ("a{,2}", "a{,2}"), ("a{2}", "a"), ("a{2,}b{1,3}?", "ab"), ("{", "{"), ("x}", "x}"),
    (r"\x{51}\x52", "QR"), (r"\101\0", "A\0"), (r"\QA.b\E.", "A.b"), (r"\Qab", "ab"), (r"\pL\p{Greek}\PN\p{^Lu}", ""),
    ("[[:alpha:]]", ""), ("[[:^digit:]x]", "x"), ("[]a]", "]a"), ("[^]a]", "]a"), ("[a-]", "a-"), ("[-a]", "-a"),
    (r"[\d\pLq]", "q"), (r"[\x41-\x5A_]", "_"), (r"\.\*\_", ".*_"), (r"\n\t\a\f\v\r", "\n\t\a\f\v\r"),
    (r"(?i)(?P<name>k)(?<other>m)(?:n)(?s-m:o)", "kmno"), (r"\A\bx\B\z^$", "x"), (r"\C", ""), ("ß|ẞ", "ßẞ"),
])  # fmt: skip
def test_own_characters_reads_the_pattern_as_re2_does(pattern: str, named: str) -> None:
    assert own_characters(pattern) == frozenset(named)


@pytest.mark.parametrize("pattern", ["(", "[a", r"\1", "a**", r"(?=x)", r"\Z", ""])
def test_a_pattern_re2_refuses_names_anything(pattern: str) -> None:
    """None: RE2 does not take it (or it is empty and names nothing, which ``names_any`` answers False for)."""
    assert own_characters(pattern) is None or pattern == ""


@pytest.mark.parametrize(("pattern", "text", "named"), [
    ("ß", "ß", True), ("(?i)ẞ", "ß", True), ("k", "\u212a", True), ("s", "ſ", True), ("σ", "ς", True),
    ("q", "Q", True), ("ab", "xyz", False), (".", "Q", False), ("(", "anything", True), ("[[:alpha:]]", "abc", False),
])  # fmt: skip
def test_names_any_folds_case_as_re2_does(pattern: str, text: str, named: bool) -> None:
    """Any character the pattern names, in any case RE2 folds it to (not Python's ``casefold``, which makes ``ß``
    two letters), found in ``text``; a pattern RE2 refuses may name any."""
    assert names_any(pattern, text) is named


LONE_SURROGATE = "a\udc80b"  # what JSON's "\udc80" decodes to, or a non-UTF-8 byte of argv


def test_a_lone_surrogate_is_refused_not_a_traceback() -> None:
    """No UTF-8 holds a lone surrogate, so RE2 cannot be given it: the pattern is refused like bad syntax."""
    with pytest.raises(RegexRefused, match="surrogate"):
        linear_regex(LONE_SURROGATE)


@pytest.mark.parametrize(("compile_it", "error", "says"), [
    (lambda p: _grep("text", p, "head"), RecallError, r'invalid regex "a\\udc80b"\Z'),  # the escape the model sent
    (lambda p: EventFilter(regex=p), ValueError, "lone surrogate U\\+DC80"),
    (lambda p: compile_regex(p, "pattern"), ToolFailure, "lone surrogate U\\+DC80"),
])  # fmt: skip
def test_every_caller_refuses_a_lone_surrogate_clearly(
    compile_it: Callable[[str], object], error: type, says: str
) -> None:
    """expand_result's grep, the event filter (``f``, ``export --grep``) and the workspace grep each give their
    own refusal; the scripted provider's resultMatches is in tests/host/test_provider_scripted.py."""
    with pytest.raises(error, match=says):
        compile_it(LONE_SURROGATE)
