"""A model's output limit over its context window is refused, naming both keys and both values, wherever the config
is read or changed (a file, ``config.set``, ``--set``): ``maxOutputTokens = 200000`` beside ``contextWindow =
128000`` was taken, and the host then asked for more output than the window could ever hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from core.control.config import load_config, set_value, validate_config
from core.shared.errors import ConfigError

LIMITS = "model.limits.my-model"


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        (
            "[model]\ncontextWindow = 128000\nmaxOutputTokens = 200000\n",
            "model.maxOutputTokens (200,000) is more than model.contextWindow (128,000): a model cannot write more "
            "tokens than its context window holds",
        ),
        (
            '[model.limits."my-model"]\ncontextWindow = 32768\nmaxOutputTokens = 32769\n',
            f"{LIMITS}.maxOutputTokens (32,769) is more than {LIMITS}.contextWindow (32,768)",
        ),
    ],
)
def test_a_config_file(tmp_path: Path, toml: str, said: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    assert str(refused.value).startswith(f"{path}: {said}"), refused.value


def test_equal_limits_and_one_alone_are_taken() -> None:
    validate_config({"model": {"contextWindow": 4096, "maxOutputTokens": 4096}})
    validate_config({"model": {"maxOutputTokens": 10**8}})  # the window is the routed model's: not known here
    validate_config({"model": {"limits": {"m": {"contextWindow": 4096, "maxOutputTokens": 1}}}})


def test_config_set_either_key() -> None:
    """Lowering the window under the output limit is refused as much as raising the limit over the window; the
    config is left as it was."""
    config = validate_config({"model": {"contextWindow": 8192, "maxOutputTokens": 4096}})
    for key, value in (("model.maxOutputTokens", 9000), ("model.contextWindow", 4000)):
        with pytest.raises(
            ConfigError, match=r"model\.maxOutputTokens \([0-9,]+\) is more than model\.contextWindow"
        ):
            set_value(config, key, value)
    assert config.get("model.maxOutputTokens") == 4096
    config, _ = set_value(config, f"{LIMITS}.contextWindow", 1000)
    with pytest.raises(
        ConfigError,
        match=rf"{LIMITS}\.maxOutputTokens \(1,001\) is more than {LIMITS}\.contextWindow \(1,000\)",
    ):
        set_value(config, f"{LIMITS}.maxOutputTokens", 1001)


def test_a_command_line_set(fixtures_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[model]\ncontextWindow = 128000\n")
    log = fixtures_dir / "tool-call-turn.session.jsonl"
    assert main(["alerts", str(log), "--config", str(config), "--set", "model.maxOutputTokens=128001"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "tapedeck: model.maxOutputTokens (128,001) is more than model.contextWindow (128,000)"
    ), err
