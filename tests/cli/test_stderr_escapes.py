"""What tapedeck writes to stderr and in run's progress quotes the log (a session's id in ``alerts --exec``'s failure
and ``control``'s refusal, a model's error): its escapes come out as JSON escapes, on a terminal or not."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import orjson
import pytest

from core.cli import main
from core.shared.text import quoted
from tests.bridge.conftest import dsh_log, write_bridge
from tests.cli.test_events_cli import ESCAPES
from tests.conftest import FIXTURES

DRAWN = "␛]52;c;cHduZWQ=␇␛[2J"


def _hostile(tmp_path: Path) -> Path:
    """A DSH log whose session id holds escapes, whose bridge exited mid-turn (a ``host-died`` alert)."""
    log = dsh_log(tmp_path / "s", session_id=f"s-{ESCAPES}")
    write_bridge(log.parent, None, "exited")
    return log


@pytest.mark.parametrize("tty", [False, True])
def test_controls_refusal_quotes_the_ids_escapes_on_a_terminal_or_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tty: bool
) -> None:
    """Since 5359190 control quotes the session id it names (``core.shared.text.quoted``): its escapes come out as
    JSON escapes, redirected or not, so there is nothing left for a terminal to draw."""
    log = _hostile(tmp_path)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty)
    assert main(["control", str(log), "pause"]) == 3
    err = capsys.readouterr().err
    assert "s-\\u001b]52;c;cHduZWQ=\\u0007\\u001b[2J" in err and ESCAPES not in err and DRAWN not in err, err


@pytest.mark.parametrize("tty", [False, True])
def test_a_failed_exec_hook_quotes_the_ids_escapes_on_a_terminal_or_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tty: bool
) -> None:
    """The failure drew the id's escapes on a terminal and kept their bytes piped, where a newline in the id still
    forged a line; it quotes the id now (``core.shared.text.quoted``), as control does."""
    log = _hostile(tmp_path)
    lines = log.read_bytes().splitlines()
    turn_open = [line for line in lines if orjson.loads(line).get("type") != "turn/end"]
    log.write_bytes(b"\n".join(turn_open) + b"\n")  # the bridge exited in the middle of the turn
    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty)
    assert main(["alerts", str(log), "--exec", "exit 3"]) == 1
    err = capsys.readouterr().err
    assert "exit status 3" in err
    assert "s-\\u001b]52;c;cHduZWQ=\\u0007\\u001b[2J" in err and ESCAPES not in err and DRAWN not in err, err


@pytest.mark.parametrize("tty", [False, True])
def test_runs_progress_quotes_the_escapes_of_a_models_error_on_a_terminal_or_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tty: bool
) -> None:
    """11cbfd1 drew a model's error's escapes on a terminal and kept their bytes piped; a newline in it still forged
    a progress line either way. The line quotes the error now (``core.shared.text.quoted``), as control quotes an
    id: JSON escapes, redirected or not, nothing left for a terminal to act on or draw."""
    script = tmp_path / "script.json"
    error = {"message": f"bad {ESCAPES}", "code": "E"}  # what a hostile or broken endpoint may answer
    script.write_bytes(orjson.dumps({"responses": [{"finish": "error", "error": error}]}))
    (tmp_path / "ws").mkdir()
    monkeypatch.setattr(sys.stdout, "isatty", lambda: tty)
    code = main(["run", "task", "--provider", f"scripted:{script}", "--workspace", str(tmp_path / "ws"),
                 "--sessions-root", str(tmp_path / "root")])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1 and "turn 1 ended: error" in out
    assert "E: bad \\u001b]52;c;cHduZWQ=\\u0007\\u001b[2J" in out and ESCAPES not in out and DRAWN not in out, out


HOSTILE = "a\x1b]0;t\x07\nforged line\u202e"  # a directory's real name: an escape sequence, a newline, a BiDi override
ESCAPED = "a\\u001b]0;t\\u0007\\nforged line\\u202e"


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["run", "t", "--workspace", "{file}", "--sessions-root", "{tmp}/r"], "workspace {file} is not a directory"),
        (["run", "--resume", "nope", "--sessions-root", "{dir}"], "no session 'nope' under {dir}"),
        (["demo", "--no-tui", "--speed", "0", "--workspace", "{file}"], "--workspace {file} is not a directory"),
        (["status", "{log}", "--workspace", "{file}"], "--workspace {file}: not a directory"),
        (["route", "t", "--evidence", "{file}x"], "--evidence {file}x: cannot read (No such file or directory)"),
        (["bridge", "install", "{file}x"], "the DSH home {file}x does not exist;"),
        (["bridge", "install", "{file}"], "the DSH home {file} is not a directory"),
        (["sessions", "{dir}/gone"], "{dir}/gone: no such file or directory (give a sessions root,"),
    ],
    ids=["run-workspace", "run-resume", "demo", "status", "route", "bridge-missing", "bridge-file", "missing-root"],
)
def test_a_path_a_message_names_neither_forges_a_line_nor_acts_on_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    """These refusals named the path they were given as it is: a directory whose name holds a newline wrote a second,
    forged line on stderr, and its escape sequence reached the terminal raw when stderr is no terminal (retitling
    the one the user reads it in later). Each names the path as the other messages name one (quoted_path: whole,
    its controls as escapes), on one line."""
    from tui.cli import tui_commands

    (tmp_path / HOSTILE).mkdir()
    (tmp_path / HOSTILE / "f").write_text("")
    names = {"tmp": str(tmp_path), "dir": str(tmp_path / HOSTILE), "file": str(tmp_path / HOSTILE / "f"),
             "log": str(dsh_log(tmp_path / "s"))}  # fmt: skip
    assert main([a.format(**names) for a in argv], extra_commands=tui_commands()) == 2
    err = capsys.readouterr().err
    shown = {k: v.replace(HOSTILE, ESCAPED) for k, v in names.items()}
    assert err.startswith("tapedeck: ") and said.format(**shown) in err and err.count("\n") == 1, err
    assert not {"\x1b", "\x07", "\u202e"} & set(err), err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["sessions", "{root}"], "skipped {root}/{name}/s/session.jsonl: is a FIFO, not a session log file"),
        (["sessions", "{root}"], "skipped {root}/{name}/t/session.jsonl: a link to {root}/{name}/gone, which is not"),
        (["inspect", "{root}/{name}/s"], "{root}/{name}/s/session.jsonl: is a FIFO, not a session log file"),
        (["inspect", "{root}/{name}/t"], "{root}/{name}/t/session.jsonl: a link to {root}/{name}/gone, which is not"),
        (["inspect", "{root}/{name}/u"], "{root}/{name}/u: no such file or directory"),
        (["inspect", "{root}/{name}"], "{root}/{name}: no session.jsonl or session.jsonl.zstd in this directory"),
    ],
    ids=["sessions-fifo", "sessions-link", "fifo", "link", "missing", "no-log"],
)
def test_a_project_directory_named_to_forge_a_line_is_named_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    """The readers' notes and refusals (a FIFO or a link to nothing where a log should be, no log at all) named the
    path as it is: a project directory under a sessions root whose name holds a newline wrote a forged line among
    the notes of sessions, and its escape sequence went to a stderr that is no terminal raw. They name it as the
    other messages do (quoted_path)."""
    project = tmp_path / "root" / HOSTILE
    (project / "s").mkdir(parents=True)
    (project / "t").mkdir()
    os.mkfifo(project / "s" / "session.jsonl")
    os.symlink(project / "gone", project / "t" / "session.jsonl")
    names = {"root": str(tmp_path / "root"), "name": ESCAPED}
    main([a.format(root=names["root"], name=HOSTILE) for a in argv])
    err = capsys.readouterr().err
    assert f"tapedeck: {said.format(**names)}" in err and not {"\x1b", "\x07", "\u202e"} & set(err), err
    assert all(line.startswith("tapedeck: ") for line in err.splitlines()), err


def test_a_project_directory_given_for_a_root_is_named_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The note that a root given is one project's directory named it, and the commands that read it, as they are."""
    project = tmp_path / HOSTILE
    write_bridge(dsh_log(project / "s").parent, None, "exited")
    assert main(["sessions", str(project)]) == 0
    err = capsys.readouterr().err
    named = str(project).replace(HOSTILE, ESCAPED)
    assert err.startswith(f"tapedeck: {named} is one project's directory") and f"'{named}'/*/" in err, err
    assert err.count("\n") == 1 and not {"\x1b", "\x07", "\u202e"} & set(err), err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["inspect", "{dir}/e"], "{dir}/e/session.jsonl: empty log (no session header)"),
        (["inspect", "{dir}/j"], "{dir}/j/session.jsonl: line 1 is not valid JSON ("),
        (["inspect", "{dir}/h"], "{dir}/h/session.jsonl: line 1 is not a session header"),
        (["repair", "{dsh}"], "{dsh} is a DeepSeek Harness (DSH) session log, not one a tapedeck host started: "),
        (["run", "--resume", "{dsh}"], "{dsh} is a DeepSeek Harness (DSH) session log, not one a tapedeck host started, "),
        (["control", "{dsh}", "pause"], "{dsh}: a DeepSeek Harness session that no tapedeck bridge runs"),
        (["control", "{dir}/h", "pause"], "{dir}/h/session.jsonl: not a session log (its first line is no session"),
        (["export", "{dsh}", "-o", "{dsh}"], "{dsh} is the session log being exported"),
        (["export", "{dsh}", "-o", "{dir}/x.html"], "exported 19 rows to {dir}/x.html (redaction: "),
    ],
    ids=["empty", "not-json", "no-header", "repair", "resume", "control-dsh", "control-no-header", "export-log",
         "exported"],
)  # fmt: skip
def test_a_log_a_refusal_names_neither_forges_a_line_nor_acts_on_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    """The refusals that name the log itself (one the readers cannot read, a DSH log repair, resume or control will
    not touch, an export's -o that is the log) and the note naming the file an export went to named it as it is,
    where docs/cli.md says a refusal or a note naming a log writes it as quoted_path does: a directory whose name
    holds a newline forged a line on stderr, and its escape sequence went to a stderr that is no terminal raw."""
    where = tmp_path / HOSTILE
    for name, text in {"e": "", "j": '{"version":0', "h": "[1]\n"}.items():
        (where / name).mkdir(parents=True)
        (where / name / "session.jsonl").write_text(text)
    names = {"dir": str(where), "dsh": str(dsh_log(where / "s"))}
    assert main([a.format(**names) for a in argv]) in (0, 2, 3)
    err = capsys.readouterr().err
    shown = {k: v.replace(HOSTILE, ESCAPED) for k, v in names.items()}
    assert err.startswith(f"tapedeck: {said.format(**shown)}") and err.count("\n") == 1, err
    assert not {"\x1b", "\x07", "\u202e"} & set(err), err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["watch", "{dir}/gone"], "{dir}/gone: no such file or directory"),
        (["route", "t", "--config", "{dir}/bad.toml"], "{dir}/bad.toml: adaptive-agent-policy: "),
    ],
    ids=["watch", "config"],
)
def test_more_refusals_naming_a_file_neither_forge_a_line_nor_act_on_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    """watch's refusal of a log that is not there and a config file's validation error named the file as it is."""
    from tui.cli import tui_commands

    (tmp_path / HOSTILE).mkdir()
    (tmp_path / HOSTILE / "bad.toml").write_text("[adaptive.riskRouter]\nmaxEvidenceChars = 0\n")
    names = {"dir": str(tmp_path / HOSTILE)}
    assert main([a.format(**names) for a in argv], extra_commands=tui_commands()) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tapedeck: {said.format(dir=names['dir'].replace(HOSTILE, ESCAPED))}"), err
    assert err.count("\n") == 1 and not {"\x1b", "\x07", "\u202e"} & set(err), err


