"""bash: exit codes, merged output, working directory, timeout, output cap, allow-listed environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.host.host_config import ShellSettings
from core.host.tools import ToolLimits, workspace_tools
from core.host.tools.shell import CappedOutput


def _bash(ws: Path, **limits: Any) -> Any:
    return {t.name: t for t in workspace_tools(ws, ToolLimits(**limits))}["bash"]


def test_success_output_and_exit_code(tmp_path: Path) -> None:
    outcome = _bash(tmp_path).run({"command": "echo out; echo err >&2", "description": "print twice"})
    assert not outcome.is_error
    assert outcome.text == "out\nerr\n(exit code 0)"
    assert outcome.meta == {"exitCode": 0, "timedOut": False, "outputBytes": 8, "truncated": False}


def test_failing_command_is_an_error_with_its_code(tmp_path: Path) -> None:
    outcome = _bash(tmp_path).run({"command": "echo nope; exit 7"})
    assert outcome.is_error and outcome.error_code == "COMMAND_FAILED"
    assert outcome.text == "nope\n(exit code 7)"


def test_no_output(tmp_path: Path) -> None:
    assert _bash(tmp_path).run({"command": "true"}).text == "(no output)\n(exit code 0)"


def test_runs_in_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("here")
    outcome = _bash(tmp_path).run({"command": "pwd; cat marker.txt"})
    assert outcome.text.splitlines()[:2] == [str(tmp_path.resolve()), "here"]


def test_timeout_kills_the_command(tmp_path: Path) -> None:
    outcome = _bash(tmp_path).run({"command": "echo started; sleep 30; echo never", "timeout": 1})
    assert outcome.is_error and outcome.error_code == "COMMAND_TIMEOUT"
    assert outcome.text == "started\n(timed out after 1 s; the command was killed)"
    assert outcome.meta and outcome.meta["timedOut"] is True


def test_timeout_bounds(tmp_path: Path) -> None:
    bash = _bash(tmp_path, bash_max_timeout=60)
    too_long = bash.run({"command": "true", "timeout": 61})
    assert too_long.is_error and "at most 60 seconds" in too_long.text
    assert bash.run({"command": "true", "timeout": 0}).error_code == "INVALID_ARGUMENTS"
    assert bash.run({"command": "true", "timeout": "5"}).error_code == "INVALID_ARGUMENTS"
    assert bash.run({"command": "  "}).error_code == "INVALID_ARGUMENTS"


def test_output_is_capped_keeping_head_and_tail(tmp_path: Path) -> None:
    outcome = _bash(tmp_path, output_chars=1000).run(
        {"command": "echo FIRST; head -c 200000 /dev/zero | tr '\\0' x; echo; echo LAST"}
    )
    assert not outcome.is_error
    assert outcome.text.startswith("FIRST\n")
    assert outcome.text.endswith("LAST\n(exit code 0)")
    assert "bytes of output cut from the middle; 200,012 bytes in all]" in outcome.text
    assert len(outcome.text) < 1200
    assert outcome.meta and outcome.meta["truncated"] is True and outcome.meta["outputBytes"] == 200_012


def test_capped_output_buffer() -> None:
    buf = CappedOutput(10)
    for piece in (b"abc", b"defgh", b"ijklmnop", b"qr"):
        buf.feed(piece)
    assert buf.total == 18
    assert bytes(buf.head) == b"abcde" and bytes(buf.tail) == b"nopqr"
    assert buf.text() == "abcde\n…[8 bytes of output cut from the middle; 18 bytes in all]…\nnopqr"
    small = CappedOutput(10)
    small.feed(b"tiny")
    assert not small.truncated and small.text() == "tiny"


def test_only_allow_listed_variables_reach_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DEEPSEEK_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "TAPEDECK_VISIBLE"):
        monkeypatch.setenv(name, "secret")
    monkeypatch.setenv("LANG", "C.UTF-8")
    outcome = _bash(tmp_path).run({"command": "env | cut -d= -f1 | sort | tr '\\n' ' '"})
    names = outcome.text.splitlines()[0].split()
    assert "LANG" in names and "PATH" in names
    assert not {"DEEPSEEK_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "TAPEDECK_VISIBLE"} & set(names)
    settings = ShellSettings(pass_env=("TAPEDECK_VISIBLE",))
    bash = {t.name: t for t in workspace_tools(tmp_path, shell=lambda: settings)}["bash"]
    assert bash.run({"command": "echo $TAPEDECK_VISIBLE ${GITHUB_TOKEN:-unset}"}).text == "secret unset\n(exit code 0)"


def test_non_finite_timeout_is_refused(tmp_path: Path) -> None:
    assert _bash(tmp_path).run({"command": "true", "timeout": float("nan")}).error_code == "INVALID_ARGUMENTS"


def test_only_real_locale_categories_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = ("LC_ALL", "LC_CTYPE", "LC_TIME", "LC_PAPER", "LC_IDENTIFICATION")
    for name in real:
        monkeypatch.setenv(name, "C.UTF-8")
    for name in ("LC_API_KEY", "LC_GITHUB_TOKEN", "LC_", "LC_ANYTHING"):
        monkeypatch.setenv(name, "secret")
    outcome = _bash(tmp_path).run({"command": "env | cut -d= -f1 | grep ^LC_ | sort | tr '\\n' ' '"})
    assert outcome.text.splitlines()[0].split() == sorted(real)


@pytest.mark.parametrize(
    "name",
    ["DEEPSEEK_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "PGPASSWORD", "SSH_AUTH_SOCK",
     "NPM_TOKEN", "MY_APIKEY", "db_password", "GPG_PRIVATE_KEY", "AZURE_CLIENT_CREDENTIALS"],
)  # fmt: skip
def test_pass_env_refuses_secrets(name: str) -> None:
    from core.control.config import validate_config
    from core.shared.errors import ConfigError

    with pytest.raises(ConfigError, match=f"host.shell.passEnv: {name} looks like a secret"):
        validate_config({"host": {"shell": {"passEnv": ["GOPATH", name]}}})


@pytest.mark.parametrize("name", ["GOPATH", "TOKENIZERS_PARALLELISM", "KEYBOARD_LAYOUT", "CARGO_HOME", "PASSAGE"])
def test_pass_env_takes_ordinary_names(name: str) -> None:
    from core.control.config import validate_config

    assert validate_config({"host": {"shell": {"passEnv": [name]}}}).host.shell.pass_env == (name,)


def test_the_report_routes_key_variable_is_never_passed() -> None:
    from core.control.config import set_value, validate_config
    from core.shared.errors import ConfigError

    route = {"summarizationProvider": "openai", "summarizationModel": "m",
             "summarizationBaseUrl": "https://example.test/v1", "summarizationApiKeyEnv": "REPORT_ROUTE"}  # fmt: skip
    message = "host.shell.passEnv: REPORT_ROUTE holds the report route's API key"
    with pytest.raises(ConfigError, match=message):
        validate_config({"rewind": route, "host": {"shell": {"passEnv": ["REPORT_ROUTE"]}}})
    config = validate_config({"rewind": {**route, "summarizationApiKeyEnv": "OTHER"},
                              "host": {"shell": {"passEnv": ["REPORT_ROUTE"]}}})  # fmt: skip
    with pytest.raises(ConfigError, match=message):  # a running host's change is refused too
        set_value(config, "rewind.summarizationApiKeyEnv", "REPORT_ROUTE")
