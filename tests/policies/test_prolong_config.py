"""The ``prolong`` config section: seed defaults, traversal rejection, value rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.policies.prolong_config import ProlongConfig, validate
from core.shared.errors import ConfigError


def test_defaults_are_the_seeds() -> None:
    config = validate({})
    assert config == ProlongConfig()
    assert config.to_dict() == {
        "logFile": "log.txt",
        "logWindow": 0,
        "promptOrder": 150,
        "registerPrompt": True,
        "registerCommand": True,
        "denyKeep": 20,
    }
    assert not config.disabled and validate({"logWindow": -1}).disabled


def test_overrides_are_kept_and_paths_normalised() -> None:
    config = validate(
        {
            "logFile": "./notes//run.txt",
            "logWindow": 200,
            "promptOrder": 120,
            "registerPrompt": False,
            "denyKeep": 0,
        }
    )
    assert (
        config.log_file,
        config.log_window,
        config.prompt_order,
        config.register_prompt,
        config.deny_keep,
    ) == (
        "notes/run.txt",
        200,
        120,
        False,
        0,
    )
    assert validate({"logWindow": 3.0}).log_window == 3


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("../log.txt", "'..' is not allowed"),
        ("notes/../../log.txt", "'..' is not allowed"),
        ("notes\\..\\..\\log.txt", "'..' is not allowed"),
        ("/etc/passwd", "not an absolute path"),
        ("\\\\server\\share\\log.txt", "not an absolute path"),
        ("C:\\logs\\log.txt", "not an absolute path"),
        ("C:log.txt", "not an absolute path"),
        ("~/log.txt", "not an absolute path"),
        ("", "must be a non-empty workspace-relative path"),
        ("./", "must name a file"),
        (7, "must be a non-empty workspace-relative path"),
        ("log\0.txt", "must not contain NUL"),
    ],
)
def test_log_files_outside_the_workspace_are_rejected_at_load(value: object, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        validate({"logFile": value})
    assert str(info.value).startswith("prolong.logFile") and message in str(info.value)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"logWindow": -2},
            "prolong.logWindow must be -1 (disabled), 0 (keep all) or a positive section count (got -2)",
        ),
        ({"logWindow": 1.5}, "prolong.logWindow must be"),
        ({"logWindow": True}, "prolong.logWindow must be"),
        (
            {"promptOrder": 99},
            "prolong.promptOrder must be an integer in the tool-guidance band 100-199 (got 99)",
        ),
        (
            {"promptOrder": 200},
            "prolong.promptOrder must be an integer in the tool-guidance band 100-199 (got 200)",
        ),
        ({"registerCommand": "yes"}, 'prolong.registerCommand must be true or false (got "yes")'),
        ({"denyKeep": -1}, "prolong.denyKeep must be a non-negative integer (got -1)"),
        ({"logfile": "x"}, "Unknown prolong configuration key logfile. Did you mean logFile?"),
    ],
)
def test_bad_values_name_the_key(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        validate(raw)
    assert str(info.value).startswith(message)


def test_counts_beyond_what_a_deque_holds_keep_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A denyKeep or logWindow of 2**63 or more (any whole number, as in the seed, where such a count keeps all)
    ended 'tapedeck status' and 'tapedeck run' in an OverflowError traceback (a deque holds at most sys.maxsize). A
    config file's are refused past their range now (a million: more than any log holds), so its top is run."""
    from core.cli import main
    from tests.conftest import FIXTURES

    status = ["status", str(FIXTURES / "multi-turn.session.jsonl"), "--workspace", str(tmp_path)]
    assert main([*status, "--deny-keep", str(2**64 - 1), "--log-window", str(2**64 - 1)]) == 0
    script, config = tmp_path / "script.json", tmp_path / "config.toml"
    script.write_text('{"responses": [{"text": "done"}]}')
    config.write_text(f"[prolong]\nlogWindow = {2**63}\ndenyKeep = {2**63}\n")
    (tmp_path / "ws").mkdir()
    argv = ["run", "task", "--provider", f"scripted:{script}", "--workspace", str(tmp_path / "ws"),
            "--sessions-root", str(tmp_path / "root"), "--config", str(config)]  # fmt: skip
    assert main(argv) == 2
    said = capsys.readouterr().err
    assert "prolong.logWindow must be from -1 to 1,000,000 (got 9223372036854775808)" in said
    config.write_text("[prolong]\nlogWindow = 1000000\ndenyKeep = 1000000\n")
    assert main(["run", "task", "--provider", f"scripted:{script}", "--workspace", str(tmp_path / "ws"),
                 "--sessions-root", str(tmp_path / "root"), "--config", str(config)]) == 0, capsys.readouterr().err  # fmt: skip
    assert (tmp_path / "ws" / "log.txt").exists()
