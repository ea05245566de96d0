"""``tapedeck control [user@]host:PATH`` on a session a DSH bridge runs on the far side, through the real OpenSSH
server: the request lands in the remote inbox, ``--wait`` reads the bridge's answer back from the remote
``control.outcomes.jsonl``, and the exit codes are the local ones."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.cli import main
from core.control.inbox import INBOX_NAME, answered_ids
from core.fleet.actions import send_row_action
from core.log.reader import read_log
from core.shared.errors import TapedeckError
from tests.bridge.conftest import append_outcome, dsh_log, sleeper, write_bridge  # noqa: F401 (a fixture)
from tests.conftest import Processes
from tests.host.test_control_at_exit import _host, _unanswered
from tests.remote.sshd import MISSING, Sshd

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def _answer(log: Path, outcome: str) -> threading.Thread:
    """Stand in for the bridge's inbox loop on the far side: answer the first request, pending then ``outcome``."""

    def loop() -> None:
        deadline = time.monotonic() + 60
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


@pytest.mark.skipif(not Path("/etc/machine-id").is_file(), reason="names this machine by /etc/machine-id")
def test_an_exited_remote_bridge_exits_3_unless_queued(sshd: Sshd, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    sshd.trust()
    log = dsh_log(tmp_path / "sessions" / "--w--" / "s1")
    here = f"{Path('/etc/machine-id').read_text().strip()}:64769:1234"  # sshd runs on this machine
    write_bridge(log.parent, None, "exited", dirId=here)
    assert main(["control", f"testbox:{log}", "pause"]) == 3
    assert "no live DSH bridge" in capsys.readouterr().err
    assert not (log.parent / INBOX_NAME).exists()  # nothing was sent
    assert main(["control", f"testbox:{log}", "pause", "--queue"]) == 0
    # the bridge.json a copy brought from another machine holds (its path there the same)
    write_bridge(log.parent, None, "exited", dirId="0123456789abcdef0123456789abcdef:64769:1234")
    assert main(["control", f"testbox:{log}", "resume", "--queue"]) == 0
    requests = [orjson.loads(line) for line in (log.parent / INBOX_NAME).read_bytes().splitlines()]
    # the directory the bridge served, so that a copy of it never runs the request; none for the copy's bridge.json,
    # whose DSH takes the request by its time, as the copy's (the original's identity had it cancelled there)
    assert [(r["op"], r.get("to")) for r in requests] == [("pause", here), ("resume", None)]


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
    sshd: Sshd, tmp_path: Path, sleeper: Callable[[], Any], monkeypatch: pytest.MonkeyPatch,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """The request is in the far inbox and cannot be withdrawn any more: the operator is told so (and its id), not
    only that the machine is unreachable. The machine goes as the wait begins (not on a timer, which a loaded
    machine fired before the append)."""
    from core.cli import control

    sshd.trust()
    log = dsh_log(tmp_path / "sessions" / "--w--" / "s1")
    write_bridge(log.parent, sleeper().pid, "running")
    wait = control._wait_outcome
    monkeypatch.setattr(control, "_wait_outcome", lambda *args: (sshd.kill(), wait(*args))[1])
    assert main(["control", f"testbox:{log}", "pause", "--wait", "--timeout", "30"]) == 2
    err = capsys.readouterr().err
    [request] = [orjson.loads(line) for line in (log.parent / INBOX_NAME).read_bytes().splitlines()]
    assert "unreachable" in err and request["id"] in err and "may still" in err, err


def test_a_request_whose_machine_goes_away_before_the_append_answers_may_have_been_written(
    sshd: Sshd, tmp_path: Path, sleeper: Callable[[], Any], monkeypatch: pytest.MonkeyPatch,  # noqa: F811
    capsys: pytest.CaptureFixture[str], sync_hangs: Path,
) -> None:  # fmt: skip
    """The machine went away once the request's line was in the far inbox, before the append's exit status came
    back: 'the request could not be written (exit None)' was false, as the line is there and the host may still
    apply it. The far side's ``sync`` (the append's last step, after the line is written) never returns here, so
    the server is taken away in exactly that window, on an idle or a loaded machine alike."""
    sshd.trust()
    log = dsh_log(tmp_path / "sessions" / "--w--" / "s1")
    write_bridge(log.parent, sleeper().pid, "running")
    synced = sync_hangs
    killer = threading.Thread(target=_kill_once_there, args=(sshd, synced), daemon=True)
    killer.start()
    assert main(["control", f"testbox:{log}", "pause"]) == 2
    killer.join()
    assert synced.exists()  # the server went with the append under way
    err = capsys.readouterr().err
    [request] = [orjson.loads(line) for line in (log.parent / INBOX_NAME).read_bytes().splitlines()]
    assert request["id"] in err and "may have been written" in err and "may still be applied" in err, err
    assert "could not be written" not in err, err


@pytest.fixture
def sync_hangs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Give the far side's append a ``sync`` that, once called, creates the file whose path this yields and then
    never returns; the held ``sync`` processes are ended afterwards (the server going does not end them)."""
    from core.remote import inbox

    shims, mark, pids = tmp_path / "shims", tmp_path / "synced", tmp_path / "sync.pids"
    shims.mkdir()
    script = f"#!/bin/sh\necho $$ >>{shlex.quote(str(pids))}\n: >{shlex.quote(str(mark))}\nexec sleep 3600\n"
    (shims / "sync").write_text(script)
    (shims / "sync").chmod(0o755)
    monkeypatch.setattr(inbox, "SEND", f'PATH={shims}:"$PATH"\n{inbox.SEND}')
    yield mark
    for pid in pids.read_text().split() if pids.exists() else ():
        with contextlib.suppress(OSError):  # gone already, or no longer the held sleep
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep\0"):
                os.kill(int(pid), signal.SIGKILL)


def _kill_once_there(sshd: Sshd, mark: Path) -> None:
    """Take the machine away once ``mark`` is there (60 s at most)."""
    deadline = time.monotonic() + 60
    while not mark.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    sshd.kill()


def test_an_append_the_link_gives_up_on_may_have_been_written_one_it_never_began_was_not(
    sshd: Sshd, tmp_path: Path, sleeper: Callable[[], Any], monkeypatch: pytest.MonkeyPatch,  # noqa: F811
    capsys: pytest.CaptureFixture[str], sync_hangs: Path,
) -> None:  # fmt: skip
    """The link gave up on the append (as after its call timeout) with the request's line already in the far inbox,
    written by the far side's command or, on a machine with neither flock(1) nor perl, over SFTP: the operator saw
    only 'unreachable since …', though the request may be there and may still be applied. The far side's ``sync``
    (or the SFTP fsync) is held until the link has given up, so the window is certain. An append the link refuses
    before sending anything (the machine down, or the link backing off) still says only that it is unreachable."""
    from core.remote import inbox
    from core.remote.link import Unreachable, link_for
    from core.remote.target import parse_remote

    sshd.trust()
    log = dsh_log(tmp_path / "sessions" / "--w--" / "s1")
    write_bridge(log.parent, sleeper().pid, "running")
    synced, fsynced = sync_hangs, _fsync_hangs(monkeypatch)
    _give_up_once(monkeypatch, lambda: synced.exists() or fsynced.is_set())
    assert main(["control", f"testbox:{log}", "pause"]) == 2
    synced.unlink()  # the far side held in `sync`: the line was written
    errs = [capsys.readouterr().err]
    monkeypatch.setattr(inbox, "SEND", "exit 100")  # the next one over SFTP, held in its fsync
    assert main(["control", f"testbox:{log}", "resume"]) == 2
    assert fsynced.is_set()
    errs.append(capsys.readouterr().err)
    lines = (log.parent / INBOX_NAME).read_bytes().splitlines()
    requests = [orjson.loads(line) for line in lines]
    assert [r["op"] for r in requests] == ["pause", "resume"]
    for request, err in zip(requests, errs, strict=True):
        assert f"request {request['id']} ({request['op']}) may have been written" in err, err
        assert "unreachable since" in err and "may still be applied" in err, err
    sshd.kill()
    link, target = link_for(parse_remote("testbox:/x")), parse_remote(f"testbox:{log}")
    for _ in range(2):  # the connect refused, then the link backing off: nothing sent, nothing more said
        with pytest.raises(Unreachable) as refused:
            inbox.append_remote_request(link, target, "pause")
        assert "may have been written" not in str(refused.value)
    assert (log.parent / INBOX_NAME).read_bytes().splitlines() == lines


def _fsync_hangs(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Make an SFTP fsync (sent once the write was answered) never return; the event returned is set once one was
    called."""
    import asyncio

    import asyncssh

    called = threading.Event()

    async def fsync(self: Any) -> None:
        called.set()
        await asyncio.Event().wait()

    monkeypatch.setattr(asyncssh.SFTPClientFile, "fsync", fsync)
    return called


def _give_up_once(monkeypatch: pytest.MonkeyPatch, there: Callable[[], bool]) -> None:
    """Make a link's call give up, as it does after ``CALL_TIMEOUT``, once ``there()`` holds with the call still
    under way (60 s at most)."""
    import asyncio

    from core.remote.link import SshLink

    call = SshLink.call

    def held(self: SshLink, make: Callable[[Any], Any]) -> Any:
        async def until_there(sftp: Any) -> Any:
            task = asyncio.ensure_future(make(sftp))
            deadline = time.monotonic() + 60
            while not task.done():
                if there() or time.monotonic() > deadline:
                    task.cancel()
                    raise TimeoutError
                await asyncio.sleep(0.01)
            return task.result()

        return call(self, until_there)

    monkeypatch.setattr(SshLink, "call", held)


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
    assert remote == local.replace(f"{root}", f"testbox:{root}")  # and both name the command that lists it
    assert "it is a sessions root, holding 1 session: `tapedeck sessions " in local
    assert not (log.parent / INBOX_NAME).exists()  # nothing was sent


def test_a_reading_command_refuses_a_remote_sessions_root_as_locally(sshd: Sshd, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """``inspect`` on a sessions root of one session read that session over SSH; locally it is refused. A project's
    directory or a folder of loose logs, refused for one session or given to ``sessions``, got the local note on what
    it holds and what to pass only here, none over SSH; now both, the commands offered naming one session directory
    or log over SSH (no shell here expands a pattern in a remote path)."""
    sshd.trust()
    root = tmp_path / "sessions"
    dsh_log(root / "--w--" / "s1")
    assert main(["inspect", str(root)]) == 2
    local = capsys.readouterr().err
    assert main(["inspect", f"testbox:{root}"]) == 2
    assert capsys.readouterr().err == local.replace(f"{root}", f"testbox:{root}")  # the listing command too
    assert "it is a sessions root, holding 1 session: `tapedeck sessions " in local
    dsh_log(root / "--w--" / "s2")
    loose = tmp_path / "loose"
    loose.mkdir()
    shutil.copy(root / "--w--" / "s1" / "session.jsonl", loose / "a.jsonl")
    project = root / "--w--"
    for directory, said in ((project, f"`tapedeck sessions testbox:{project}/s1` reads one of its 2 session directories, "
                                      f"`tapedeck sessions testbox:{root}` every project's"),
                            (loose, f"a log is read where it lies: `tapedeck inspect testbox:{loose}/a.jsonl` reads it")):  # fmt: skip
        assert main(["inspect", str(directory)]) == 2
        local = capsys.readouterr().err
        assert main(["inspect", f"testbox:{directory}"]) == 2
        remote = capsys.readouterr().err
        assert said in remote, remote
        assert remote.split("`")[0] == local.replace(f"{tmp_path}", f"testbox:{tmp_path}").split("`")[0], local
        assert main(["sessions", f"testbox:{directory}"]) == 0
        assert said in capsys.readouterr().err
        assert main(["alerts", f"testbox:{directory}"]) == 0  # read, as sessions reads it: nothing fired
        out, err = capsys.readouterr()
        assert out == f"no alerts: no sessions under testbox:{directory}\n" and said.replace("tapedeck sessions", "tapedeck alerts") in err, err


# The host as `tapedeck run` runs it, but half a second passes between its last read of the inbox (under the
# inbox's lock) and its saying that it exited: a request appended in that moment is never read. An append that
# does not take the lock (SFTP cannot) falls into it every time.
SLOW_LAST_READ = """
import sys, time
from core.host.operator import Operator
from core.cli import main
set_state = Operator.set_state
def slow_exit(self, state):
    if state == "exited":
        time.sleep(0.5)
    set_state(self, state)
Operator.set_state = slow_exit
sys.exit(main(sys.argv[1:]))
"""


def test_a_remote_request_sent_as_the_host_exits_is_answered_or_never_written(
    sshd: Sshd, processes: Processes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tapedeck control testbox:LOG`` and the fleet's row action, sent over and over until the host on the far
    side is gone: what they say they sent has its final outcome in the log, and the inbox holds no request that
    nobody will ever answer. The request was appended over SFTP, outside the inbox's lock an exiting host holds
    from its last read until it lets go of its log, so one sent in that moment was never read."""
    sshd.trust()
    _sent_until_the_host_is_gone(processes, tmp_path, capsys)


def _connected(where: Path) -> None:
    """Open the link to testbox before a host of a few seconds starts: its SSH connect, seconds on a loaded machine,
    is then not taken out of the host's life, which the requests must be sent in."""
    from core.remote.link import link_for
    from core.remote.target import parse_remote

    link_for(parse_remote(f"testbox:{where}")).stat(str(where))


def _sent_until_the_host_is_gone(processes: Processes, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The body of the test above: what was said sent has its final outcome, and no request is left unread."""
    _connected(tmp_path)
    proc, log = _host(processes, tmp_path, SLOW_LAST_READ, steps=4, pace=1.0)  # seconds: many requests reach it as it runs
    sent: list[str] = []
    while proc.poll() is None:
        if not log.exists():
            time.sleep(0.005)
            continue
        code = main(["control", f"testbox:{log}", "message", "--arg", "text=still there?", "--arg", "kind=note",
                     "--json"])  # fmt: skip
        out = capsys.readouterr().out
        if code == 0:
            sent.append(json.loads(out)["id"])
        else:
            assert code in (2, 3), out  # 2: the log has no header yet
        with contextlib.suppress(TapedeckError):
            sent.append(send_row_action(Path(f"testbox:{log}"), "message", {"text": "and now?", "kind": "note"})["id"])
    _, err = proc.communicate()
    assert proc.returncode == 0 and sent, err
    final = answered_ids(read_log(log).events)
    assert [rid for rid in sent if rid not in final] == []
    assert _unanswered(log) == []


def test_a_request_to_a_path_under_the_login_directory_lands_beside_that_log(
    sshd: Sshd, sleeper: Callable[[], Any], capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    """``box:~/PATH`` is under the login directory as SFTP starts in it: the request, written by a command on the
    far side, goes to the inbox beside that log, wherever the command itself starts."""
    sshd.trust()
    log = dsh_log(sshd.home / "dsh" / "--w--" / "s1")
    write_bridge(log.parent, sleeper().pid, "running")
    assert main(["control", "testbox:~/dsh/--w--/s1", "pause", "--json"]) == 0, capsys.readouterr().err
    request = json.loads(capsys.readouterr().out)
    assert [orjson.loads(line)["id"] for line in (log.parent / INBOX_NAME).read_bytes().splitlines()] == [request["id"]]
    assert (log.parent / INBOX_NAME).stat().st_mode & 0o777 == 0o600


def test_a_machine_that_opens_no_channel_for_the_append_gets_the_request_over_sftp(
    sshd: Sshd, tmp_path: Path, sleeper: Callable[[], Any], capsys: pytest.CaptureFixture[str],  # noqa: F811
) -> None:  # fmt: skip
    """sshd's ``MaxSessions 1``: the link's SFTP session holds the only session, so the server refuses the channel
    for the append's command. That was taken for the append under way ('may have been written', the machine called
    unreachable), then refused as not sent: control never reached such a machine. The line goes over the SFTP
    session already open, as on a machine without flock: the bridge's request lands, exit 0."""
    sshd.kill()
    with (sshd.base / "sshd_config").open("a") as config:
        config.write("MaxSessions 1\n")
    sshd.start()
    sshd.trust()
    log = dsh_log(tmp_path / "sessions" / "--w--" / "s1")
    write_bridge(log.parent, sleeper().pid, "running")
    assert main(["control", f"testbox:{log.parent}", "pause", "--json"]) == 0, capsys.readouterr().err
    request = json.loads(capsys.readouterr().out)
    assert [orjson.loads(line)["id"] for line in (log.parent / INBOX_NAME).read_bytes().splitlines()] == [request["id"]]
    assert (log.parent / INBOX_NAME).stat().st_mode & 0o777 == 0o600


def test_a_machine_without_flock_gets_the_request_over_sftp(
    sshd: Sshd, tmp_path: Path, sleeper: Callable[[], Any], monkeypatch: pytest.MonkeyPatch,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Where the far side has no flock(1) (the command says so by its exit status), the request is appended over
    SFTP as before, a torn last line closed first."""
    from core.remote import inbox

    sshd.trust()
    monkeypatch.setattr(inbox, "SEND", "exit 100")
    log = dsh_log(tmp_path / "sessions" / "--w--" / "s1")
    write_bridge(log.parent, sleeper().pid, "running")
    (log.parent / INBOX_NAME).write_bytes(b'{"torn')
    assert main(["control", f"testbox:{log.parent}", "pause", "--json"]) == 0, capsys.readouterr().err
    request = json.loads(capsys.readouterr().out)
    assert (log.parent / INBOX_NAME).read_bytes().splitlines()[1] == orjson.dumps(request)


def test_a_request_for_a_tapedeck_host_sent_without_the_inbox_lock_says_so(
    sshd: Sshd, processes: Processes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Where the far side has neither flock(1) nor perl, the request for a live tapedeck host goes over SFTP,
    outside the lock its exit holds: ``control`` sends it and warns that it may be left unread."""
    from core.remote import inbox

    sshd.trust()
    monkeypatch.setattr(inbox, "SEND", "exit 100")
    _connected(tmp_path)
    proc, log = _host(processes, tmp_path, steps=40, pace=0.5)
    try:
        while not (log.exists() and b'"running"' in log.read_bytes()):
            assert proc.poll() is None
            time.sleep(0.02)
        assert main(["control", f"testbox:{log}", "message", "--arg", "text=hello", "--json"]) == 0
        out, err = capsys.readouterr()
        assert json.loads(out)["op"] == "message"
        assert "has neither flock(1) nor perl" in err and "may never be read" in err, err
    finally:
        proc.kill()
        proc.communicate()


def test_a_machine_without_flock_1_still_takes_the_inbox_lock_with_perl(
    sshd: Sshd, processes: Processes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Where the far side has no flock(1) (macOS, say) but perl, the append takes the inbox's lock through perl's
    flock, so a request sent as the host exits is read or refused there, as with flock(1); before, it went over
    SFTP, outside the lock, and fell into the host's exit."""
    from core.remote import inbox

    sshd.trust()
    tools = tmp_path / "bin"  # the far side's commands, flock(1) left out
    tools.mkdir()
    for name in ("stat", "tail", "cat", "sync", "perl"):
        (tools / name).symlink_to(shutil.which(name) or name)
    monkeypatch.setattr(inbox, "SEND", f"PATH={tools}\n{inbox.SEND}")
    _sent_until_the_host_is_gone(processes, tmp_path, capsys)



def test_a_machine_where_stat_reads_no_inode_gets_no_request_written(
    sshd: Sshd, tmp_path: Path, sleeper: Callable[[], Any], monkeypatch: pytest.MonkeyPatch,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """The append checks that the inbox path is the file it opened by comparing stat's device and inode: where
    stat gives none (no GNU stat, as on macOS, whose -c means nothing), both sides were empty and equal, so a link
    swapped in passed the check; now nothing is written and the command says why."""
    from core.remote import inbox

    sshd.trust()
    tools = tmp_path / "bin"  # the far side's commands: perl for the lock, no stat
    tools.mkdir()
    for name in ("tail", "cat", "sync", "perl"):
        (tools / name).symlink_to(shutil.which(name) or name)
    monkeypatch.setattr(inbox, "SEND", f"PATH={tools}\n{inbox.SEND}")
    log = dsh_log(tmp_path / "sessions" / "--w--" / "s1")
    write_bridge(log.parent, sleeper().pid, "running")
    assert main(["control", f"testbox:{log.parent}", "pause"]) == 2
    assert "cannot read the control inbox's device and inode" in capsys.readouterr().err
    assert (log.parent / INBOX_NAME).read_bytes() == b""  # created empty, written nothing
