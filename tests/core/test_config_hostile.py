"""Hostile config input: every bad value is refused with a message naming the key and the real problem, and
nothing changes. Includes a Hypothesis fuzzer over TOML and JSON files and ``config.set`` values."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.alerts.config import RULE_KEYS
from core.cli import main
from core.control.config import (
    PolicyConfig,
    config_event,
    load_config,
    parse_value,
    replay_config,
    set_value,
    validate_config,
)
from core.policies.adaptive_config import DEFAULT_PRUNE_LEVELS
from core.shared.errors import ConfigError


def _refused(call: Any, *phrases: str) -> str:
    with pytest.raises(ConfigError) as info:
        call()
    message = str(info.value)
    for phrase in phrases:
        assert phrase in message, message
    return message


@pytest.mark.parametrize("text", ["Infinity", "-Infinity", "NaN", "1e999", "-1e999"])
def test_non_finite_numbers_are_refused_by_config_set(text: str) -> None:
    config = validate_config({})
    _refused(lambda: set_value(config, "slice.fold.pinMaxChars", parse_value(text)),
             "slice.fold.pinMaxChars", "finite")  # fmt: skip
    assert config.get("slice.fold.pinMaxChars") == 8000


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("c.json", '{"slice": {"fold": {"pinMaxChars": Infinity}}}'),
        ("c.json", '{"slice": {"fold": {"pinMaxChars": 1e999}}}'),
        ("c.json", '{"slice": {"digest": {"maxLineChars": NaN}}}'),
        ("c.toml", "[slice.fold]\npinMaxChars = inf\n"),
        ("c.toml", "[slice.digest]\nmaxKeepRatio = nan\n"),
    ],
)
def test_non_finite_numbers_are_refused_in_files(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    _refused(lambda: load_config(tmp_path / name), "slice.", "finite")


@pytest.mark.parametrize("name", ["c.json", "c.toml"])
def test_a_number_too_long_to_convert_in_a_file_gets_a_message(tmp_path: Path, name: str) -> None:
    """Both parsers convert an integer with int(): past 4,300 digits it raised ValueError, a traceback, exit 1."""
    digits = "9" * 5000
    text = '{"slice": {"x": ' + digits + "}}" if name.endswith(".json") else f"[slice]\nx = {digits}\n"
    (tmp_path / name).write_text(text)
    _refused(lambda: load_config(tmp_path / name), str(tmp_path / name), "more than 4300 digits")


@pytest.mark.parametrize(
    ("name", "text"),
    [("c.json", '{"slice": {"fold": {"pinSteps": 1e26}}}'), ("c.toml", "[slice.fold]\npinSteps = 1e26\n")],
)
def test_a_whole_number_beyond_64_bits_is_refused_in_files(tmp_path: Path, name: str, text: str) -> None:
    """A count given as 1e26 in a file was taken (in force: the int 10**26, which no JSON event holds), and a later
    config.set of its key wrote it as the change's old value: the host's event could not be written. It is past the
    key's range too, which is said first."""
    (tmp_path / name).write_text(text)
    _refused(lambda: load_config(tmp_path / name), "slice.fold.pinSteps must be from 0 to 10,000 (got 1e+26)")


