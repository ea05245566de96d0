"""``tapedeck events``: turn filter and the turn column for events outside a turn."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from core.cli import main
from core.shared.text import number_runs
from tests.conftest import FIXTURES
from tests.core.test_turn_attribution import between_turns_log
from tests.tui.logs import Log


def test_events_turn_filter_leaves_out_events_between_turns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, outside = between_turns_log()
    path = log.write(tmp_path / "session.jsonl")
    assert main(["events", str(path), "--turn", "1"]) == 0
    listed = [int(line.split()[0]) for line in capsys.readouterr().out.splitlines()]
    assert listed == list(range(11))
    assert main(["events", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    for seq in outside:
        assert lines[seq].split()[1] == "t-", lines[seq]
        assert "None" not in lines[seq]


def test_interrupted_answer_is_marked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = Log()
    seqs = log.turn(1, "first", "ok")
    log.events[seqs["answer"]]["data"]["interrupted"] = True
    path = log.write(tmp_path / "session.jsonl")
    assert main(["events", str(path), "--type", "assistant/message"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "interrupted" not in lines[0] and "interrupted" in lines[1], lines
    assert main(["surface", str(path)]) == 0
    assert "interrupted" in capsys.readouterr().out


def _listed_types(capsys: pytest.CaptureFixture[str]) -> set[str]:
    return {line.split()[2] for line in capsys.readouterr().out.splitlines()}


def test_type_takes_the_comma_list_the_tui_filter_takes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = Log()
    log.turn(1, "first", "ok")
    path = log.write(tmp_path / "session.jsonl")
    assert main(["events", str(path), "--type", "turn/start,turn/end"]) == 0
    assert _listed_types(capsys) == {"turn/start", "turn/end"}
    assert main(["events", str(path), "--type", "turn/, step/start", "--type", "!turn/end"]) == 0
    assert _listed_types(capsys) == {"turn/start", "step/start"}
    assert main(["events", str(path), "--type", "!assistant/,!step/,!turn/"]) == 0
    left = _listed_types(capsys)
    assert "user/message" in left and not {t for t in left if t.startswith(("assistant/", "step/", "turn/"))}


def test_a_turn_the_log_does_not_have_is_warned_of(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--turn 9`` on a log of one turn printed '(no matching events)' alone, as if turn 9 had only no events
    (found walking the CLI over the fixtures): the warning says which turns the log has."""
    log = Log()
    log.turn(1, "first", "ok")
    path = log.write(tmp_path / "session.jsonl")
    assert main(["events", str(path), "--turn", "9"]) == 0
    out, err = capsys.readouterr()
    assert out == "(no matching events)\n" and err == "tapedeck: --turn 9: the session has no turn 9 (its turns: 1)\n"
    assert main(["events", str(path), "--turn", "1", "--json"]) == 0
    assert capsys.readouterr().err == ""


