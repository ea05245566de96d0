"""An unknown config key is refused in one wording wherever it is given (``unknown_config_key``): a config file, a
``config.set`` (the host applies it with ``set_value``; ``tapedeck control`` checks its section before sending), a
command's ``--set``, the host's own section. Four wordings had grown up: ``Unknown slice configuration key x``,
``rewind: unknown key x (allowed: …)``, ``unknown config key host.x (known: …)``, ``config.set: key "x.y" must be
<section>.<key> with a section of …``, only some of them offering the key that was meant."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from core.cli import main
from core.control.config import load_config, set_value, validate_config
from core.shared.errors import ConfigError, unknown_config_key
from tests.host.test_config_file_prefix import run_host

FOLD_KEYS = "enabled, pinSteps, pinMaxChars, spillPreviewMinBytes, backoffAfterExpansions"
SECTIONS = "slice, rewind, prolong, adaptive, model, host, alerts"
PIN_STEP = f"Unknown slice.fold configuration key pinStep. Did you mean pinSteps? Valid keys: {FOLD_KEYS}."


def test_the_one_wording() -> None:
    assert str(unknown_config_key("histroy", ("digest", "history"), "slice")) == (
        "Unknown slice configuration key histroy. Did you mean history? Valid keys: digest, history."
    )
    assert str(unknown_config_key("banana", ("digest", "history"), "slice")) == (
        "Unknown slice configuration key banana. Valid keys: digest, history."
    )
    assert str(unknown_config_key("slcie", ("slice", "rewind"))) == (
        "Unknown configuration section slcie. Did you mean slice? Valid sections: slice, rewind."
    )
    # a name that is no key any more is offered for a typo of it (its own message says why it went)
    assert "Did you mean maxHistoryChars?" in str(
        unknown_config_key("maxHistoryChar", ("fold",), "slice", also=("maxHistoryChars",))
    )


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (
            {"slicer": {}},
            f"Unknown configuration section slicer. Did you mean slice? Valid sections: {SECTIONS}.",
        ),
        ({"slice": {"fold": {"pinStep": 1}}}, PIN_STEP),
        (
            {"rewind": {"maxToken": 5}},
            "Unknown rewind configuration key maxToken. Did you mean maxTokens? Valid keys: toolName,",
        ),
        (
            {"prolong": {"logfile": "x"}},
            "Unknown prolong configuration key logfile. Did you mean logFile? Valid keys: logFile,",
        ),
        (
            {"adaptive": {"riskRouter": {"skipCoverd": False}}},
            "Unknown adaptive.riskRouter configuration key skipCoverd. Did you mean skipCovered?",
        ),
        (
            {"adaptive": {"levels": []}},
            "Unknown adaptive configuration key levels. Valid keys: taskProfiles, pruneLevels,",
        ),
        (
            {"model": {"limits": {"m": {"contextWindw": 1}}}},
            "Unknown model.limits.m configuration key contextWindw. Did you mean contextWindow?",
        ),
        (
            {"host": {"shell": {"sandbx": "off"}}},
            "Unknown host.shell configuration key sandbx. Did you mean sandbox? Valid keys: sandbox, network, passEnv.",
        ),
        (
            {"alerts": {"budget": {"usdd": 1}}},
            "Unknown alerts.budget configuration key usdd. Did you mean usd? Valid keys: enabled, usd, action.",
        ),
    ],
)
def test_a_config_file(tmp_path: Path, raw: dict[str, object], said: str) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(orjson.dumps(raw))
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    assert str(refused.value).startswith(f"{path}: {said}"), refused.value


@pytest.mark.parametrize(
    ("key", "said"),
    [
        (
            "slcie.fold.pinSteps",
            f"Unknown configuration section slcie. Did you mean slice? Valid sections: {SECTIONS}.",
        ),
        ("slice.fold.pinStep", PIN_STEP),
        ("host.shell.sandbx", "Unknown host.shell configuration key sandbx. Did you mean sandbox?"),
    ],
)
def test_config_set(key: str, said: str) -> None:
    """What a host applies of a ``config.set`` (the control inbox's, the TUI's Config screen's), and what a command's
    ``--set`` applies, ``set_value``; removing a key that names nothing is refused in the same words."""
    for value in (2, None):
        with pytest.raises(ConfigError) as refused:
            set_value(validate_config({}), key, value)
        assert str(refused.value).startswith(said), refused.value


def test_command_line_set_flags(
    fixtures_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "session.jsonl"
    shutil.copy(fixtures_dir / "tool-call-turn.session.jsonl", log)
    assert main(["fold", str(log), "--set", "fold.pinStep=2"]) == 2
    assert capsys.readouterr().err == f"tapedeck: {PIN_STEP}\n"
    assert main(["alerts", str(log), "--set", "alerts.budgt.usd=2"]) == 2
    assert capsys.readouterr().err.startswith(
        "tapedeck: Unknown alerts configuration key budgt. Did you mean budget?"
    )


def test_the_host_section_of_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "host.toml"
    config.write_text('[host.shell]\nsandbx = "off"\n')
    code, err = run_host(tmp_path, capsys, "--config", str(config), "task")
    assert code == 2 and err.startswith(
        f"tapedeck: {config}: Unknown host.shell configuration key sandbx. Did you"
    ), err


def test_control_config_set_to_a_tapedeck_host(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown section is refused by ``tapedeck control`` before anything is looked up or sent (the inbox said
    the key was malformed, listing the sections but offering none)."""
    code, err = run_host(tmp_path, capsys, "--session-id", "s1", "task")
    assert code == 0, err
    (log,) = (tmp_path / "root").rglob("session.jsonl")
    argv = ["control", str(log), "config.set", "--arg", "key=slcie.fold.pinSteps", "--arg", "value=2"]
    assert main(argv) == 2
    said = capsys.readouterr().err
    assert (
        said
        == f"tapedeck: config.set: Unknown configuration section slcie. Did you mean slice? Valid sections: {SECTIONS}.\n"
    )
