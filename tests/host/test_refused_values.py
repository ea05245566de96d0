"""How a refused value, key or origin is named in a message: as JSON, cut with a mark that says so and how long it
was, safe to draw on a terminal, and never written back whole however long it is."""

from __future__ import annotations

import pytest

from core.control.config import load_config, set_value
from core.control.config_values import check_loggable, describe
from core.control.inbox import MAX_ORIGIN_CHARS, ControlError, origin_error, validate_request
from core.shared.errors import ConfigError

ORIGIN_RULE = f"'origin' must be 1 to {MAX_ORIGIN_CHARS} letters, digits and . _ : / - starting with a letter or digit"


@pytest.mark.parametrize(
    ("value", "said"),
    [(["x"], '["x"]'), ({"a": None, "0": True}, '{"0":true,"a":null}'), (None, "null"), (True, "true"),
     (1.0, "1"), (1.5e-7, "1.5e-7"), ([1e21, 0.1, -0.0], "[1e+21,0.1,0]"), ("x", '"x"'), ("\x1b[2J\u202e\x9b", '"\\u001b[2J\\u202e\\u009b"')],
)  # fmt: skip
def test_a_refused_value_reads_as_json(value: object, said: str) -> None:
    """The host worded a refused list as Python does (['x'], None, True), the DSH bridge as JSON (["x"], null,
    true): both word it as JSON now (tests/dsh/test_plugin_inbox_parser.py holds them to the same words)."""
    with pytest.raises(ControlError) as info:
        validate_request("message", {"text": "hi", "kind": value})
    if isinstance(value, str):
        assert str(info.value) == f"message: 'kind' must be one of steer, note (got {said})"
    with pytest.raises(ControlError) as info:
        validate_request("expand", {"seq": value})
    fraction = ", written with a fraction or an exponent" if isinstance(value, float) and value.is_integer() else ""
    assert str(info.value) == f"expand: 'seq' must be a non-negative integer (got {said}{fraction})"


def test_describe_marks_a_cut_string_with_its_length_and_shows_no_control_character() -> None:
    """describe() cut a string at 60 characters with nothing to say so, and wrote its control characters as they
    were; the cut is marked with … and the whole length, an escape is written as JSON writes it."""
    assert describe("abc") == '"abc" (a string)'
    long = "\x1b]52;c;" + "k" * 99_993
    said = describe(long)
    assert said.endswith("…\" (a string of 100,000 characters)") and said.startswith('"\\u001b]52;c;kkk')
    assert not any(ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 for ch in said) and len(said) < 200
    assert describe(["k" * 200]).endswith("… (a list, 204 characters of JSON)")
    with pytest.raises(ConfigError) as info:
        set_value(load_config(None), "slice.fold.pinSteps", "\x1b[31m" + "9" * 200)
    assert str(info.value).startswith('slice.fold.pinSteps must be a number, got "\\u001b[31m999')
    assert str(info.value).endswith("…\" (a string of 205 characters)")


@pytest.mark.parametrize("value", [2**70, [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]], float("nan")])
def test_a_hostile_key_is_not_written_back_whole(value: object) -> None:
    """check_loggable named a key whole: a config.set key of 1 MB made a 1 MB refusal, written into the log's
    outcome event. The key is cut to 80 characters with …, in check_loggable and wherever a key is named."""
    key = "slice." + "k" * (1 << 20)
    with pytest.raises(ConfigError) as info:
        check_loggable(value, key)
    assert len(str(info.value)) < 300 and "kkk…" in str(info.value), str(info.value)[:300]
    with pytest.raises(ControlError) as sent:
        validate_request("config.set", {"key": key, "value": value})
    assert len(str(sent.value)) < 300 and "…" in str(sent.value)
    for dotted in (key + ".x", "host." + "k" * (1 << 20)):
        with pytest.raises((ConfigError, ControlError)) as info:
            (set_value(load_config(None), dotted, 1) if dotted.startswith("slice") else
             validate_request("config.set", {"key": dotted, "value": 1}))  # fmt: skip
        assert len(str(info.value)) < 400 and "…" in str(info.value), str(info.value)[:300]


def test_a_bad_origin_is_shown_whole_up_to_the_most_it_may_have() -> None:
    """A bad origin was quoted to 101 characters, one more than the message says it may have, with no mark of a
    cut; it is quoted whole up to 100 characters, a longer one cut with … and followed by its length."""
    assert origin_error("a" * MAX_ORIGIN_CHARS) is None
    assert origin_error("a" * (MAX_ORIGIN_CHARS - 1) + " ") == f'{ORIGIN_RULE} (got "{"a" * 99} ")'
    assert origin_error("a" * (MAX_ORIGIN_CHARS + 1)) == f'{ORIGIN_RULE} (got "{"a" * 99}…" (101 characters))'
    # a character of two UTF-16 units across the cut is left out whole, not split; the length counts characters
    assert origin_error("a" * 98 + "\U0001f600" + "b" * 5) == f'{ORIGIN_RULE} (got "{"a" * 98}…" (104 characters))'


@pytest.mark.parametrize(("value", "said"), [(5, "5"), (None, "null"), ({"a": [1.5]}, '{"a":[1.5]}')])
def test_a_value_of_the_wrong_kind_is_shown_not_named_by_a_python_type(value: object, said: str) -> None:
    """A string argument, the args or the origin of another kind was refused naming its Python type ('got int',
    'got NoneType', 'got dict'), which an operator of the DSH bridge never sees a use of; it is shown as JSON."""
    for op, args, says in (("message", {"text": value}, "message: 'text' must be a string"),
                           ("stop", value, "stop: args must be a JSON object")):  # fmt: skip
        if args is None or isinstance(args, dict):
            continue  # no args (none given), or an object of args
        with pytest.raises(ControlError) as info:
            validate_request(op, args)
        assert str(info.value) == f"{says} (got {said})"
    assert origin_error(value) == f"'origin' must be a string (got {said})"
