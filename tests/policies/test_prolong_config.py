"""The ``prolong`` config section: seed defaults, traversal rejection, value rules."""

from __future__ import annotations

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
            "prolong.logWindow must be -1 (disabled), 0 (keep all) or a positive section count (at most 2**53-1) "
            "(got -2)",
        ),
        ({"logWindow": 1.5}, "prolong.logWindow must be"),
        # it was taken, and 'tapedeck run' with it ended in an OverflowError traceback
        ({"logWindow": 2**63}, "prolong.logWindow must be -1 (disabled), 0 (keep all) or a positive section count "
                               "(at most 2**53-1) (got 9223372036854775808)"),
        ({"logWindow": True}, "prolong.logWindow must be"),
        (
            {"promptOrder": 99},
            "prolong.promptOrder must be an integer in the tool-guidance band 100-199 (got 99)",
        ),
        (
            {"promptOrder": 200},
            "prolong.promptOrder must be an integer in the tool-guidance band 100-199 (got 200)",
        ),
        ({"registerCommand": "yes"}, "prolong.registerCommand must be true or false (got 'yes')"),
        ({"denyKeep": -1}, "prolong.denyKeep must be a non-negative safe integer (got -1)"),
        # it was taken, and 'tapedeck status' of a session a config.set gave it to ended in an OverflowError
        ({"denyKeep": 2**64 - 1}, "prolong.denyKeep must be a non-negative safe integer (got 18446744073709551615)"),
        ({"denyKeep": 2**53}, "prolong.denyKeep must be a non-negative safe integer (got 9007199254740992)"),
        ({"logfile": "x"}, "prolong: unknown key 'logfile'"),
    ],
)
def test_bad_values_name_the_key(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        validate(raw)
    assert str(info.value).startswith(message)


def test_status_with_a_deny_keep_beyond_what_a_deque_holds_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    from core.cli import main
    from tests.conftest import FIXTURES

    assert main(["status", str(FIXTURES / "multi-turn.session.jsonl"), "--deny-keep", str(2**63)]) == 2
    assert capsys.readouterr().err.startswith("tapedeck: prolong.denyKeep must be a non-negative safe integer")
