"""Redaction of a value after a key word that hostile or unusual text writes: a string's prefix that is no code's
(``password=B'0'``), and the value rules read again with hostile input in mind."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.export.redact import KINDS, Redactor

PREFIXES = st.sampled_from(["b", "B", "r", "R", "u", "U", "f", "F", "rb", "Rb", "bR", "BR", "br", "fr", "Rf"])
QUOTES = st.sampled_from(["'", '"'])
SECRETS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,23}", fullmatch=True).filter(
    lambda v: (
        v.lower()
        not in {"none", "null", "nil", "true", "false", "yes", "no", "on", "off", "enabled", "disabled"}
    )
)


def _redacted(text: str) -> tuple[str, int]:
    r = Redactor(environ={}, home="/home/ann")
    out = r.text(text)
    summary = r.summary()
    assert summary == {**dict.fromkeys(KINDS, 0), "key": summary["key"]}, summary
    return out, summary["key"]


@settings(max_examples=200, deadline=None)
@given(
    place=st.sampled_from(
        ["password={}", "PASSWORD={}", "export DB_PASSWORD={}", "password: {}", "  api_key: {}"]
    ),
    prefix=PREFIXES,
    quote=QUOTES,
    secret=SECRETS,
)
@example(place="password={}", prefix="B", quote="'", secret="0")
@example(place="PASSWORD={}", prefix="r", quote='"', secret="ab")
def test_a_quoted_word_with_a_letter_before_it_outside_code_goes_whole(
    place: str, prefix: str, quote: str, secret: str
) -> None:
    """``password=B'0'`` was taken for Python's bytes literal with no code around it to give it: no literal of code
    was judged, and the value stayed whole. Where no code assigns it (an env file, a shell's word, a YAML line), the
    letter and the quoted piece are one word (``B0``, as a shell reads it) and go together."""
    text = place.format(f"{prefix}{quote}{secret}{quote}")
    out, keys = _redacted(text)
    assert out == place.format(f"[redacted key]{quote}") and keys == 1, out


@settings(max_examples=200, deadline=None)
@given(
    place=st.sampled_from(["password = {}", "f(password={})", "x = {{'password': {}}}", "api_key: str = {}"]),
    prefix=PREFIXES.filter(lambda p: "f" not in p.lower()),
    quote=QUOTES,
    secret=SECRETS,
)
@example(place="password = {}", prefix="B", quote="'", secret="0")
def test_a_prefixed_literal_code_assigns_keeps_its_prefix_and_quotes(
    place: str, prefix: str, quote: str, secret: str
) -> None:
    """In code (``password = B'0'``, a call's keyword argument, a dict's quoted key) the prefix is the literal's:
    what is between its quotes goes, whatever its length."""
    out, keys = _redacted(place.format(f"{prefix}{quote}{secret}{quote}"))
    assert out == place.format(f"{prefix}{quote}[redacted key]{quote}") and keys == 1, out
