"""``tapedeck control [user@]host:PATH`` on a session a DSH bridge runs on the far side, through the real OpenSSH
server: the request lands in the remote inbox, ``--wait`` reads the bridge's answer back from the remote
``control.outcomes.jsonl``, and the exit codes are the local ones."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.cli import main
from core.control.inbox import INBOX_NAME
from tests.bridge.conftest import append_outcome, dsh_log, sleeper, write_bridge  # noqa: F401 (a fixture)
from tests.remote.sshd import MISSING, Sshd

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def _answer(log: Path, outcome: str) -> threading.Thread:
    """Stand in for the bridge's inbox loop on the far side: answer the first request, pending then ``outcome``."""

    def loop() -> None:
        deadline = time.monotonic() + 20
        inbox = log.parent / INBOX_NAME
        while time.monotonic() < deadline:
            lines = inbox.read_bytes().splitlines() if inbox.exists() else []
            requests = [r for r in map(orjson.loads, lines) if "id" in r]
            if requests:
                r = requests[0]
                append_outcome(log.parent, {"requestId": r["id"], "op": r["op"], "outcome": "pending"})
                append_outcome(log.parent, {"requestId": r["id"], "op": r["op"], "outcome": outcome})
                return
            time.sleep(0.02)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(("outcome", "code"), [("applied", 0), ("rejected", 1)])
def test_wait_reads_a_remote_bridges_outcome(sshd: Sshd, tmp_path: Path, sleeper: Callable[[], Any],  # noqa: F811
                                             capsys: pytest.CaptureFixture[str], outcome: str, code: int) -> None:  # fmt: skip
    sshd.trust()
    log = dsh_log(tmp_path / "sessions" / "--w--" / "s1")
    write_bridge(log.parent, sleeper().pid, "running")
    _answer(log, outcome)
    got = main(["control", f"testbox:{log.parent}", "pause", "--wait", "--timeout", "20", "--json"])
    event = json.loads(capsys.readouterr().out)
    assert got == code and (event["data"]["outcome"], event["data"]["op"]) == (outcome, "pause")
    assert event["file"] == f"testbox:{log.parent / 'control.outcomes.jsonl'}"


def test_an_exited_remote_bridge_exits_3_unless_queued(sshd: Sshd, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    sshd.trust()
    log = dsh_log(tmp_path / "sessions" / "--w--" / "s1")
    write_bridge(log.parent, None, "exited")
    assert main(["control", f"testbox:{log}", "pause"]) == 3
    assert "no live DSH bridge" in capsys.readouterr().err
    assert not (log.parent / INBOX_NAME).exists()  # nothing was sent
    assert main(["control", f"testbox:{log}", "pause", "--queue"]) == 0
    assert [orjson.loads(line)["op"] for line in (log.parent / INBOX_NAME).read_bytes().splitlines()] == ["pause"]


def test_a_remote_tapedeck_log_without_its_state_file_is_refused_as_locally(sshd: Sshd, tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """A log a tapedeck host ran (its ``tapedeck/host`` event) whose ``host.json`` is gone: its host exited, as the
    local command says (exit 3, ``--queue`` offered), not a DSH session that needs the bridge installed."""
    from tests.alerts.crafted import HEADER, Log

    sshd.trust()
    log = Log()
    log.add("tapedeck/host", {"pid": 999_999_999, "model": "crafted-model"})
    log.turn(1)
    path = tmp_path / "sessions" / "--w--" / "s1" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in [HEADER, *log.events]))
    assert main(["control", str(path), "pause"]) == 3
    local = capsys.readouterr().err
    assert main(["control", f"testbox:{path}", "pause"]) == 3
    remote = capsys.readouterr().err
    assert "no live host" in local and "no live host" in remote and "bridge" not in remote, remote
    assert not (path.parent / INBOX_NAME).exists()
    assert main(["control", f"testbox:{path}", "pause", "--queue"]) == 0  # left for `tapedeck run --resume`
    [request] = [orjson.loads(line) for line in (path.parent / INBOX_NAME).read_bytes().splitlines()]
    assert (request["op"], request["queued"]) == ("pause", True)


def test_a_wait_whose_machine_goes_away_says_the_request_was_sent_and_may_still_apply(
    sshd: Sshd, tmp_path: Path, sleeper: Callable[[], Any], capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    """The request is in the far inbox and cannot be withdrawn any more: the operator is told so (and its id), not
    only that the machine is unreachable."""
    sshd.trust()
    log = dsh_log(tmp_path / "sessions" / "--w--" / "s1")
    write_bridge(log.parent, sleeper().pid, "running")
    threading.Timer(1.5, sshd.kill).start()
    assert main(["control", f"testbox:{log}", "pause", "--wait", "--timeout", "30"]) == 2
    err = capsys.readouterr().err
    [request] = [orjson.loads(line) for line in (log.parent / INBOX_NAME).read_bytes().splitlines()]
    assert "unreachable" in err and request["id"] in err and "may still" in err, err


def test_a_remote_sessions_root_is_refused_as_locally_even_with_one_session(sshd: Sshd, tmp_path: Path,
                                                                          sleeper: Callable[[], Any],  # noqa: F811
                                                                          capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """``control`` takes a log or a session directory. A sessions root holding exactly one session was taken for
    that session over SSH (the request went to its live bridge), where the local command refuses the root: both
    now refuse it, exit 2, nothing written."""
    sshd.trust()
    root = tmp_path / "sessions"
    log = dsh_log(root / "--w--" / "s1")
    write_bridge(log.parent, sleeper().pid, "running")
    assert main(["control", str(root), "pause"]) == 2
    local = capsys.readouterr().err
    assert main(["control", f"testbox:{root}", "pause"]) == 2
    remote = capsys.readouterr().err
    assert "no session.jsonl or session.jsonl.zstd in this directory" in local
    assert remote == local.replace(f"{root}:", f"testbox:{root}:")
    assert not (log.parent / INBOX_NAME).exists()  # nothing was sent


def test_a_reading_command_refuses_a_remote_sessions_root_as_locally(sshd: Sshd, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """``inspect`` on a sessions root of one session read that session over SSH; locally it is refused."""
    sshd.trust()
    root = tmp_path / "sessions"
    dsh_log(root / "--w--" / "s1")
    assert main(["inspect", str(root)]) == 2
    local = capsys.readouterr().err
    assert main(["inspect", f"testbox:{root}"]) == 2
    assert capsys.readouterr().err == local.replace(f"{root}:", f"testbox:{root}:")