def test_the_turns_named_in_the_warning_are_the_ones_the_log_has(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The warning named a log of turns 1, 2 and 5 as having 'turns: 1..5', turns 3 and 4 included (found reviewing
    1ba959a9): it names runs of turns as they are, and the first few runs of a long list."""
    log = Log()
    for n in (1, 2, 5):
        log.turn(n, "go", "ok")
    path = log.write(tmp_path / "session.jsonl")
    assert main(["events", str(path), "--turn", "3"]) == 0
    assert capsys.readouterr().err == "tapedeck: --turn 3: the session has no turn 3 (its turns: 1-2, 5)\n"
    assert number_runs(range(0, 40, 2)) == "0, 2, 4, 6, 8, 10, 12, 14, and 12 more"


def test_a_type_no_log_uses_is_warned_of_not_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A typo in ``--type`` matched nothing and said nothing: the warning names the nearest known type, and the
    listing still runs (a log may hold types tapedeck does not know)."""
    log = Log()
    log.turn(1, "first", "ok")
    path = log.write(tmp_path / "session.jsonl")
    assert main(["events", str(path), "--type", "tool/reslt,!turn/strat"]) == 0
    err = capsys.readouterr().err
    assert "'tool/reslt'" in err and "did you mean tool/result?" in err, err
    assert "'turn/strat'" in err and "did you mean turn/start?" in err, err
    # the nearest, not the first within two edits: 'tol/' offered goal/ (two edits, sorted first) over tool/ (one)
    assert main(["events", str(path), "--type", "tol/"]) == 0
    assert "did you mean tool/?" in capsys.readouterr().err
    for known in ("tool/result", "tool/", "tool*", "!turn/", "team/x", "tapedeck/host", "text-chunks"):
        assert main(["events", str(path), "--type", known]) == 0
        assert capsys.readouterr().err == "", known


def test_tui_filter_and_events_pick_the_same_types() -> None:
    from core.read.event_filter import EventFilter
    from core.read.type_select import TypeSelection

    names = ["tool/call", "tool/code-dispatch", "tool/code-dispatch-start", "assistant/chunk", "turn/end", "x"]
    for text in ("tool/code-dispatch", "tool/, !tool/call", "tool*,turn/end", "!assistant/chunk", ""):
        selection = TypeSelection.parse(text)
        assert EventFilter.parse(text, "", "", False, "").types == selection.items
        picked = {n for n in names if n in selection}
        assert picked == {n for n in names if EventFilter.parse(text, "", "", False, "").picks_type(n)}, text
    assert {n for n in names if n in TypeSelection.parse("tool/code-dispatch")} == {"tool/code-dispatch"}


ESCAPES = "\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[31mred\x9b0m"  # clipboard write, clear screen, colour, C1 CSI


def test_terminal_controls_in_log_text_are_shown_not_sent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A tool's coloured output or a hostile file the agent read must not drive the operator's terminal (set its
    clipboard, clear it): the one-line summaries of events, surface and sessions show control characters as
    visible pictures (␛, ␇) instead of writing them."""
    log = Log({**Log().header, "id": "esc-1"})
    log.add({"type": "session/title", "data": {"title": f"t{ESCAPES}"}})
    log.turn(1, f"prompt {ESCAPES}", f"out {ESCAPES}")
    path = log.write(tmp_path / "root" / "--w--" / "esc-1" / "session.jsonl")
    for argv in (["events", str(path)], ["surface", str(path)], ["sessions", str(tmp_path / "root")]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert not any(ord(c) < 32 and c != "\n" or 0x7F <= ord(c) <= 0x9F for c in out), (argv, out)
        assert "␛]52;c;" in out or argv[0] == "sessions", (argv, out)


def test_a_report_to_a_terminal_shows_controls_as_pictures_and_piped_keeps_its_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """expand and recall print a result as the model got it, and alerts, notes and inspect quote the log: on a
    terminal the escapes in that text are drawn (␛), through a pipe the bytes stay exact."""
    log = Log()
    log.turn(1, "run it", f"out {ESCAPES}")
    path = log.write(tmp_path / "session.jsonl")
    argv = ["expand", str(path), "--turn", "1", "--step", "1"]
    assert main(argv) == 0
    assert ESCAPES in capsys.readouterr().out  # piped: byte for byte
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert ESCAPES not in out and "out ␛]52;c;cHduZWQ=␇␛[2J" in out, out


def test_a_request_to_a_terminal_shows_controls_as_pictures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``request`` prints the messages a model got: their escapes are drawn on a terminal, kept through a pipe."""
    log = Log()
    log.turn(1, "run it", f"out {ESCAPES}")
    path = log.write(tmp_path / "session.jsonl")
    argv = ["request", str(path), "--turn", "1", "--step", "2"]
    assert main(argv) == 0
    assert ESCAPES in capsys.readouterr().out
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert ESCAPES not in out and "out ␛]52;c;cHduZWQ=␇␛[2J" in out, out


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_an_export_runs_no_control_of_the_log_s_piped_or_on_a_terminal(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``export`` to stdout, through a pipe (as to ``-o FILE``) or on a terminal: a document to read and share, so
    ``cat`` on it runs none of the log's escapes (Markdown and HTML draw them as pictures, JSON escapes them)."""
    log = Log()
    log.turn(1, "run it", f"out {ESCAPES}")
    path = log.write(tmp_path / "session.jsonl")
    argv = ["export", str(path), "--format", fmt]
    assert main(argv) == 0
    piped = capsys.readouterr().out
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(argv) == 0
    for out in (piped, capsys.readouterr().out):
        assert not any(ord(c) < 32 and c not in "\n\t" or 0x7F <= ord(c) <= 0x9F for c in out), out
        assert fmt == "json" or "out ␛]52;c;cHduZWQ=␇␛[2J␛[31mred�0m" in out, out


def test_a_log_that_names_no_model_says_so_in_reports_and_exports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No request header, no host event: the model is unknown, never Python's ``None/None`` (in a Markdown or HTML
    export shared with someone, in inspect and in a request's line)."""
    log = Log()
    log.turn(1, "run it", "done")
    path = log.write(tmp_path / "session.jsonl")
    for argv, said in ((["export", str(path), "--format", "md"], "- model: unknown ·"),
                       (["export", str(path), "--format", "html"], "<td>unknown</td>"),
                       (["inspect", str(path)], "  model unknown\n")):  # fmt: skip
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert said in out and "None" not in out, (argv, out)


@pytest.mark.parametrize("which", [["--all"], ["--turn", "1", "--step", "1"]])
def test_a_requests_heading_to_a_terminal_shows_controls_as_pictures(
    which: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The heading of each request (the provider and model a log names, its tools, usage and settings) is
    tapedeck's words about the request: the names it takes from the log are quoted, their controls as JSON escapes
    (c7745e3e: piped or not), never run."""
    text = (FIXTURES / "tool-call-turn.session.jsonl").read_text()
    path = tmp_path / "session.jsonl"
    path.write_text(text.replace('"deepseek-official"', orjson.dumps(f"p{ESCAPES}").decode()))
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["request", str(path), *which]) == 0
    out = capsys.readouterr().out
    assert ESCAPES not in out and "p\\u001b]52;c;cHduZWQ=\\u0007\\u001b[2J" in out, out
