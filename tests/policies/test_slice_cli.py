"""``tapedeck seal``, ``tapedeck recall turn|step|search`` and ``tapedeck expand`` on real and scripted logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_slice_support import Host

from core.cli import main
from core.policies.recall import run_recall_tool
from core.read.load import load_session


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def log(tmp_path: Path) -> Path:
    host = Host()
    host.simple_turn("first question", "first answer")
    host.begin("second question")
    host.reply("checking", [("c1", "bash", {"command": "ls"}, "a.txt\nb.txt\nERROR c.txt")])
    host.next_step()
    host.reply("second answer")
    host.end()
    return host.write(tmp_path / "session.jsonl")


def test_seal_json_preview(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "seal", str(log), "--json")
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert (report["keepRecentTurns"], report["entryMaxChars"], report["warnings"]) == (0, None, [])
    assert [(e["turns"], e["start"], e["end"]) for e in report["entries"]] == [
        ([1, 1], 3, 3),
        ([2, 2], 9, 14),
    ]
    second = report["entries"][1]
    assert second["sources"] == [9, 11, 14] and second["seq"] == 18
    assert second["chars"] == len(second["text"]) and second["charsReplaced"] > 0
    assert (
        '[tool turn 2 step 1 seq 11 · bash · 23 chars · expand_result({"seq":11,"formatVersion":4})]'
        in second["text"]
    )


def test_seal_text_preview_and_flags(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "seal", str(log), "--keep-recent-turns", "1")
    assert code == 0
    assert out.startswith("entry 1 → seq 17: replaces seq 3..3 (1 node(s), 12 chars) · turn 1 · 186 chars\n")
    assert "[slice tape v1 · turns 1-1 · 1 turn(s) sealed · recall_turn / expand_result]" in out
    assert out.endswith("1 entry would be sealed now\n")
    code, out, _ = run(capsys, "seal", str(log), "--keep-recent-turns", "2")
    assert (code, out) == (0, "nothing to seal now\n")
    code, out, _ = run(capsys, "seal", str(log), "--entry-max-chars", "256", "--json")
    assert all(e["chars"] <= 256 for e in json.loads(out)["entries"])


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--keep-recent-turns", "-1", "--keep-recent-turns must be a number from 0 to 10,000 (got -1)"),
        ("--keep-recent-turns", "10001", "--keep-recent-turns must be a number from 0 to 10,000 (got 10001)"),
        (
            "--keep-recent-turns",
            str(2**53),
            f"--keep-recent-turns must be a number from 0 to 10,000 (got {2**53})",
        ),
        ("--entry-max-chars", "255", "--entry-max-chars must be a number from 256 to 100,000,000 (got 255)"),
        (
            "--entry-max-chars",
            "100000001",
            "--entry-max-chars must be a number from 256 to 100,000,000 (got 100000001)",
        ),
        (
            "--entry-max-chars",
            str(2**53 - 1),
            f"--entry-max-chars must be a number from 256 to 100,000,000 (got {2**53 - 1})",
        ),
    ],
)
def test_seal_rejects_bad_history_values(
    log: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, message: str
) -> None:
    """A bad option's message names the option as typed (it gave the config key's, which the options' help names
    only in passing), and the range is the config key's: it took any safe integer, up to 9,007,199,254,740,991,
    where the config caps history.entryMaxChars at 100,000,000."""
    code, out, err = run(capsys, "seal", str(log), flag, value)
    assert (code, out, err) == (2, "", f"tapedeck: {message}\n")


def test_seal_rejects_an_option_that_is_no_number(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["seal", str(log), "--keep-recent-turns", "two"])
    assert exit_.value.code == 2
    assert "argument --keep-recent-turns: 'two' is not a whole number" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "tool", "arguments"),
    [
        (["recall", "turn", "{log}", "2"], "recall_turn", {"turn": "2"}),
        (["recall", "turn", "{log}", "slice-turn-2", "--view", "full"], "recall_turn", {"turn": "slice-turn-2", "view": "full"}),
        (["recall", "step", "{log}", "2", "1"], "recall_step", {"turn": "2", "step": "1"}),
        (["recall", "search", "{log}", "answer", "--limit", "1"], "recall_search", {"query": "answer", "limit": 1}),
        (["recall", "search", "{log}", "c.txt", "--kinds", "tool_output, user", "--scope", "dialogue"], "recall_search",
         {"query": "c.txt", "kinds": ["tool_output", "user"], "scope": "dialogue"}),
        (["expand", "{log}", "--seq", "11", "--format-version", "4"], "expand_result", {"seq": 11, "formatVersion": 4}),
        (["expand", "{log}", "--turn", "2", "--step", "1", "--grep", "error"], "expand_result", {"turn": 2, "step": 1, "grep": "error"}),
        (["expand", "{log}", "--turn", "2", "--step", "1", "--call", "1", "--block", "1", "--lines", "2-3"], "expand_result",
         {"turn": 2, "step": 1, "call": 1, "block": 1, "lines": "2-3"}),
    ],
)  # fmt: skip
def test_cli_prints_exactly_what_the_model_receives(
    log: Path, capsys: pytest.CaptureFixture[str], argv: list[str], tool: str, arguments: dict
) -> None:
    expected = run_recall_tool(load_session(log), tool, arguments)
    assert not expected.is_error
    code, out, err = run(capsys, *[a.replace("{log}", str(log)) for a in argv])
    assert (code, err) == (0, "")
    assert out == expected.text + ("" if expected.text.endswith("\n") else "\n")
    code, out, _ = run(capsys, *[a.replace("{log}", str(log)) for a in argv], "--json")
    assert json.loads(out) == {"tool": tool, "arguments": arguments, "text": expected.text}


def test_cli_errors_are_for_a_person(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "expand", str(log), "--seq", "11")
    model_text = run_recall_tool(load_session(log), "expand_result", {"seq": 11})
    assert model_text.is_error and (code, out) == (2, "") and err != f"tapedeck: {model_text.text}\n"
    assert err.startswith("tapedeck: --seq needs --format-version 4")  # the model's text names JSON fields
    code, _, err = run(capsys, "recall", "turn", str(log), "7")
    assert (code, err) == (2, "tapedeck: no recorded turn 7 in this session (sealed turns: 1, 2)\n")
    code, _, err = run(capsys, "recall", "turn", str(log.parent / "missing.jsonl"), "1")
    assert code == 2 and err.startswith("tapedeck: ") and "no such file" in err


@pytest.mark.parametrize(
    "argv", [["recall", "step", "{log}", "2", "9" * 5000], ["recall", "turn", "{log}", "9" * 5000]]
)
def test_a_number_too_long_to_convert_is_an_error_not_a_traceback(
    log: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """Past 4,300 digits Python's int() raises: the command ended in a ValueError traceback, exit 1."""
    code, out, err = run(capsys, *(a.replace("{log}", str(log)) for a in argv))
    assert (code, out) == (2, "") and err.startswith("tapedeck: ") and "Traceback" not in err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--kinds", "users"], "--kinds: unknown kind 'users' (kinds: user, assistant, context, tool_input, "
                               "tool_error, tool_output)"),
        (["--kinds", "user,tool"], "--kinds: unknown kind 'tool'"),
        (["--limit", "0"], "--limit must be from 1 to 20 (got 0)"),
        (["--limit", "-1"], "--limit must be from 1 to 20 (got -1)"),
        (["--limit", "21"], "--limit must be from 1 to 20 (got 21)"),
    ],
)  # fmt: skip
def test_recall_search_refuses_what_its_help_does_not_allow(
    log: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    """The model's tool reads a wrong kind as no match and clamps the limit; a person is told instead."""
    code, out, err = run(capsys, "recall", "search", str(log), "answer", *flags)
    assert (code, out) == (2, "") and err.startswith(f"tapedeck: {message}"), err


@pytest.mark.parametrize("json", [[], ["--json"]])
def test_recall_search_refuses_a_query_that_is_not_utf8_in_one_line(
    log: Path, capsys: pytest.CaptureFixture[str], json: list[str]
) -> None:
    """Bytes that are no UTF-8 (the shell passes them as lone surrogates): --json crashed writing the query back."""
    code, out, err = run(capsys, "recall", "search", str(log), "ans\udcffwer", *json)
    assert (code, out, err) == (2, "", "tapedeck: QUERY is not valid UTF-8 (check the terminal's encoding)\n")


@pytest.mark.parametrize(
    ("name", "entries"),
    [
        ("multi-turn.session.jsonl", [((1, 1), (34,)), ((2, 2), (68,))]),
        ("tool-call-turn.session.jsonl", [((1, 1), (63, 65, 101))]),
        ("code-mode-turn.session.jsonl", [((1, 1), (188, 194, 252))]),
        ("bash-spill.session.jsonl", [((1, 1), (14, 16, 24))]),
        ("cancel-tool-calls.session.jsonl", [((1, 1), (17, 19, 21))]),
        ("compaction-recovery.session.jsonl", [((1, 1), (13, 15, 28))]),
        ("tool-outcome-unknown.session.expected.jsonl", [((1, 1), (3, 5)), ((2, 2), (21,))]),
        ("error-finish.session.jsonl", []),
        ("subagent-spawn-in-process.session.jsonl", [((1, 1), (116, 118, 161))]),
    ],
)
def test_seal_preview_of_the_real_fixtures(
    fixtures_dir: Path, capsys: pytest.CaptureFixture[str], name: str, entries: list
) -> None:
    code, out, err = run(capsys, "seal", str(fixtures_dir / name), "--json")
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert [(tuple(e["turns"]), tuple(e["sources"])) for e in report["entries"]] == entries
