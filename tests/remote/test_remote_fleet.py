"""Remote roots through a real OpenSSH server on a loopback port (the client reads the test HOME's ~/.ssh): a
growing remote log followed from its new bytes, the server killed and restarted mid-follow, an unknown host key
refused with the line to run, and a control request reaching a live host on the far side."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.cli import main
from core.control.host_state import read_host_state
from core.fleet.actions import RowAnswer, send_row_action
from core.fleet.follow import Fleet
from core.log.reader import read_log
from core.remote.link import HostKeyRefused
from tests.alerts.crafted import HEADER, Log, config
from tests.conftest import Processes, no_access_path
from tests.remote.conftest import LinkCalls
from tests.remote.sshd import MISSING, Sshd, demo_host

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def _lines(events: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(e) + b"\n" for e in events)


def _until(fleet: Fleet, done: Callable[[Fleet], bool], timeout: float = 60.0, now: int | None = None) -> None:
    """Poll ``fleet`` until ``done``; ``now``: the clock every poll is judged at (epoch ms), when not the real one."""
    deadline = time.monotonic() + timeout
    while True:
        fleet.poll(now)
        if done(fleet):
            return
        assert time.monotonic() < deadline, [r.to_dict() for r in fleet.rows()]
        time.sleep(0.05)


def _turns(log: Log, first: int, last: int) -> None:
    for n in range(first, last + 1):
        log.turn(n)
        log.usage(n, 1, miss=1_000, hit=3_000)
        log.end(n)


def test_a_growing_remote_log_is_followed_through_a_restart_of_the_server(sshd: Sshd, tmp_path: Path) -> None:
    sshd.trust()
    path = tmp_path / "root" / "p" / "s1" / "session.jsonl"
    path.parent.mkdir(parents=True)
    log = Log()
    log.header()
    _turns(log, 1, 2)
    path.write_bytes(_lines([{**HEADER, "id": "s1"}, *log.events]))
    written = len(log.events)
    fleet = Fleet([f"testbox:{tmp_path / 'root'}"], config())
    _until(fleet, lambda f: [r.turn for r in f.rows()] == [2])
    row = fleet.rows()[0]
    assert (row.where, row.ref.id, str(row.ref.path)) == ("testbox", "s1", f"testbox:{path}")

    _turns(log, 3, 3)
    with open(path, "ab") as f:
        f.write(_lines(log.events[written:]))
    written = len(log.events)
    _until(fleet, lambda f: f.rows()[0].turn == 3)

    sshd.kill()
    _until(fleet, lambda f: [a.cause for a in f.rows()[0].attention] == ["unreachable"])
    assert "unreachable since" in fleet.rows()[0].attention[0].reason
    _turns(log, 4, 5)  # written while the machine cannot be reached
    with open(path, "ab") as f:
        f.write(_lines(log.events[written:]))
    sshd.start()
    _until(fleet, lambda f: f.rows()[0].turn == 5 and not f.rows()[0].attention)

    local = Fleet([tmp_path / "root"], config())
    local.poll()
    keep = ("turn", "step", "costUsd", "cachePct", "contextPct", "attention", "id")
    assert [{k: r.to_dict()[k] for k in keep} for r in fleet.rows()] == [
        {k: r.to_dict()[k] for k in keep} for r in local.rows()
    ]  # nothing lost, nothing read twice
    assert len(fleet.watches) == 1 and fleet.bytes_read == path.stat().st_size


def test_an_unknown_host_key_is_refused_with_the_line_to_run(sshd: Sshd, tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    with pytest.raises(HostKeyRefused) as refused:
        Fleet([f"testbox:{tmp_path / 'root'}"], config()).poll()
    assert "ssh testbox true" in str(refused.value) and "known_hosts" in str(refused.value)
    assert not (sshd.home / ".ssh" / "known_hosts").exists()  # nothing was recorded silently


def test_a_remote_control_request_reaches_a_live_host_on_the_far_side(
    sshd: Sshd, tmp_path: Path, processes: Processes, capsys: pytest.CaptureFixture[str], link_calls: LinkCalls
) -> None:
    """The CLI's ``control --wait`` over SSH follows the log from its end: of the log it reads its head (the header,
    the bytes that tell the session) and what lies past where the wait began, and besides only the host's state
    (``host.json`` and the host's ``/proc`` stat, at each look). Those, and what the resumed host goes on writing
    until the wait sees its outcome, grow with the time the wait takes: on a loaded machine they outgrew the log's
    size, which a test weighed the bytes read against."""
    from core.remote.sessions import FIRST_HEAD_BYTES
    from core.remote.tail import TAIL_CHECK

    sshd.trust()
    root = tmp_path / "root"
    host = demo_host(processes, tmp_path, root)
    fleet = Fleet([f"testbox:{root}"], config())
    _until(fleet, lambda f: bool(f.rows()) and f.rows()[0].host.get("state") == "running")
    log = Path(str(fleet.rows()[0].ref.path).partition(":")[2])
    answer = RowAnswer(fleet.rows()[0].ref.path)  # the log followed from its end, as the table does
    request = send_row_action(fleet.rows()[0].ref.path, "pause", {})
    assert request["origin"] == "fleet"
    assert answer.wait(request["id"], timeout=60) == {"requestId": request["id"], "op": "pause",
                                                      "outcome": "applied", "origin": "fleet"}  # fmt: skip
    deadline = time.monotonic() + 60
    while read_host_state(log).state != "paused":
        assert time.monotonic() < deadline, "the far host never paused"
        time.sleep(0.05)
    _until(fleet, lambda f: f.rows()[0].host.get("state") == "paused")
    link = fleet.watches[str(fleet.rows()[0].ref.path)].link  # type: ignore[attr-defined]
    before, size = link.bytes_read, log.stat().st_size
    ranges, files = link_calls("read_ranges"), link_calls("read_files_and_links")
    assert main(["control", f"testbox:{log.parent}", "resume", "--wait", "--json"]) == 0  # the CLI, remotely
    outcome = orjson.loads(capsys.readouterr().out)
    assert (outcome["type"], outcome["data"]["outcome"]) == ("tapedeck/control", "applied")
    assert [e["seq"] for e in read_log(log).events if e["data"].get("requestId") == outcome["data"]["requestId"]
            and e["data"].get("outcome") == "applied"] == [outcome["seq"]]  # fmt: skip
    of_log = [(offset, len(data)) for call in ranges if call["path"] == str(log)
              for (offset, _), data in zip(call["ranges"], call["returned"], strict=True)]  # fmt: skip
    of_state = [(path, len(data or b"")) for call in files for path, data in zip(call["paths"], call["returned"][0], strict=True)]
    pid = orjson.loads((log.parent / "host.json").read_bytes())["pid"]
    assert {path for path, _ in of_state} == {str(log.parent / "host.json"), f"/proc/{pid}/stat"}, of_state
    assert link.bytes_read - before == sum(n for _, n in of_log) + sum(n for _, n in of_state)
    # the wait followed the log from its end, not from its start: below it, nothing past the log's head is read
    assert [(o, n) for o, n in of_log if o < size - TAIL_CHECK and o + n > FIRST_HEAD_BYTES] == [], (size, of_log)
    assert read_host_state(log).state != "paused"
    send_row_action(fleet.rows()[0].ref.path, "stop", {})
    assert host.wait(timeout=60) in (0, 4)


@pytest.mark.anyio
async def test_the_fleet_table_shows_a_remote_root_and_its_workers_keep_running(sshd: Sshd, tmp_path: Path) -> None:
    from textual.widgets import DataTable
    from textual.worker import WorkerState

    from tests.tui.pilot import NO_KEYMAP, until
    from tui.app import TapedeckApp
    from tui.screens.fleet import FleetScreen
    from tui.screens.main import MainScreen

    sshd.trust()
    path = tmp_path / "root" / "p" / "s1" / "session.jsonl"
    path.parent.mkdir(parents=True)
    log = Log()
    log.header()
    _turns(log, 1, 2)
    path.write_bytes(_lines([{**HEADER, "id": "s1"}, *log.events]))
    remote = Path(f"testbox:{tmp_path / 'root'}")
    app = TapedeckApp(remote, follow=True, keymap_file=NO_KEYMAP, fleet_roots=[remote, tmp_path / "root"])
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FleetScreen) and len(app.screen.rows) == 2)
        screen = app.screen
        assert isinstance(screen, FleetScreen)
        assert sorted(shown.row.where for shown in screen.rows.values()) == ["local", "testbox"]
        await pilot.pause(0.5)
        assert [w.name for w in app.workers if w.state == WorkerState.ERROR] == []
        table = screen.query_one(DataTable)
        table.move_cursor(row=next(i for i, k in enumerate(screen.shown) if screen.rows[k].row.where == "testbox"))
        remote_row = screen.current_key
        await pilot.press("enter")  # the remote row opens in the full session view
        await until(pilot, lambda: isinstance(app.screen, MainScreen) and app.live is not None and app.live.ready)
        assert app.live is not None and app.live.remote is not None and app.live.count == len(log.events)
        await pilot.press("escape")  # back to the table, on the same row
        await until(pilot, lambda: app.screen is screen)
        assert screen.current_key == remote_row


@pytest.mark.parametrize("command", [["inspect", "--json"], ["surface", "--json"], ["events", "--json"], ["events"]])
def test_reading_commands_take_a_remote_path_and_print_what_they_print_locally(
    sshd: Sshd, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    from tests.conftest import FIXTURES

    sshd.trust()
    session = tmp_path / "p" / "s1"
    session.mkdir(parents=True)
    (session / "session.jsonl").write_bytes((FIXTURES / "tool-call-turn.session.jsonl").read_bytes())
    assert main([command[0], str(session), *command[1:]]) == 0
    local = capsys.readouterr().out
    assert main([command[0], f"testbox:{session}", *command[1:]]) == 0
    remote = capsys.readouterr().out
    assert "tapedeck-remote-" not in remote  # the throw-away copy is never named
    remote = remote.replace(f"testbox:{session / 'session.jsonl'}", str(session / "session.jsonl"))  # inspect's
    assert remote == local


def test_a_remote_tapedeck_log_without_a_state_file_reads_as_locally_at_the_first_look(
    sshd: Sshd, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log a tapedeck host started (its ``tapedeck/host`` event) with no ``host.json`` beside it: the first look
    read the host's state before the log, so ``sessions user@host:ROOT`` said ``none`` (a DSH session never
    bridged) and ``stalled`` where the local read says ``exited`` and ``host-died``."""
    sshd.trust()
    log = Log()
    log.add("tapedeck/host", {"pid": 999_999_999, "model": "crafted-model"})
    log.turn(1)
    log.call("bash", '{"command": "ls"}')
    session = tmp_path / "root" / "--w--" / "s1"
    session.mkdir(parents=True)
    (session / "session.jsonl").write_bytes(_lines([HEADER, *log.events]))
    os.utime(session / "session.jsonl", (1_800_000_000, 1_800_000_000))  # whole seconds, as SFTP gives them
    assert main(["sessions", str(tmp_path / "root"), "--json"]) == 0
    [local] = orjson.loads(capsys.readouterr().out)
    assert main(["sessions", f"testbox:{tmp_path / 'root'}", "--json"]) == 0
    [remote] = orjson.loads(capsys.readouterr().out)
    assert (local["host"]["state"], local["host"]["kind"]) == ("exited", "tapedeck")
    assert remote["host"] == local["host"]  # exited since the log's last write (to the second, over SFTP)
    assert [a["cause"] for a in remote["attention"]] == [a["cause"] for a in local["attention"]] == ["host-died"]


def test_a_remote_path_from_the_home_directory_reads_as_scp_reads_it(sshd: Sshd, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """``box:~/PATH`` (quoted, or after the colon where the local shell leaves it) and ``box:PATH`` are under the
    login directory on the far side, as scp takes them; ``box:~`` is that directory."""
    sshd.trust()
    log = Log()
    _turns(log, 1, 1)
    session = sshd.home / "dsh" / "--w--" / "s1"
    session.mkdir(parents=True)
    (session / "session.jsonl").write_bytes(_lines([HEADER, *log.events]))
    for root in ("testbox:~/dsh", "testbox:dsh", "testbox:~/dsh/--w--/s1/session.jsonl"):
        assert main(["sessions", root, "--json"]) == 0, capsys.readouterr().err
        assert [row["id"] for row in orjson.loads(capsys.readouterr().out)] == [HEADER["id"]], root
    assert main(["inspect", "testbox:~/dsh/--w--/s1"]) == 0, capsys.readouterr().err


def test_a_remote_session_removed_leaves_the_fleet_beside_a_root_that_is_not_there(sshd: Sshd, tmp_path: Path) -> None:
    """The machine answered (one of its roots is missing, the other listed): what it no longer lists is gone."""
    import shutil

    sshd.trust()
    root = tmp_path / "root"
    for sid in ("kept", "gone"):
        session = root / "--w--" / sid
        session.mkdir(parents=True)
        (session / "session.jsonl").write_bytes(_lines([{**HEADER, "id": sid}]))
    fleet = Fleet([f"testbox:{root}", f"testbox:{tmp_path / 'typo'}"], config())
    _until(fleet, lambda f: len(f.rows()) == 2)
    shutil.rmtree(root / "--w--" / "gone")
    fleet.rescan()
    assert [row.ref.id for row in fleet.rows()] == ["kept"]
    assert any("typo: no such file or directory" in note for note in fleet.skipped)


def test_a_machine_that_cannot_be_reached_is_unreachable_not_also_stalled(sshd: Sshd, tmp_path: Path) -> None:
    """While nothing can be read over there, nothing is known of its writes: the clock rules wait for the machine
    (``stalled`` would say nothing was written, of a log that may be growing)."""
    sshd.trust()
    path = tmp_path / "root" / "p" / "s1" / "session.jsonl"
    path.parent.mkdir(parents=True)
    log = Log(start_ms=int(time.time() * 1000) - 60_000, step_ms=1)
    log.header()
    log.add("tapedeck/host", {"pid": os.getpid(), "model": "crafted-model"})
    log.turn(1)
    path.write_bytes(_lines([{**HEADER, "id": "s1"}, *log.events]))
    (path.parent / "host.json").write_bytes(orjson.dumps({"state": "running", "pid": os.getpid(),
                                                          "since": int(time.time() * 1000)}))  # fmt: skip
    fleet = Fleet([f"testbox:{tmp_path / 'root'}"], config({"stalled": {"seconds": 3}}))
    _until(fleet, lambda f: [r.turn for r in f.rows()] == [1] and f.rows()[0].host.get("state") == "running")
    moved = int(time.time() * 1000)
    log.add("step/start", {"turn": 1, "step": 2}, at=moved)  # the log moves: not stalled
    with open(path, "ab") as f:
        f.write(_lines(log.events[-1:]))
    # judged as of the write: a loaded machine could take longer than the stalled limit to read it over SSH
    _until(fleet, lambda f: f.rows()[0].step == 2, now=moved)
    assert not fleet.rows()[0].attention
    sshd.kill()
    _until(fleet, lambda f: [a.cause for a in f.rows()[0].attention] == ["unreachable"])
    deadline = time.monotonic() + 6  # twice the stalled limit
    while time.monotonic() < deadline:
        fleet.poll()
        assert [a.cause for a in fleet.rows()[0].attention] == ["unreachable"]
        time.sleep(0.1)



@pytest.mark.parametrize("live", ["session.jsonl", "session.jsonl.zstd", None])
def test_a_remote_directory_holding_both_logs_written_in_one_second_is_read_as_locally(
    sshd: Sshd, tmp_path: Path, capsys: pytest.CaptureFixture[str], live: str | None
) -> None:
    """SFTP gives whole seconds: a raw log that grew within the second after a zstd copy of it was made (or a zstd
    log grown past the raw copy ``zstd -d`` left) is read from the log written last, as locally; two holding one
    text, written at once as ``zstd -o`` leaves them (``live`` None), from the zstd one."""
    import zstandard

    from tests.cli.test_sessions_cli import one_stale_copy

    sshd.trust()
    sdir = one_stale_copy(tmp_path, live or "session.jsonl")
    if live is None:
        raw = (sdir / "session.jsonl").read_bytes()
        (sdir / "session.jsonl.zstd").write_bytes(zstandard.ZstdCompressor().compress(raw))
    second = 1_786_000_010 * 10**9
    for name in ("session.jsonl", "session.jsonl.zstd"):
        at = second + (700_000_000 if name == live else 200_000_000)  # both within one second
        os.utime(sdir / name, ns=(at, at))
    turns = []
    for root in (str(sdir.parents[1]), f"testbox:{sdir.parents[1]}"):
        assert main(["sessions", root, "--json"]) == 0
        [row] = [row for row in orjson.loads(capsys.readouterr().out) if row["id"] == "other-2"]
        assert row["path"].removeprefix("testbox:") == str(sdir / (live or "session.jsonl.zstd")), root
        turns.append(row["turn"])
    assert turns == [2, 2]  # the turn the session is at, not the stale copy's


@pytest.mark.parametrize("command", [["sessions"], ["alerts"], ["inspect"], ["control", "pause"]])
def test_a_remote_root_that_is_a_link_loop_is_named_a_link_not_a_missing_path(
    sshd: Sshd, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """SFTP reports a link loop as no such file; the far side's path is a link, and is named so (a local loop
    reads 'Too many levels of symbolic links')."""
    sshd.trust()
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert main([command[0], f"testbox:{loop}", *command[1:]]) == 2
    err = capsys.readouterr().err
    assert f"testbox:{loop}: cannot read (a symbolic link that cannot be followed" in err, err
    assert "no such file" not in err, err


@pytest.mark.parametrize(
    "odd", ["fifo", "socket", "directory", "link to a log", "link to nothing", "link refused", "garbage"]
)
def test_a_remote_listing_names_what_is_no_log_where_a_log_should_be_as_locally(
    sshd: Sshd, tmp_path: Path, capsys: pytest.CaptureFixture[str], odd: str
) -> None:
    """A FIFO, a socket, a directory or a link to nothing by a log's name in a session directory is skipped with
    the note the local listing writes (the far side's path named), never left out without a word; a link to another
    session's log is that session, listed once under the name listed first, as locally (the remote listing counted it
    twice). A link the server will not stat through (into a place it may not search) raised out of the whole listing,
    and so out of every rescan of the fleet: it is skipped with the local note too."""
    import socket

    from tests.cli.test_sessions_cli import sessions_root

    sshd.trust()
    root = sessions_root(tmp_path)
    where = root / "--w--" / "odd" / "session.jsonl"
    where.parent.mkdir()
    if odd == "fifo":
        os.mkfifo(where)
    elif odd == "socket":
        bound = socket.socket(socket.AF_UNIX)
        bound.bind(str(where))
        bound.close()
    elif odd == "directory":
        where.mkdir()
    elif odd == "garbage":
        where.write_bytes(b"garbage\n")
    elif odd == "link refused":
        where.symlink_to(no_access_path() / "x")  # its stat refused even to root
    else:
        target = root / "--w--" / "other-2" / "session.jsonl" if odd == "link to a log" else tmp_path / "gone"
        where.symlink_to(target)
    assert main(["sessions", str(root)]) == 0
    local = capsys.readouterr()
    assert main(["sessions", f"testbox:{root}"]) == 0
    remote = capsys.readouterr()
    assert remote.err == local.err.replace(str(root), f"testbox:{root}"), (remote.err, local.err)
    assert (odd == "link to a log") == (local.err == "") and local.out.splitlines()[0].startswith(
        "3 sessions under"
    )
    assert remote.out.splitlines()[0] == local.out.splitlines()[0].replace(str(root), f"testbox:{root}")


def test_a_remote_session_directory_whose_log_is_a_fifo_is_named_as_locally(
    sshd: Sshd, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``sessions DIR`` on a session directory whose log is a FIFO said 'no sessions' without a word, on both sides;
    both name it, in the words of the skipped entries under a root."""
    sshd.trust()
    sdir = tmp_path / "piped"
    sdir.mkdir()
    os.mkfifo(sdir / "session.jsonl")
    assert main(["sessions", str(sdir)]) == 0
    local = capsys.readouterr()
    assert main(["sessions", f"testbox:{sdir}"]) == 0
    remote = capsys.readouterr()
    assert local.err == f"tapedeck: skipped {sdir / 'session.jsonl'}: is a FIFO, not a session log file\n", local.err
    assert remote.err == local.err.replace(str(sdir), f"testbox:{sdir}"), (remote.err, local.err)
    assert remote.out == local.out.replace(str(sdir), f"testbox:{sdir}")


def test_a_machine_lost_on_the_poll_after_a_failed_read_is_said_at_once(sshd: Sshd, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A remote session whose read failed (the log cut under the read: ``unreachable`` with that error) and whose
    machine is lost by the next poll: that poll's row says the machine cannot be reached (the read's success, with
    nothing read, cleared the alert for one poll)."""
    from core.shared.errors import LogFormatError

    sshd.trust()
    path = tmp_path / "root" / "p" / "s1" / "session.jsonl"
    path.parent.mkdir(parents=True)
    log = Log()
    log.header()
    _turns(log, 1, 2)
    path.write_bytes(_lines([{**HEADER, "id": "s1"}, *log.events]))
    fleet = Fleet([f"testbox:{tmp_path / 'root'}"], config())
    _until(fleet, lambda f: [r.turn for r in f.rows()] == [2])
    [watch] = fleet.watches.values()
    read = watch.tailer.poll

    def cut_under_the_read(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(watch.tailer, "poll", read)
        raise LogFormatError(f"{path}: the line at offset 0 no longer holds seq 1")

    monkeypatch.setattr(watch.tailer, "poll", cut_under_the_read)
    fleet.poll()
    assert [(a.cause, a.reason) for a in fleet.rows()[0].attention] == [("unreachable", f"{path}: the line at offset 0 no longer holds seq 1")]
    sshd.kill()
    fleet.poll()
    said = [(a.cause, a.reason) for a in fleet.rows()[0].attention]
    assert [cause for cause, _ in said] == ["unreachable"] and "unreachable since" in said[0][1], said


def test_a_machine_lost_while_this_clock_reads_no_date_says_so(sshd: Sshd, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The time since which a machine cannot be reached is this machine's clock: one that reads before 1970 (or
    past the year 9999) is said to be no time, not printed as a date no clock gives."""
    from core.remote.link import Unreachable, link_for
    from core.remote.target import RemoteTarget

    sshd.trust()
    link = link_for(RemoteTarget(None, "testbox", str(tmp_path)))
    assert link.stat_many([str(tmp_path)])[0] is not None
    sshd.kill()
    monkeypatch.setattr(time, "time", lambda: -86_400.5)
    with pytest.raises(Unreachable) as lost:
        link.stat_many([str(tmp_path)])
    assert "unreachable since an implausible time" in str(lost.value) and "1969" not in str(lost.value)


def test_one_remote_log_whose_stat_is_refused_costs_only_itself(sshd: Sshd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               link_calls: LinkCalls) -> None:  # fmt: skip
    """The fleet stats every log of a machine in one round trip. A stat the server refused for one of them (a link
    swapped to a path it may not search) failed that round trip at every poll, and every log of the machine was
    then stat'ed alone, one round trip each, for as long as the one log stayed refused. Now that log alone is
    unreadable (``unreachable``, with the server's words) and the others are still stat'ed together."""
    denied = no_access_path() / "x"  # its stat refused even to root
    sshd.trust()
    root = tmp_path / "root"
    for sid in ("s1", "s2", "s3"):
        (root / "p" / sid).mkdir(parents=True)
        (tmp_path / f"{sid}.jsonl").write_bytes(_lines([{**HEADER, "id": sid}]))
    (root / "p" / "s1" / "session.jsonl").symlink_to(tmp_path / "s1.jsonl")
    for sid in ("s2", "s3"):
        (tmp_path / f"{sid}.jsonl").rename(root / "p" / sid / "session.jsonl")
    fleet = Fleet([f"testbox:{root}"], config())
    _until(fleet, lambda f: len(f.rows()) == 3)
    monkeypatch.setattr("core.fleet.follow.RESCAN_SECONDS", 3600.0)  # polls alone: a listing would drop s1, noted
    (root / "p" / "s1" / "late").symlink_to(denied)
    (root / "p" / "s1" / "late").rename(root / "p" / "s1" / "session.jsonl")
    stats = link_calls("stat_many")
    _until(fleet, lambda f: any("cannot stat" in a.reason for r in f.rows() for a in r.attention))
    stats.clear()
    for _ in range(3):
        time.sleep(0.3)  # past the remote poll's interval: every log is due
        fleet.poll()
    asked = [[p.rpartition("/p/")[2] for p in call["paths"] if p.endswith("session.jsonl")] for call in stats]
    assert asked and all(paths != ["s2/session.jsonl"] and paths != ["s3/session.jsonl"] for paths in asked), asked
    [row] = [r for r in fleet.rows() if r.attention]
    assert row.ref.id == "s1" and "cannot stat (Permission denied)" in row.attention[0].reason, row.attention


def test_a_remote_log_whose_stat_is_refused_leaves_the_others_adopted_in_one_batch(
    sshd: Sshd, tmp_path: Path, link_calls: LinkCalls
) -> None:
    """The fleet reads the headers of a machine's new logs in one batch (their stats in one round trip). One log whose
    stat the server refused (its directory a link to a place it may not search) failed that batch, and every log
    was then stat'ed alone, one round trip each. Now the batch goes on: the refused log is noted, with the server's
    words, and the others are watched."""
    denied = no_access_path()  # refused to root as well, in a container
    sshd.trust()
    logs = []
    for sid in ("s1", "s2"):
        (tmp_path / sid).mkdir()
        (tmp_path / sid / "session.jsonl").write_bytes(_lines([{**HEADER, "id": sid}]))
        logs.append(tmp_path / sid / "session.jsonl")
    (tmp_path / "s3").symlink_to(denied)
    logs.append(tmp_path / "s3" / "session.jsonl")
    stats = link_calls("stat_many")
    fleet = Fleet([f"testbox:{log}" for log in logs], config())
    fleet.rescan()
    assert sorted(r.ref.id for r in fleet.rows()) == ["s1", "s2"]
    asked = [sorted(Path(p).parent.name for p in call["paths"] if p.endswith("session.jsonl")) for call in stats]
    assert [paths for paths in asked if paths] == [["s1", "s2", "s3"]], asked
    assert fleet.skipped == [f"skipped testbox:{logs[2]}: cannot stat (Permission denied)"], fleet.skipped


def test_a_remote_logs_note_goes_once_it_is_watched_by_its_kind_and_the_others_stay(sshd: Sshd, tmp_path: Path) -> None:
    """Every note of what the fleet left out is made by one builder, with its kind and the path it names: the note
    that a log could not be read goes once that log is watched (the fleet decides by the note's kind and path, not
    by its words), and the others stay until the next listing."""
    from core.log.skipped import UNLISTED, UNREACHED, UNREADABLE

    denied = no_access_path()  # refused to root as well, in a container
    sshd.trust()
    (tmp_path / "s1").mkdir()
    (tmp_path / "s1" / "session.jsonl").write_bytes(_lines([{**HEADER, "id": "s1"}]))
    (tmp_path / "late").symlink_to(denied)  # a log whose directory the server will not search, for now
    (tmp_path / "root" / "p" / "s2").mkdir(parents=True)
    os.mkfifo(tmp_path / "root" / "p" / "s2" / "session.jsonl")  # no log where one should be
    late, root = f"testbox:{tmp_path / 'late' / 'session.jsonl'}", f"testbox:{tmp_path / 'root'}"
    fleet = Fleet([late, root, f"testbox:{tmp_path / 'gone'}"], config())
    fleet.rescan()
    assert [(n.kind, n.subject) for n in fleet.skipped] == [  # type: ignore[attr-defined]
        (UNLISTED, f"{root}/p/s2"), (UNREACHED, f"testbox:{tmp_path / 'gone'}"), (UNREADABLE, late)], fleet.skipped
    assert fleet.skipped[0] == f"skipped {root}/p/s2/session.jsonl: is a FIFO, not a session log file"
    assert fleet.unreached == [fleet.skipped[1]]
    (tmp_path / "late").unlink()
    (tmp_path / "late").symlink_to(tmp_path / "s1")
    _until(fleet, lambda f: [r.ref.id for r in f.rows()] == ["s1"])
    assert [(n.kind, n.subject) for n in fleet.skipped] == [  # type: ignore[attr-defined]
        (UNLISTED, f"{root}/p/s2"), (UNREACHED, f"testbox:{tmp_path / 'gone'}")], fleet.skipped


def test_a_remote_root_the_server_will_not_look_into_is_noted_and_the_other_roots_listed(
    sshd: Sshd, tmp_path: Path
) -> None:
    """A remote root that is a link into a place the server may not search: its listing was noted as refused, then
    the stat that tells an empty directory from no path at all was refused too and raised out of the listing of
    every root, so the fleet (and ``sessions``) listed nothing. It is now that note alone."""
    denied = no_access_path()  # refused to root as well, in a container
    sshd.trust()
    (tmp_path / "refused").symlink_to(denied)
    (tmp_path / "root" / "p" / "s1").mkdir(parents=True)
    (tmp_path / "root" / "p" / "s1" / "session.jsonl").write_bytes(_lines([{**HEADER, "id": "s1"}]))
    fleet = Fleet([f"testbox:{tmp_path / 'refused'}", f"testbox:{tmp_path / 'root'}"], config())
    fleet.rescan()
    assert [r.ref.id for r in fleet.rows()] == ["s1"]
    assert fleet.skipped == [f"skipped testbox:{tmp_path / 'refused'}: Permission denied"], fleet.skipped
    assert fleet.unreached == []
