"""The ``/prolong status`` report, live and rebuilt from logs, and the ``tapedeck status`` command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_rewind_support import HEADER, Log, tool_call

from core.cli import main
from core.policies.prolong import (
    ProlongMemory,
    StatusReport,
    render_status,
    session_workspace,
    status_from_log,
)
from core.policies.prolong_config import ProlongConfig
from core.read.load import load_session
from tests.conftest import FIXTURES as FIXTURE_DIR

GREP_LOG = '{"command":"grep -n KeyError log.txt"}'
FIXTURES = str(FIXTURE_DIR)


def denied_session(session_id: str = "sess-status") -> Log:
    log = Log(session_id)
    log.turn_start()
    log.user("what failed earlier?")
    log.assistant(tool_call("c1", "bash", GREP_LOG))
    log.call("c1", "bash", GREP_LOG)
    log.result("c1", "Error: rejected by policy", is_error=True)
    log.turn_end()
    return log


def write_session(log: Log, workspace: Path, directory: Path) -> Path:
    path = directory / "session.jsonl"
    header = HEADER | {"id": log.session.id, "cwd": str(workspace)}
    path.write_text("\n".join(json.dumps(e) for e in [header, *log.session.events]) + "\n")
    return path


def run_memory(log: Log, workspace: Path, config: ProlongConfig | None = None) -> ProlongMemory:
    memory = ProlongMemory(workspace, config or ProlongConfig(), log.session.id)
    for event in log.session.events:
        memory.observe(event)
    memory.close(10)
    return memory


def test_live_status_text(tmp_path: Path) -> None:
    memory = run_memory(denied_session(), tmp_path)
    assert render_status(memory.report()) == "\n".join(
        [
            "prolong-memory status",
            "log file: log.txt (per-session workspace)",
            "window: full",
            "session sess-status",
            f"path: {tmp_path / 'log.txt'}",
            "writable=yes sections=6 lastSeq=5",
            "denied tool calls referencing the log: 1",
            f"  seq 4 bash c1: {GREP_LOG} (Error: rejected by policy)",
            "hint: suspect a tools/pre-execute policy plugin: the agent's own calls touching the log were "
            "refused before they ran",
        ]
    )


def test_a_failed_probe_points_at_a_sandbox_plugin(tmp_path: Path) -> None:
    def refuse(path: Path, text: str, replace: bool) -> None:
        raise PermissionError("sandbox: write denied")

    log = Log("sess-sandboxed")
    log.turn_start()
    memory = ProlongMemory(
        tmp_path, ProlongConfig(log_window=5), log.session.id, write=refuse, warn=lambda _: None
    )
    memory.observe(log.session.events[0])
    memory.close(10)
    text = render_status(memory.report())
    assert "window: last 5 sections" in text
    assert "writable=NO sections=0 lastSeq=-" in text
    assert (
        "hint: suspect a permission/sandbox plugin: the write probe failed, so the host itself cannot write the log "
        "file" in text
    )
    assert "tools/pre-execute" not in text


def test_status_before_any_event_and_with_the_log_disabled(tmp_path: Path) -> None:
    idle = ProlongMemory(tmp_path, ProlongConfig(), "sess-idle")
    assert "writable=pending sections=0 lastSeq=-" in render_status(idle.report())
    off = ProlongMemory(tmp_path, ProlongConfig(log_window=-1), "sess-off")
    text = render_status(off.report())
    assert "window: disabled" in text and "writable=disabled" in text
    assert render_status(StatusReport(ProlongConfig())).endswith("no session observed yet")


def test_status_rebuilt_from_the_logs_matches_the_live_one(tmp_path: Path) -> None:
    log = denied_session()
    live = run_memory(log, tmp_path)
    rebuilt = status_from_log(log.session, tmp_path, ProlongConfig())
    assert render_status(rebuilt) == render_status(live.report())


def hosted_session(session_id: str = "sess-status") -> Log:
    """``denied_session`` as a tapedeck host records it (its host runs prolong and its write probe)."""
    log = denied_session(session_id)
    log.add("tapedeck/host", {"pid": 1, "workspace": "/w"}, ignorable=True)
    return log


def test_rebuilt_status_without_a_log_file_reports_it_unwritable(tmp_path: Path) -> None:
    text = render_status(status_from_log(hosted_session().session, tmp_path, ProlongConfig()))
    assert "writable=NO sections=0 lastSeq=-" in text
    assert (
        "note: no log file at this path: prolong was not running for this session, or its probe failed"
        in text
    )
    assert "suspect a permission/sandbox plugin" in text
    run_memory(denied_session("sess-other"), tmp_path)
    text = render_status(status_from_log(hosted_session().session, tmp_path, ProlongConfig()))
    assert "note: the log file holds no probe for this session" in text


def test_a_dsh_log_says_no_probe_ran(tmp_path: Path) -> None:
    """No tapedeck host ran the session, so no write probe ran: nothing points at a sandbox plugin."""
    report = status_from_log(denied_session().session, tmp_path, ProlongConfig())
    text = render_status(report)
    assert "writable=unknown (no probe ran)" in text
    assert "note: no write probe ran: no tapedeck host ran this session" in text
    assert "probe failed" not in text and "sandbox" not in text
    assert report.sessions[0].to_dict()["writable"] is None
    run_memory(denied_session("sess-other"), tmp_path)
    assert "no write probe ran" in render_status(status_from_log(denied_session().session, tmp_path, ProlongConfig()))


def test_cli_status_text_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    log = denied_session()
    run_memory(log, workspace)
    path = write_session(log, workspace, tmp_path)
    assert main(["status", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("prolong-memory status\n")
    assert "writable=yes sections=6 lastSeq=5" in out
    assert main(["status", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["logFile"] == "log.txt" and data["window"] == "full"
    (session,) = data["sessions"]
    assert (session["session"], session["writable"], session["sections"], session["lastSeq"]) == (
        "sess-status",
        True,
        6,
        5,
    )
    assert session["denied"] == 1 and session["recentDenied"][0]["callId"] == "c1"
    assert session["hints"] and "pre-execute" in session["hints"][0]


def test_cli_status_with_overrides_and_an_explicit_workspace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = tmp_path / "elsewhere"
    workspace.mkdir()
    log = denied_session()
    run_memory(log, workspace, ProlongConfig(log_file="memory/run.txt", log_window=2))
    path = write_session(log, tmp_path, tmp_path)
    assert (
        main(
            [
                "status",
                str(path),
                "--workspace",
                str(workspace),
                "--log-file",
                "memory/run.txt",
                "--log-window",
                "2",
                "--json",
            ]
        )
        == 0
    )
    (session,) = json.loads(capsys.readouterr().out)["sessions"]
    assert session["path"] == str(workspace / "memory" / "run.txt")
    assert (session["writable"], session["sections"], session["lastSeq"], session["denied"]) == (
        True,
        2,
        5,
        0,
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--log-file", "../outside.txt"], "prolong.logFile must stay inside the workspace"),
        (["--log-window", "-3"], "prolong.logWindow must be"),
        (["--workspace", "/no/such/dir"], "--workspace /no/such/dir: not a directory"),
    ],
)
def test_cli_status_rejects_bad_input_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    path = write_session(denied_session(), tmp_path, tmp_path)
    assert main(["status", str(path), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tapedeck: ") and message in err


@pytest.mark.parametrize(
    ("cwd", "said"),
    [("rel\x1b[2J" + "x" * 1000, '("rel\\u001b[2J' + "x" * 72 + '…" (1,007 characters))'), (None, "(null)"), (7, "(7)")],
    ids=["long-with-a-control", "null", "number"],
)
def test_cli_status_quotes_a_header_cwd_it_cannot_use_as_the_json_the_log_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cwd: object, said: str
) -> None:
    """A header's cwd that is no absolute path was quoted as Python writes it, whole (1,000 characters on one line
    of stderr, None for null), where the header's own warning shows it as the log's JSON (``shown``)."""
    header, *rest = (Path(FIXTURES) / "tool-call-turn.session.jsonl").read_bytes().splitlines(True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(json.dumps({**json.loads(header), "cwd": cwd}).encode() + b"\n" + b"".join(rest))
    assert main(["status", str(path)]) == 2
    assert capsys.readouterr().err == (
        "tapedeck: this session names no workspace: no tapedeck/host event names one, and the header's cwd "
        f"{said} is not an absolute path; pass --workspace DIR\n"
    )


def test_cli_status_on_a_fixture_without_a_real_cwd_asks_for_a_workspace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = f"{FIXTURES}/tool-call-turn.session.jsonl"
    assert main(["status", fixture]) == 2
    assert "pass --workspace DIR" in capsys.readouterr().err
    assert main(["status", fixture, "--workspace", str(tmp_path), "--json"]) == 0
    (session,) = json.loads(capsys.readouterr().out)["sessions"]
    assert session["session"] == load_session(fixture).id and session["writable"] is None
    assert session["probed"] is False  # DSH wrote the log: no tapedeck host ran a write probe


def _block(workspace: Path, how: str) -> str:
    """Put something where the prolong log file should be; returns the configured ``prolong.logFile``."""
    if how == "directory":
        (workspace / "log.txt").mkdir()
    elif how == "symlink":
        (workspace.parent / "elsewhere.txt").write_text("")
        (workspace / "log.txt").symlink_to(workspace.parent / "elsewhere.txt")
    else:  # a file where the log file's directory should be
        (workspace / "mem").write_text("not a directory")
        return "mem/log.txt"
    return "log.txt"


@pytest.mark.parametrize("how", ["directory", "symlink", "file"])
def test_cli_status_of_a_host_whose_log_file_is_blocked_says_writable_no(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    from core.control.config import validate_config
    from core.host.loop import AgentHost, HostOptions
    from core.host.providers.scripted import ScriptedModel

    workspace = tmp_path / "ws"
    workspace.mkdir()
    log_file = _block(workspace, how)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "m", "responses": [{"text": "ok"}]}))
    config = validate_config({"prolong": {"logFile": log_file}})
    host = AgentHost.create(tmp_path / "root", ScriptedModel(script), config,
                            HostOptions(workspace=workspace, progress=lambda _: None), tasks=["hello"])  # fmt: skip
    host.run()
    host.close()
    capsys.readouterr()
    assert main(["status", str(host.writer.path)]) == 0
    out = capsys.readouterr().out
    assert "writable=NO sections=0 lastSeq=-" in out, out
    assert "note: the log file cannot be read" in out
    assert "hint: suspect a permission/sandbox plugin" in out
    assert main(["status", str(host.writer.path), "--json"]) == 0
    [session] = json.loads(capsys.readouterr().out)["sessions"]
    assert session["writable"] is False and session["hints"]


def test_status_reads_the_log_file_of_the_workspace_the_session_was_last_run_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A session resumed with ``--relocate`` runs on in another workspace, where its host keeps prolong's log file;
    its header's cwd and its first ``tapedeck/host`` event still name the first one. ``tapedeck status`` read the
    header's and the Prolong screen the first host event's, so both reported the old workspace's log file (none)."""
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    log = Log("sess-moved")
    log.add("tapedeck/host", {"pid": 1, "workspace": str(old)}, ignorable=True)
    for event in denied_session("sess-moved").session.events:
        log.add(event["type"], event["data"], **{k: v for k, v in event.items() if k not in ("type", "data", "seq")})
    log.add("tapedeck/host", {"pid": 2, "workspace": str(new), "resumed": True}, ignorable=True)
    run_memory(log, new)
    path = write_session(log, old, tmp_path)
    assert session_workspace(load_session(path)) == new
    assert main(["status", str(path), "--json"]) == 0
    (status,) = json.loads(capsys.readouterr().out)["sessions"]
    assert (status["path"], status["writable"]) == (str(new / "log.txt"), True)


