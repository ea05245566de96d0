"""``tapedeck run --resume`` picks the right session and workspace; ``tapedeck repair`` mends a damaged log."""

from __future__ import annotations

import argparse
import errno
import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.cli import build_parser, main
from core.cli.host import _resume_command
from core.log.layout import default_sessions_root, log_path
from core.log.reader import read_log
from core.log.writer import LOCK_NAME, SessionWriter
from core.read.load import load_session
from core.shared.text import quoted
from tests.conftest import Processes


def _script(tmp_path: Path) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"responses": [{"toolCalls": [{"name": "write_file", "arguments": {
        "path": "out.txt", "content": "hi"}}]}, {"text": "done"}]}))  # fmt: skip
    return f"scripted:{path}"


def _start_and_crash(tmp_path: Path, workspace: Path, session_id: str = "s1") -> Path:
    """A session whose only turn is open (the host died right after the prompt)."""
    workspace.mkdir(parents=True, exist_ok=True)
    root = tmp_path / "root"
    code = main(["run", "task", "--provider", _script(tmp_path), "--workspace", str(workspace),
                 "--sessions-root", str(root), "--session-id", session_id])  # fmt: skip
    assert code == 0
    log = log_path(root, str(workspace.resolve()), session_id, False)
    lines = log.read_bytes().splitlines(keepends=True)
    start = next(n for n, line in enumerate(lines) if b'"user/message"' in line)
    log.write_bytes(b"".join(lines[: start + 1]))
    (workspace / "out.txt").unlink()
    return log


def _resume(tmp_path: Path, *extra: str) -> int:
    return main(["run", "--resume", "s1", "--provider", _script(tmp_path),
                 "--sessions-root", str(tmp_path / "root"), *extra])  # fmt: skip


def test_resume_works_in_the_workspace_the_log_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    _start_and_crash(tmp_path, workspace)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    assert _resume(tmp_path) == 0

    assert (workspace / "out.txt").read_text() == "hi" and not (elsewhere / "out.txt").exists()


def test_resume_refuses_a_different_workspace_unless_relocated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = tmp_path / "ws"
    log = _start_and_crash(tmp_path, workspace)
    other = tmp_path / "other"
    other.mkdir()
    before = log.read_bytes()

    assert _resume(tmp_path, "--workspace", str(other)) == 2
    err = capsys.readouterr().err
    assert str(workspace.resolve()) in err and "--relocate" in err
    assert log.read_bytes() == before

    assert _resume(tmp_path, "--workspace", str(other), "--relocate") == 0
    assert (other / "out.txt").read_text() == "hi" and not (workspace / "out.txt").exists()
    hosts = [e["data"] for e in read_log(log).events if e["type"] == "tapedeck/host"]
    assert hosts[-1]["workspace"] == str(other.resolve())


