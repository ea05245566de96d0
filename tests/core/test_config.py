"""The composed policy config: sections, files, dotted set with revalidation, and replay from the log."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.control.config import (
    config_event,
    load_config,
    parse_value,
    replay_config,
    set_value,
    validate_config,
)
from core.shared.errors import ConfigError


def test_defaults_cover_every_section() -> None:
    config = validate_config({})
    assert config.get("slice.history.keepRecentTurns") == 0
    assert config.get("rewind.reportLanguage") in ("en",)
    assert config.get("prolong.logFile") == "log.txt"


def test_unknown_section_suggests_the_near_one() -> None:
    with pytest.raises(ConfigError, match="Unknown configuration section slcie. Did you mean slice"):
        validate_config({"slcie": {}})


def test_section_errors_use_the_policy_messages() -> None:
    with pytest.raises(ConfigError, match="history.entryMaxChars"):
        validate_config({"slice": {"history": {"entryMaxChars": 255}}})


def test_files_load_as_toml_or_json(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text("[slice.history]\nkeepRecentTurns = 2\n")
    assert load_config(toml).get("slice.history.keepRecentTurns") == 2
    js = tmp_path / "c.json"
    js.write_text('{"prolong": {"logFile": "notes.txt"}}')
    assert load_config(js).get("prolong.logFile") == "notes.txt"
    bad = tmp_path / "bad.toml"
    bad.write_text("[slice\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "missing.toml")


def test_set_value_validates_and_never_half_applies() -> None:
    config = validate_config({})
    new, old = set_value(config, "slice.history.keepRecentTurns", 3)
    assert (old, new.get("slice.history.keepRecentTurns")) == (0, 3)
    assert config.get("slice.history.keepRecentTurns") == 0  # the original is untouched
    with pytest.raises(ConfigError, match="keepRecentTurns"):
        set_value(new, "slice.history.keepRecentTurns", -1)
    with pytest.raises(ConfigError, match="Unknown configuration section history. Valid sections: slice,"):
        set_value(new, "history.keepRecentTurns", 1)
    with pytest.raises(ConfigError):
        set_value(new, "prolong.logFile", "../escape.txt")
    reset, _ = set_value(new, "slice.history.keepRecentTurns", None)
    assert reset.get("slice.history.keepRecentTurns") == 0


def test_replay_rebuilds_the_config_from_logged_changes() -> None:
    base = validate_config({})
    events = [
        {"type": "turn/start", "data": {"turn": 1}},
        config_event({"slice.history.keepRecentTurns": (0, 2)}, "operator", "r1"),
        config_event({"prolong.logWindow": (0, 5)}, "operator"),
    ]
    config = replay_config(base, events)
    assert config.get("slice.history.keepRecentTurns") == 2 and config.get("prolong.logWindow") == 5
    assert events[1]["ignorable"] is True and events[1]["data"]["requestId"] == "r1"


def test_parse_value_reads_json_literals_or_strings() -> None:
    assert parse_value("3") == 3 and parse_value("true") is True and parse_value("null") is None
    assert parse_value("zh") == "zh" and parse_value("[1,2]") == [1, 2]
