"""``tapedeck control SESSION config.set``: the value is checked as the host checks it (``set_value`` on the
config the session runs under) before anything is written to the inbox."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.cli import build_parser
from core.control.config import CONFIG_EVENT
from core.log.writer import SessionWriter, make_header


def _run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    return args.handler(args)


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[SessionWriter]:
    header = make_header("sess-1", cwd=str(tmp_path / "ws"))
    w = SessionWriter.create(tmp_path / "sessions", header)
    w.append([{"type": "turn/start", "data": {"turn": 1}}])
    yield w
    w.close()


def _inbox(writer: SessionWriter) -> Path:
    return writer.path.parent / "control.jsonl"


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        # a key its section does not have
        (
            "slice.fold.nope",
            "3",
            "config.set: Unknown slice.fold configuration key nope. Valid keys: enabled, ",
        ),
        # below the range its section allows
        (
            "slice.maxStepsPerTurn",
            "-5",
            "config.set: slice.maxStepsPerTurn must be from 1 to 10,000 (got -5)",
        ),
        ("model.contextWindow", "0", "config.set: model.contextWindow must be a positive integer (got 0)"),
        # of another type than the key's
        ("slice.fold.enabled", "3", "config.set: slice.fold.enabled must be true or false, got 3 (a number)"),
        (
            "slice.fold.pinSteps",
            "true",
            "config.set: slice.fold.pinSteps must be a number, got true (a boolean)",
        ),
        # above the top of the key's range
        (
            "slice.maxStepsPerTurn",
            "1e9",
            "config.set: slice.maxStepsPerTurn must be from 1 to 10,000 (got 1000000000)",
        ),
        # a table where a value goes
        ("slice.fold", "5", "config.set: slice.fold must be a table, got 5 (a number)"),
    ],
)
def test_a_value_the_host_would_refuse_is_refused_before_sending(
    writer: SessionWriter, capsys: pytest.CaptureFixture[str], key: str, value: str, said: str
) -> None:
    """Only the section was looked at: an unknown key, a value of the wrong type or out of range was written to
    the inbox, and the host refused it later. The section's own words are said now, and nothing is sent."""
    code = _run(["control", str(writer.path), "config.set", "--arg", f"key={key}", "--arg", f"value={value}"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"tapedeck: {said}"), err
    assert not _inbox(writer).exists()


def test_the_value_is_checked_against_the_config_the_session_runs_under(
    writer: SessionWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    """A change the log records stands: a soft budget past the default hard one (8) is fine once the session's
    hard budget was raised to 40, and is sent; past the raised one it is refused."""
    key = "adaptive.taskProfiles.read"
    change = {f"{key}.hardStepBudget": {"old": 8, "new": 40}}
    writer.append([{"type": CONFIG_EVENT, "data": {"changes": change, "by": "operator"}, "ignorable": True}])
    argv = ["control", str(writer.path), "config.set", "--arg", f"key={key}.softStepBudget", "--json"]
    assert _run([*argv, "--arg", "value=20"]) == 0
    assert json.loads(capsys.readouterr().out)["args"] == {"key": f"{key}.softStepBudget", "value": 20}
    assert _run([*argv, "--arg", "value=40"]) == 2
    assert "taskProfiles[0].hardStepBudget must exceed softStepBudget" in capsys.readouterr().err
    [sent] = [json.loads(line) for line in _inbox(writer).read_text().splitlines()]
    assert sent["args"]["value"] == 20


def test_a_valid_value_is_sent(writer: SessionWriter, capsys: pytest.CaptureFixture[str]) -> None:
    code = _run(
        ["control", str(writer.path), "config.set", "--arg", "key=slice.fold.pinSteps", "--arg", "value=2"]
    )
    assert code == 0 and capsys.readouterr().out.startswith("sent config.set request ")
    [sent] = [json.loads(line) for line in _inbox(writer).read_text().splitlines()]
    assert sent["args"] == {"key": "slice.fold.pinSteps", "value": 2}
