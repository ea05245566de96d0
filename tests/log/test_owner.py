"""The owner lock: a live writer holds the log itself; readers can ask, even about a starting writer."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.log.owner import is_owned
from core.log.writer import LOCK_NAME, SessionWriter, make_header
from core.shared.errors import WriterLockedError
from tests.conftest import Processes
from tests.lines import Lines


def test_a_live_writer_owns_its_log_until_it_closes(tmp_path: Path) -> None:
    writer = SessionWriter.create(tmp_path, make_header("s", cwd="/w"))
    assert is_owned(writer.path)
    writer.close()
    assert not is_owned(writer.path)
    resumed, _ = SessionWriter.resume(writer.path)
    assert is_owned(writer.path)
    resumed.close()
    assert not is_owned(tmp_path / "missing.jsonl")


def test_deleting_the_lock_file_does_not_admit_a_second_writer(tmp_path: Path) -> None:
    writer = SessionWriter.create(tmp_path, make_header("s", cwd="/w"))
    (writer.path.parent / LOCK_NAME).unlink()
    with pytest.raises(WriterLockedError, match="already open for writing"):
        SessionWriter.resume(writer.path)
    writer.close()


def test_a_killed_writer_stops_owning_its_log(tmp_path: Path, processes: Processes) -> None:
    code = (
        "import sys, time\n"
        "from core.log.writer import SessionWriter, make_header\n"
        "w = SessionWriter.create(sys.argv[1], make_header('k', cwd='/w'))\n"
        "print(w.path, flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = processes.start([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    path = Path(Lines(proc.stdout).next().strip())
    assert is_owned(path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not is_owned(path)


def test_probes_never_keep_a_writer_from_starting(tmp_path: Path) -> None:
    writer = SessionWriter.create(tmp_path, make_header("s", cwd="/w"))
    path = writer.path
    writer.close()
    done = threading.Event()

    def probe() -> None:
        while not done.is_set():
            is_owned(path)

    threads = [threading.Thread(target=probe) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for _ in range(20):
            SessionWriter.resume(path)[0].close()
    finally:
        done.set()
        for t in threads:
            t.join()
