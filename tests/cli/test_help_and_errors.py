"""Subcommand help has a description; CLI errors are written for a person."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from core.cli import build_parser, main
from core.cli.args import check_seconds, decimal, whole
from core.control.ops import OPS
from core.shared.errors import TapedeckError

FIXTURE = "tool-call-turn.session.jsonl"


@pytest.mark.parametrize(
    "command",
    ["inspect", "surface", "events", "sessions", "fold", "seal", "expand", "run", "repair", "control", "recall",
     "recall turn", "recall step", "recall search", "cache", "cache info", "cache clear", "bridge",
     "bridge install", "bridge remove", "bridge status"],
)  # fmt: skip
def test_subcommand_help_has_a_description(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([*command.split(), "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    usage, description = out.split("\n\n")[:2]
    assert usage.startswith("usage:") and not description.startswith(("positional", "options")), out
    assert len(description.split()) >= 8, description


def test_every_help_fits_an_80_column_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``control --help`` printed its description as one line of 700 characters, which a terminal breaks mid-word:
    each command's help is wrapped to the terminal, its tables laid out as written."""
    monkeypatch.setenv("COLUMNS", "80")
    long = []
    pending = [("", build_parser())]
    while pending:
        prefix, parser = pending.pop()
        with pytest.raises(SystemExit):
            main([*prefix.split(), "--help"])
        long += [
            f"{prefix or 'tapedeck'}: {line}"
            for line in capsys.readouterr().out.splitlines()
            if len(line) > 80
        ]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                pending += [(f"{prefix} {name}".strip(), sub) for name, sub in action.choices.items()]
    assert long == []


def test_every_option_says_what_it_does() -> None:
    """Each option of each subcommand has a help line, so ``--help`` never lists a bare flag."""
    parser = build_parser()
    bare: list[str] = []
    pending = [("", parser)]
    while pending:
        prefix, current = pending.pop()
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                pending.extend((f"{prefix} {name}".strip(), child) for name, child in action.choices.items())
            elif action.help is None:
                bare.append(f"{prefix} {'/'.join(action.option_strings) or action.dest}")
    assert not bare, bare