@pytest.mark.parametrize("case", ["not-json", "moved", "noted"])
def test_a_notes_sidecar_is_named_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    """The notes' refusals and notes named their sidecar as it is (a sidecar that is not JSON, the notes shown from
    the sidecar of a log moved away, the file a note went to), where the rest of the CLI names a file through
    quoted_path: a directory whose name holds a newline forged a line, and its escape sequence went out raw."""
    log = dsh_log(tmp_path / HOSTILE / "s")
    named = f"{str(log).replace(HOSTILE, ESCAPED)}.notes.json"
    if case == "not-json":
        Path(f"{log}.notes.json").write_text("{")
        assert main(["notes", str(log)]) == 2
        said = capsys.readouterr().err
        assert said.startswith(f"tapedeck: {named}: not JSON"), said
    elif case == "moved":
        assert main(["note", str(log), "--seq", "1", "first"]) == 0
        moved = tmp_path / "moved.jsonl"
        log.rename(moved)
        capsys.readouterr()
        assert main(["notes", str(moved)]) == 0
        said = capsys.readouterr().err
        assert said.startswith(f"tapedeck: these notes are in {named}, written for this session"), said
    else:
        assert main(["note", str(log), "--seq", "1", "first"]) == 0
        said = capsys.readouterr().out
        assert said == f"added a note at seq 1 ({named})\n", said
    assert said.count("\n") == 1 and not {"\x1b", "\x07", "\u202e"} & set(said), said


