"""A bench's number options take finite numbers only: ``--delay nan`` was measured and written into the JSON result
as ``NaN``, which no JSON reader takes (``emit``)."""

from __future__ import annotations

import argparse
import importlib
from typing import Any

import pytest

from bench import control


@pytest.mark.parametrize("value", ["nan", "inf", "-Infinity"])
def test_a_delay_that_is_not_finite_is_refused_before_measuring(
    value: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    measured: list[Any] = []
    monkeypatch.setattr(control, "measure", lambda *args: measured.append(args) or {"checkpoint": [1]})
    with pytest.raises(SystemExit) as done:
        control.main([f"--delay={value}", "--tries", "1", "--json"])
    assert done.value.code == 2 and measured == []
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines()[-1].endswith(f": error: argument --delay: '{value}' is not a finite number")


class _Parsed(Exception):
    """Raised in place of running a bench once its arguments parsed: a value wrongly taken fails the test at once."""


@pytest.mark.parametrize(
    ("module", "option", "values"),
    [
        ("fuzz", "--seconds", ["nan", "inf", "-1", "0"]),
        ("fuzz", "--cases", ["0", "-1", "١٢"]),
        ("fuzz", "--commands", ["-1", "99"]),
        ("fuzz", "--tui", ["-1"]),
        ("alerts", "--samples", ["0"]),
        ("alerts", "--rounds", ["0"]),
        ("alerts", "--repeat", ["0"]),
        ("cli", "--repeat", ["0"]),
        ("cli", "--target", ["0", "-1"]),
        ("context", "--steps", ["0"]),
        ("context", "--size-scale", ["0", "-1"]),
        ("control", "--delay", ["-1"]),
        ("control", "--tries", ["0"]),
        ("control", "--step", ["0", "-1"]),
        ("crash", "--kills-per-trial", ["0"]),
        ("crash", "--jitter", ["-1"]),
        ("crash", "--reach", ["0", "-0.5", "1.5", "nan"]),
        ("export", "--repeat", ["0"]),
        ("fleet", "--sessions", ["0"]),
        ("fleet", "--live", ["-1"]),
        ("fleet", "--rounds", ["0"]),
        ("fleet", "--idle", ["-1"]),
        ("fleet", "--remote", ["-1"]),
        ("reopen", "--repeat", ["0"]),
        ("redact", "--repeat", ["0", "-1"]),
        ("redact", "--kb", ["0", "nan"]),
        ("timetravel", "--samples", ["0"]),
        ("timetravel", "--replays", ["0"]),
        ("tui", "--samples", ["0"]),
        ("tui", "--rounds", ["0"]),
    ],
)  # fmt: skip
def test_a_count_or_time_out_of_its_range_is_refused_before_running(
    module: str, option: str, values: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``fuzz.py --seconds nan`` ran no case and reported no crash, as did ``--cases 0``; ``--commands 99`` ended in a
    traceback, and a count of 0 or a negative delay elsewhere measured nothing or failed midway. Each count and time
    is refused as the arguments are read, exit 2."""
    bench = importlib.import_module(f"bench.{module}")
    parse = argparse.ArgumentParser.parse_args

    def parsed(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        parse(self, *args, **kwargs)
        raise _Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parsed)
    for value in values:
        with pytest.raises(SystemExit) as done:
            bench.main([f"{option}={value}"])
        assert done.value.code == 2, (option, value)
        assert f"argument {option}: '{value}' is not " in capsys.readouterr().err.splitlines()[-1], (option, value)