def test_every_control_argument_says_what_it_does(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``control --help`` listed each op's ``--arg`` keys bare: nothing said that ``value`` is JSON and null restores
    the default, or which kinds a message takes. Each key is listed with what it is."""
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main(["control", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    missing = [f"{op} {arg.name}" for op, spec in OPS.items() for arg in spec.args
               if f"{arg.name}: {arg.description}" not in text]  # fmt: skip
    assert not missing, text


def test_run_without_a_task_asks_for_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["run"]) == 2
    err = capsys.readouterr().err
    assert "give a TASK" in err and "API key" not in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give --seq Q --format-version 4, or --turn T --step S"),
        (["--seq", "5"], "--seq needs --format-version 4"),
        (["--seq", "5", "--format-version", "3"], "--seq needs --format-version 4"),
        (["--turn", "1"], "--turn needs --step"),
        # checked only beside --seq: a wrong version beside --turn/--step was taken without a word; then refused
        # with --seq's message, though no --seq was given
        (
            ["--turn", "1", "--step", "1", "--format-version", "-5"],
            "--format-version -5 is no locator format this tapedeck reads (it reads 4); --turn T --step S needs none",
        ),
        (["--seq", "999", "--format-version", "4"], "no event at seq 999"),
        (["--seq", "3", "--format-version", "4"], "seq 3 is a step/start event, not a tool result"),
        (["--seq", "9", "--format-version", "4"], "seq 9 is an assistant/chunk event, not a tool result"),
        (["--seq", "0", "--format-version", "4"], "seq 0 is an agent/inbox/spliced event, not a tool result"),
        # a reversed range was said to select nothing, as if the result were too short
        (
            ["--turn", "1", "--step", "1", "--lines", "9-3"],
            "--lines '9-3' is reversed: give the first line first, as 3-9",
        ),
        (
            ["--turn", "1", "--step", "1", "--lines", "002 - 1"],
            "--lines '002 - 1' is reversed: give the first line first, as 1-002",
        ),
        (
            ["--turn", "1", "--step", "1", "--lines", "5-9"],
            "--lines 5-9 selects nothing: the result has 2 lines",
        ),
        (["--turn", "1", "--step", "1", "--lines", "40:90"], "--lines '40:90' is not a line range: give A-B"),
        (["--turn", "1", "--step", "1", "--lines", "5"], "--lines '5' is not a line range: give A-B"),
        # read as 1-2 without a word (the recall tool clamps a model's range; a person is told)
        (
            ["--turn", "1", "--step", "1", "--lines", "0-2"],
            "--lines '0-2': lines count from 1, so A must be 1 or more",
        ),
        (
            ["--turn", "1", "--step", "1", "--lines", "00 - 0"],
            "--lines '00 - 0': lines count from 1, so A must be 1 or more",
        ),
        (["--turn", "1", "--step", "1", "--grep", "("], "--grep: '(' is not a valid regular expression"),
        (["--turn", "1", "--step", "1", "--block", "2"], "--block 2: the result has 1 block"),
        (["--turn", "9", "--step", "1"], "no tool result recorded at turn 9 step 1 call 1"),
        (["--turn", "0", "--step", "1"], "--turn must be a number from 1 (got 0)"),
        (["--turn", "1", "--step", "1", "--call", "0"], "--call must be a number from 1 (got 0)"),
        (["--turn", "1", "--step", "1", "--block", "0"], "--block must be a number from 1 (got 0)"),
        (["--seq", "-1", "--format-version", "4"], "--seq must be a number from 0 (got -1)"),
        # --turn and --step were dropped without a word beside --seq: another result than the one named was shown
        (
            ["--seq", "5", "--format-version", "4", "--turn", "1", "--step", "1"],
            "--seq addresses a result itself: give it without --turn, --step and --call",
        ),
    ],
)
def test_expand_errors_are_for_a_person(
    fixtures_dir: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["expand", str(fixtures_dir / FIXTURE), *args]) == 2
    err = capsys.readouterr().err
    assert err == f"tapedeck: {message}\n" or err.startswith(f"tapedeck: {message}"), err
    assert "expand_result" not in err and "{" not in err, err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["step", "1", "-1"], "'-1' is not a step number: give a number from 1"),  # it printed step 1
        (["step", "x", "1"], "'x' is not a turn number: give a number from 1"),
        (["step", "1", "step-1"], "'step-1' is not a step number: give a number from 1"),
        # the tool reads a number Python does not convert as none: the model's message, or the whole argument
        (["step", "1", "9" * 5000], "S: a step number has at most 4300 digits (this one has 5000)"),
        (["step", "0" + "9" * 4300, "1"], "T: a turn number has at most 4300 digits (this one has 4301)"),
        (
            ["turn", "slice-turn-" + "9" * 5000],
            "N: a turn number has at most 4300 digits (this one has 5000)",
        ),
        (["search", " "], "give the words to search for"),
    ],
)
def test_recall_errors_are_for_a_person(
    fixtures_dir: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    command, *rest = args
    assert main(["recall", command, str(fixtures_dir / FIXTURE), *rest]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"tapedeck: {message}\n")


_LONG = "k" * 100_000


@pytest.mark.parametrize(
    "argv",
    [
        ["recall", "step", "LOG", _LONG, "1"],
        ["recall", "step", "LOG", "1", "a\x1b[2Jb"],
        ["recall", "turn", "LOG", _LONG],
        ["recall", "search", "LOG", "x", "--kinds", _LONG],
        ["expand", "LOG", "--seq", "4", "--format-version", "4", "--lines", _LONG],
        ["expand", "LOG", "--seq", "4", "--format-version", "4", "--lines", "0" * 100_000 + "-1"],
    ],
    ids=["step T", "step S escape", "turn N", "search --kinds", "--lines", "--lines from 0"],
)
def test_a_long_or_hostile_recall_argument_is_quoted_cut(
    fixtures_dir: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """recall and expand quoted a TURN, STEP, N, --kinds or --lines they refused as Python writes a string,
    whole: 100,000 characters back on one line of stderr. Each is quoted cut, its controls as escapes, as an argument
    of the other commands is."""
    assert main([str(fixtures_dir / FIXTURE) if a == "LOG" else a for a in argv]) == 2
    err = capsys.readouterr().err
    assert len(err) < 400 and "\x1b" not in err, err[:400]


@pytest.mark.parametrize("argv", [["events", "LOG", "--type", "," * 100_000], ["events", "LOG", "--type", "!" + " " * 100_000],
                                  ["export", "LOG", "--turns", "x" * 100_000, "-o", "-"]], ids=["--type", "--type !", "--turns"])  # fmt: skip
def test_a_long_filter_argument_is_quoted_cut(
    fixtures_dir: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """--type and --turns quoted a value they refused whole, as Python writes a string: 100,000 characters back."""
    assert main([str(fixtures_dir / FIXTURE) if a == "LOG" else a for a in argv]) == 2
    err = capsys.readouterr().err
    assert len(err) < 400 and "…" in err, err[:400]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["events", "--turn", "0"], "--turn must be a number from 1 (got 0)"),  # each listed nothing, exit 0
        (["events", "--turn", "-1"], "--turn must be a number from 1 (got -1)"),
        (
            ["events", "--type", ""],
            "--type '' names no event type: give types, comma-separated",
        ),  # each listed all
        (["events", "--type", " , "], "--type ' , ' names no event type: give types, comma-separated"),
        (["events", "--type", "!"], "--type '!': a '!' leaves out the type written after it, and none is"),
        (["events", "--type", "tool/", "--type", "turn/, !"], "--type 'turn/, !': a '!' leaves out the type"),
        (["export", "--type", "!"], "--type '!': a '!' leaves out the type written after it, and none is"),
    ],
)
def test_a_type_or_turn_that_filters_nothing_is_refused(
    fixtures_dir: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    command, *rest = args
    assert main([command, str(fixtures_dir / FIXTURE), *rest]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"tapedeck: {message}") and err.count("\n") == 1, err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--speed", "nan"],
            "--speed must be 0 (no pauses) or a finite number from 0.0000174 (a step a day), not nan",
        ),  # it ran
        (
            ["--speed", "inf"],
            "--speed must be 0 (no pauses) or a finite number from 0.0000174 (a step a day), not inf",
        ),
        (
            ["--speed", "-1"],
            "--speed must be 0 (no pauses) or a finite number from 0.0000174 (a step a day), not -1",
        ),
        # the host it started refused its --pace of 1.5e+300 seconds, and the demo left an empty log
        (
            ["--speed", "1e-300"],
            "--speed must be 0 (no pauses) or a finite number from 0.0000174 (a step a day), not 1e-300",
        ),
        (
            ["--speed", "1.7e-05"],
            "--speed must be 0 (no pauses) or a finite number from 0.0000174 (a step a day), not 1.7e-05",
        ),
        (["--workspace", "{file}"], "--workspace {file} is not a directory"),  # a traceback
    ],
)
def test_demo_refuses_what_it_cannot_run_with(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    from tui.cli import tui_commands

    file = tmp_path / "a-file"
    file.write_text("x")
    argv = [
        "demo",
        "--no-tui",
        "--sessions-root",
        str(tmp_path / "root"),
        *(a.format(file=file) for a in args),
    ]
    assert main(argv, extra_commands=tui_commands()) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"tapedeck: {message.format(file=file)}\n")
    assert not (tmp_path / "root").exists()


def test_demo_refuses_a_workspace_that_is_not_utf8_before_writing_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A --workspace that is not UTF-8 was found out by the host the demo started, after the demo had written its
    project into the new directory and printed its name with the byte as it is; the demo refuses it first, as run
    does, and leaves nothing behind."""
    from tui.cli import tui_commands

    bad = tmp_path / os.fsdecode(b"ws\xe9")
    argv = [
        "demo",
        "--no-tui",
        "--speed",
        "0",
        "--workspace",
        str(bad),
        "--sessions-root",
        str(tmp_path / "root"),
    ]
    assert main(argv, extra_commands=tui_commands()) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("tapedeck: --workspace /") and "is not valid UTF-8" in err, (out, err)
    assert not bad.exists() and not (tmp_path / "root").exists()


@pytest.mark.parametrize("tui", [False, True])
def test_a_demo_whose_host_cannot_start_says_why_and_claims_no_log(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], tui: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under the TUI the host's own error went nowhere ('the demo host did not start (exit code 2); try
    --no-tui'), and either way the demo ended with 'demo log kept at …', naming a log that was never written."""
    from tui.cli import tui_commands

    monkeypatch.setattr(
        os, "isatty", lambda fd: True
    )  # as in a terminal, which the TUI needs (the host ends first)
    file = tmp_path / "a-file"
    file.write_text("x")
    argv = ["demo", "--speed", "0", "--sessions-root", str(file), *([] if tui else ["--no-tui"])]
    assert main(argv, extra_commands=tui_commands()) == 2
    out, err = capfd.readouterr()
    assert f"cannot create the session directory {file}/" in err, err
    assert "demo log kept" not in out and "no demo log was written" in out, out


@pytest.mark.parametrize(
    ("text", "stdin", "message"),
    [
        (
            "",
            b"",
            "the request is empty: give its text, or '-' with the text on stdin",
        ),  # it was routed as small
        ("-", b" \n", "the request is empty: give its text, or '-' with the text on stdin"),
        (
            "-",
            "fixé \xff it".encode("latin1"),
            "the request on stdin: not UTF-8 text: the byte at offset 3 (0xe9) cannot be decoded; convert it to UTF-8 "
            "(iconv -f ITS-ENCODING -t UTF-8) and pipe that",
        ),
    ],
)
def test_route_refuses_a_request_it_cannot_read(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, text: str, stdin: bytes, message: str
) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), errors="surrogateescape"))
    assert main(["route", text]) == 2
    assert capsys.readouterr() == ("", f"tapedeck: {message}\n")


