"""A command whose stdout is closed (``>&-``) or cannot take its output (``> /dev/full``) says so, or carries on,
without a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Processes, no_access_path

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "fixtures" / "dsh" / "tool-call-turn.session.jsonl"


def _tapedeck(args: list[str], **how: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=env, text=True, timeout=120,
                          stderr=subprocess.PIPE, **how)  # type: ignore[call-overload]  # fmt: skip


@pytest.mark.parametrize("command", [["inspect", str(LOG)], ["sessions", str(LOG.parent)]])
def test_a_closed_stdout_is_no_traceback(command: list[str]) -> None:
    """With stdout closed Python has no sys.stdout: printing the answer raised AttributeError ('NoneType' object has
    no attribute 'isatty'), exit 1. A closed stream is /dev/null now, so no file tapedeck opens takes its number."""
    done = _tapedeck(command, preexec_fn=lambda: os.close(1))
    assert "Traceback" not in done.stderr and done.returncode in (0, 2), done.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_output_that_cannot_be_written_is_one_line_exit_2() -> None:
    """``inspect LOG > /dev/full`` ended in an OSError traceback (No space left on device), exit 1."""
    with open("/dev/full", "w") as full:
        done = _tapedeck(["inspect", str(LOG)], stdout=full)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("tapedeck: ") and len(done.stderr.splitlines()) == 1, done.stderr
    assert "No space left on device" in done.stderr


def test_a_log_that_fails_to_read_back_is_a_read_error_not_a_write_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``fold`` reads events back from the log after its pass: an I/O error there reached the handler's guard as an
    OSError and was reported as 'could not write its output', with stdout silenced, though stdout was fine; it is
    the log that could not be read."""
    import errno
    import io

    import core.log.linestore
    from core.cli import main

    class Failing(io.RawIOBase):
        def __init__(self, f: io.BufferedReader) -> None:
            self.f = f

        def fileno(self) -> int:
            return self.f.fileno()

        def seek(self, offset: int, whence: int = 0) -> int:
            return self.f.seek(offset, whence)

        def read(self, size: int = -1) -> bytes:
            raise OSError(errno.EIO, os.strerror(errno.EIO))

        def close(self) -> None:
            self.f.close()

    opened = core.log.linestore.open_regular
    monkeypatch.setattr(core.log.linestore, "open_regular", lambda path: Failing(opened(path)))
    silenced: list[bool] = []
    monkeypatch.setattr("core.cli.common.quiet_stdout", lambda: silenced.append(True))
    assert main(["fold", str(LOG)]) == 2
    assert capsys.readouterr().err == f"tapedeck: {LOG}: cannot read ({os.strerror(errno.EIO)})\n"
    assert silenced == []


def test_stdin_that_fails_to_read_is_a_read_error_not_a_write_error() -> None:
    """``route -`` reads the request from stdin: a terminal gone from under it (a pty whose other side closed: the
    kernel's EIO on read) was reported as 'could not write its output', with stdout silenced."""
    import pty

    master, other = pty.openpty()
    os.close(other)
    try:
        done = _tapedeck(["route", "-"], stdin=master, stdout=subprocess.PIPE)
    finally:
        os.close(master)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr == f"tapedeck: could not read the request on stdin ({os.strerror(5)})\n"


def test_an_io_error_nothing_places_is_not_called_a_write_error(capsys: pytest.CaptureFixture[str]) -> None:
    """An EIO from a read no message wraps ended as 'could not write its output' and the output written so far
    was thrown away; what was written is kept, and the message says only what is known."""
    import pty

    from core.cli.common import guarded

    master, other = pty.openpty()
    os.close(other)

    def handler(_args: object) -> int:
        sys.stdout.write("so far\n")
        os.read(master, 1)  # the kernel's EIO: the terminal's other side is gone
        return 0

    try:
        assert guarded(handler)(None) == 2
    finally:
        os.close(master)
    out, err = capsys.readouterr()
    assert out == "so far\n"
    assert err == f"tapedeck: an input/output error stopped it ({os.strerror(5)}); a read or a write failed\n"