def test_resume_refuses_an_id_two_sessions_share(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = _start_and_crash(tmp_path, tmp_path / "ws1")
    second = _start_and_crash(tmp_path, tmp_path / "ws2")
    before = (first.read_bytes(), second.read_bytes())

    assert _resume(tmp_path) == 2

    err = capsys.readouterr().err
    assert "2 sessions" in err and str(first) in err and str(second) in err
    assert (first.read_bytes(), second.read_bytes()) == before


@pytest.mark.parametrize("damaged", [b'"step/start"', b'"tapedeck/host"'])  # the host's own event lost too
def test_repair_command_mends_a_damaged_log_so_it_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damaged: bytes
) -> None:
    log = _start_and_crash(tmp_path, tmp_path / "ws")
    lines = log.read_bytes().splitlines(keepends=True)
    step = next(n for n, line in enumerate(lines) if damaged in line)
    lines[step] = b"\x00garbage\n"
    log.write_bytes(b"".join(lines))

    assert _resume(tmp_path) == 2
    assert f"tapedeck repair {log}" in capsys.readouterr().err

    assert main(["repair", str(log), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [h["seqs"] for h in report["holes"]] == [[step - 1]] and Path(report["backup"]).exists()
    assert _resume(tmp_path) == 0
    session = load_session(log)
    assert [t.status for t in session.turns.values()] == ["completed"]
    writer, _ = SessionWriter.resume(log)  # intact, and free again
    writer.close()


def test_resume_names_a_recorded_workspace_that_is_gone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workspace = tmp_path / "ws"
    _start_and_crash(tmp_path, workspace)
    workspace.rename(tmp_path / "moved")

    assert _resume(tmp_path) == 2

    err = capsys.readouterr().err
    assert str(workspace.resolve()) in err and "--relocate" in err


def test_resume_by_the_session_directory(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    log = _start_and_crash(tmp_path, workspace)

    assert main(["run", "--resume", str(log.parent), "--provider", _script(tmp_path)]) == 0

    assert (workspace / "out.txt").read_text() == "hi"


def test_resume_refuses_a_fifo_where_the_log_should_be_without_waiting_on_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "s" / "session.jsonl"
    fifo.parent.mkdir()
    os.mkfifo(fifo)  # opened for writing, it would wait for a reader forever

    assert main(["run", "--resume", str(fifo), "--provider", _script(tmp_path)]) == 2

    assert "a FIFO" in capsys.readouterr().err


@pytest.mark.parametrize(("option", "value"), [("--pace", "inf"), ("--pace", "-1"), ("--chunk-delay", "-1"),
                                               ("--chunk-delay", "nan")])  # fmt: skip
def test_run_refuses_a_delay_it_cannot_wait_before_starting_a_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    (tmp_path / "ws").mkdir()
    code = main(["run", "task", "--provider", _script(tmp_path), "--workspace", str(tmp_path / "ws"),
                 "--sessions-root", str(tmp_path / "root"), option, value])  # fmt: skip

    assert code == 2 and f"{option} must be a finite number of seconds, 0 or more" in capsys.readouterr().err
    assert not (tmp_path / "root").exists()


@pytest.mark.parametrize("tasks", [5, "one task", ["a", 2]])
def test_resume_refuses_a_log_whose_recorded_tasks_are_not_texts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tasks: object
) -> None:
    log = _start_and_crash(tmp_path, tmp_path / "ws")
    lines = log.read_bytes().splitlines(keepends=True)
    host = json.loads(lines[1])
    host["data"]["tasks"] = tasks  # changed by hand
    lines[1] = json.dumps(host).encode() + b"\n"
    log.write_bytes(b"".join(lines))
    before = log.read_bytes()

    assert _resume(tmp_path) == 2

    assert "tasks" in capsys.readouterr().err and log.read_bytes() == before


def test_repair_again_after_a_repair_killed_midway_keeps_both_copies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _start_and_crash(tmp_path, tmp_path / "ws")
    lines = log.read_bytes().splitlines(keepends=True)
    lines[2] = b"\x00garbage\n"
    log.write_bytes(b"".join(lines))
    monkeypatch.setattr("core.log.repair.time.strftime", lambda *_: "20261205T120000")  # within one second
    os.link(log, log.with_name(f"{log.name}.damaged-20261205T120000"))  # what the killed repair left
    capsys.readouterr()

    assert main(["repair", str(log), "--json"]) == 0

    backup = Path(json.loads(capsys.readouterr().out)["backup"])
    assert backup.read_bytes().startswith(lines[0]) and b"\x00garbage" in backup.read_bytes()
    assert _resume(tmp_path) == 0


@pytest.mark.parametrize("extra", [["--zstd"], ["--session-id", "other"]])
def test_resume_refuses_the_options_that_only_shape_a_new_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    log = _start_and_crash(tmp_path, tmp_path / "ws")
    before = log.read_bytes()

    assert _resume(tmp_path, *extra) == 2

    assert f"{extra[0]} names a new session's log" in capsys.readouterr().err and log.read_bytes() == before


def test_run_names_a_sessions_root_it_cannot_make_a_session_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ws").mkdir()
    root = tmp_path / "a-file"
    root.write_text("")

    code = main(["run", "task", "--provider", _script(tmp_path), "--workspace", str(tmp_path / "ws"),
                 "--sessions-root", str(root)])  # fmt: skip

    err = capsys.readouterr().err
    assert code == 2 and "cannot create the session directory" in err and str(root) in err, err


def _dsh_session(fixtures_dir: Path, tmp_path: Path, zstd: bool) -> Path:
    """A copy of a real DSH session under a sessions root, as DSH lays it out."""
    log = log_path(tmp_path / "root", "/work/project", "228b7b82-84ed-49b7-a567-981c03b28c77", zstd)
    log.parent.mkdir(parents=True)
    data = (fixtures_dir / "multi-turn.session.jsonl").read_bytes()
    if zstd:
        import zstandard

        data = zstandard.ZstdCompressor().compress(data)
    log.write_bytes(data)
    return log


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize(
    "how", [["LOG"], ["LOG", "--relocate", "--workspace", "WS"], ["ID", "--relocate", "--workspace", "WS"]]
)
def test_resume_refuses_a_dsh_session_log_and_leaves_it_as_it_was(
    fixtures_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], zstd: bool, how: list[str]
) -> None:
    """tapedeck's host never writes into a log DSH wrote: it says what the log is and what steers it instead."""
    log = _dsh_session(fixtures_dir, tmp_path, zstd)
    (tmp_path / "ws").mkdir()
    before = {p.name: p.read_bytes() for p in log.parent.iterdir()}
    given = {"LOG": str(log), "ID": "228b7b82-84ed-49b7-a567-981c03b28c77", "WS": str(tmp_path / "ws")}

    code = main(["run", "--resume", *(given.get(a, a) for a in how), "--provider", _script(tmp_path),
                 "--sessions-root", str(tmp_path / "root")])  # fmt: skip

    err = capsys.readouterr().err
    assert code == 2 and "a DeepSeek Harness (DSH) session log" in err and "tapedeck bridge install" in err, err
    assert {p.name: p.read_bytes() for p in log.parent.iterdir()} == before
    assert list((tmp_path / "ws").iterdir()) == []


@pytest.mark.parametrize("task", ["", "  \n\t"])
def test_run_refuses_an_empty_task_before_starting_a_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], task: str
) -> None:
    """An empty TASK (``tapedeck run "$TASK"`` with TASK unset) would send the model a turn with nothing to do."""
    (tmp_path / "ws").mkdir()
    code = main(["run", "first", task, "--provider", _script(tmp_path), "--workspace", str(tmp_path / "ws"),
                 "--sessions-root", str(tmp_path / "root")])  # fmt: skip

    assert code == 2 and "TASK 2 is empty" in capsys.readouterr().err
    assert not (tmp_path / "root").exists()


