"""Crash safety proven the hard way: real host processes, killed with SIGKILL, then resumed.

The small version of ``bench/crash.py``: two kills per trial, raw and zstd. Kill points are drawn from fixed
seeds, so a failure names the seed that reproduces it
(``python bench/crash.py --seed N --trials 1 --kills-per-trial 2 --reach 0.6``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench import crash
from core.cli import main
from core.control import inbox as control
from core.control.host_state import state_path
from core.log.layout import log_path
from core.log.reader import read_log
from core.log.writer import LOCK_NAME
from tests.conftest import Processes
from tests.lines import Lines

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("zstd", "seed"), [(False, 11), (True, 12)])
def test_sigkill_at_random_points_then_resume_loses_nothing(tmp_path: Path, zstd: bool, seed: int) -> None:
    expected, size, _ = crash.baseline(tmp_path, zstd)

    # Kill points stop at 60% of the log, so the host always has the last 40% of the demo (a quarter of a second at
    # least, unloaded) to play past the kill's 50 ms of jitter: drawn up to 100%, one trial in seven ended first.
    result = crash.trial(tmp_path, seed, zstd, expected, size, kills=2, reach=0.6)

    assert result.kills == 2, result.notes
    assert (result.lost, result.duplicated, result.divergent, result.log_txt_gaps, result.log_txt_repeats) == (
        0, 0, False, 0, 0,
    ), result.notes  # fmt: skip


def _host(processes: Processes, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return processes.start([sys.executable, "-m", "core.cli", "run", *args], cwd=ROOT, env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


@pytest.mark.parametrize("zstd", [False, True])
def test_a_second_host_cannot_write_a_live_log_even_when_the_lock_file_is_gone(
    tmp_path: Path, zstd: bool, processes: Processes
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "done"}]}))
    workspace, root = tmp_path / "ws", tmp_path / "root"
    workspace.mkdir()
    common = ["--provider", f"scripted:{script}", "--sessions-root", str(root)]
    first = _host(processes, "task", *common, "--workspace", str(workspace), "--session-id", "s1", "--linger",
                  *(["--zstd"] if zstd else []))  # fmt: skip
    log = log_path(root, str(workspace), "s1", zstd)
    deadline = time.monotonic() + 60
    while not any(e["type"] == "turn/end" for e in (read_log(log).events if log.exists() else [])):
        assert first.poll() is None and time.monotonic() < deadline, first.stderr.read() if first.stderr else ""
        time.sleep(0.05)
    (log.parent / LOCK_NAME).unlink()
    before = log.read_bytes()

    second = _host(processes, "--resume", "s1", *common)
    _, err = second.communicate(timeout=60)

    assert second.returncode == 2 and "already open for writing by another process" in err
    assert log.read_bytes().startswith(before)  # only the live host went on appending
    control.append_request(control.inbox_path(log), "stop", {})
    assert first.wait(60) == 0
    data = read_log(log)
    assert data.diagnostics == []
    assert [e["data"]["resumed"] for e in data.events if e["type"] == "tapedeck/host"] == [False]


class _Process:
    """A real ``tapedeck run`` process whose output goes to a file, so a test can read it while it runs."""

    def __init__(self, processes: Processes, tmp_path: Path, name: str, *args: str, close_lock: float = 0) -> None:
        """``close_lock``: the seconds its close waits for the inbox's lock, when not ``CLOSE_LOCK_SECONDS``."""
        self.out = tmp_path / f"{name}.out"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        start = ["-m", "core.cli"]
        if close_lock:
            start = ["-c", f"import core.host.loop, runpy; core.host.loop.CLOSE_LOCK_SECONDS = {close_lock}; "
                           "runpy.run_module('core.cli', run_name='__main__')"]  # fmt: skip
        with self.out.open("wb") as sink:
            self.proc = processes.start([sys.executable, *start, "run", *args], cwd=ROOT, env=env,
                                        stdout=sink, stderr=subprocess.STDOUT)  # fmt: skip

    def text(self) -> str:
        return self.out.read_text()

    def wait_for(self, predicate: Callable[[], object], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            assert self.proc.poll() is None and time.monotonic() < deadline, self.text()
            time.sleep(0.05)

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(60)


@pytest.fixture
def spawn(tmp_path: Path, processes: Processes) -> Callable[..., _Process]:
    """Start ``tapedeck run`` processes; any still running when the test ends is killed (``processes``)."""
    return lambda name, *args, **how: _Process(processes, tmp_path, name, *args, **how)


def _state(log: Path) -> tuple[str, int | None]:
    recorded = json.loads(state_path(log).read_text()) if state_path(log).exists() else {}
    return recorded.get("state", ""), recorded.get("pid")


def _idle_host(tmp_path: Path, spawn: Callable[..., _Process], close_lock: float = 0) -> tuple[_Process, Path, list[str]]:
    """A real host (session ``s1``, one scripted answer) idle after its task, lingering; its log, and the options a
    resume of it repeats (``close_lock``: as ``_Process``'s)."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "done"}]}))
    workspace, root = tmp_path / "ws", tmp_path / "root"
    workspace.mkdir()
    common = ["--provider", f"scripted:{script}", "--sessions-root", str(root), "--linger"]
    first = spawn("first", "task", *common, "--workspace", str(workspace), "--session-id", "s1", close_lock=close_lock)
    log = log_path(root, str(workspace), "s1", False)
    first.wait_for(lambda: _state(log)[0] == "idle")
    return first, log, common


def test_a_resumed_host_does_not_report_the_inbox_lines_its_killed_predecessor_took(
    tmp_path: Path, spawn: Callable[..., _Process]
) -> None:
    first, log, common = _idle_host(tmp_path, spawn)
    inbox = control.inbox_path(log)
    with inbox.open("ab") as f:
        f.write(b'not json\n{"op": "pause"}\n{"id": "bad-1", "op": "nope"}\n')
    first.wait_for(lambda: "nope rejected" in first.text())
    first.kill()
    with inbox.open("ab") as f:  # left while no host ran: the next host has not seen it yet
        f.write(b'{"op": "stop"}\n')

    second = spawn("second", "--resume", "s1", *common)
    second.wait_for(lambda: _state(log) == ("idle", second.proc.pid) and "line 4" in second.text())
    control.append_request(inbox, "stop", {})
    assert second.proc.wait(60) == 0

    said = first.text() + second.text()
    assert said.count("control inbox line 1 ") == 1 and said.count("control inbox line 2 ") == 1, said
    assert said.count("nope rejected") == 1 and second.text().count("control inbox line 4 ") == 1, said


def test_a_host_paused_by_the_operator_and_killed_comes_back_paused(
    tmp_path: Path, spawn: Callable[..., _Process]
) -> None:
    """The resumed host says it is paused and runs nothing until the operator's ``resume``: the call the model asked
    for comes after the host's answer to that request in its log (a call run while paused would come before it,
    however late it came), not merely not seen within a fixed wait."""
    script = tmp_path / "script.json"
    write = {"name": "write_file", "arguments": {"path": "out.txt", "content": "x" * 200}}
    script.write_text(json.dumps({"responses": [{"toolCalls": [write]}, {"text": "done"}]}))
    workspace, root = tmp_path / "ws", tmp_path / "root"
    workspace.mkdir()
    common = ["--provider", f"scripted:{script}", "--sessions-root", str(root), "--linger"]
    first = spawn("first", "task", *common, "--workspace", str(workspace), "--session-id", "s1",
                     "--chunk-delay", "0.02")  # fmt: skip
    log = log_path(root, str(workspace), "s1", False)
    first.wait_for(lambda: log.exists() and any(e["type"] == "assistant/chunk" for e in read_log(log).events))
    inbox = control.inbox_path(log)
    control.append_request(inbox, "pause", {})
    first.wait_for(lambda: _state(log)[0] == "paused")  # held before the write_file call the model asked for
    first.kill()

    second = spawn("second", "--resume", "s1", *common)
    second.wait_for(lambda: _state(log) == ("paused", second.proc.pid) and "nothing runs until" in second.text())
    resume = control.append_request(inbox, "resume", {})
    second.wait_for(lambda: _state(log)[0] == "idle")
    assert (workspace / "out.txt").read_text() == "x" * 200
    events = read_log(log).events
    [resumed] = [e["seq"] for e in events if e["type"] == control.CONTROL_EVENT
                 and e["data"]["requestId"] == resume["id"] and e["data"]["outcome"] == control.APPLIED]  # fmt: skip
    [call] = [e["seq"] for e in events if e["type"] == "tool/call"]
    assert resumed < call  # held until then
    control.append_request(inbox, "stop", {})
    assert second.proc.wait(60) == 0


@pytest.mark.parametrize(("paused", "change"), [(False, "replace"), (True, "replace"), (False, "truncate")])
def test_a_waiting_host_whose_log_was_replaced_exits_instead_of_waiting_forever(
    tmp_path: Path, spawn: Callable[..., _Process], paused: bool, change: str
) -> None:
    """Nobody can control a host once its log is replaced (``control`` finds no owner), so it must not wait on."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "done"}]}))
    workspace, root = tmp_path / "ws", tmp_path / "root"
    workspace.mkdir()
    host = spawn("host", "task", "--provider", f"scripted:{script}", "--sessions-root", str(root),
                    "--linger", "--workspace", str(workspace), "--session-id", "s1")  # fmt: skip
    log = log_path(root, str(workspace), "s1", False)
    host.wait_for(lambda: _state(log)[0] == "idle")
    if paused:
        control.append_request(control.inbox_path(log), "pause", {})
        host.wait_for(lambda: _state(log)[0] == "paused")
    if change == "truncate":  # it went on appending to the cut log, after events it no longer held
        os.truncate(log, log.stat().st_size // 2)
        cut = log.read_bytes()
    else:
        copy = tmp_path / "copy.jsonl"
        copy.write_bytes(log.read_bytes())
        copy.replace(log)

    assert host.proc.wait(60) == 2
    if change == "truncate":
        assert "was truncated from " in host.text() and "while this writer held it" in host.text()
        assert log.read_bytes() == cut
    else:
        assert "was replaced or removed while this writer held it" in host.text()


def test_ctrl_c_ends_the_run_with_one_line_and_the_session_resumes(
    tmp_path: Path, spawn: Callable[..., _Process]
) -> None:
    script = tmp_path / "script.json"
    write = {"name": "write_file", "arguments": {"path": "out.txt", "content": "x" * 400}}
    script.write_text(json.dumps({"responses": [{"toolCalls": [write]}, {"text": "done"}]}))
    workspace, root = tmp_path / "ws", tmp_path / "root"
    workspace.mkdir()
    common = ["--provider", f"scripted:{script}", "--sessions-root", str(root)]
    first = spawn("first", "task", *common, "--workspace", str(workspace), "--session-id", "s1",
                  "--chunk-delay", "0.02")  # fmt: skip
    log = log_path(root, str(workspace), "s1", False)
    first.wait_for(lambda: log.exists() and any(e["type"] == "assistant/chunk" for e in read_log(log).events))
    first.proc.send_signal(signal.SIGINT)  # what Ctrl-C in its terminal sends

    assert first.proc.wait(60) == 130
    said = first.text()
    assert "Traceback" not in said, said
    hint = said.splitlines()[-1].split("`")[1]  # the command it names, run as printed (another root, a script)
    assert hint.startswith("tapedeck run "), said
    assert _state(log)[0] == "exited"
    second = spawn("second", *shlex.split(hint)[2:])
    assert second.proc.wait(60) == 0, second.text()
    assert (workspace / "out.txt").read_text() == "x" * 400


def test_requests_a_killed_host_never_read_are_cancelled_at_resume_for_what_happened(
    tmp_path: Path, spawn: Callable[..., _Process], capsys: pytest.CaptureFixture[str]
) -> None:
    """A request sent to a live host that died before reading it is cancelled as such, not as one sent while no host
    ran; one left (by hand) after a host's clean exit is."""
    first, log, common = _idle_host(tmp_path, spawn)
    os.killpg(first.proc.pid, signal.SIGSTOP)  # alive and owning the log, but reading nothing
    sent = []
    for op, args in (("pause", []), ("config.set", ["--arg", "key=slice.history.keepRecentTurns", "--arg", "value=3"])):
        assert main(["control", str(log), op, *args, "--json"]) == 0
        sent.append(json.loads(capsys.readouterr().out)["id"])
    first.kill()

    second = spawn("second", "--resume", "s1", *common)
    second.wait_for(lambda: _state(log) == ("idle", second.proc.pid))
    control.append_request(control.inbox_path(log), "stop", {})
    assert second.proc.wait(60) == 0
    left = control.append_request(control.inbox_path(log), "pause", {})["id"]  # by hand, with no host running
    third = spawn("third", "--resume", "s1", *common)
    third.wait_for(lambda: _state(log) == ("idle", third.proc.pid))
    control.append_request(control.inbox_path(log), "stop", {})
    assert third.proc.wait(60) == 0

    errors = {e["data"]["requestId"]: e["data"].get("error") for e in read_log(log).events
              if e["type"] == "tapedeck/control" and e["data"]["outcome"] == "cancelled"}  # fmt: skip
    assert [errors[rid] for rid in sent] == ["the host it was sent to died before reading it"] * 2
    assert "sent while no host was running this session" in errors[left]


def test_sigterm_ends_the_run_as_ctrl_c_does_and_the_session_resumes(
    tmp_path: Path, spawn: Callable[..., _Process]
) -> None:
    """A service manager's stop (or kill) ended the run where it stood: exit 143 with not a word, host.json left
    'running', the inbox unanswered; it now ends as Ctrl-C does (the host closed, the resume command named)."""
    script = tmp_path / "script.json"
    sleeper = {"name": "bash", "arguments": {"command": "sleep 60"}}
    script.write_text(json.dumps({"responses": [{"toolCalls": [sleeper]}, {"text": "done"}]}))
    workspace, root = tmp_path / "ws", tmp_path / "root"
    workspace.mkdir()
    common = ["--provider", f"scripted:{script}", "--sessions-root", str(root)]
    first = spawn("first", "task", *common, "--workspace", str(workspace), "--session-id", "s1")
    log = log_path(root, str(workspace), "s1", False)
    first.wait_for(lambda: log.exists() and any(e["type"] == "tool/call" for e in read_log(log).events))
    first.proc.send_signal(signal.SIGTERM)

    assert first.proc.wait(60) == 143
    said = first.text()
    assert "Traceback" not in said and "`tapedeck run " in said.splitlines()[-1], said
    assert _state(log)[0] == "exited"
    hint = said.splitlines()[-1].split("`")[1]
    second = spawn("second", *shlex.split(hint)[2:])
    assert second.proc.wait(60) == 0, second.text()


def _open_for_writing(pid: int) -> list[str]:
    """What process ``pid`` holds open for writing, as ``/proc`` names it (a file with no name: ``#inode (deleted)``)."""
    fds, found = Path(f"/proc/{pid}/fd"), []
    for fd in fds.iterdir():
        try:
            target, flags = os.readlink(fd), (fds.parent / "fdinfo" / fd.name).read_text()
        except OSError:
            continue
        if int(flags.split("flags:")[1].split()[0], 8) & os.O_ACCMODE != os.O_RDONLY:
            found.append(target)
    return found


def _writing_beside(pid: int, log: Path) -> bool:
    """Whether process ``pid`` holds a file open for writing in ``log``'s directory other than the log and its lock
    file."""
    return any(target.startswith(f"{log.parent}/") and target not in (str(log), str(log.parent / LOCK_NAME))
               for target in _open_for_writing(pid))  # fmt: skip


def _listing(directory: Path) -> dict[str, str]:
    """Each file's name and a hash of its bytes (the lock file's: the pid of the last writer, left out)."""
    return {p.name: "" if p.name == LOCK_NAME else hashlib.sha256(p.read_bytes()).hexdigest() for p in directory.iterdir()}


@pytest.mark.parametrize("zstd", [False, True])
def test_a_repair_killed_while_it_writes_leaves_the_log_and_its_directory_as_they_were(
    tmp_path: Path, zstd: bool, processes: Processes
) -> None:
    """A repair killed (SIGKILL) while writing the repaired log left ``<log>.repair``, half a log, and a
    ``<log>.damaged-<time>`` copy beside the log until the next repair: now neither has a name before the repair is
    whole, so the directory is as it was, and the next repair goes through."""
    from core.log.writer import SessionWriter, make_header

    with SessionWriter.create(tmp_path / "root", make_header("s", cwd="/a"), compressed=zstd) as writer:
        writer.append([{"type": "tapedeck/host", "data": {}}])
        for batch in range(60 if zstd else 30):
            writer.append([{"type": "tapedeck/note", "data": {"n": n, "text": f"{batch} {n} " * 150}} for n in range(1000)])
    log = writer.path
    data = bytearray(log.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 8] = b"\x00damage\x00"  # a bad line (raw), a frame that fails (zstd)
    log.write_bytes(bytes(data))
    before = _listing(log.parent)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    repair = processes.start([sys.executable, "-m", "core.cli", "repair", str(log)], cwd=ROOT, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    while not _writing_beside(repair.pid, log):
        assert repair.poll() is None, "the repair ended before it was caught writing: give it a bigger log"
        time.sleep(0.001)
    os.kill(repair.pid, signal.SIGKILL)
    repair.wait()

    assert _listing(log.parent) == before
    assert main(["repair", str(log)]) == 0
    assert sorted(p.name.split(".damaged-")[0] + (".damaged" if ".damaged-" in p.name else "")
                  for p in log.parent.iterdir()) == sorted([log.name, f"{log.name}.damaged", LOCK_NAME])  # fmt: skip


@pytest.mark.parametrize(
    ("signals", "code", "how"),
    [((signal.SIGTERM, signal.SIGTERM), 143, "terminated"), ((signal.SIGINT, signal.SIGTERM), 130, "interrupted"),
     ((signal.SIGTERM, signal.SIGINT), 143, "terminated")],
    ids=["term-term", "int-term", "term-int"],
)  # fmt: skip
def test_a_second_signal_while_the_run_closes_lets_it_close_and_exit_as_the_first_says(
    tmp_path: Path, spawn: Callable[..., _Process], signals: tuple[int, int], code: int, how: str
) -> None:
    """A SIGTERM while ``run`` was closing after the first (a service manager that signals twice, an impatient
    ``kill``) took the default action: the process died mid-close (-15), host.json never said 'exited', no resume
    command was named (a second Ctrl-C cut the close short too); it is now only noted, and the close finishes.
    The close waits 600 s for the inbox here, not 2 s: a loaded machine let it give up before it was seen waiting."""
    first, log, _ = _idle_host(tmp_path, spawn, close_lock=600)
    inbox = control.inbox_path(log)
    with control.locked_inbox(inbox):  # the host's close waits for it (a sender holding it)
        first.proc.send_signal(signals[0])
        first.wait_for(lambda: str(inbox) in _open_for_writing(first.proc.pid), timeout=60)
        first.proc.send_signal(signals[1])
    assert first.proc.wait(60) == code, first.text()
    said = first.text()
    assert "Traceback" not in said and said.splitlines()[-1].startswith(f"tapedeck: {how}; `tapedeck run "), said
    assert _state(log)[0] == "exited"
    assert [e["data"]["state"] for e in read_log(log).events if e["type"] == "tapedeck/state"][-1] == "exited"


def test_a_run_whose_output_reader_went_away_runs_to_its_end(tmp_path: Path, processes: Processes) -> None:
    """``tapedeck run … | head -1``: the first progress line after ``head`` exited raised BrokenPipeError, which
    ended the run there, its turn left open, with exit 0 (``demo --no-tui | head`` too); the run now goes on to
    its end without printing, and says once on stderr why it went quiet."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "one"}, {"text": "two"}]}))
    workspace, root = tmp_path / "ws", tmp_path / "root"
    workspace.mkdir()
    run = _host(processes, "t1", "t2", "--provider", f"scripted:{script}", "--sessions-root", str(root),
                "--workspace", str(workspace), "--session-id", "s1", "--pace", "0.3")  # fmt: skip
    assert run.stdout is not None and run.stderr is not None
    assert Lines(run.stdout).next() == "session s1\n"
    run.stdout.close()  # as `head -1` exits
    err = Lines(run.stderr).rest()
    assert run.wait(60) == 0, err
    assert "Traceback" not in err and len(err.splitlines()) == 1 and "stdout" in err, err
    ends = [e["data"]["reason"]["kind"] for e in read_log(log_path(root, str(workspace), "s1", False)).events
            if e["type"] == "turn/end"]  # fmt: skip
    assert ends == ["completed", "completed"]


def _run_on_a_fifo(tmp_path: Path, processes: Processes, **popen: Any) -> tuple[subprocess.Popen[str], Path, Path]:
    """``python -m core.cli run`` whose script is a FIFO (nothing written to it: the run stands still before any log),
    its stderr piped; with the script and the sessions root it was given."""
    script = tmp_path / "script.fifo"
    os.mkfifo(script)
    (tmp_path / "ws").mkdir()
    root = tmp_path / "root"
    proc = processes.start([sys.executable, "-m", "core.cli", "run", "task", "--provider", f"scripted:{script}",
                            "--workspace", str(tmp_path / "ws"), "--sessions-root", str(root)], cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE, text=True,
                           **popen)  # fmt: skip
    return proc, script, root


def test_a_sigterm_before_the_host_is_made_ends_the_command_with_143_and_writes_nothing(
    tmp_path: Path, processes: Processes
) -> None:
    """The run's handler was put in place only once its log was made, half a second in: a SIGTERM before it took
    the default action (exit status -15, not a word). It is in place before the host's modules are imported. The
    script is a FIFO, so the run stands still reading it, before any log, until the signal comes."""
    proc, script, root = _run_on_a_fifo(tmp_path, processes)
    deadline = time.monotonic() + 60
    while True:  # open for writing without waiting: it fails until the run has the FIFO open for reading
        try:
            writer = os.open(script, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "the run never read its script"
            time.sleep(0.01)
    try:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        os.close(writer)
    assert (proc.returncode, err) == (143, "tapedeck: terminated before the session started; nothing was written\n")
    assert not root.exists()


def test_a_sigterm_sent_as_the_demo_starts_its_host_is_taken_however_early(tmp_path: Path, processes: Processes) -> None:
    """The demo's host (``python -m core.cli run``, started as the demo starts it) got a SIGTERM sent the moment
    it was started (the demo passing one on, or the kernel's when the demo dies) while its interpreter was still
    starting, before any Python code of tapedeck ran: the default action, exit -15 with no word. It starts with
    SIGTERM and Ctrl-C blocked, and takes them from the hold on, so one that came meanwhile waits for its handler.
    The script is a FIFO nobody writes: the run stands still before any log whenever the signal comes."""
    from tui import cli_demo

    proc, _, root = _run_on_a_fifo(tmp_path, processes, preexec_fn=cli_demo._tie_to_demo)
    proc.send_signal(signal.SIGTERM)  # at once: the interpreter has only just been exec'd
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (143, "tapedeck: terminated before the session started; nothing was written\n")
    assert not root.exists()


# A sitecustomize for the runs below: at the import of core.shared.envdirs (a module ``python -m core.cli`` imports
# on its way to its handler, whatever the command) it writes the file TD_TEST_READY names, and with TD_TEST_SIGTERM
# set it sends itself a SIGTERM there: the signal comes at a known point of the start, not at the mercy of timing.
_AT_IMPORT = """
import os, signal, sys

def _hook(event, args):
    if event == "import" and args[0] == "core.shared.envdirs" and "TD_TEST_READY" in os.environ:
        open(os.environ.pop("TD_TEST_READY"), "w").close()
        if os.environ.get("TD_TEST_SIGTERM"):
            os.kill(os.getpid(), signal.SIGTERM)

sys.addaudithook(_hook)
"""


def _turn_ends(log: Path) -> list[object]:
    """The reason kinds of a log's turn ends, in order."""
    return [e["data"]["reason"]["kind"] for e in read_log(log).events if e["type"] == "turn/end"]


def test_sigterms_sent_as_runs_start_leave_each_log_resumable(tmp_path: Path, processes: Processes) -> None:
    """Runs signalled as ``python -m core.cli`` imports its modules (before any handler of its own was in place,
    where a SIGTERM took the default action: exit -15, no word) and a little later, each somewhere else in its
    start: each ends 143 without a traceback, its host.json (if a host was made) says it exited, and a log it made
    resumes to its end."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "done"}]}))
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_AT_IMPORT)
    for n, delay in enumerate((None, None, 0.0, 0.05, 0.1, 0.2, 0.4)):
        workspace, root, ready = tmp_path / f"ws{n}", tmp_path / f"root{n}", tmp_path / f"ready{n}"
        workspace.mkdir()
        env = {**os.environ, "PYTHONPATH": f"{hook}{os.pathsep}{ROOT}", "TD_TEST_READY": str(ready),
               "TD_TEST_SIGTERM": "1" if delay is None else ""}  # fmt: skip
        common = ["--provider", f"scripted:{script}", "--sessions-root", str(root)]
        proc = processes.start([sys.executable, "-m", "core.cli", "run", "task", *common, "--workspace", str(workspace),
                                "--session-id", "s1"], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)  # fmt: skip
        if delay is not None:
            deadline = time.monotonic() + 60
            while not ready.exists():
                assert proc.poll() is None and time.monotonic() < deadline, "the run never imported its modules"
                time.sleep(0.005)
            time.sleep(delay)
            proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        log = log_path(root, str(workspace), "s1", False)
        # -15 only once the run has done its work: a SIGTERM that comes while the process exits, its handler gone
        # (a loaded machine can take 0.2 s to get there), ends it as any finished process, with nothing to lose
        finished = log.exists() and _turn_ends(log) == ["completed"]
        assert proc.returncode in (143, 0, *((-15,) if finished else ())) and "Traceback" not in err, (
            delay, proc.returncode, err
        )
        state = state_path(log)  # a host that was made closed as it should: it said it exited, no temporary left
        assert not state.exists() or json.loads(state.read_bytes())["state"] == "exited", delay
        assert not [*state.parent.glob(".host.json.*")], delay
        if log.exists() and proc.returncode != 0:
            assert main(["run", "--resume", str(log), *common]) == 0, delay


def test_a_run_on_another_thread_never_takes_the_main_thread_s_signals(tmp_path: Path) -> None:
    """The Stops of a run on the main thread (the one signals reach) was the one a run started meanwhile on another
    thread took as its own (tests run main so): holding and releasing it there moved the main thread's run."""
    import threading

    from core.cli.stops import current, started

    seen: list[object] = []
    ready, done = threading.Event(), threading.Event()

    def other() -> None:
        ready.wait(60)
        seen.append(current())
        done.set()

    def on_main() -> int:
        seen.append(current())
        ready.set()
        done.wait(60)
        seen.append(current())
        return 0

    thread = threading.Thread(target=other)
    thread.start()
    assert started(on_main) == 0
    thread.join(60)
    assert seen[0] is seen[2] and seen[1] is not seen[0]


@pytest.mark.parametrize(("sig", "code", "how"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_wait_ended_by_ctrl_c_or_sigterm_withdraws_its_request_as_a_timeout_does(
    tmp_path: Path, spawn: Callable[..., _Process], processes: Processes, sig: int, code: int, how: str
) -> None:
    """Ctrl-C on 'control --wait' ended it in a KeyboardInterrupt traceback and a SIGTERM without a word, and the
    request stayed in the inbox, to be applied at the host's next step though its sender gave up on it; it is
    withdrawn, as a wait that times out withdraws it, and the command says so, exit 130 or 143."""
    script = tmp_path / "script.json"
    sleeper = {"name": "bash", "arguments": {"command": "sleep 60"}}
    script.write_text(json.dumps({"responses": [{"toolCalls": [sleeper]}, {"text": "done"}]}))
    workspace, root = tmp_path / "ws", tmp_path / "root"
    workspace.mkdir()
    host = spawn("host", "task", "--provider", f"scripted:{script}", "--sessions-root", str(root), "--workspace",
                 str(workspace), "--session-id", "s1")  # fmt: skip
    log = log_path(root, str(workspace), "s1", False)
    host.wait_for(lambda: log.exists() and any(e["type"] == "tool/call" for e in read_log(log).events))
    waiting = processes.start([sys.executable, "-m", "core.cli", "control", str(log), "config.set", "--arg",
                               "key=slice.fold.pinSteps", "--arg", "value=2", "--wait", "--timeout", "120"],
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)  # fmt: skip
    inbox = control.inbox_path(log)
    deadline = time.monotonic() + 60
    while not (inbox.exists() and inbox.read_bytes().endswith(b"\n")):  # the request is written: the wait is on
        assert waiting.poll() is None and time.monotonic() < deadline, waiting.communicate()
        time.sleep(0.02)
    waiting.send_signal(sig)  # at once: the command takes its signals from before it writes the request
    out, err = waiting.communicate(timeout=60)
    [request] = [json.loads(line) for line in inbox.read_text().splitlines() if '"op"' in line]
    assert (waiting.returncode, out) == (code, ""), err
    assert err == (f"tapedeck: {how} while waiting; request {request['id']} was withdrawn, so the host will never "
                   "apply it\n"), err  # fmt: skip
    assert request["id"] in [json.loads(line).get("withdraw") for line in inbox.read_text().splitlines()]


# The console script (tui.cli:run), with a SIGTERM sent to itself the moment it first imports MODULE: as early as
# Python code can send one, at each step of a run's start, with no clock to race.
SIGNALLED_AT_IMPORT = """
import os, signal, sys
class SignalAt:
    def find_spec(self, name, path=None, target=None):
        if name == %r:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGTERM)
        return None
sys.meta_path.insert(0, SignalAt())
from tui.cli import run
sys.exit(run())
"""


@pytest.mark.parametrize(
    "module", ["typing", "core.cli", "core.cli.common", "core.cli.stops", "core.cli.host", "core.host.loop"]
)
def test_a_sigterm_at_any_step_of_the_console_script_s_start_is_taken(
    tmp_path: Path, processes: Processes, module: str
) -> None:
    """For the first 0.05-0.1 s of 'tapedeck run' (its modules loading: core.cli, before its handler was put in
    place) a SIGTERM took the default action: the run died, exit -15, with no word. The console script holds the
    signals from its first step, and the run takes one that came meanwhile as soon as its handler is in place: exit
    143, and nothing written (or, once the host has made its log, the log records the stop and resumes). The
    script's own module imported ``typing`` before it held them, 8 of the 9 ms it took to get there: a SIGTERM then
    still ended the process -15."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "done"}]}))
    workspace, root = tmp_path / "ws", tmp_path / "root"
    workspace.mkdir()
    common = ["--provider", f"scripted:{script}", "--sessions-root", str(root)]
    proc = processes.start([sys.executable, "-c", SIGNALLED_AT_IMPORT % module, "run", "task", *common,
                            "--workspace", str(workspace), "--session-id", "s1"], cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE, text=True)  # fmt: skip
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, (proc.returncode, err)
    log = log_path(root, str(workspace), "s1", False)
    if log.exists():
        assert "terminated" in err and "Traceback" not in err, err
        assert main(["run", "--resume", str(log), *common]) == 0
    else:
        assert err == "tapedeck: terminated before the session started; nothing was written\n", err


# A sitecustomize: at the first audit event an extension module raises while it starts (its native code on the stack,
# called from the loader's create_module or exec_module), it writes the module's name to the file TD_TEST_NATIVE
# names and sends itself a SIGTERM, which Python hands to the run's handler inside this hook, inside that native code.
_IN_NATIVE_START = """
import importlib.machinery, os, signal, sys

_inside = [False]

def _hook(event, args):
    if _inside[0] or event == "import" or "TD_TEST_NATIVE" not in os.environ:
        return
    _inside[0] = True  # sys._getframe and f_locals raise audit events of their own
    try:
        caller = sys._getframe(1)
        loader = caller.f_back.f_locals.get("self") if caller.f_back is not None else None
        if caller.f_code.co_name == "_call_with_frames_removed" and isinstance(
            loader, importlib.machinery.ExtensionFileLoader
        ):
            with open(os.environ.pop("TD_TEST_NATIVE"), "w") as f:
                f.write(loader.name)
            os.kill(os.getpid(), signal.SIGTERM)
    except ValueError:  # an event with no Python frame under the hook
        pass
    finally:
        _inside[0] = False

sys.addaudithook(_hook)
"""


def test_a_sigterm_inside_an_extension_module_s_native_start_ends_the_run_with_143(
    tmp_path: Path, processes: Processes
) -> None:
    """google-re2 (a pybind11 module) runs Python code as it starts (an audit hook's, here): a SIGTERM taken there,
    once the run's handler raised ``Terminated``, escaped pybind11's start-up, and the C++ runtime aborted the run
    (exit -6, 'terminate called after throwing an instance of pybind11::error_already_set'). The run's modules with
    native start-up load while the signals are still held: the signal ends the run before its host is made."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "done"}]}))
    hook, workspace, root, fired = tmp_path / "hook", tmp_path / "ws", tmp_path / "root", tmp_path / "fired"
    hook.mkdir()
    workspace.mkdir()
    (hook / "sitecustomize.py").write_text(_IN_NATIVE_START)
    env = {**os.environ, "PYTHONPATH": f"{hook}{os.pathsep}{ROOT}", "TD_TEST_NATIVE": str(fired)}
    proc = processes.start([sys.executable, "-m", "core.cli", "run", "task", "--provider", f"scripted:{script}",
                            "--sessions-root", str(root), "--workspace", str(workspace)], cwd=ROOT, env=env,
                           stderr=subprocess.PIPE, text=True)  # fmt: skip
    _, err = proc.communicate(timeout=60)
    assert fired.read_text() == "re2._re2"  # the one module of the run whose start-up runs Python code
    assert (proc.returncode, err) == (143, "tapedeck: terminated before the session started; nothing was written\n")
    assert not root.exists()


# A sitecustomize: as the run starts the bash tool's `sleep 30`, a garbage collection whose callback sends
# the process a SIGTERM: the run's handler raises inside the callback, Python code the interpreter runs on its own (as
# it runs a finalizer, a collected generator's finally), where an exception can only be reported, never propagated.
_IN_A_FINALIZER = """
import gc, os, signal, sys

_armed = [False]

def _collecting(phase, _info):
    if phase == "start" and _armed[0]:
        _armed[0] = False
        os.kill(os.getpid(), signal.SIGTERM)

def _hook(event, args):
    if event == "subprocess.Popen" and "sleep 30" in args[1] and os.environ.pop("TD_TEST_GC_SIGTERM", None):
        _armed[0] = True
        gc.collect()

gc.callbacks.append(_collecting)
sys.addaudithook(_hook)
"""


# A sitecustomize: as the run starts the bash tool's `sleep 30`, a file object of Python's io (a RawIOBase of its own)
# is dropped unclosed, and its close, which the interpreter runs as it finalizes it, sends the process a SIGTERM: the
# run's handler raises inside that close, whose exception Python clears without a word (no 'Exception ignored').
_IN_AN_IO_CLOSE = """
import io, os, signal, sys

class _Closing(io.RawIOBase):
    def close(self):
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # Python code, where the handler runs
            pass
        super().close()

def _hook(event, args):
    if event == "subprocess.Popen" and "sleep 30" in args[1] and os.environ.pop("TD_TEST_GC_SIGTERM", None):
        _Closing()

sys.addaudithook(_hook)
"""


@pytest.mark.parametrize("hook", [_IN_A_FINALIZER, _IN_AN_IO_CLOSE], ids=["gc-callback", "io-close"])
def test_a_sigterm_taken_in_a_finalizer_still_ends_the_run(tmp_path: Path, processes: Processes, hook: str) -> None:
    """The handler marked the run ending, then raised Terminated inside a garbage collector's callback, where Python
    reports an exception ('Exception ignored in …') and goes on: the signal was lost, and a second SIGTERM was only
    noted, so the run (a --linger host: for ever) went on to its end, exit 0. It now ends the run as any other. So
    too where the exception is cleared without a report (an unclosed io object's close, run as it is finalized):
    the run went on to its end, exit 0."""
    script = tmp_path / "script.json"
    sleeper = {"name": "bash", "arguments": {"command": "sleep 30"}}
    script.write_text(json.dumps({"responses": [{"toolCalls": [sleeper]}, {"text": "done"}]}))
    site, workspace, root = tmp_path / "hook", tmp_path / "ws", tmp_path / "root"
    site.mkdir()
    workspace.mkdir()
    (site / "sitecustomize.py").write_text(hook)
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{ROOT}", "TD_TEST_GC_SIGTERM": "1"}
    common = ["--provider", f"scripted:{script}", "--sessions-root", str(root)]
    proc = processes.start([sys.executable, "-m", "core.cli", "run", "task", *common, "--workspace", str(workspace),
                            "--session-id", "s1"], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)  # fmt: skip
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, (proc.returncode, err)
    assert "Traceback" not in err and "Exception ignored" not in err and "`tapedeck run " in err.splitlines()[-1], err
    log = log_path(root, str(workspace), "s1", False)
    assert _state(log)[0] == "exited"
    assert main(["run", "--resume", str(log), *common]) == 0 and _turn_ends(log) == ["completed"]


# A sitecustomize: the moment the run's handler (a Stops) is put in place for SIGTERM, a SIGTERM, taken before the
# next line of Stops.taken runs.
_AS_THE_HANDLER_IS_SET = """
import os, signal

_set = signal.signal

def _signal(sig, handler):
    previous = _set(sig, handler)
    if type(handler).__name__ == "Stops" and sig == signal.SIGTERM and os.environ.pop("TD_TEST_SET_SIGTERM", None):
        os.kill(os.getpid(), signal.SIGTERM)
    return previous

signal.signal = _signal
"""


def test_a_sigterm_as_the_run_s_handler_is_put_in_place_ends_the_command_with_143(
    tmp_path: Path, processes: Processes
) -> None:
    """Stops.taken put its handler in place before the try of ``started`` that takes its exception: a SIGTERM in
    between ended the command in a Terminated traceback, exit 1 (seen once in five runs of tests/host, the 0.1 s
    case of test_sigterms_sent_as_runs_start_leave_each_log_resumable)."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "done"}]}))
    hook, workspace, root = tmp_path / "hook", tmp_path / "ws", tmp_path / "root"
    hook.mkdir()
    workspace.mkdir()
    (hook / "sitecustomize.py").write_text(_AS_THE_HANDLER_IS_SET)
    env = {**os.environ, "PYTHONPATH": f"{hook}{os.pathsep}{ROOT}", "TD_TEST_SET_SIGTERM": "1"}
    proc = processes.start([sys.executable, "-m", "core.cli", "run", "task", "--provider", f"scripted:{script}",
                            "--sessions-root", str(root), "--workspace", str(workspace)], cwd=ROOT, env=env,
                           stderr=subprocess.PIPE, text=True)  # fmt: skip
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (143, "tapedeck: terminated before the session started; nothing was written\n")
    assert not root.exists()
