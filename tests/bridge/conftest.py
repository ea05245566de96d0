"""Bridged DSH sessions for the tests: a real DSH log copied into a session directory, a ``bridge.json`` naming a
live process the test started (the real plugin is tested against the real DSH in ``tests/dsh/``), and ``td``
command pairs as DSH logs them."""

from __future__ import annotations

import itertools
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.bridge.files import BRIDGE_FILE, OUTCOMES_FILE, packaged_fingerprint, proc_start_time
from tests.conftest import FIXTURES
from tests.dsh.conftest import _no_dsh_left_running, dsh, model, shared_web  # noqa: F401  (the real DSH's fixtures)


def td_pair(command_id: str, request: dict[str, Any], outcome: dict[str, Any] | None) -> list[str]:
    """The ``command/run`` (and, with an outcome, ``command/done``) lines DSH logs for one bridge op."""
    run = {"type": "command/run", "data": {"commandId": command_id, "name": "td", "args": orjson.dumps(request).decode(),
                                           "source": {"kind": "plugin"}}}  # fmt: skip
    lines = [orjson.dumps(run).decode()]
    if outcome is not None:
        kind = "success" if outcome["outcome"] == "applied" else "error"
        done = {
            "type": "command/done",
            "data": {"commandId": command_id, "kind": kind, "text": orjson.dumps(outcome).decode()},
        }
        lines.append(orjson.dumps(done).decode())
    return lines


def compaction(start: int, end: int, sources: list[int]) -> str:
    """The line of a DSH compaction's summary message, replacing the surface nodes ``start`` to ``end``."""
    summary = {"id": "m-compaction", "role": "user", "content": [{"type": "text", "text": "what came before, in short"}],
               "source": {"kind": "compaction"}}  # fmt: skip
    return orjson.dumps({"type": "user/message", "data": {"message": summary},
                         "surfaceOp": {"op": "replace", "start": start, "end": end},
                         "sourceEventSeqs": sources}).decode()  # fmt: skip


def dsh_log(
    directory: Path,
    fixture: str = "tool-call-turn",
    *,
    after_type: str | None = None,
    insert: list[str] = (),
    tail: list[str] = (),
    session_id: str | None = None,
) -> Path:
    """``directory/session.jsonl``: a copy of a DSH fixture, with ``insert`` lines placed after its first line
    of type ``after_type``, ``tail`` lines appended and, when given, ``session_id`` in its header."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = (FIXTURES / f"{fixture}.session.jsonl").read_text().splitlines()
    if after_type is not None:
        at = next(i for i, line in enumerate(lines) if orjson.loads(line).get("type") == after_type)
        lines[at + 1 : at + 1] = list(insert)
    lines.extend(tail)
    if session_id is not None:
        lines[0] = orjson.dumps({**orjson.loads(lines[0]), "id": session_id}).decode()
    log = directory / "session.jsonl"
    log.write_text("\n".join(lines) + "\n")
    return log


BOOT_ID = (
    Path("/proc/sys/kernel/random/boot_id").read_text().strip()
)  # what the plugin records of this machine


def write_bridge(
    directory: Path, process: int | None, state: str = "running", **fields: Any
) -> dict[str, Any]:
    """Write ``bridge.json`` as the packaged plugin would (its heartbeat now, the pid's real start time)."""
    now = int(time.time() * 1000)
    body: dict[str, Any] = {"kind": "dsh", "pid": process, "procStart": proc_start_time(process) if process else None,
                            "state": state, "since": now - 1000, "heartbeat": now, "sessionId": "s",
                            "plugin": "tapedeck-bridge/0.1.0", "fingerprint": packaged_fingerprint(),
                            "dsh": "0.1.0-rc.8", "dir": str(directory), **fields}  # fmt: skip
    (directory / BRIDGE_FILE).write_bytes(orjson.dumps(body))
    return body


def append_outcome(directory: Path, outcome: dict[str, Any]) -> None:
    """One line of ``control.outcomes.jsonl``, as the plugin appends it."""
    with open(directory / OUTCOMES_FILE, "ab") as f:
        f.write(orjson.dumps({"at": int(time.time() * 1000), **outcome}) + b"\n")


def kill_unreaped(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL ``proc`` and leave it unreaped: a zombie, whose ``/proc/<pid>/stat`` keeps its pid and start time
    until its parent waits for it (``sleeper`` reaps it at the test's end)."""
    proc.kill()
    deadline = time.monotonic() + 60
    while Path(f"/proc/{proc.pid}/stat").read_bytes().rpartition(b")")[2].split()[0] != b"Z":
        assert time.monotonic() < deadline, "the killed process did not become a zombie"
        time.sleep(0.01)


@pytest.fixture
def sleeper() -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    """Start processes that stand in for a running DSH (each is killed when the test ends)."""
    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(["sleep", "600"])
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


@pytest.fixture
def bridged(tmp_path: Path, sleeper: Callable[[], subprocess.Popen[bytes]]) -> Callable[..., Path]:
    """A DSH session whose bridge is live: ``bridged(state="paused", **dsh_log_kwargs) -> log path``."""

    made = itertools.count(1)

    def make(state: str = "running", **kwargs: Any) -> Path:
        log = dsh_log(tmp_path / "sessions" / "--w--" / f"session-{next(made)}", **kwargs)
        write_bridge(log.parent, sleeper().pid, state)
        return log

    return make