def test_a_non_utf8_file_gets_a_message(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_bytes(b"[prolong]\nlogFile = \"\xff\xfe.txt\"\n")
    _refused(lambda: load_config(tmp_path / "c.toml"), "not UTF-8", "the byte at offset 21 (0xff)")


@pytest.mark.parametrize(
    ("name", "text"),
    [("c.json", "[" * 100_000 + "]" * 100_000), ("c.toml", "x = " + "[" * 100_000 + "]" * 100_000)],
    ids=["json", "toml"],
)
def test_a_deeply_nested_file_gets_a_message(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    _refused(lambda: load_config(tmp_path / name), "nested too deeply")


def test_a_deeply_nested_set_value_gets_a_message() -> None:
    value: Any = 1
    for _ in range(100_000):
        value = [value]
    _refused(lambda: set_value(validate_config({}), "slice.fold.pinMaxChars", value), "nested too deeply")


@pytest.mark.parametrize(
    ("text", "phrase"), [("9" * 5000, "more than 4300 digits"), ("[" * 5000, "nested too deeply"), ("[1]", None)],
    ids=["digits", "nesting", "json"],
)
def test_a_command_line_value_json_cannot_hold_gets_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, phrase: str | None
) -> None:
    """``--set KEY=VALUE`` (fold, alerts) and ``control --arg value=…``: these ended in a ValueError or
    RecursionError traceback, exit 1."""
    if phrase is None:
        assert parse_value(text) == [1]
        return
    _refused(lambda: parse_value(text), phrase)
    log = tmp_path / "session.jsonl"
    log.write_bytes(b'{"type":"session","version":0,"id":"x"}\n')
    for argv in (["fold", str(log), "--set", f"fold.pinSteps={text}"], ["alerts", str(log), "--set", f"alerts.loop.count={text}"]):
        capsys.readouterr()
        assert main(argv) == 2
        assert phrase in capsys.readouterr().err


def test_a_lone_surrogate_is_refused() -> None:
    _refused(lambda: set_value(validate_config({}), "prolong.logFile", "a\ud800.txt"), "prolong.logFile", "UTF-8")


@pytest.mark.parametrize(
    ("key", "value", "phrase"),
    [
        ("slice.fold.pinMaxChars", True, "must be a number"),
        ("slice.fold.pinMaxChars", "8000", "must be a number"),
        ("slice.fold.enabled", 1, "true or false"),
        ("slice.history.keepRecentTurns", [1], "must be a number"),
        ("prolong.logWindow", True, "must be a number"),
        ("rewind.reportLanguage", 3, "must be a string"),
    ],
)
def test_a_value_of_the_wrong_type_says_so(key: str, value: object, phrase: str) -> None:
    _refused(lambda: set_value(validate_config({}), key, value), key, phrase)


def test_a_list_entry_can_be_set_by_its_name() -> None:
    config = validate_config({})
    _refused(lambda: set_value(config, "adaptive.taskProfiles.read.maxTokens", -1), "maxTokens", "positive")
    new, old = set_value(config, "adaptive.taskProfiles.read.maxTokens", 8192)
    assert (old, new.get("adaptive.taskProfiles.read.maxTokens")) == (16384, 8192)
    assert new.get("adaptive.taskProfiles.small.maxTokens") == 32768
    _refused(lambda: set_value(config, "adaptive.taskProfiles.huge.maxTokens", 1), "huge", "read, small")


def test_a_summarization_route_needs_both_keys() -> None:
    _refused(lambda: validate_config({"rewind": {"summarizationProvider": "deepseek"}}),
             "rewind.summarizationProvider", "summarizationModel")  # fmt: skip
    _refused(lambda: set_value(validate_config({}), "rewind.summarizationModel", "m"), "both")
    both = validate_config({"rewind": {"summarizationProvider": "p", "summarizationModel": "m"}})
    assert both.rewind.summarization_route() == ("p", "m")


# The fuzzer ------------------------------------------------------------------------------------------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.text(max_size=8), inner, max_size=3), max_leaves=8)  # fmt: skip


def _keys(node: Any, prefix: str = "") -> list[str]:
    if isinstance(node, dict):
        return [k for key, child in node.items() for k in _keys(child, f"{prefix}{key}.")] or [prefix[:-1]]
    return [prefix[:-1]]


KNOWN_KEYS = [k for k in _keys(validate_config({}).to_dict()) if "." in k]
KEY_NAMES = st.sampled_from([*KNOWN_KEYS, "slice.nope", "adaptive.taskProfiles.read.maxTokens"])


def _same(a: PolicyConfig, b: PolicyConfig) -> bool:
    return json.dumps(a.to_dict(), sort_keys=True) == json.dumps(b.to_dict(), sort_keys=True)


@settings(max_examples=300, deadline=None)
@given(key=KEY_NAMES, value=VALUES)
def test_fuzz_config_set_refuses_or_round_trips_through_the_log(key: str, value: Any) -> None:
    config = validate_config({})
    try:
        new, old = set_value(config, key, value)
    except ConfigError as exc:
        assert str(exc)
        return
    logged = json.loads(json.dumps(config_event({key: (old, new.get(key))}, "operator"), allow_nan=False))
    resumed = replay_config(config, [logged])
    assert _same(resumed, new)


# The alerts section's rule tables, with their own keys and values of every type.
ALERT_TABLES = st.dictionaries(
    st.sampled_from([*RULE_KEYS.values(), "bell", "notify", "x"]),
    VALUES | st.dictionaries(st.sampled_from(["enabled", "count", "seconds", "percent", "tokens", "usd", "usdPerHour",
                                              "windowMinutes", "action", "message", "x"]), VALUES, max_size=3),
    max_size=4,
)  # fmt: skip
SECTIONED = st.dictionaries(st.sampled_from(["slice", "rewind", "prolong", "adaptive", "model", "host", "x"]),
                            st.dictionaries(st.text(max_size=20) | st.sampled_from(KNOWN_KEYS), VALUES, max_size=4),
                            max_size=3) | st.builds(lambda alerts: {"alerts": alerts}, ALERT_TABLES)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=SECTIONED, as_json=st.booleans())
