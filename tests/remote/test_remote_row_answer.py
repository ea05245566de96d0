"""A row action's wait for its answer on a remote session, through the real OpenSSH server: it looks every second
whether the session's host still runs, which over SSH read the host's whole state (its files, the processes they
name: several round trips) each time. It now asks the files' stats (one round trip) and reads the state only when
one changed, or once the bound since its last read passed (a host that dies without a word changes no file)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

import core.remote.sessions
from core.fleet.actions import RowAnswer
from tests.alerts.crafted import HEADER
from tests.conftest import Processes
from tests.remote.sshd import MISSING, Sshd

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


@pytest.fixture
def sleeper(processes: Processes) -> subprocess.Popen[bytes]:
    """A process that stands in for the far host (killed at the test's end, when the test has not)."""
    return processes.start(["sleep", "600"])


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per read of a remote host state."""
    done: list[int] = []
    real = core.remote.sessions.remote_host_states

    def counted(*args: Any, **kwargs: Any) -> Any:
        done.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(core.remote.sessions, "remote_host_states", counted)
    return done


def _hosted(tmp_path: Path, pid: int) -> Path:
    """A remote tapedeck session whose host.json says the host ``pid`` runs it (since now)."""
    log = tmp_path / "s1" / "session.jsonl"
    log.parent.mkdir()
    log.write_bytes(orjson.dumps({**HEADER, "id": "s1"}) + b"\n")
    (log.parent / "host.json").write_bytes(
        orjson.dumps({"state": "running", "pid": pid, "since": int(time.time() * 1000)})
    )
    return log


def test_the_wait_for_a_remote_answer_reads_the_host_state_only_when_its_files_changed(
    sshd: Sshd,
    tmp_path: Path,
    sleeper: subprocess.Popen[bytes],
    reads: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While nothing changes, the wait reads no host state (the bound is set past the wait); once the host writes
    that it exited, the wait ends at its next look, saying so."""
    monkeypatch.setattr(core.remote.sessions, "STATE_RECHECK_SECONDS", 3600.0)
    sshd.trust()
    log = _hosted(tmp_path, sleeper.pid)
    answer = RowAnswer(Path(f"testbox:{log}"))
    reads.clear()
    assert answer.wait("req-never-answered", timeout=3) is None and answer.gone is None
    assert reads == []  # three looks at the host, each one stat round trip
    (log.parent / "host.json").write_bytes(
        orjson.dumps({"state": "exited", "pid": sleeper.pid, "since": 5_000})
    )
    assert answer.wait("req-never-answered", timeout=60) is None
    assert answer.gone is not None and "no live host runs this session" in answer.gone, answer.gone
    assert reads == [1]


def test_the_wait_for_a_remote_answer_sees_a_host_that_died_without_a_word_within_the_bound(
    sshd: Sshd, tmp_path: Path, sleeper: subprocess.Popen[bytes], reads: list[int]
) -> None:
    """A host killed outright changes none of the files: its death is seen at the first read past the bound."""
    sshd.trust()
    log = _hosted(tmp_path, sleeper.pid)
    answer = RowAnswer(Path(f"testbox:{log}"))
    sleeper.kill()
    sleeper.wait()
    began = time.monotonic()
    assert answer.wait("req-never-answered", timeout=60) is None
    assert answer.gone is not None and "no live host runs this session" in answer.gone, answer.gone
    assert time.monotonic() - began < 60 and os.path.exists(log)