@pytest.mark.parametrize(
    ("text", "said"),
    [("[adaptive", "{file}: not valid TOML: "), (b"\xff", "{file}: not UTF-8 text: "), ("x" * (2 << 20), "{file}: larger than")],
    ids=["syntax", "not-utf8", "too-large"],
)
def test_a_config_file_that_cannot_be_read_is_named_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | bytes, said: str
) -> None:
    """A config file that cannot be read (bad syntax, not UTF-8, too large) was named as it is by the one reader of
    every such file (core.shared.parsers.load_document: the policy config, a script, the TUI's keymap and settings)."""
    file = tmp_path / HOSTILE / "c.toml"
    file.parent.mkdir()
    file.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert main(["route", "t", "--config", str(file)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tapedeck: {said.format(file=str(file).replace(HOSTILE, ESCAPED))}"), err
    assert err.count("\n") == 1 and not {"\x1b", "\x07", "\u202e"} & set(err), err


@pytest.mark.parametrize("command", ["inspect", "sessions", "run"])
def test_a_report_on_stdout_names_its_path_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """inspect's first line (the log), sessions' heading (the roots) and run's 'log' line named the path as it is,
    where bridge's report (6fd3138) and demo's lines (f48342d) name it through quoted_path: piped, a directory whose
    name holds a newline forged a line and its escape sequence went out raw."""
    root = tmp_path / HOSTILE
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)
    if command == "run":
        script = tmp_path / "script.json"
        script.write_bytes(orjson.dumps({"responses": [{"text": "done"}]}))
        (tmp_path / "ws").mkdir()
        main(["run", "task", "--provider", f"scripted:{script}", "--workspace", str(tmp_path / "ws"),
              "--sessions-root", str(root), "--session-id", "s1"])  # fmt: skip
        said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("log ")]
        assert said == [f"log {next(root.glob('*/s1/session.jsonl'))}".replace(HOSTILE, ESCAPED)], said
        return
    log = dsh_log(root / "p" / "s")
    assert main([command, str(log.parent if command == "inspect" else root)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    named = (str(log) if command == "inspect" else str(root)).replace(HOSTILE, ESCAPED)
    assert first.endswith(f"({named})") if command == "inspect" else first == f"1 session under {named}", first


def _named_hostile(root: Path) -> Path:
    """A DSH log under ``root/p/s`` whose header's id, cwd and parent, model, tool name and turn ending hold
    escapes and a line break."""
    text = (FIXTURES / "tool-call-turn.session.jsonl").read_text()
    hostile = orjson.dumps(f"{ESCAPES}\nforged").decode()[1:-1]
    for plain in ("e9421ff4-baae-4807-a7ea-fd8a65f2c897", "{{cwd}}", "deepseek-v4-flash", '"bash', '"completed'):
        text = text.replace(plain, plain + hostile)
    text = text.replace('"delegationDepth":0', f'"delegationDepth":1,"parentSession":"p{hostile}"', 1)
    (root / "p" / "s").mkdir(parents=True)
    (root / "p" / "s" / "session.jsonl").write_text(text)
    return root / "p" / "s" / "session.jsonl"


@pytest.mark.parametrize("tty", [False, True])
def test_inspect_quotes_the_names_it_takes_from_the_log_on_a_terminal_or_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tty: bool
) -> None:
    """inspect named the header's id, cwd and parent, the model, the tools and how each turn ended as the log wrote
    them; piped (``| less -R``, a model reading the report) their escape sequences went out raw and a newline in one
    forged a line of the report (the diagnostic on the relative cwd already quoted it). Each is quoted now as control
    quotes the id (``core.shared.text.quoted``), the cwd as a path (``quoted_path``): the same report on a terminal
    or not."""
    log = _named_hostile(tmp_path)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: tty)
    assert main(["inspect", str(log.parent)]) == 0
    out = capsys.readouterr().out
    escaped = quoted(f"{ESCAPES}\nforged")
    assert out.count(escaped) == 7 and not {"\x1b", "\x07"} & set(out) and DRAWN not in out, out
    assert len(out.splitlines()) == 11, out


@pytest.mark.parametrize(("command", "said"), [("cost", "no price for model deepseek-v4-flash"), ("sessions", "completed")])
def test_cost_and_sessions_quote_the_names_they_take_from_the_log_when_piped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, said: str
) -> None:
    """cost's note on a model it has no price for and sessions' column of how the last turn ended named the model
    and the end reason as the log wrote them: piped, the escapes went out raw and the newline broke the line (the
    table's row in two). They are quoted as inspect quotes them."""
    log = _named_hostile(tmp_path)
    assert main([command, str(log if command == "cost" else tmp_path)]) == 0
    out = capsys.readouterr().out
    assert said + quoted(f"{ESCAPES}\nforged") in out and not {"\x1b", "\x07", "\x9b"} & set(out), out