def test_fuzz_config_files_load_or_give_a_config_error(tmp_path: Path, raw: dict, as_json: bool) -> None:
    path = tmp_path / ("c.json" if as_json else "c.toml")
    if as_json:
        path.write_text(json.dumps(raw))
    else:
        path.write_text(_toml(raw), encoding="utf-8", errors="surrogatepass")
    try:
        config = load_config(path)
    except ConfigError as exc:
        assert str(exc).startswith(str(path))
        return
    assert json.loads(json.dumps(config.to_dict(), allow_nan=False)) is not None
    assert orjson.dumps(config.to_dict())  # as the log's writer writes it: no integer beyond 64 bits


def _toml_value(value: Any) -> str:
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, int | str):
        return json.dumps(value) if isinstance(value, str) else str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"


def _toml(raw: dict) -> str:
    return "".join(f"[{json.dumps(name)}]\n" + "".join(f"{json.dumps(k)} = {_toml_value(v)}\n" for k, v in
                   section.items()) for name, section in raw.items())  # fmt: skip


_LONG = "k" * 100_000


@pytest.mark.parametrize(
    "text",
    [
        f"[{_LONG}]\nx = 1\n",
        *(f"[{section}]\n{_LONG} = 1\n" for section in ("slice", "rewind", "adaptive", "model", "host", "alerts")),
        f"[slice.fold]\n{_LONG} = 1\n",
        f"[alerts.budget]\n{_LONG} = 1\n",
        f"[[adaptive.pruneLevels]]\n{_LONG} = 1\n",
    ],
    ids=lambda text: text[:24].replace(_LONG, "LONG"),
)
def test_a_long_unknown_key_or_section_in_a_file_is_quoted_cut(tmp_path: Path, text: str) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(text)
    message = _refused(lambda: load_config(path), "kkk…")
    assert len(message) < 1000, message[:300]


@pytest.mark.parametrize(
    "dotted",
    [f"slice.{_LONG}", _LONG, f"{_LONG}.x", f"slicex.{_LONG}", f"slice.fold.pinSteps.{_LONG}"],
    ids=lambda text: text.replace(_LONG, "LONG"),
)
def test_a_long_dotted_key_is_quoted_cut(dotted: str) -> None:
    # the part unknown is named: the section, else the long key
    said = "Unknown configuration section slicex." if dotted.startswith("slicex.") else "kkk…"
    message = _refused(lambda: set_value(validate_config({}), dotted, 1), said)
    assert len(message) < 1000, message[:300]
    message = _refused(lambda: validate_config({}).get(dotted), "…" if said == "kkk…" else said)
    assert len(message) < 1000, message[:300]