def test_repair_refuses_a_dsh_session_log_and_leaves_it_as_it_was(
    fixtures_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A torn or garbled line is how a log DSH is writing looks mid-write: tapedeck never rewrites a DSH log."""
    log = _dsh_session(fixtures_dir, tmp_path, zstd=False)
    lines = log.read_bytes().splitlines(keepends=True)
    lines[5] = b"garbage\n"
    log.write_bytes(b"".join(lines) + b'{"type":"step/st')
    before = {p.name: p.read_bytes() for p in log.parent.iterdir()}

    code = main(["repair", str(log)])

    err = capsys.readouterr().err
    assert code == 2 and "a DeepSeek Harness (DSH) session log" in err and "nothing was changed" in err, err
    assert {p.name: p.read_bytes() for p in log.parent.iterdir()} == before


@pytest.mark.parametrize("kind", ["link", "fifo", "dir"])
def test_resume_refuses_a_writer_lock_file_that_is_no_plain_file_and_touches_nothing_through_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """The lock file is truncated and rewritten by each writer: through a link it would clobber the file it names."""
    log = _start_and_crash(tmp_path, tmp_path / "ws")
    lock = log.parent / LOCK_NAME
    lock.unlink()
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    if kind == "link":
        lock.symlink_to(victim)
    elif kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.mkdir()
    before = log.read_bytes()

    assert _resume(tmp_path) == 2

    err = capsys.readouterr().err
    assert str(lock) in err and "Traceback" not in err and err.count("\n") == 1, err
    assert victim.read_text() == "keep me" and log.read_bytes() == before


@pytest.mark.parametrize("session_id", ["", " "])
def test_run_refuses_an_empty_session_id_instead_of_making_up_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], session_id: str
) -> None:
    (tmp_path / "ws").mkdir()
    code = main(["run", "task", "--provider", _script(tmp_path), "--workspace", str(tmp_path / "ws"),
                 "--sessions-root", str(tmp_path / "root"), "--session-id", session_id])  # fmt: skip

    assert code == 2 and "--session-id" in capsys.readouterr().err
    assert not (tmp_path / "root").exists()


@pytest.mark.parametrize(("option", "value"), [("--base-url", ""), ("--base-url", " "), ("--model", ""), ("--model", " ")])
def test_run_refuses_an_empty_endpoint_or_model_instead_of_taking_deepseeks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    """'--base-url "$MY_URL"' with the variable unset is '': it was taken for no --base-url, so the run went to
    DeepSeek's endpoint with the API key meant for another (and '--model ""' to DeepSeek's model); both are refused
    before anything starts."""
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "ws").mkdir()
    code = main(["run", "task", "--workspace", str(tmp_path / "ws"), "--sessions-root", str(tmp_path / "root"),
                 option, value])  # fmt: skip

    assert code == 2 and f"{option} is empty" in capsys.readouterr().err
    assert not (tmp_path / "root").exists()


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("nope", "no session 'nope' under"),
        ("DSH", "a DeepSeek Harness (DSH) session log"),
        ("  ", "--resume is empty"),  # '' is refused by the parser (tests/cli/test_help_and_errors.py)
    ],
)
def test_resume_names_what_is_wrong_with_its_target_before_asking_for_a_model_key(
    fixtures_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    target: str, says: str,
) -> None:  # fmt: skip
    """Without an API key, a resume of a session that is not there (or that DSH wrote) asked for a key first."""
    for key in ("DEEPSEEK_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    log = _dsh_session(fixtures_dir, tmp_path, False)
    code = main(["run", "--resume", str(log) if target == "DSH" else target, "--sessions-root", str(tmp_path / "root")])
    err = capsys.readouterr().err
    assert code == 2 and says in err and "API key" not in err, err


def test_a_long_resume_id_that_names_no_session_is_clipped_in_the_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 5,000-character --resume id was quoted whole in 'no session … under ROOT'; its start is, marked cut."""
    code = main(["run", "--resume", "x" * 5000, "--sessions-root", str(tmp_path / "root")])
    err = capsys.readouterr().err
    assert code == 2 and "no session 'xxxxxxxx" in err and "…' under " in err and len(err) < 300, err


