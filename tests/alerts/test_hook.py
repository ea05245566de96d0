"""``--exec``'s time limit stops the whole command, whatever it started, and never waits on what it left behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from core.alerts.engine import Alert
from core.alerts.hook import HookRunner
from tests.conftest import process_gone

ALERT = Alert(session="s-1", path="/x/session.jsonl", cause="error-streak", seq=3, severity="warning",
              reason="3 tool errors in a row", at=0)  # fmt: skip


def _ends(pids: Path) -> bool:
    """Whether the background process whose pid the command wrote to ``pids`` is gone within 60 s."""
    (background,) = map(int, pids.read_text().split())
    deadline = time.monotonic() + 60
    while not process_gone(background) and time.monotonic() < deadline:
        time.sleep(0.05)
    return process_gone(background)


@pytest.fixture
def pids(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A file the command writes its background job's pid to; the command's time limit counts only from once it has
    (up to 60 s): on a loaded machine a 0.5 s limit could kill ``sh`` before it had started the job the test checks.
    Whatever of the command's process group a failed stop left running is killed when the test ends."""
    pids = tmp_path / "pids"
    communicate = subprocess.Popen.communicate

    def after_the_job_started(self: subprocess.Popen[bytes], *args: object, **kwargs: object) -> object:
        deadline = time.monotonic() + 60
        while not pids.read_text(errors="replace").endswith("\n") and time.monotonic() < deadline:
            time.sleep(0.02)
        return communicate(self, *args, **kwargs)  # type: ignore[arg-type]

    pids.touch()
    monkeypatch.setattr(subprocess.Popen, "communicate", after_the_job_started)
    yield pids
    for pid in map(int, pids.read_text().split()):
        if not process_gone(pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(os.getpgid(pid), signal.SIGKILL)


def _run(command: str, timeout: float, alert: Alert = ALERT) -> tuple[threading.Thread, list[str]]:
    """Run ``command`` for ``alert`` under ``timeout`` s; the tests of a command that ends give it 60 s, a limit no
    load makes ``exit 3`` reach."""
    said: list[str] = []
    runner = HookRunner(command, timeout, said.append)
    worker = threading.Thread(target=runner.run_one, args=(alert,), daemon=True)
    worker.start()
    # up to 60 s for sh to start its job (the pids fixture), 60 s more for the rest: the command's sleeps are of an
    # hour, so returning at all means it did not wait for them
    worker.join(120)
    runner.close(0)
    return worker, said


def test_a_command_over_its_limit_is_stopped_with_the_processes_it_started(pids: Path) -> None:
    # a compound command: sh runs sleep as a child (no exec), and a background one holds the pipes too
    worker, said = _run(f"sleep 3600 & echo $! >> {pids}; sleep 3600; echo late", 0.5)
    assert not worker.is_alive(), "run_one waited for the command's children after its time limit"
    assert said == ["--exec for the error-streak alert of s-1: stopped after the 0.5 s time limit"]
    assert _ends(pids), "a process the command started outlived its time limit"


def test_a_command_that_exits_but_leaves_a_child_holding_its_output_does_not_stall_the_next(pids: Path) -> None:
    worker, said = _run(f"sleep 3600 & echo $! >> {pids}; exit 0", 0.5)
    assert not worker.is_alive(), "run_one waited for a child that kept the command's output open"
    assert said == ["--exec for the error-streak alert of s-1: stopped after the 0.5 s time limit"]
    assert _ends(pids)


def test_a_failing_command_still_reports_its_status_and_last_line(tmp_path: Path) -> None:
    worker, said = _run("echo first >&2; echo why >&2; exit 3", 60)
    assert not worker.is_alive()
    assert said == ["--exec for the error-streak alert of s-1: exit status 3: why"]


def test_the_alert_reaches_the_command_on_stdin(tmp_path: Path) -> None:
    got = tmp_path / "got"
    worker, said = _run(f"cat > {got}", 60)
    assert not worker.is_alive() and said == []
    assert b'"cause":"error-streak"' in got.read_bytes()
    assert os.path.getsize(got) > 0


def test_an_alert_of_a_path_that_is_not_utf8_reaches_the_command(tmp_path: Path) -> None:
    """A session under a directory named in bytes that are not UTF-8: orjson refused the alert's path, so the hook's
    worker died with a TypeError, leaving the command it had started waiting on its stdin and running no other."""
    got = tmp_path / "got"
    alert = Alert(**{**ALERT.to_dict(), "path": os.fsdecode(b"/x/proj\xff/session.jsonl"), "session": "s-\x9b2J"})
    worker, said = _run(f"cat > {got}", 60, alert)
    assert not worker.is_alive() and said == []
    assert orjson.loads(got.read_bytes())["path"] == "/x/proj\\xff/session.jsonl"
    assert b"\\u009b2J" in got.read_bytes()  # as every JSON output writes a C1 control


def test_a_session_id_from_the_log_is_quoted_in_the_failure() -> None:
    """--exec's failure named the session by its id as the log held it: an id holding a newline forged a line on
    stderr (on a terminal too) and, piped, its escape sequences went out raw. It is quoted, as control quotes it."""
    hostile = Alert(session="s\nforged: exit status 0\x1b[2J", path="/x/session.jsonl", cause="error-streak", seq=3,
                    severity="warning", reason="3 tool errors in a row", at=0)  # fmt: skip
    worker, said = _run("exit 3", 60, hostile)
    assert not worker.is_alive()
    assert said == ["--exec for the error-streak alert of s\\nforged: exit status 0\\u001b[2J: exit status 3"]