@pytest.mark.parametrize("command", [["events", "--json"], ["request", "--all"]])
def test_a_reader_gone_mid_pass_is_no_read_error(tmp_path: Path, processes: Processes, command: list[str]) -> None:
    """``events --json LOG | head -c 10``: the JSON is written as the pass reads the log, and the broken pipe of
    that write reached the pass's guard of its reads: 'LOG: cannot read (Broken pipe)', exit 2. A reader that
    stops reading ends the command quietly, as it does for every other command."""
    from bench.gen_session import generate

    log = tmp_path / "big.jsonl"
    generate(log, 1_000_000, seed=1, profile="mixed")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = processes.start([sys.executable, "-m", "core.cli", *command, str(log)], cwd=ROOT, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None and proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(60) == 0 and err == b"", err


@pytest.mark.parametrize("command", [["inspect"], ["events", "--json"], ["surface", "--json"]])
def test_a_terminal_gone_from_under_the_output_is_a_write_error(command: list[str]) -> None:
    """stdout a terminal whose other side closed (EIO on write): ``events --json`` said 'LOG: cannot read', the
    write's error taken for the log's by the pass that hands it the events; each says its output could not be
    written."""
    import pty

    master, other = pty.openpty()
    os.close(master)
    try:
        done = _tapedeck([*command, str(LOG)], stdout=other)
    finally:
        os.close(other)
    assert done.returncode == 2
    assert done.stderr == f"tapedeck: could not write its output ({os.strerror(5)})\n"


@pytest.mark.parametrize(
    "command",
    [
        ["run", "task", "--provider", "scripted:{script}", "--workspace", "{hidden}/ws"],
        ["run", "--resume", "{hidden}/a/session.jsonl", "--provider", "scripted:{script}"],
        ["cache", "clear", "{hidden}/a/session.jsonl"],
    ],
    ids=["run-workspace", "run-resume", "cache-clear"],
)
def test_a_path_in_a_place_not_to_be_looked_at_is_named_not_a_traceback(
    tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A path under a place this user may not look at (another user's home; here another process's working
    directory, which not even root may follow) ended these commands in a PermissionError traceback, exit 1, where
    pathlib's exists/is_dir raise it; any such error that no message wraps names its file, exit 2."""
    from core.cli import main

    hidden = no_access_path()
    script = tmp_path / "script.json"
    script.write_text('{"responses": [{"text": "done"}]}')
    argv = [word.format(hidden=hidden, script=script) for word in command]
    assert main([*argv, "--sessions-root", str(tmp_path)] if argv[0] == "run" else argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("tapedeck: /proc/1/cwd") and err.endswith(": Permission denied\n"), err


@pytest.mark.parametrize("command", [["events", str(LOG)], ["inspect", str(LOG), "--json"]])
def test_a_reader_gone_before_the_output_is_exit_0_and_nothing_on_stderr(
    command: list[str], processes: Processes
) -> None:
    """``tapedeck events LOG | head -1``: the write after ``head`` exited raised BrokenPipeError, which the guard took
    (exit 0), but the bytes left in stdout's buffer were flushed again as Python exited: 'Exception ignored …
    BrokenPipeError' on stderr and exit 120. Here the reader is gone before the command writes anything; the buffer
    is Python's own (an unbuffered stdout, as a measuring shell may set, hid it)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["PYTHONPATH"] = str(ROOT)
    run = processes.start([sys.executable, "-m", "core.cli", *command], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)  # fmt: skip
    assert run.stdout is not None and run.stderr is not None
    run.stdout.close()  # as `head -1` exits
    err = run.stderr.read()
    run.stderr.close()
    assert run.wait(timeout=120) == 0 and err == b"", err
