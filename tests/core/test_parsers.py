"""core.shared.parsers tells the standard parsers' three failures apart, with the position JSON's parser gives."""

from __future__ import annotations

import pytest

from core.shared.parsers import Failure, Unparsable, parse_json, parse_toml


@pytest.mark.parametrize("parse", [parse_json, parse_toml], ids=["json", "toml"])
@pytest.mark.parametrize(
    ("json_text", "toml_text", "failure"),
    [
        ('{"a": ' + "9" * 5000 + "}", "a = " + "9" * 5000, Failure.DIGITS),
        ("[" * 5000 + "]" * 5000, "a = " + "[" * 5000 + "]" * 5000, Failure.DEPTH),
        ('{"a": }', "a = ", Failure.SYNTAX),
    ],
    ids=["digits", "depth", "syntax"],
)
def test_each_failure_is_told_apart(parse, json_text: str, toml_text: str, failure: Failure) -> None:
    with pytest.raises(Unparsable) as caught:
        parse(json_text if parse is parse_json else toml_text)
    assert caught.value.failure is failure
    assert isinstance(caught.value, ValueError)


def test_a_json_syntax_error_keeps_the_parsers_words_and_position() -> None:
    with pytest.raises(Unparsable) as caught:
        parse_json('{"a": }')
    assert (caught.value.reason, caught.value.position) == ("Expecting value", 6)
    assert str(caught.value) == "Expecting value: line 1 column 7 (char 6)"
    assert caught.value.digits == 4300


def test_what_parses_is_returned() -> None:
    assert parse_json('{"a": [1]}') == {"a": [1]}
    assert parse_toml("a = [1]") == {"a": [1]}
