"""Slice config validation: seed key names and defaults, retired keys, typos, wrong values and types."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import pytest

from core.policies.slice_config import (
    DigestConfig,
    FoldConfig,
    HistoryConfig,
    SliceConfig,
    validate,
)
from core.shared.errors import ConfigError
from core.shared.text import edit_distance, nearest, shown
from core.shared.values import MAX_SAFE_INTEGER

VALID_LIST = "Valid keys: maxStepsPerTurn, defaultReasoningEffort, digest, fold, history, mode."


CAP_MESSAGE = (
    "digest.structuredBlockCap must be a whole number >= 1 (for no cap, one past any run of structured lines, such "
    "as 1000000000)"
)


def error_of(raw: object) -> str:
    with pytest.raises(ConfigError) as info:
        validate(raw)  # type: ignore[arg-type]
    return str(info.value)


def test_empty_config_has_the_seed_defaults() -> None:
    config = validate({})
    assert config == SliceConfig()
    assert config.history == HistoryConfig(keepRecentTurns=0, entryMaxChars=None)
    assert config.fold == FoldConfig(True, 0, 8000, 50000, 2)
    assert (config.digest.minChars, config.digest.headLines, config.digest.tailLines) == (1500, 10, 4)
    assert (
        config.digest.maxKeepRatio,
        config.digest.structuredBlockCap,
        config.digest.structuredBlockMin,
    ) == (
        0.55,
        12,
        3,
    )
    assert (config.digest.logMinChars, config.digest.logMaxErrors, config.digest.logContextLines) == (
        512,
        10,
        3,
    )
    assert config.maxStepsPerTurn is None
    assert config.defaultReasoningEffort == "inherit"
    assert config.mode == "slice"


def test_the_seed_readme_profile_loads() -> None:
    config = validate(
        {"defaultReasoningEffort": "inherit", "fold": {"pinSteps": 0}, "history": {"keepRecentTurns": 0}}
    )
    assert config == SliceConfig()


def test_every_key_round_trips_through_to_dict() -> None:
    raw = {
        "maxStepsPerTurn": 7,
        "defaultReasoningEffort": "high",
        "mode": "slice",
        "history": {"keepRecentTurns": 3, "entryMaxChars": 4000},
        "fold": {
            "enabled": False,
            "pinSteps": 2,
            "pinMaxChars": 100,
            "spillPreviewMinBytes": 0,
            "backoffAfterExpansions": 5,
        },
        "digest": {
            "minChars": 10,
            "structuredBlockCap": math.inf,
            "maxLineChars": math.inf,
            "searchMaxPerFile": 6,
        },
    }
    config = validate(raw)
    assert config.maxStepsPerTurn == 7 and config.history.entryMaxChars == 4000
    assert config.fold.enabled is False and config.fold.pinSteps == 2
    assert config.digest.structuredBlockCap == math.inf and config.digest.searchMaxPerFile == 6
    assert validate(config.to_dict()) == config
    assert "maxStepsPerTurn" not in SliceConfig().to_dict()
    assert "entryMaxChars" not in SliceConfig().to_dict()["history"]


def test_integral_floats_count_as_integers() -> None:
    assert validate({"maxStepsPerTurn": 3.0}).maxStepsPerTurn == 3
    assert isinstance(validate({"history": {"keepRecentTurns": 2.0}}).history.keepRecentTurns, int)


# ---------------------------------------------------------------------------------------------- top-level keys
def test_typo_suggests_the_valid_key() -> None:
    assert error_of({"histroy": {"keepRecentTurns": 2}}) == (
        f"Unknown slice configuration key histroy. Did you mean history? {VALID_LIST}"
    )


def test_typo_of_a_retired_key_suggests_it() -> None:
    assert error_of({"maxHistoryChar": 1}) == (
        f"Unknown slice configuration key maxHistoryChar. Did you mean maxHistoryChars? {VALID_LIST}"
    )
    assert "Did you mean maxRequestChars?" in error_of({"MAXREQUESTCHARS": 1})


def test_nothing_close_lists_the_valid_keys_only() -> None:
    assert error_of({"banana": 1}) == f"Unknown slice configuration key banana. {VALID_LIST}"


def test_case_insensitive_levenshtein() -> None:
    assert edit_distance("histroy", "history") == 2
    assert edit_distance("", "abc") == 3
    assert nearest("FOLD", ["digest", "fold"]) == "fold"
    assert nearest("banana", ["digest", "fold"]) is None
    assert error_of({"FOLD": 1}) == f"Unknown slice configuration key FOLD. Did you mean fold? {VALID_LIST}"


def test_a_key_far_longer_than_every_valid_one_is_refused_at_once() -> None:
    """The nearest valid key was looked for by an edit distance over the whole unknown key, about 30 µs a
    character for each valid key: the 1 MB key of one ``config.set`` request (the inbox accepts it) held the host
    for 30 s. A key longer than a valid one by more than 2 is never within 2 edits of it; a 4 MB key, in a
    process killed after 60 s, is refused with no suggestion."""
    code = (
        "from core.control.config import load_config, set_value\n"
        "from core.shared.errors import ConfigError\n"
        "try:\n"
        "    set_value(load_config(None), 'slice.' + 'k' * (4 << 20) + '.x', 1)\n"
        "except ConfigError as error:\n"
        "    print(str(error).startswith('Unknown slice configuration key kkk'), 'Did you mean' in str(error))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "True False\n"), done.stderr
    assert nearest("foldx" + "x" * 2, ["digest", "fold"]) is None and nearest("folds", ["fold"]) == "fold"


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("maxParallelToolCalls", "scheduling belongs to the stock agent-loop row"),
        ("inTurnSeal", "in-turn sealing was retired with the replacement driver"),
        ("tape", "file-base tape options were retired with the replacement driver"),
        ("state", "the state/stream rollback experiments were retired"),
        (
            "maxRequestChars",
            "the plugin no longer enforces a request ceiling; tape entries accumulate, "
            "so context-window handling must be configured in the host",
        ),
        (
            "maxHistoryChars",
            "honouring a history cap means rewriting entries, which is the prefix rewrite this policy exists to avoid",
        ),
    ],
)
def test_retired_top_level_keys_fail_with_migration_text(key: str, reason: str) -> None:
    assert error_of({key: 1}) == f"Retired slice configuration {key}: {reason}. See README migration."


def test_key_names_are_checked_before_values() -> None:
    assert error_of({"maxStepsPerTurn": 0, "banana": 1}).startswith("Unknown slice configuration key banana.")


# ---------------------------------------------------------------------------------------------- history
@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("highWaterChars", "every completed turn is sealed, so there is no pressure threshold to cross"),
        ("lowWaterChars", "every completed turn is sealed, so there is no archive target to fall back to"),
        ("keepRecentChars", "use history.keepRecentTurns — the window is counted in turns now"),
        ("checkpointMaxChars", "renamed to history.entryMaxChars"),
    ],
)
def test_retired_history_keys(key: str, reason: str) -> None:
    assert error_of({"history": {key: 1}}) == f"Retired history configuration {key}: {reason}"


@pytest.mark.parametrize("key", ["pinFirstTurn", "pinUserChars"])
def test_retired_user_pins_explain_themselves(key: str) -> None:
    message = error_of({"history": {key: 1}})
    assert message.startswith(f"Retired history configuration {key}: ")
    assert len(message) > len(f"Retired history configuration {key}: ") + 20


def test_unknown_history_key_is_not_called_retired() -> None:
    message = error_of({"history": {"keepRecent": 2}})
    assert message == (
        "Unknown slice.history configuration key keepRecent. Valid keys: keepRecentTurns, entryMaxChars."
    )
    assert "Retired" not in message


def test_entry_max_chars_floor() -> None:
    assert (
        error_of({"history": {"entryMaxChars": 255}})
        == "slice.history.entryMaxChars must be from 256 to 100,000,000 (got 255)"
    )
    assert validate({"history": {"entryMaxChars": 256}}).history.entryMaxChars == 256
    assert "entryMaxChars" in error_of({"history": {"entryMaxChars": None}})


@pytest.mark.parametrize("value", [1.5, "2", None, True, math.nan, MAX_SAFE_INTEGER + 1])
def test_keep_recent_turns_rejects(value: object) -> None:
    assert (
        error_of({"history": {"keepRecentTurns": value}})
        == f"history.keepRecentTurns must be a non-negative safe integer (got {shown(value)})"
    )


# ---------------------------------------------------------------------------------------------- top-level values
@pytest.mark.parametrize("value", [1.5, math.nan, math.inf, MAX_SAFE_INTEGER + 1, None, "50", True])
def test_max_steps_per_turn_rejects(value: object) -> None:
    assert (
        error_of({"maxStepsPerTurn": value})
        == f"maxStepsPerTurn must be a positive safe integer (got {shown(value)})"
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"maxStepsPerTurn": 0}, "slice.maxStepsPerTurn must be from 1 to 10,000 (got 0)"),
        (
            {"history": {"keepRecentTurns": -1}},
            "slice.history.keepRecentTurns must be from 0 to 10,000 (got -1)",
        ),
    ],
)
def test_under_the_range_is_refused_with_the_key_and_the_range(raw: dict[str, object], message: str) -> None:
    assert error_of(raw) == message


def test_max_steps_per_turn_accepts_the_largest_safe_integer() -> None:
    assert validate({"maxStepsPerTurn": MAX_SAFE_INTEGER}).maxStepsPerTurn == MAX_SAFE_INTEGER


@pytest.mark.parametrize("effort", ["off", "low", "high", "max", "inherit"])
def test_reasoning_efforts(effort: str) -> None:
    assert validate({"defaultReasoningEffort": effort}).defaultReasoningEffort == effort


@pytest.mark.parametrize("effort", ["medium", "", None, 3])
def test_bad_reasoning_effort(effort: object) -> None:
    message = error_of({"defaultReasoningEffort": effort})
    assert message.startswith("Invalid defaultReasoningEffort")
    assert "off, low, high, max, inherit" in message


@pytest.mark.parametrize("mode", ["state", "stream", None])
def test_only_slice_mode(mode: object) -> None:
    assert (
        error_of({"mode": mode})
        == f"Only mode: slice is supported (got {shown(mode)}); state/stream rollback experiments are retired."
    )


# ---------------------------------------------------------------------------------------------- fold
@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"pinSteps": -1}, "slice.fold.pinSteps must be from 0 to 10,000"),
        ({"pinSteps": 1.5}, "pinSteps must be a non-negative integer"),
        ({"pinMaxChars": -1}, "slice.fold.pinMaxChars must be from 0 to 100,000,000"),
        ({"pinMaxChars": "8000"}, "pinMaxChars must be >= 0"),
        ({"pinMaxChars": math.nan}, "pinMaxChars must be >= 0"),
        ({"spillPreviewMinBytes": -5}, "slice.fold.spillPreviewMinBytes must be from 0 to 1,073,741,824"),
        ({"backoffAfterExpansions": 0}, "slice.fold.backoffAfterExpansions must be from 1 to 1,000"),
        ({"backoffAfterExpansions": 2.5}, "backoffAfterExpansions must be an integer >= 1"),
        ({"enabled": "yes"}, "fold.enabled must be a boolean"),
        (
            {"pinStep": 1},
            "Unknown slice.fold configuration key pinStep. Did you mean pinSteps? Valid keys: enabled, pinSteps, "
            "pinMaxChars, spillPreviewMinBytes, backoffAfterExpansions.",
        ),
    ],
)
def test_fold_errors(raw: dict[str, object], message: str) -> None:
    assert (
        error_of({"fold": raw}).partition(" (got ")[0] == message
    )  # the value given: test_a_refused_value_is_named…


def test_fold_accepts_infinite_pin_budget() -> None:
    assert validate({"fold": {"pinMaxChars": math.inf}}).fold.pinMaxChars == math.inf


# ---------------------------------------------------------------------------------------------- digest
@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"minChars": -1}, "slice.digest.minChars must be from 0 to 100,000,000"),
        ({"headLines": 1.5}, "digest.headLines/tailLines must be non-negative integers"),
        ({"tailLines": -2}, "slice.digest.tailLines must be from 0 to 1,000,000"),
        ({"maxKeepRatio": 0}, "slice.digest.maxKeepRatio must be above 0 and at most 1"),
        ({"maxKeepRatio": -0.5}, "slice.digest.maxKeepRatio must be from 0 to 1"),
        ({"maxKeepRatio": True}, "digest.maxKeepRatio must be in (0, 1]"),
        ({"structuredBlockCap": 0}, "slice.digest.structuredBlockCap must be from 1 to 1,000,000,000"),
        ({"structuredBlockCap": -math.inf}, CAP_MESSAGE),
        ({"structuredBlockMin": -1}, "slice.digest.structuredBlockMin must be from 0 to 1,000,000"),
        ({"logMaxErrors": 0}, "slice.digest.logMaxErrors must be from 1 to 1,000,000"),
        ({"logMaxErrors": 1.5}, "digest.logMaxErrors/logContextLines invalid"),
        ({"logContextLines": -1}, "slice.digest.logContextLines must be from 0 to 1,000,000"),
        ({"enabled": 1}, "digest.enabled must be a boolean"),
        ({"logMinChars": "512"}, "digest.logMinChars must be a non-negative integer"),
        ({"maxLineChars": 0}, "slice.digest.maxLineChars must be from 1 to 1,000,000,000"),
        (
            {"maxLineChars": 0.5},
            "digest.maxLineChars must be a whole number > 0 (to never cut a line, one past any line's length, "
            "such as 1000000000)",
        ),
        ({"lineHeadChars": -1}, "slice.digest.lineHeadChars must be from 0 to 100,000,000"),
        ({"lineTailChars": 0.5}, "digest.lineHeadChars/lineTailChars must be non-negative integers"),
        ({"searchMinMatches": 0}, "slice.digest.searchMinMatches must be from 1 to 1,000,000"),
        ({"searchMinChars": -1}, "slice.digest.searchMinChars must be from 0 to 100,000,000"),
        ({"searchMaxPerFile": 1}, "slice.digest.searchMaxPerFile must be from 2 to 1,000,000"),
    ],
)
def test_digest_errors(raw: dict[str, object], message: str) -> None:
    assert (
        error_of({"digest": raw}).partition(" (got ")[0] == message
    )  # the value given: test_a_refused_value_is_named…


def test_digest_ratio_of_one_and_infinite_caps_load() -> None:
    digest = validate({"digest": {"maxKeepRatio": 1, "structuredBlockCap": math.inf}}).digest
    assert digest == DigestConfig(maxKeepRatio=1.0, structuredBlockCap=math.inf)


def test_unknown_digest_key_lists_valid_keys() -> None:
    message = error_of({"digest": {"minchars": 1}})
    assert message.startswith(
        "Unknown slice.digest configuration key minchars. Did you mean minChars? Valid keys: enabled, minChars, headLines"
    )


# ---------------------------------------------------------------------------------------------- types
@pytest.mark.parametrize("section", ["history", "fold", "digest"])
@pytest.mark.parametrize("value", [3, "x", [1], None])
def test_sections_must_be_mappings(section: str, value: object) -> None:
    message = error_of({section: value})
    assert message.startswith(f"{section} must be a mapping of {section}.* options, got ")


def test_whole_config_must_be_a_mapping() -> None:
    assert (
        error_of([("history", {})])
        == 'the slice configuration must be a mapping of keys, got [["history",{}]] (a list)'
    )


@pytest.mark.parametrize(
    ("key", "unlimited"), [("structuredBlockCap", "for no cap"), ("maxLineChars", "to never cut")]
)
def test_the_way_to_no_limit_a_refusal_names_is_one_a_config_file_takes(key: str, unlimited: str) -> None:
    """``structuredBlockCap = 0`` was refused with '(Infinity = no cap)', and a config file's (or the TUI's
    config.set's) Infinity is refused before the slice section sees it: the log cannot record it. The message names
    a number instead, which the config takes and which limits nothing."""
    from core.control.config import validate_config

    message = error_of({"digest": {key: 0.5}})
    assert "Infinity" not in message and unlimited in message, message
    number = int(message.split("such as ")[1].partition(")")[0].replace(",", ""))
    digest = validate_config({"slice": {"digest": {key: number}}}).slice.digest
    assert getattr(digest, key) == number
    with pytest.raises(ConfigError, match="Infinity is not a finite number"):
        validate_config({"slice": {"digest": {key: math.inf}}})


# ---------------------------------------------------------------------------------------------- the value named
HOSTILE = "\x1b[2J" + "9" * 200  # an escape sequence, then more than a message quotes
HOSTILE_SHOWN = '"\\u001b[2J' + "9" * 75 + '…" (204 characters)'


@pytest.mark.parametrize(
    ("section", "key"),
    [("history", "keepRecentTurns"), ("history", "entryMaxChars"), ("", "maxStepsPerTurn"), ("", "mode")]
    + [("fold", f.name) for f in dataclasses.fields(FoldConfig)]
    + [("digest", f.name) for f in dataclasses.fields(DigestConfig)],
)
def test_a_refused_value_is_named_escaped_and_cut(section: str, key: str) -> None:
    """Each value refusal names what was given (the seed's words, then ``(got …)``), its controls escaped and cut
    as every config refusal quotes one: ``pinSteps must be a non-negative integer`` said neither what nor where."""
    raw = {section: {key: HOSTILE}} if section else {key: HOSTILE}
    message = error_of(raw)
    assert f"(got {HOSTILE_SHOWN}" in message, message
    assert "\x1b" not in message and len(message) < 400


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"digest": {"tailLines": 0.5}}, "digest.headLines/tailLines must be non-negative integers (got 0.5 for tailLines)"),
        ({"fold": {"pinMaxChars": "8000"}}, 'pinMaxChars must be >= 0 (got "8000")'),
        ({"mode": "state"}, 'Only mode: slice is supported (got "state"); state/stream rollback experiments are retired.'),
    ],
)  # fmt: skip
def test_a_refusal_names_the_value_and_the_key_of_a_pair(raw: dict[str, object], message: str) -> None:
    assert error_of(raw) == message
