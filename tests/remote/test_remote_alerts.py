"""``tapedeck alerts`` on ``user@host:PATH`` roots, through the real OpenSSH server of the remote tests: the report
gives a remote root the alerts it gives the same root locally (remote paths named as the user wrote them), a
refused host key is one clear line, and ``--follow --json`` streams a remote log's alerts as it grows, with
``unreachable`` when the server dies and the log's later alerts once it is back."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from core.cli import main
from core.remote.link import close_links
from tests.alerts.crafted import HEADER, Log
from tests.conftest import FIXTURES, Processes
from tests.log.test_cut_while_read import _log_changed_mid_read
from tests.remote.sshd import MISSING, Sshd
from tests.tui.logs import hold_host, release_hosts

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


@pytest.fixture(autouse=True)
def _hosts() -> Iterator[None]:
    yield
    release_hosts()  # the simulated hosts of the test exit


def _write(path: Path, events: list[dict[str, Any]]) -> None:
    with open(path, "a") as f:
        f.write("".join(json.dumps(e) + "\n" for e in events))


def _failing(log: Log, turn: int, count: int) -> None:
    log.turn(turn)
    for _ in range(count):
        log.result(True, turn=turn)


def _root(tmp_path: Path) -> tuple[Path, Log]:
    path = tmp_path / "root" / "p" / "s1" / "session.jsonl"
    path.parent.mkdir(parents=True)
    log = Log()
    log.header()
    _failing(log, 1, 3)
    _write(path, [{**HEADER, "id": "s1"}, *log.events])
    return path, log


def test_a_report_on_a_remote_root_gives_its_local_alerts(sshd: Sshd, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    sshd.trust()
    path, _ = _root(tmp_path)
    root = tmp_path / "root"
    assert main(["alerts", str(root), "--json"]) == 1
    local = json.loads(capsys.readouterr().out)
    assert main(["alerts", f"testbox:{root}", str(tmp_path / "root" / "p" / "s1"), "--json"]) == 1
    remote = json.loads(capsys.readouterr().out)
    assert [a["cause"] for a in local] == ["error-streak"]
    assert remote == [local[0], {**local[0], "path": f"testbox:{path}"}]
    assert main(["alerts", f"testbox:{root}"]) == 1
    assert "error-streak" in capsys.readouterr().out


def test_an_unknown_host_key_or_a_dead_machine_is_one_clear_line(sshd: Sshd, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    _root(tmp_path)
    assert main(["alerts", f"testbox:{tmp_path / 'root'}"]) == 2
    err = capsys.readouterr().err
    assert "ssh testbox true" in err and "known_hosts" in err and "Traceback" not in err
    close_links()  # a new command: a new link
    sshd.trust()
    sshd.kill()
    assert main(["alerts", f"testbox:{tmp_path / 'root'}", "--json"]) == 2
    assert "testbox: unreachable since" in capsys.readouterr().err
    assert main(["alerts", f"testbox:{tmp_path / 'root'}"]) == 2
    out = capsys.readouterr().out  # not "no alerts": nothing was read there
    assert out == "no alerts in the logs that could be read (some could not: see stderr)\n", out


def test_sessions_on_a_dead_machine_exit_2_not_no_sessions(sshd: Sshd, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """As ``alerts``: rows of a machine that could not be listed are no answer, so a script must not read 0 and
    "no sessions" (or ``[]``) as "nothing runs there"; the roots that could be read are still listed."""
    path, _ = _root(tmp_path)
    sshd.trust()
    assert main(["sessions", f"testbox:{tmp_path / 'root'}", "--json"]) == 0
    assert [row["id"] for row in json.loads(capsys.readouterr().out)] == ["s1"]
    close_links()
    sshd.kill()
    assert main(["sessions", f"testbox:{tmp_path / 'root'}", "--json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out) == [] and "testbox: unreachable since" in err
    assert main(["sessions", f"testbox:{tmp_path / 'root'}", str(path)]) == 2
    out, err = capsys.readouterr()
    assert "1 session under" in out and "testbox: unreachable since" in err


def test_a_remote_root_that_does_not_exist_is_no_answer_as_locally(sshd: Sshd, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """A mistyped remote path: not ``no alerts`` / ``no sessions`` and exit 0 (a CI gate would pass), but the path
    named on stderr and exit 2, as a local path that does not exist; a root that exists and is empty stays an
    answer."""
    sshd.trust()
    missing = f"testbox:{tmp_path / 'no-such-root'}"
    assert main(["alerts", missing]) == 2
    out, err = capsys.readouterr()
    assert "no such file or directory" in err and str(tmp_path / "no-such-root") in err, (out, err)
    assert main(["sessions", missing, "--json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out) == [] and "no such file or directory" in err
    (tmp_path / "empty").mkdir()
    assert main(["alerts", f"testbox:{tmp_path / 'empty'}"]) == 0
    assert main(["sessions", f"testbox:{tmp_path / 'empty'}"]) == 0
    assert capsys.readouterr().err == ""


def test_a_remote_log_by_another_name_is_read_as_a_local_one_is(sshd: Sshd, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """A log kept as ``run-1.jsonl`` (a copy, a backup): given by its path it is a log here and over there, not an
    empty directory listing (``no alerts``, exit 0)."""
    sshd.trust()
    path, _ = _root(tmp_path)
    kept = path.rename(tmp_path / "run-1.jsonl")
    assert main(["alerts", str(kept), "--json"]) == 1
    local = json.loads(capsys.readouterr().out)
    assert main(["alerts", f"testbox:{kept}", "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == [{**local[0], "path": f"testbox:{kept}"}]
    assert main(["sessions", f"testbox:{kept}", "--json"]) == 0
    assert [row["id"] for row in json.loads(capsys.readouterr().out)] == ["s1"]


@pytest.mark.skipif(not os.path.isdir("/proc/1/fdinfo"), reason="needs /proc/1/fdinfo (Linux)")
def test_a_remote_directory_that_cannot_be_read_is_skipped_with_a_note_as_locally(
    sshd: Sshd, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A directory the far side refuses to list (``/proc/1/fdinfo``, refused even to root in a container) is noted
    by its path (``skipped testbox:DIR: reason``, as a local one is) and the other roots are still listed, where one
    error without the path ended the command (and, in the fleet, every rescan of the roots after it)."""
    sshd.trust()
    path, _ = _root(tmp_path)
    with contextlib.suppress(PermissionError):
        os.listdir("/proc/1/fdinfo")
        pytest.skip("this machine lets us list /proc/1/fdinfo")
    assert main(["sessions", "testbox:/proc/1/fdinfo", f"testbox:{tmp_path / 'root'}", "--json"]) == 0
    out, err = capsys.readouterr()
    assert [row["id"] for row in json.loads(out)] == ["s1"], err
    assert "skipped testbox:/proc/1/fdinfo: " in err, err