def test_a_run_whose_log_is_cut_under_it_exits_2_and_the_cut_log_resumes(tmp_path: Path, processes: Processes) -> None:
    """As README and run --help say: the host stops (exit 2) and appends nothing more; the cut log resumes."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    root = tmp_path / "root"
    run = processes.start(
        [sys.executable, "-m", "core.cli", "run", "task", "--provider", _script(tmp_path), "--workspace", str(workspace),
         "--sessions-root", str(root), "--session-id", "s1", "--pace", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    log = log_path(root, str(workspace.resolve()), "s1", False)
    deadline = time.monotonic() + 60
    while not (log.exists() and b'"user/message"' in log.read_bytes()):
        assert time.monotonic() < deadline and run.poll() is None, "the host did not start its turn"
        time.sleep(0.05)
    with log.open("r+b") as f:
        f.truncate(log.stat().st_size - 10)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 2 and "was truncated from" in err and "nothing more is appended" in err, err
    assert "`tapedeck run --resume` takes the log as it is now" in err, err  # what to do next, which it never said
    assert _resume(tmp_path) == 0
    assert (workspace / "out.txt").read_text() == "hi"


def test_a_host_json_that_cannot_be_replaced_leaves_no_temporary_file(tmp_path: Path) -> None:
    """A directory in host.json's place: the rename failed and the temporary file stayed beside the log for good
    (the live host's own pid: no later resume removed it). It is removed at once; the error still reaches the host."""
    from core.control.host_state import state_path, write_state

    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    log.touch()
    (state_path(log) / "keep").mkdir(parents=True)
    with pytest.raises(IsADirectoryError):
        write_state(log, "running", os.getpid(), 1)
    assert sorted(p.name for p in log.parent.iterdir()) == ["host.json", "session.jsonl"]


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ([os.fsdecode(b"fix caf\xe9")], "TASK 1 is not valid UTF-8"),
        (["ok", "--session-id", os.fsdecode(b"id\xe9")], "--session-id is not valid UTF-8"),
        (["ok", "--model", os.fsdecode(b"m\xe9")], "--model is not valid UTF-8"),
        (["ok", "--workspace", "{bad}"], "--workspace {bad} is not valid UTF-8"),
    ],
)
def test_run_refuses_text_the_log_cannot_record_before_starting_a_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], said: str
) -> None:
    """Bytes that are no UTF-8 (a Latin-1 terminal, a directory named so) went into the header or the prompt: a
    traceback (TypeError: str is not valid UTF-8), exit 1, and a session directory left holding only a lock file."""
    bad = tmp_path / os.fsdecode(b"ws\xe9")
    bad.mkdir()
    (tmp_path / "ws").mkdir()
    argv = ["run", "--provider", _script(tmp_path), "--workspace", str(tmp_path / "ws"),
            "--sessions-root", str(tmp_path / "root"), *(a.format(bad=bad) for a in extra)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    shown = quoted(os.fsencode(bad).decode(errors="backslashreplace"))  # as the message shows it: ws\xe9, cut at 80
    assert said.format(bad=shown) in err and "check the terminal's encoding" in err, err
    assert not (tmp_path / "root").exists()


def test_run_quotes_a_workspace_that_is_not_utf8_cut_and_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A --workspace that is not UTF-8 was named in the refusal whole and as it is: a directory named with an escape
    sequence and 200 characters more went to stderr raw and in full; it is quoted as the other refusals quote what
    they were given (cut at 80 characters, controls as escapes, the byte that is no UTF-8 as \\xNN)."""
    bad = tmp_path / os.fsdecode(b"ws\xe9\x1b[2J" + b"k" * 200)
    bad.mkdir()
    argv = ["run", "--provider", _script(tmp_path), "--workspace", str(bad), "--sessions-root", str(tmp_path / "r"), "ok"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("tapedeck: --workspace /") and err.endswith("… is not valid UTF-8 (check the terminal's encoding)\n")
    assert len(err) < 200 and "\x1b" not in err and err.count("\n") == 1, err
    assert not (tmp_path / "r").exists()


def test_a_run_whose_disk_fills_up_stops_in_one_line_and_resumes_once_there_is_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A full disk under the log (ENOSPC) ended the run with a traceback and exit 1, the exit of a turn that ended
    otherwise; it stops now with exit 2 and a line saying what happened, its log holding only whole events."""
    from core.log import writer

    whole = writer.write_all
    room = [3]  # batches that still fit

    def full_disk(fd: int, blob: bytes) -> None:
        room[0] -= 1
        if room[0] < 0:
            whole(fd, blob[: len(blob) // 2])  # the half the disk took
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        whole(fd, blob)

    monkeypatch.setattr(writer, "write_all", full_disk)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    code = main(["run", "task", "--provider", _script(tmp_path), "--workspace", str(workspace),
                 "--sessions-root", str(tmp_path / "root"), "--session-id", "s1"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.splitlines()) == 1, err
    assert "No space left on device" in err and "tapedeck run --resume" in err, err
    log = log_path(tmp_path / "root", str(workspace.resolve()), "s1", False)
    assert log.read_bytes().endswith(b"\n") and read_log(log).diagnostics == []
    monkeypatch.setattr(writer, "write_all", whole)  # room again
    assert _resume(tmp_path) == 0
    assert (workspace / "out.txt").read_text() == "hi"


def test_a_repair_the_disk_has_no_room_for_leaves_the_log_and_its_directory_as_they_were(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It ended in a traceback (exit 1) and left a part of the repaired log and a 'damaged' copy of a log it had not
    replaced; it now says so in one line (exit 2) and takes back both."""
    log = _start_and_crash(tmp_path, tmp_path / "ws")
    lines = log.read_bytes().splitlines(keepends=True)
    lines[2] = b"\x00garbage\n"
    log.write_bytes(b"".join(lines))
    before = {p.name: p.read_bytes() for p in log.parent.iterdir()}

    def full_disk(fd: int, blob: bytes) -> None:
        os.write(fd, blob[: len(blob) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("core.log.repair.append_synced", full_disk)
    capsys.readouterr()
    assert main(["repair", str(log)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.splitlines()) == 1 and "No space left on device" in err, err
    assert {p.name: p.read_bytes() for p in log.parent.iterdir()} == before


def test_where_no_unnamed_file_can_be_made_the_repair_writes_log_repair_and_replaces_a_killed_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system without O_TMPFILE: the repaired log is written as ``<log>.repair``; one a killed repair left is
    replaced, and none is left after the repair."""
    log = _start_and_crash(tmp_path, tmp_path / "ws")
    lines = log.read_bytes().splitlines(keepends=True)
    lines[2] = b"\x00garbage\n"
    log.write_bytes(b"".join(lines))
    log.with_name(f"{log.name}.repair").write_bytes(b"half a repaired log")
    monkeypatch.setattr("core.log.repair.unnamed_file", lambda *_: None)

    assert main(["repair", str(log)]) == 0

    assert sorted(p.name.split("-")[0] for p in log.parent.iterdir() if p.name.startswith(log.name)) == [
        log.name, f"{log.name}.damaged"]  # fmt: skip
    assert _resume(tmp_path) == 0


@pytest.mark.parametrize(
    ("log", "session_id", "options"),
    [("--w--/s1/session.jsonl", "s1", ["--config", "-odd.toml"]), (None, "-x", ["--model", "-m"])],
    ids=["relative-root", "dashed-id"],
)
def test_the_resume_command_named_runs_whatever_its_words_start_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log: str | None, session_id: str, options: list[str]
) -> None:
    """With a relative sessions root (``--sessions-root .``) the log is '--w--/ID/session.jsonl', and the resume
    command a stopped run named was ``tapedeck run --resume --w--/…``, which takes that path for an option; an id,
    a model or a config starting with '-' did the same. The command named now parses back to this log and these
    options, from any directory."""
    monkeypatch.chdir(tmp_path)
    path = Path(log) if log else default_sessions_root() / "--w--" / session_id / "session.jsonl"
    given = {"provider": "openai", "model": None, "base_url": None, "config": None}
    given[options[0].lstrip("-")] = options[1]
    hint = _resume_command(argparse.Namespace(**given), session_id, path)
    parsed = build_parser(command="run").parse_args(shlex.split(hint)[1:])
    assert parsed.resume == (str(tmp_path / log) if log else session_id), hint
    named = str(tmp_path / options[1]) if options[0] == "--config" else options[1]  # a file: by its absolute path
    assert getattr(parsed, options[0].lstrip("-")) == named, hint


def test_the_resume_command_names_the_config_and_script_files_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run started with a relative --config or scripted:FILE named them as given, so its resume command, run from
    another directory, read another file or none: they are named by their absolute paths, as the log is."""
    monkeypatch.chdir(tmp_path)
    given = {"provider": "scripted:play.json", "model": None, "base_url": None, "config": "cfg.toml"}
    hint = _resume_command(argparse.Namespace(**given), "s1", Path("--w--/s1/session.jsonl"))
    parsed = build_parser(command="run").parse_args(shlex.split(hint)[1:])
    assert parsed.config == str(tmp_path / "cfg.toml"), hint
    assert parsed.provider == f"scripted:{tmp_path / 'play.json'}", hint


@pytest.mark.parametrize("unnamed", [True, False], ids=["o_tmpfile", "named"])
def test_a_directory_named_log_repair_neither_stops_the_repair_nor_is_touched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, unnamed: bool
) -> None:
    """A directory at ``<log>.repair`` ended the repair in an IsADirectoryError traceback (exit 1) that left the
    damaged copy behind: the repaired log is named past it, or, where it must be that name, the repair is refused
    in one line with the log and its directory as they were."""
    log = _start_and_crash(tmp_path, tmp_path / "ws")
    lines = log.read_bytes().splitlines(keepends=True)
    lines[2] = b"\x00garbage\n"
    log.write_bytes(b"".join(lines))
    (log.parent / f"{log.name}.repair").mkdir()
    before = sorted(p.name for p in log.parent.iterdir())
    if not unnamed:
        monkeypatch.setattr("core.log.repair.unnamed_file", lambda *_: None)
    capsys.readouterr()

    code = main(["repair", str(log)])

    err = capsys.readouterr().err
    assert "Traceback" not in err and (log.parent / f"{log.name}.repair").is_dir()
    if unnamed:
        assert code == 0 and _resume(tmp_path) == 0
    else:
        assert code == 2 and "Is a directory" in err and sorted(p.name for p in log.parent.iterdir()) == before


def test_the_repair_help_says_when_it_changes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """``repair --help`` said nothing of its exit status, nor that a repair killed or out of room leaves the log
    and its directory as they were."""
    with pytest.raises(SystemExit):
        main(["repair", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for said in ("killed", "as they were", "Exit 2"):
        assert said in text, said


def test_a_resume_removes_the_host_json_temporary_files_of_dead_hosts(tmp_path: Path) -> None:
    # a host killed between writing host.json's temporary file and renaming it left '.host.json.<pid>.tmp' for good
    workspace = tmp_path / "ws"
    log = _start_and_crash(tmp_path, workspace)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip
    stale, alive = log.parent / f".host.json.{dead}.tmp", log.parent / f".host.json.{os.getppid()}.tmp"
    stale.write_bytes(b'{"state": "running"')
    alive.write_bytes(b'{"state": "running"')  # a living process's, which may be renaming it now
    assert _resume(tmp_path) == 0
    assert not stale.exists() and alive.exists()


def test_a_host_json_temporary_file_names_its_machine_and_another_machine_s_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a file system two machines share, a host here took the temporary file of a live host there for a dead
    one's (its pid is no process here) and removed it between its write and its rename. The file names its machine
    by the rule every "this machine" follows (``core.bridge.files.this_machine``: its /etc/machine-id): another
    machine's stays, one of a machine with the same network name too (containers given one hostname: the file was
    named by the hostname, and such a file was removed); a dead one's here goes, in the old name (a pid alone) too."""
    from core.bridge.files import this_machine
    from core.control.host_state import remove_stale_temporaries, write_state

    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    log.touch()
    renamed: list[str] = []
    monkeypatch.setattr(os, "replace", lambda src, dst: renamed.append(Path(src).name))  # killed before the rename
    write_state(log, "running", 4242, 1)
    monkeypatch.undo()
    machine = this_machine()
    assert machine is not None and re.fullmatch(r"[0-9a-f]{32}", machine)  # the test machine has a machine id
    assert renamed == [f".host.json.{machine}.4242.tmp"]
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip
    names = {f".host.json.{machine}.{dead}.tmp": False, f".host.json.{dead}.tmp": False,
             f".host.json.elsewhere.example.{dead}.tmp": True, f".host.json.{os.uname().nodename}.{dead}.tmp": True,
             f".host.json.{machine}.{os.getppid()}.tmp": True}  # fmt: skip
    for name in names:
        (log.parent / name).write_bytes(b'{"state": "running"')
    remove_stale_temporaries(log)
    assert {name: (log.parent / name).exists() for name in names} == names


def test_a_machine_without_a_machine_id_is_named_by_its_network_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one fallback of the rule: where neither machine-id file holds an id, the machine is ``host-<nodename>``
    (a name no bridge's dirId holds), and its temporary files are named so."""
    from core.bridge import files
    from core.control.host_state import write_state

    monkeypatch.setattr(files, "MACHINE_ID_FILES", (str(tmp_path / "none"), str(tmp_path / "empty")))
    (tmp_path / "empty").write_text("\n")
    monkeypatch.setattr(os, "uname", lambda: os.uname_result(("Linux", "box/7", "6", "#1", "x86_64")))
    files.this_machine.cache_clear()
    try:
        assert files.this_machine() == "host-box_7"
        log = tmp_path / "s" / "session.jsonl"
        log.parent.mkdir()
        log.touch()
        renamed: list[str] = []
        monkeypatch.setattr(os, "replace", lambda src, dst: renamed.append(Path(src).name))
        write_state(log, "running", 4242, 1)
        assert renamed == [".host.json.host-box_7.4242.tmp"]
    finally:
        files.this_machine.cache_clear()


@pytest.mark.parametrize(
    ("extra", "said"),
    [([b"\x00garbage\n"], "held no seq the log lacks; left out"),
     ([b"\x00garbage\n", None], "held no seq the log lacks; left out"),  # and a copy of the line before it
     ([b"\x00garbage\n"], "nothing after it; dropped")],  # the last line: nothing numbers what it held
    ids=["torn", "torn-then-copy", "at-the-end"],
)  # fmt: skip
def test_repair_says_what_it_did_with_damage_that_held_no_seq(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[bytes | None], said: str
) -> None:
    """A damaged line between two intact ones in seq order held no seq: the report said 'nothing after it; dropped'
    of damage mid-file; it says the stretch held none of the seqs the log lacks."""
    log = _start_and_crash(tmp_path, tmp_path / "ws")
    lines = log.read_bytes().splitlines(keepends=True)
    at = len(lines) if said.startswith("nothing") else next(n for n, line in enumerate(lines) if b'"step/start"' in line) + 1
    lines[at:at] = [lines[at - 1] if line is None else line for line in extra]
    log.write_bytes(b"".join(lines))

    assert main(["repair", str(log)]) == 0
    out = capsys.readouterr().out
    assert f": {said}\n" in out and out.count("offset ") == 1, out
    assert _resume(tmp_path) == 0


def test_the_resume_command_named_writes_a_paths_controls_as_escapes(tmp_path: Path) -> None:
    """A stopped run names the command that resumes it on stderr; a log under a directory whose name holds a newline
    and an escape sequence put them there as they are, inside the shell's quotes: a forged line and a raw escape.
    Its controls are written as escapes (core.shared.text.quoted, not cut), as the path in any message is."""
    path = tmp_path / "w\x1b]0;t\x07\nforged" / "s1" / "session.jsonl"
    given = {"provider": "openai", "model": None, "base_url": None, "config": None}
    hint = _resume_command(argparse.Namespace(**given), "s1", path)
    named = str(path).replace("\x1b", "\\u001b").replace("\x07", "\\u0007").replace("\n", "\\n")
    assert hint == f"tapedeck run --resume '{named}'", hint


@pytest.mark.parametrize("elsewhere", [False, True])
def test_a_resume_names_the_recorded_workspace_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], elsewhere: bool
) -> None:
    """A resume refused for its workspace (gone, or another one given without --relocate) named the workspace the
    log records as it is: a workspace whose name held a newline and an escape sequence (or a forged log's) wrote a
    forged line and the raw escape on stderr. It is named as the CLI names a path (quoted_path), as the log is."""
    import shutil

    workspace = tmp_path / "ws\x1b]0;t\x07\nforged"
    _start_and_crash(tmp_path, workspace)
    if elsewhere:
        (tmp_path / "other").mkdir()
        assert _resume(tmp_path, "--workspace", str(tmp_path / "other")) == 2
    else:
        shutil.rmtree(workspace)
        assert _resume(tmp_path) == 2
    err = capsys.readouterr().err
    named = str(workspace.resolve()).replace("\x1b", "\\u001b").replace("\x07", "\\u0007").replace("\n", "\\n")
    assert f" was running in {named}, " in err and err.count("\n") == 1 and "\x1b" not in err, err


def test_repairs_report_names_the_log_and_its_backup_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """repair's report named the log and the damaged file's backup as they are, so a directory whose name held a
    newline and an escape sequence forged a line of the report and sent the escape out raw; both are named through
    quoted_path, as repair's refusals name the log."""
    hostile = tmp_path / "a\x1b[2J\nforged line"
    hostile.mkdir()
    log = hostile / "session.jsonl"
    lines = _start_and_crash(tmp_path, tmp_path / "ws").read_bytes().splitlines(keepends=True)
    lines[-1] = b"\x00garbage\n"
    log.write_bytes(b"".join(lines))
    capsys.readouterr()

    assert main(["repair", str(log)]) == 0
    said = capsys.readouterr().out.splitlines()[0]
    escaped = str(hostile).replace("\x1b", "\\u001b").replace("\n", "\\n")
    assert said.startswith(f"{escaped}/session.jsonl: repaired, ") and "\x1b" not in said, said
    assert f"kept as {escaped}/session.jsonl.damaged-" in said, said
    assert main(["repair", str(log)]) == 0
    assert capsys.readouterr().out == f"{escaped}/session.jsonl: no damage found; nothing changed\n"