@pytest.mark.parametrize(
    "argv",
    [
        ["fold", "--set", f"slice.{_LONG}=1"],
        ["fold", "--set", _LONG],
        ["alerts", "--set", f"alerts.{_LONG}=1"],
        ["alerts", "--set", _LONG],
        ["alerts", "--set", f"{_LONG}=1"],
    ],
    ids=lambda argv: " ".join(argv).replace(_LONG, "LONG"),
)
def test_a_long_set_key_is_quoted_cut(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert main([*argv, str(Path(__file__).parents[1] / "fixtures/dsh/multi-turn.session.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "kkk…" in err and len(err) < 1000, err[:300]


def test_an_arg_given_twice_quotes_its_long_values_cut() -> None:
    """95d7856 cut the key of an --arg given twice, but the message still quoted both its values whole: two values
    of 100,000 characters wrote 200 kB on one line."""
    from core.cli.control import parse_args
    from core.control.inbox import ControlError

    with pytest.raises(ControlError) as info:
        parse_args("checkpoint", [f"objective={_LONG}", f"objective={_LONG}x"])
    message = str(info.value)
    assert message.startswith('--arg objective is given twice ("kkk') and "…" in message and len(message) < 1000, (
        message[:300]
    )


def test_config_messages_name_a_key_as_the_readme_writes_it() -> None:
    """The config module and config_values.child named a key as Python writes a string ('slcie', with its quotes),
    where every other message names it as it is (`slice.fold.pinMaxChars must be a number, got true`); and a
    section that is not a table was refused by Python's type name ('got list'), not as what was written."""
    config = validate_config({})
    _refused(lambda: validate_config({"adaptive": []}), "config section adaptive must be a table/object, got [] (a list)")
    _refused(lambda: set_value(config, "slice.fold.pinSteps.x", 1), "config key slice.fold.pinSteps.x: pinSteps is a")
    _refused(
        lambda: set_value(config, "slcie.x", 1), "Unknown configuration section slcie. Did you mean slice?"
    )
    _refused(lambda: config.get("adaptive.taskProfiles.nope.maxTokens"), "no entry named nope (entries: read, small")
    _refused(
        lambda: validate_config({"rewind": {"maxToken": 5}}),
        "Unknown rewind configuration key maxToken. Did you mean",
    )
    _refused(lambda: validate_config({"model": {"limits": {"m": 5}}}), "model.limits.m must be a table (got 5)")


_ESCAPE = "a\x1b]52;c;cGF5bG9hZA==\x07\u202eb"  # a clipboard write, then text drawn right to left


@pytest.mark.parametrize(
    "call",
    [
        lambda: validate_config({_ESCAPE: {}}),
        lambda: validate_config({"slice": {_ESCAPE: 1}}),
        lambda: validate_config({"slice": {"fold": {_ESCAPE: 1}}}),
        lambda: validate_config({"rewind": {_ESCAPE: 1}}),
        lambda: validate_config({"adaptive": {"pruneSchedule": _ESCAPE}}),
        lambda: validate_config({"adaptive": {"pruneLevels": [{**level.to_dict(), "name": _ESCAPE} for level in DEFAULT_PRUNE_LEVELS]}}),
        lambda: validate_config({"model": {"limits": {_ESCAPE: {"contextWindow": "x"}}}}),
        lambda: validate_config({"model": {"prices": {_ESCAPE: {"hit": 1}}}}),
        lambda: validate_config({"host": {"shell": {_ESCAPE: 1}}}),
        lambda: validate_config({"alerts": {_ESCAPE: {}}}),
        lambda: validate_config({"alerts": {"budget": {_ESCAPE: 1}}}),
        lambda: set_value(validate_config({}), f"slice.fold.pinSteps.{_ESCAPE}", 1),
        lambda: set_value(validate_config({}), f"{_ESCAPE}.x", 1),
        lambda: set_value(validate_config({}), f"adaptive.taskProfiles.{_ESCAPE}.maxTokens", 1),
        lambda: set_value(validate_config({}), f"slice.fold.{_ESCAPE}", "x"),
    ],
    ids=["section", "slice", "slice.fold", "rewind", "pruneSchedule", "prune level", "model.limits", "model.prices",
         "host.shell", "alerts", "alerts.budget", "set under a value", "set section", "set entry", "set unknown"],
)  # fmt: skip
def test_a_config_message_writes_the_control_characters_of_a_key_or_value_as_escapes(call: Any) -> None:
    """A key, a model's name or a string value was written into its refusal as it came, an escape sequence in it
    reaching the terminal that shows the message (or the log that records a refused config.set): each is named with
    its control and BiDi characters as their JSON escapes, as a refused value is shown."""
    message = _refused(call, "\\u001b]52;c;cGF5bG9hZA==\\u0007\\u202eb")
    assert not any(ch in message for ch in "\x1b\x07\u202e"), repr(message)


def test_a_long_model_name_is_quoted_cut() -> None:
    """A model's name under model.limits or model.prices was written whole into each of its refusals."""
    _refused(lambda: validate_config({"model": {"limits": {"k" * 100_000: {"contextWindow": "x"}}}}), "kkk…")
    message = _refused(lambda: validate_config({"model": {"prices": {"k" * 100_000: {"hit": 1}}}}), "kkk…")
    assert len(message) < 300, message[:300]


@pytest.mark.parametrize("key", [_LONG, "a\x1b[2J"], ids=["long", "escape"])
def test_an_arg_whose_value_is_not_utf8_names_its_key_cut_and_escaped(key: str) -> None:
    """An --arg whose value is not UTF-8 named its key whole and as it came: 100,057 characters, or an escape."""
    from core.cli.control import parse_args
    from core.shared.errors import TapedeckError

    with pytest.raises(TapedeckError) as info:
        parse_args("checkpoint", [f"{key}=\udc80"])
    message = str(info.value)
    assert len(message) < 200 and "\x1b" not in message and "is not valid UTF-8" in message, message[:300]


def test_a_normal_unknown_key_is_quoted_as_before() -> None:
    _refused(lambda: set_value(validate_config({}), "slice.bogus", 1), "Unknown slice configuration key bogus. Valid keys:")
    _refused(
        lambda: validate_config({"slicer": {}}), "Unknown configuration section slicer. Did you mean slice?"
    )


@pytest.mark.parametrize(
    "call",
    [lambda key: set_value(validate_config({}), f"{key}.x", 1), lambda key: validate_config({key: {}})],
    ids=["config.set", "file"],
)
def test_a_huge_unknown_section_costs_no_more_than_its_own_size(call: Any) -> None:
    """The section nearest an unknown one was looked for with difflib, which indexes every character of the
    unknown name before it compares: a config.set key of 1 MB (the inbox takes one) held the host 0.6 s, and
    400 kB of name took 12 MB. No name longer than a section by more than 2 is within 2 edits of it: it is refused
    with no suggestion, in the few copies of the name that refusing it takes."""

    import tracemalloc

    key = "".join(chr(0x4E00 + k % 20_000) for k in range(200_000))  # 400 kB as Python holds it (2 bytes each)
    tracemalloc.start()
    try:
        message = _refused(lambda: call(key), "section")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "did you mean" not in message.lower() and peak < 4 * 2 * len(key), (peak, message[:200])


@pytest.mark.parametrize(
    "text",
    [
        f'[rewind]\nsummarizationBaseUrl = "{_LONG}"\nsummarizationApiKeyEnv = "X"\n',
        f'[rewind]\ntoolName = " {_LONG}"\n',
        f'[rewind]\nreportLanguage = "{_LONG}"\n',
        f'[prolong]\nlogFile = "/{_LONG}"\n',
        f'[prolong]\nlogFile = "../{_LONG}"\n',
        f'[host.shell]\nsandbox = "{_LONG}"\n',
        f'[alerts.budget]\naction = "{_LONG}"\n',
        f'[model.limits.x]\ncontextWindow = "{_LONG}"\n',
        f'[model.limits.x]\ncontextWindow = ["{_LONG}"]\n',
        f'[model.prices.x]\nhit = "{_LONG}"\nmiss = 1\noutput = 1\n',
    ],
    ids=lambda text: text.split("=")[0].replace("\n", " ").strip(),
)
def test_a_long_string_value_is_quoted_cut(tmp_path: Path, text: str) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(text)
    message = _refused(lambda: load_config(path), "kkk…")
    assert len(message) < 1000, message[:300]