def _lines(stream: IO[str]) -> queue.Queue[dict[str, Any]]:
    got: queue.Queue[dict[str, Any]] = queue.Queue()

    def pump() -> None:
        for line in stream:
            got.put(json.loads(line))

    threading.Thread(target=pump, daemon=True).start()
    return got


def _next(got: queue.Queue[dict[str, Any]], timeout: float = 60.0) -> dict[str, Any]:
    try:
        return got.get(timeout=timeout)
    except queue.Empty:
        raise AssertionError(f"no alert within {timeout} s") from None


def test_follow_streams_a_remote_log_and_says_when_it_cannot_be_reached(
    sshd: Sshd, tmp_path: Path, processes: Processes
) -> None:
    sshd.trust()
    path, log = _root(tmp_path)
    proc = processes.start([sys.executable, "-m", "core.cli", "alerts", f"testbox:{tmp_path / 'root'}", "--follow",
                            "--json", "--set", "alerts.stalled.enabled=false"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stdout is not None
        got = _lines(proc.stdout)
        first = _next(got)
        assert (first["cause"], first["seq"], first["path"]) == ("error-streak", 4, f"testbox:{path}")
        written = len(log.events)
        log.end(1)
        log.turn(2)
        log.result(False, turn=2)  # the streak clears
        for _ in range(3):
            log.call("read_file", '{"path": "a.py"}', turn=2)
        _write(path, log.events[written:])
        loop = _next(got)
        assert (loop["cause"], loop["seq"]) == ("loop", len(log.events) - 1)

        sshd.kill()
        gone = _next(got)
        assert (gone["cause"], gone["severity"], gone["path"]) == ("unreachable", "warning", f"testbox:{path}")
        assert "testbox: unreachable since" in gone["reason"]
        written = len(log.events)
        _failing(log, 3, 3)  # written while the machine cannot be reached
        _write(path, log.events[written:])
        sshd.start()
        back = _next(got)
        assert (back["cause"], back["seq"]) == ("error-streak", len(log.events) - 1)  # nothing lost on the way
        assert got.empty()
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err


def test_an_action_reaches_a_live_remote_host_that_does_not_act_itself(
    sshd: Sshd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.control.config import validate_config
    from core.control.inbox import InboxReader
    from core.fleet.alerts import AlertSources

    sshd.trust()
    path, log = _root(tmp_path)
    # a live host: a process that runs on the far side and started before its recorded state (this one)
    host = {"state": "running", "pid": os.getpid(), "since": int(time.time() * 1000)}
    (path.parent / "host.json").write_text(json.dumps(host))
    hold_host(path)  # … holding its log, as a live host does
    config = validate_config({"alerts": {"loop": {"action": "message", "message": "Read it once."}}})
    sources = AlertSources([f"testbox:{tmp_path / 'root'}"], config, act=True)
    assert "error-streak" in {a.cause for a in sources.poll()}  # the first look: history, acted on by nobody
    written = len(log.events)
    for _ in range(3):  # while it watches
        log.call("read_file", '{"path": "a.py"}')
    _write(path, log.events[written:])
    monkeypatch.setattr("core.fleet.follow.REMOTE_POLL_SECONDS", 0)  # asked for again at once
    raised = sources.poll()
    assert "loop" in {a.cause for a in raised}
    sent = [e.request for e in InboxReader(path.parent / "control.jsonl").read() if e.request]
    assert [(r["origin"], r["op"], r["args"]) for r in sent] == [("alert:loop", "message", {"text": "Read it once."})]
    (path.parent / "host.json").write_text(json.dumps({**host, "state": "exited"}))
    release_hosts()
    close_links()
    AlertSources([f"testbox:{tmp_path / 'root'}"], config, act=True).poll()
    assert len([e for e in InboxReader(path.parent / "control.jsonl").read() if e.request]) == 1  # nobody to read it


def test_a_remote_session_that_appears_while_watched_is_acted_on_from_its_start(
    sshd: Sshd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session that starts on the far side after the first listing of its root is found at the next listing,
    seconds later: what its log raised meanwhile happened while the watcher ran, so its action is sent (a DSH run
    that crossed its budget in its first seconds was never paused)."""
    from core.control.config import validate_config
    from core.control.inbox import InboxReader
    from core.fleet.alerts import AlertSources

    sshd.trust()
    _root(tmp_path)
    config = validate_config({"alerts": {"loop": {"action": "message", "message": "Read it once."}}})
    sources = AlertSources([f"testbox:{tmp_path / 'root'}"], config, act=True)
    sources.poll()  # the first listing: s1 only
    path = tmp_path / "root" / "p" / "s2" / "session.jsonl"
    path.parent.mkdir()
    log = Log()
    log.header()
    log.turn(1)
    for _ in range(3):
        log.call("read_file", '{"path": "a.py"}')
    (path.parent / "host.json").write_text(json.dumps({"state": "running", "pid": os.getpid(),
                                                       "since": int(time.time() * 1000)}))  # fmt: skip
    _write(path, [{**HEADER, "id": "s2"}, *log.events])
    hold_host(path)
    monkeypatch.setattr("core.fleet.follow.RESCAN_SECONDS", 0)
    assert "loop" in {a.cause for a in sources.poll()}
    sent = [e.request for e in InboxReader(path.parent / "control.jsonl").read() if e.request]
    assert [(r["origin"], r["op"]) for r in sent] == [("alert:loop", "message")]


def test_a_remote_logs_cache_break_is_found_as_it_is_locally(sshd: Sshd, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """The cache-break rule rebuilds the requests, reading the surface back: a remote log's must come from what
    was read over SFTP (a local file of that path does not exist), and find the break the local read finds."""
    sshd.trust()
    path = tmp_path / "root" / "p" / "s1" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes((FIXTURES / "compaction-recovery.session.jsonl").read_bytes())
    eager = ["--set", "alerts.cacheBreak.tokens=1"]
    main(["alerts", str(tmp_path / "root"), "--json", *eager])
    local = json.loads(capsys.readouterr().out)
    main(["alerts", f"testbox:{tmp_path / 'root'}", "--json", *eager])
    remote = json.loads(capsys.readouterr().out)
    assert [a["cause"] for a in local] == ["cache-break"]
    assert [{**a, "at": None} for a in remote] == [{**local[0], "path": f"testbox:{path}", "at": None}]  # when read


def test_a_local_log_cut_during_the_read_leaves_the_remote_roots_alerts_reported(
    sshd: Sshd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``alerts LOG host:ROOT``: the local log cut while it is read no longer fails the whole command; it is named
    on stderr, the remote root's alerts are reported and the exit status is 2 (the report is not whole), as for
    one session of a root."""
    sshd.trust()
    path, _ = _root(tmp_path)
    log = tmp_path / "local" / "session.jsonl"
    log.parent.mkdir()
    _log_changed_mid_read(log, 8, lambda: os.truncate(log, 100_000), monkeypatch)
    assert main(["alerts", str(log), f"testbox:{tmp_path / 'root'}", "--json"]) == 2
    out, err = capsys.readouterr()
    assert f"{log}: the log was truncated to 100,000 bytes while it was read" in err, err
    assert [(a["path"], a["cause"]) for a in json.loads(out)] == [(f"testbox:{path}", "error-streak")]