def test_status_help_names_the_workspace_it_reads_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    """``status --help`` said --workspace defaults to the header's cwd: the session's last host event's workspace
    (the one above) comes first. Found walking every command's --help."""
    with pytest.raises(SystemExit):
        main(["status", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: the one the session last ran in: its newest tapedeck/host event's, else the header's cwd)" in text


def test_what_the_log_names_stays_on_its_line_of_the_report(tmp_path: Path) -> None:
    """The report wrote a denied call's arguments, tool and call id, its refusal and the session's id as the log held
    them: arguments a model sent as indented JSON broke one denial over several lines, and a newline or an escape
    sequence in an id forged a line of the report ('writable=yes') and, piped, acted on the terminal. Each is quoted
    (core.shared.text.quoted), an ordinary one as it is (test_live_status_text)."""
    arguments = '{\n  "command": "grep -n KeyError log.txt"\n}'
    log = Log("sess\nwritable=yes\x1b[2J")
    log.turn_start()
    log.assistant(tool_call("c\n1", "ba\x1bsh", arguments))
    log.call("c\n1", "ba\x1bsh", arguments)
    log.result("c\n1", "Error: \x1b]0;t\x07 refused", is_error=True)
    log.turn_end()
    text = render_status(status_from_log(log.session, tmp_path, ProlongConfig()))
    assert "session sess\\nwritable=yes\\u001b[2J\n" in text
    assert '  seq 3 ba\\u001bsh c\\n1: {\\n  "command": "grep -n KeyError log.txt"\\n} (Error: \\u001b]0;t\\u0007 refused)\n' in text
    assert "\x1b" not in text and "\x07" not in text and "\nwritable=yes\n" not in text, text


def test_the_log_file_a_logged_config_names_stays_on_its_line_of_the_report(tmp_path: Path) -> None:
    """The report quotes the ``path:`` line (the log file under the workspace), but its ``log file:`` line, and the
    notice of a session whose status command is off, wrote ``prolong.logFile`` as the config held it; that config is
    the one the log records (a tapedeck host's ``tapedeck/host`` event), and a name holding a newline and an escape
    sequence passes its check: it forged a line of the report ('writable=yes') and, piped, cleared the terminal."""
    from core.policies.prolong import render_status_off

    config = ProlongConfig(log_file="log.txt\nwritable=yes\x1b[2J")
    named = "log.txt\\nwritable=yes\\u001b[2J"
    text = render_status(status_from_log(denied_session().session, tmp_path, config))
    off = render_status_off(config)
    for report in (text, off):
        assert f"log file: {named} (per-session workspace)\n" in report, report
        assert "\x1b" not in report and "\nwritable=yes" not in report, report