def test_route_reads_no_more_of_stdin_than_a_request_can_be(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tapedeck route - < /dev/zero`` (a pipe without end) read stdin whole: MemoryError and a traceback, or the
    machine's memory, where the evidence file was read only up to its cap; stdin is read as far."""
    import io
    import sys

    from core.cli.route import MAX_EVIDENCE_BYTES

    class Endless(io.RawIOBase):
        read_so_far = 0

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: bytearray | memoryview) -> int:
            if Endless.read_so_far > 2 * MAX_EVIDENCE_BYTES:  # a reader that takes it all: no cap
                raise MemoryError
            buffer[:] = b"a" * len(buffer)
            Endless.read_so_far += len(buffer)
            return len(buffer)

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(Endless())))
    assert main(["route", "-"]) == 2
    assert (
        capsys.readouterr().err
        == f"tapedeck: the request on stdin is larger than {MAX_EVIDENCE_BYTES >> 20} MiB, which no request is\n"
    )


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--follow", "--interval", "inf"], "--interval must be a positive number of seconds, not inf"),
        # the value was written as Python's float: "not 0.0" for a typed 0 (found walking the CLI)
        (
            ["--exec", "true", "--exec-timeout", "0"],
            "--exec-timeout must be a positive number of seconds, not 0",
        ),
        (["--follow", "--interval", "-2"], "--interval must be a positive number of seconds, not -2"),
        (
            ["--follow", "--interval", "1e300"],
            "--interval must be at most 86,400 seconds (a day), not 1e+300",
        ),
        (
            ["--exec", "true", "--exec-timeout", "1e10"],
            "--exec-timeout must be at most 86,400 seconds (a day), not 1e+10",
        ),
    ],
)
def test_a_wait_too_long_to_sleep_is_refused_in_a_line(
    fixtures_dir: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    # 'alerts --follow --interval inf' (or 1e300) ended in a traceback: an OverflowError from the first wait, which
    # cannot be that long; check_seconds (watch, fleet, run's --pace too) now refuses it
    assert main(["alerts", str(fixtures_dir / FIXTURE), *argv]) == 2
    assert capsys.readouterr().err == f"tapedeck: {said}\n"


@pytest.mark.parametrize("value", [86_400.0, 0.5])
def test_a_day_of_seconds_is_the_longest_wait(value: float) -> None:
    check_seconds("interval", value)
    check_seconds("pace", value, zero=True)
    with pytest.raises(TapedeckError, match="at most 86,400 seconds"):
        check_seconds("pace", value + 86_400, zero=True)


@pytest.mark.parametrize(
    "argv",
    [["inspect", ""], ["events", ""], ["surface", ""], ["sessions", ""], ["sessions", "", "."], ["cache", "info", ""],
     ["cache", "clear", ""], ["repair", ""], ["note", "", "--seq", "1", "x"], ["control", "", "pause"],
     ["alerts", ""], ["watch", "", "--no-follow"]],
)  # fmt: skip
def test_an_empty_path_is_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # '' is Path('.'): 'sessions ""' listed the working directory as 'no sessions under ', exit 0, 'alerts ""' found
    # 'no alerts' there, and the others named '.' as the log that is not there
    from tui.cli import tui_commands

    with pytest.raises(SystemExit) as done:
        main(argv, tui_commands())
    assert done.value.code == 2
    assert "an empty path names nothing" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [["cost", "LOG", "--config", ""], ["fold", "LOG", "--config", ""], ["seal", "LOG", "--config", ""],
     ["sessions", "--config", ""], ["alerts", "LOG", "--config", ""], ["route", "x", "--config", ""],
     ["route", "x", "--evidence", ""], ["status", "LOG", "--workspace", ""], ["status", "LOG", "--config", ""], ["export", "LOG", "-o", ""],
     ["run", "x", "--sessions-root", ""], ["run", "x", "--workspace", ""], ["run", "--resume", ""],
     ["run", "x", "--config", ""], ["demo", "--workspace", ""], ["demo", "--sessions-root", ""],
     ["watch", "LOG", "--config", ""], ["fleet", "--config", ""], ["bridge", "status", ""], ["bridge", "install", ""],
     ["bridge", "remove", ""]],
)  # fmt: skip
def test_an_empty_path_option_is_refused(
    argv: list[str], fixtures_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # as an empty PATH is: '' is Path('.'), so 'run --sessions-root ""' wrote the session into the agent's
    # workspace, '--workspace ""' ran there, '--resume ""' started a new session, '--evidence ""' weighed none and
    # '--config ""' and '-o ""' named '.' as the file that is a directory; 'bridge install ""' took $DSH_HOME
    from tui.cli import tui_commands

    log = str(fixtures_dir / FIXTURE)
    with pytest.raises(SystemExit) as done:
        main([log if word == "LOG" else word for word in argv], tui_commands())
    assert done.value.code == 2
    assert "an empty path names nothing" in capsys.readouterr().err


def _options(tui: bool = False) -> list[tuple[str, argparse.ArgumentParser, argparse.Action]]:
    """Every option of every (sub)command, with its parser (``tui``: ``watch``, ``fleet`` and ``demo`` too)."""
    from tui.cli import tui_commands

    found, pending = [], [("", build_parser(tui_commands() if tui else None))]
    while pending:
        prefix, parser = pending.pop()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                pending.extend((f"{prefix} {name}".strip(), child) for name, child in action.choices.items())
            elif action.option_strings:
                found.append((f"{prefix} {action.option_strings[-1]}", parser, action))
    return found


def test_every_interval_names_its_default() -> None:
    """``fleet --help`` gave ``--interval S`` no default where ``watch`` and ``alerts`` named theirs."""
    intervals = [(name, action) for name, _, action in _options(tui=True) if name.endswith(" --interval")]
    assert {name for name, _ in intervals} >= {"fleet --interval", "watch --interval", "alerts --interval"}
    for name, action in intervals:
        assert action.help.endswith(f" (default {action.default:g})"), (name, action.help)
        assert action.help.count("default") == 1, (name, action.help)


def test_every_option_that_has_a_default_names_it() -> None:
    """``diff --help`` said ``--attempt N`` was "which attempt of a retried step", not that it counts from 1 and is
    the first unless given."""
    unnamed = [name for name, _, action in _options(tui=True)
               if action.default not in (None, False, [], argparse.SUPPRESS) and "default" not in (action.help or "")]  # fmt: skip
    assert unnamed == []


def _refusals(kind: object, text: str) -> list[tuple[str, str]]:
    """Every option whose values ``kind`` reads, with the message its parser refuses ``text`` by (it must)."""
    found = []
    for name, parser, action in _options():
        if action.type is kind:
            with pytest.raises(argparse.ArgumentError) as refused:
                parser._get_value(action, text)
            found.append((name, str(refused.value)))
    return found


def test_no_option_reads_a_number_by_int() -> None:
    # int() takes '١٢' (Arabic-Indic digits), '1_2' and ' 12 ' as 12, and echoes 5000 digits whole in its error
    assert [name for name, _, action in _options() if action.type is int] == []


@pytest.mark.parametrize(
    "text",
    [
        "١٢",
        "１２",
        "1_2",
        " 12",
        "12 ",
        "+12",
        "1e3",
        "0x1f",
        "",
        "9" * 5000,
        "-" + "9" * 5000,
        "٣",
        str(2**64),
        str(-(2**63) - 1),
    ],
)
def test_a_whole_number_option_takes_ascii_digits_only(text: str) -> None:
    refusals = _refusals(whole, text)
    assert len(refusals) >= 20
    for name, message in refusals:
        assert "whole number" in message and len(message) < 300, (name, message[:300])


@pytest.mark.parametrize("text", ["12", "0", "007", "-1", str(2**64 - 1), str(-(2**63)), "0" * 30 + "1"])
def test_a_whole_number_option_reads_ascii_digits(text: str) -> None:
    assert whole(text) == int(text)


def test_a_whole_number_is_refused_on_the_command_line(
    fixtures_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["surface", str(fixtures_dir / FIXTURE), "--at", "١٢"])
    assert done.value.code == 2
    assert "argument --at: '١٢' is not a whole number" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "prefix"),
    [
        (
            ["request", "LOG", "--attempt", "0"],
            "tapedeck request: error: unrecognized arguments: --attempt 0",
        ),
        (["cache", "info", "--bogus"], "tapedeck cache info: error: unrecognized arguments: --bogus"),
        (["request", "LOG", "--x\x1b[2J"], "tapedeck request: error: unrecognized arguments: --x\\u001b[2J"),
    ],
)
def test_an_unknown_option_is_refused_by_its_subcommand(
    argv: list[str], prefix: str, fixtures_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse left a subcommand's unknown words to the top parser: ``tapedeck: error: unrecognized arguments``,
    naming no subcommand, unlike every other error of one (``tapedeck request: error: argument --seq: …``)."""
    argv = [str(fixtures_dir / FIXTURE) if word == "LOG" else word for word in argv]
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == prefix


@pytest.mark.parametrize(
    ("argv", "last"),
    [
        (["--bogus", "events", "LOG"], "tapedeck: error: unrecognized arguments: --bogus"),
        (
            ["--bogus=1", "-q", "inspect", "LOG", "--json"],
            "tapedeck: error: unrecognized arguments: --bogus=1 -q",
        ),
        (["--bogus"], "tapedeck: error: unrecognized arguments: --bogus"),
    ],
)
def test_an_unknown_option_before_the_command_is_named_alone(
    argv: list[str], last: str, fixtures_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An option before the command is the top parser's: only it is named, not the command's own words after it
    (``tapedeck --bogus events LOG`` said ``--bogus LOG``, as if the log were not an argument)."""
    argv = [str(fixtures_dir / FIXTURE) if word == "LOG" else word for word in argv]
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == last


def test_no_option_reads_a_number_by_float() -> None:
    # float() takes '١' (Arabic-Indic digits), '1_0' and ' 1' too, and echoes 5000 characters whole in its error
    assert [name for name, _, action in _options() if action.type is float] == []


@pytest.mark.parametrize("text", ["١", "٠٫٥", "1_0", " 1", "1 ", "", "x" * 5000, "9" * 5000])
def test_a_seconds_option_takes_ascii_only(text: str) -> None:
    refusals = _refusals(decimal, text)
    assert len(refusals) >= 6
    for name, message in refusals:
        assert "not a number" in message and len(message) < 300, (name, message[:300])


@pytest.mark.parametrize("text", ["2", "0.5", ".5", "1e3", "-1", "inf"])
def test_a_seconds_option_reads_ascii_numbers(text: str) -> None:
    assert decimal(text) == float(text)


def test_the_demos_lines_name_its_workspace_escaped(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """demo --no-tui's first and closing lines named the workspace (and the log beside it) as they are: a --workspace
    whose name holds a newline and an escape sequence wrote forged lines and the raw escape on stdout. They name it
    as the CLI's messages name a path (core.shared.text.quoted_path)."""
    from tui.cli import tui_commands

    file = tmp_path / "a-file"
    file.write_text("x")
    workspace = tmp_path / "ws\x1b]0;t\x07\nforged"
    argv = ["demo", "--no-tui", "--speed", "0", "--sessions-root", str(file), "--workspace", str(workspace)]
    assert main(argv, extra_commands=tui_commands()) == 2
    out, _ = capfd.readouterr()
    named = str(workspace).replace("\x1b", "\\u001b").replace("\x07", "\\u0007").replace("\n", "\\n")
    # the host names the log (dea55d19): here it fails before making one
    assert out.startswith(f"workspace {named}\n") and f"\nworkspace {named} kept (yours)\n" in out, out
    assert "\x1b" not in out and not any(line.startswith("forged") for line in out.splitlines()), out


@pytest.mark.parametrize("command", ["inspect", "events", "cost", "export"])
def test_a_zstd_log_cut_inside_its_only_frame_is_not_called_empty(
    fixtures_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """``zstd`` writes a log as one frame; a copy cut short holds no whole frame, and the readers called its 1,000
    bytes an 'empty log' (found walking the CLI over a truncated copy). It says the file ends inside its first
    frame, as ``sessions`` and ``alerts`` (read_log_header) say of it."""
    import zstandard

    whole = zstandard.ZstdCompressor().compress((fixtures_dir / "multi-turn.session.jsonl").read_bytes())
    cut = tmp_path / "session.jsonl.zstd"
    cut.write_bytes(whole[: len(whole) // 2])
    assert main([command, str(cut)]) == 2
    assert (
        capsys.readouterr().err == f"tapedeck: {cut}: no complete first line or frame (no session header)\n"
    )


def _choices() -> list[tuple[list[str], argparse.Action]]:
    """Every argument of every (sub)command that takes one of a set of words (a subcommand's name, ``--format``), with
    the words that lead to it: the subcommand's, then the option's name if it has one."""
    found, pending = [], [([], build_parser())]
    while pending:
        prefix, parser = pending.pop()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                pending.extend(([*prefix, name], child) for name, child in action.choices.items())
            if action.choices is not None:
                found.append(([*prefix, *action.option_strings[-1:]], action))
    return found


@pytest.mark.parametrize(
    "value", ["it's\x1b[2J", "k" * 100_000], ids=["quote and escape", "100,000 characters"]
)
def test_a_word_that_is_no_choice_is_refused_in_our_words(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A word that is none of an argument's choices (a subcommand, --format, --class) was refused as Python writes
    strings: ``invalid choice: "it's\\x1b[2J" (choose from 'html', 'md', 'json')``, the word whole however long. It
    is quoted as every other usage error quotes what it was given, cut, its controls escaped, the choices plain."""
    choices = _choices()
    assert len(choices) >= 8
    for words, action in choices:
        with pytest.raises(SystemExit) as done:
            main([*words, value])
        assert done.value.code == 2
        err = capsys.readouterr().err.splitlines()[-1]
        listed = ", ".join(map(str, action.choices))
        assert f"' is not one of: {listed}" in err and len(err) < 600, (words, err[:600])
        assert "\x1b" not in err and "invalid choice" not in err, (words, err[:600])


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["inpsect"], "tapedeck: error: argument COMMAND: 'inpsect' is not one of: inspect, surface, events, "),
        (["route", "x", "--class", "smal"], "tapedeck route: error: argument --class: 'smal' is not one of: read, "
         "small, frontend, large, batch (did you mean small?)"),
        (["cache", "clean"], "tapedeck cache: error: argument ACTION: 'clean' is not one of: info, clear (did you mean clear?)"),
    ],
)  # fmt: skip
def test_a_word_near_a_choice_is_named(
    argv: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith(line), err
    assert argv[0] != "inpsect" or err.endswith(" (did you mean inspect?)"), err


@pytest.mark.parametrize(
    "argv",
    [
        ["inspect", "LOG"],
        ["events", "LOG", "--json"],
        ["cost", "LOG"],
        ["request", "LOG", "--all"],
        ["alerts", "LOG"],
    ],
)
def test_ctrl_c_ends_a_reading_command_in_a_line(
    argv: list[str], fixtures_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C (or `timeout -s INT`) in a reading command printed a KeyboardInterrupt traceback, where `run`, `export`
    and `control --wait` say what ended them: it says 'interrupted', exit 130, as a shell reports a SIGINT."""
    from core.log.decoder import LogDecoder

    def interrupted(self: LogDecoder, data: bytes) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(LogDecoder, "feed", interrupted)
    try:
        code: object = main([str(fixtures_dir / FIXTURE) if word == "LOG" else word for word in argv])
    except KeyboardInterrupt:
        code = "a KeyboardInterrupt out of main"
    assert code == 130
    assert capsys.readouterr().err == "tapedeck: interrupted\n"


def test_a_demo_needs_a_terminal_for_its_tui(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tapedeck demo </dev/null` made its workspace, started its host and then drew the TUI into stderr, waiting
    for keys that never came; it is refused before anything is made, as watch and fleet are (--no-tui plays it)."""
    from tui.cli import tui_commands

    monkeypatch.setattr(os, "isatty", lambda fd: fd != 0)
    root = tmp_path / "root"
    assert main(["demo", "--sessions-root", str(root)], extra_commands=tui_commands()) == 2
    out, err = capsys.readouterr()
    assert err.startswith("tapedeck: the TUI needs a terminal: ") and out == "", (out, err)
    assert not root.exists()


@pytest.mark.parametrize("command", ["inspect", "events", "fold", "sessions", "alerts", "watch", "export"])
def test_a_dash_for_a_log_says_no_log_is_read_from_stdin(
    command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`cat LOG | tapedeck inspect -` said only '-: no such file or directory', as if a file named '-' were
    meant; a command reads a log from its path, and says so (a file named '-' is still read: ./-)."""
    from tui.cli import tui_commands

    monkeypatch.chdir(tmp_path)
    assert main([command, "-"], extra_commands=tui_commands()) == 2
    assert capsys.readouterr().err.startswith(
        "tapedeck: -: no such file or directory; a log is read from its path, never from stdin"
    )
