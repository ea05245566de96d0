"""A remote session's host state read through the real OpenSSH server: a host or DSH bridge that died without
saying so is told from a live one by its process on the far side (``/proc`` read over SFTP), not left in its last
recorded state."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from core.bridge.files import proc_start_time
from core.control.host_state import describe_host, read_host_state
from core.log.reader import read_log
from core.remote.link import SshLink, link_for
from core.remote.sessions import remote_host_state, remote_host_states
from core.remote.target import RemoteTarget
from tests.bridge.conftest import BOOT_ID, kill_unreaped, sleeper  # noqa: F401 (a fixture)
from tests.conftest import Processes, no_access_path
from tests.remote.conftest import LinkCalls
from tests.remote.sshd import MISSING, Sshd, demo_host

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
NOW = int(time.time() * 1000)


def _session(tmp_path: Path, name: str, files: dict[str, dict]) -> RemoteTarget:
    log = tmp_path / name / "session.jsonl"
    log.parent.mkdir()
    log.write_bytes(b'{"type":"session","version":0,"id":"x"}\n')
    os.utime(log, (1_700_000_000, 1_700_000_000))
    for file, body in files.items():
        (log.parent / file).write_bytes(orjson.dumps(body))
    return RemoteTarget(None, "testbox", str(log))


@pytest.fixture
def heartbeat_now(monkeypatch: pytest.MonkeyPatch) -> int:
    """Now (epoch ms), for the heartbeats the test writes, and the moment every heartbeat's age is judged at from
    here on: a bridge rewrites its heartbeat every second, while a test writes it once, and on a loaded machine the
    SSH connect and the reads after it outlasted the 5 s a heartbeat stays fresh (the bridge read exited)."""
    import core.bridge.files

    now = int(time.time() * 1000)
    monkeypatch.setattr(core.bridge.files, "time", SimpleNamespace(time=lambda: now / 1000))
    return now


@pytest.fixture
def fresh_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every heartbeat is judged fresh on the near side, as it always is over SSH (another machine's clock may run
    apart from ours): a real DSH starved on a loaded machine for over the 5 s a heartbeat stays fresh read ``silent``
    here only, and the test that compares the two sides failed on that, not on what it compares."""
    import core.control.host_state

    monkeypatch.setattr(core.control.host_state, "heartbeat_fresh", lambda info, now_ms=None: True)


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_a_remote_tapedeck_host_that_died_is_exited_since_its_last_write(sshd: Sshd, tmp_path: Path) -> None:
    sshd.trust()
    alive = _session(tmp_path, "alive", {"host.json": {"state": "running", "pid": os.getpid(), "since": NOW}})
    died = _session(tmp_path, "died", {"host.json": {"state": "running", "pid": _dead_pid(), "since": NOW}})
    reused = _session(tmp_path, "reused",  # our pid, but recorded long before this process started
                      {"host.json": {"state": "paused", "pid": os.getpid(), "since": 1_000_000}})  # fmt: skip
    said = _session(tmp_path, "said", {"host.json": {"state": "exited", "pid": 4, "since": 5_000}})
    link = link_for(alive)
    states = remote_host_states(link, [(alive, True), (died, True), (reused, True), (said, True)])
    assert [(s.state, s.since) for s in states] == [
        ("running", NOW), ("exited", 1_700_000_000_000), ("exited", 1_700_000_000_000), ("exited", 5_000)
    ]


def test_a_remote_dsh_bridge_is_live_while_its_process_runs(sshd: Sshd, tmp_path: Path) -> None:
    sshd.trust()
    start = proc_start_time(os.getpid())
    stale = NOW - 60_000  # a heartbeat a minute old: only the process can say the bridge is live
    bridge = {"state": "paused", "pid": os.getpid(), "procStart": start, "since": NOW, "heartbeat": stale}
    live = _session(tmp_path, "live", {"bridge.json": bridge})
    gone = _session(tmp_path, "gone", {"bridge.json": {**bridge, "pid": _dead_pid()}})
    link = link_for(live)
    assert remote_host_state(link, live, hosted=False).state == "paused"
    state = remote_host_state(link, gone, hosted=False)
    assert (state.state, state.since, state.kind) == ("exited", stale, "dsh")


def test_a_remote_host_killed_mid_turn_shows_exited_and_host_died_in_the_fleet(
    sshd: Sshd, tmp_path: Path, processes: Processes
) -> None:
    from core.fleet.follow import Fleet
    from tests.alerts.crafted import config

    sshd.trust()
    root = tmp_path / "root"
    host = demo_host(processes, tmp_path, root)
    fleet = Fleet([f"testbox:{root}"], config())
    deadline = time.monotonic() + 60
    while not (fleet.rows() and fleet.rows()[0].host.get("state") == "running" and fleet.rows()[0].turn):
        assert time.monotonic() < deadline, "the far host never ran a turn"
        fleet.poll()
        time.sleep(0.05)
    _kill_mid_turn(host, root)  # no word said: host.json still reads running
    deadline = time.monotonic() + 60
    while fleet.rows()[0].host.get("state") != "exited":
        assert time.monotonic() < deadline, fleet.rows()[0].to_dict()
        fleet.poll()
        time.sleep(0.05)
    assert "host-died" in [a.cause for a in fleet.rows()[0].attention]


def _kill_mid_turn(host: subprocess.Popen[bytes], root: Path) -> None:
    """Kill ``host`` while a turn of its log is open: it is stopped (SIGSTOP) and killed once its log shows one, else
    let run on and looked at again. Killed when the fleet had last seen it run, a host a loaded machine had let
    finish its turn was killed idle, and no ``host-died`` came."""
    deadline = time.monotonic() + 60
    while True:
        os.kill(host.pid, signal.SIGSTOP)
        kinds = [e["type"] for log in root.rglob("session.jsonl") for e in read_log(log).events]
        if kinds.count("turn/start") > kinds.count("turn/end"):
            break
        os.kill(host.pid, signal.SIGCONT)
        assert time.monotonic() < deadline, "the far host ran no turn to kill it in"
        time.sleep(0.05)
    host.kill()
    host.wait()


def test_a_remote_host_or_bridge_killed_and_not_reaped_yet_is_exited(sshd: Sshd, tmp_path: Path,
                                                                     sleeper: Callable[[], Any]) -> None:  # noqa: F811  # fmt: skip
    """A zombie keeps its pid and start time in /proc until its parent reaps it, and runs nothing."""
    sshd.trust()
    dsh, host = sleeper(), sleeper()
    now = int(time.time() * 1000)  # after the host's start: an earlier state would be another process's
    stale = now - 60_000
    bridge = {"state": "running", "pid": dsh.pid, "procStart": proc_start_time(dsh.pid), "since": now,
              "heartbeat": stale}  # fmt: skip
    bridged = _session(tmp_path, "bridged", {"bridge.json": bridge})
    hosted = _session(tmp_path, "hosted", {"host.json": {"state": "running", "pid": host.pid, "since": now}})
    link, logs = link_for(bridged), [(bridged, False), (hosted, True)]
    assert [s.state for s in remote_host_states(link, logs)] == ["running", "running"]
    kill_unreaped(dsh)
    kill_unreaped(host)
    states = remote_host_states(link, logs)
    assert [(s.state, s.since) for s in states] == [("exited", stale), ("exited", 1_700_000_000_000)]


def _bridged_here(
    sshd: Sshd, tmp_path: Path, start: Callable[[], Any], state: str, now: int
) -> tuple[Any, int, RemoteTarget, SshLink]:
    """A DSH stand-in process whose bridge.json (this machine's boot id, a heartbeat at ``now``) says ``state``: the
    process, the time written, the session's log and the link that reads it."""
    sshd.trust()
    dsh = start()
    bridge = {"state": state, "pid": dsh.pid, "procStart": proc_start_time(dsh.pid), "since": now,
              "heartbeat": now, "bootId": BOOT_ID}  # fmt: skip
    session = _session(tmp_path, "s", {"bridge.json": bridge})
    return dsh, now, session, link_for(session)


def test_a_remote_dsh_killed_a_moment_ago_is_exited_at_once(sshd: Sshd, tmp_path: Path,
                                                            sleeper: Callable[[], Any], heartbeat_now: int) -> None:  # noqa: F811  # fmt: skip
    """The far machine's boot id (and pid namespace) is the one bridge.json recorded: its /proc says the pid is
    gone, whatever the heartbeat's age."""
    dsh, now, session, link = _bridged_here(sshd, tmp_path, sleeper, "running", heartbeat_now)
    assert remote_host_state(link, session, hosted=False).state == "running"
    dsh.kill()
    dsh.wait()
    state = remote_host_state(link, session, hosted=False)
    assert (state.state, state.since) == ("exited", now)
    # ... unless its pid is of another pid namespace than the far side's /proc shows (a sibling container's): then
    # its heartbeat says, and the pid namespace there is the one its SFTP server's /proc/self names
    written = Path(session.path).with_name("bridge.json")
    bridge = orjson.loads(written.read_bytes())
    ours = os.stat("/proc/self/ns/pid").st_ino  # sshd, and the SFTP server it starts, run in this one
    for ns, seen in ((ours + 1, ("running", True)), (ours, ("exited", None))):
        written.write_bytes(orjson.dumps({**bridge, "pidNs": ns}))
        state = remote_host_state(link, session, hosted=False)
        assert (state.state, (state.bridge or {}).get("unseen")) == seen, (ns, state)


def test_a_remote_bridge_unloaded_from_a_dsh_that_runs_on_is_none_not_exited(sshd: Sshd, tmp_path: Path,
                                                                           sleeper: Callable[[], Any], heartbeat_now: int) -> None:  # noqa: F811  # fmt: skip
    """As locally (tests/bridge/test_host_state.py): the bridge said it exited, its DSH runs on over there."""
    dsh, now, session, link = _bridged_here(sshd, tmp_path, sleeper, "exited", heartbeat_now)
    state = remote_host_state(link, session, hosted=False)
    assert (state.state, state.kind) == ("none", "dsh") and "unloaded" in state.to_dict()["bridge"]["problem"]
    dsh.kill()
    dsh.wait()
    state = remote_host_state(link, session, hosted=False)
    assert (state.state, state.since) == ("exited", now)


def test_a_remote_bridge_unloaded_in_another_boot_is_exited_not_unloaded(sshd: Sshd, tmp_path: Path,
                                                                         sleeper: Callable[[], Any], heartbeat_now: int) -> None:  # noqa: F811  # fmt: skip
    """As locally: an exited bridge.json of another boot names no process of the far machine, whatever runs there
    under its pid with its start time: the session is exited, not a DSH that runs on without its bridge."""
    dsh, now, session, link = _bridged_here(sshd, tmp_path, sleeper, "exited", heartbeat_now)
    bridge = orjson.loads(Path(session.path).with_name("bridge.json").read_bytes())
    Path(session.path).with_name("bridge.json").write_bytes(orjson.dumps({**bridge, "bootId": "another-boot"}))
    state = remote_host_state(link, session, hosted=False)
    assert (state.state, state.since) == ("exited", now) and "unloaded" not in describe_host(state.to_dict())


def test_inspect_of_a_remote_dsh_session_reads_the_host_state_on_the_far_side(
    sshd: Sshd, dsh: Any, model: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], fresh_here: None
) -> None:
    """``inspect`` reads a remote log through a local copy, but the session's host state is the far side's: a
    session a real DSH runs through the bridge reads as its bridge says there, not as one no bridge ever ran (the
    copy has no bridge.json beside it), and the log it names is the remote one, not the throw-away copy."""
    from core.cli import main
    from tests.dsh.harness import DshHome, DshWeb, bridge_json, final_outcome, send, start_session, wait_for

    sshd.trust()
    world = DshHome(dsh, tmp_path / "dsh", model.url)
    with DshWeb(world) as web:
        _, d = start_session(world, web, "Read from afar: steps=4 sleep=1")
        assert final_outcome(d, send(d, "pause")["id"])["outcome"] == "applied"
        wait_for(lambda: bridge_json(d)["state"] == "paused", 20, "the held step")
        assert main(["inspect", str(d), "--json"]) == 0
        local = orjson.loads(capsys.readouterr().out)
        assert main(["inspect", f"testbox:{d}", "--json"]) == 0
        remote = orjson.loads(capsys.readouterr().out)
        assert main(["inspect", f"testbox:{d}"]) == 0
        text = capsys.readouterr().out
    assert (local["host"]["kind"], local["host"]["state"]) == ("dsh", "paused")
    for host in (local["host"], remote["host"]):
        del host["bridge"]["heartbeat"]  # rewritten every second
    assert remote["host"] == local["host"]
    assert remote["path"] == f"testbox:{d / 'session.jsonl'}"
    assert f"({remote['path']})" in text and "  host paused (DSH pid" in text


def test_a_copy_of_a_bridged_remote_session_is_not_live(sshd: Sshd, tmp_path: Path,
                                                        sleeper: Callable[[], Any]) -> None:  # noqa: F811  # fmt: skip
    """The copy keeps the original's bridge.json, which names the directory the plugin serves; over SFTP the two
    are told apart by their real paths (the original reached through a link is still itself)."""
    sshd.trust()
    dsh = sleeper()
    now = int(time.time() * 1000)
    bridge = {"state": "running", "pid": dsh.pid, "procStart": proc_start_time(dsh.pid), "since": now,
              "heartbeat": now, "bootId": BOOT_ID, "dir": str(tmp_path / "s")}  # fmt: skip
    original, copy = _session(tmp_path, "s", {"bridge.json": bridge}), _session(tmp_path, "c", {"bridge.json": bridge})
    (tmp_path / "link").symlink_to(tmp_path / "s")
    through_link = RemoteTarget(None, "testbox", str(tmp_path / "link" / "session.jsonl"))
    states = remote_host_states(link_for(original), [(original, False), (copy, False), (through_link, False)])
    assert [(s.state, s.live) for s in states] == [("running", True), ("none", False), ("running", True)]
    assert f"written for {tmp_path / 's'}, not for this directory" in states[1].bridge["problem"]


def test_a_moved_bridged_remote_session_reads_moved_not_copied(sshd: Sshd, tmp_path: Path, sleeper: Callable[[], Any],  # noqa: F811
                                                               heartbeat_now: int) -> None:  # fmt: skip
    """A session directory moved on the far side (the path its bridge.json names is gone there) is no copy: it reads
    exited, saying where it was moved from and that what is queued for it runs when DSH resumes it, as locally; one
    whose bridge.json was written on another machine (a copy brought there) says so, though it names its path."""
    sshd.trust()
    dsh = sleeper()
    now = heartbeat_now
    bridge = {"state": "running", "pid": dsh.pid, "procStart": proc_start_time(dsh.pid), "since": now,
              "heartbeat": now, "bootId": BOOT_ID, "dir": str(tmp_path / "gone")}  # fmt: skip
    moved = _session(tmp_path, "s", {"bridge.json": bridge})
    # the file of a copy brought from another machine (its path there gone here), and of a directory another machine
    # shares, whose DSH runs the session there (its heartbeat fresh): neither is moved, the second is live
    there = {**bridge, "pid": 999_999_999, "bootId": "another-boot", "dirId": "0123456789abcdef0123456789abcdef:64769:1234"}
    brought = _session(tmp_path, "c", {"bridge.json": {**there, "dir": str(tmp_path / "gone"), "heartbeat": now - 60_000}})
    shared = _session(tmp_path, "d", {"bridge.json": {**there, "dir": str(tmp_path / "gone")}})
    logs = (moved, brought, shared)
    states = remote_host_states(link_for(moved), [(log, False) for log in logs])
    assert (states[0].state, states[0].live, states[0].bridge["movedFrom"]) == ("exited", False, str(tmp_path / "gone"))
    assert f"moved here from {tmp_path / 'gone'}" in describe_host(states[0].to_dict())
    assert (states[1].state, states[1].live) == ("exited", False)
    assert f"written on another machine, for {tmp_path / 'gone'} there" in describe_host(states[1].to_dict())
    assert (states[2].state, states[2].live) == ("running", True)
    local = [read_host_state(Path(log.path)) for log in logs]
    assert local == states and [describe_host(s.to_dict()) for s in local] == [describe_host(s.to_dict()) for s in states]


def test_a_shared_directory_another_host_runs_is_live_over_ssh_where_the_far_side_has_no_machine_id(
    sshd: Sshd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, heartbeat_now: int
) -> None:
    """As locally (tests/bridge/test_host_state.py): the far machine mounts an NFS share DSH runs a session of on
    machine A, elsewhere than A does, and has no machine id: the file read as moved there, exited while it ran."""
    import core.remote.sessions

    sshd.trust()
    bridge = {"state": "running", "pid": 4_000_000, "procStart": "1", "bootId": "another-boot", "since": NOW,
              "heartbeat": heartbeat_now, "dir": "/mnt/nfs/p/s",
              "dirId": "0123456789abcdef0123456789abcdef:44:1234"}  # fmt: skip
    session = _session(tmp_path, "s", {"bridge.json": bridge})
    monkeypatch.setattr(core.remote.sessions, "MACHINE_ID_FILES", (str(tmp_path / "no-machine-id"),))
    state = remote_host_state(link_for(session), session, hosted=False)
    assert (state.state, state.live, state.bridge.get("movedFrom")) == ("running", True, None), state
    assert state.bridge["otherMachine"] == "/mnt/nfs/p/s"


def test_a_remote_session_with_no_bridge_costs_its_state_check_no_read(sshd: Sshd, tmp_path: Path) -> None:
    """The machine's id is read to judge a ``bridge.json`` (a copy brought from another machine): with none beside
    the log, a state check (the TUI's once a second, the fleet's every poll) reads no file; it read the two machine
    id files every time (66 bytes), which also threw off a test counting what following a remote log reads."""
    sshd.trust()
    plain = _session(tmp_path, "plain", {})
    link = link_for(plain)
    assert remote_host_state(link, plain, hosted=False).state == "none"
    before = link.bytes_read
    assert remote_host_state(link, plain, hosted=False).state == "none"
    assert link.bytes_read == before


def test_the_far_boot_is_read_once_per_connection(sshd: Sshd, tmp_path: Path, link_calls: LinkCalls) -> None:
    """A live state is checked against the far side's /proc at every check (the TUI's once a second, the fleet's every
    poll); the boot time (/proc/stat, which grows with the machine's CPUs), the boot id and the SFTP server's pid
    namespace cannot change while a connection lasts: they are read once per connection, the process's stat each
    time."""
    sshd.trust()
    bridge = {"state": "running", "pid": os.getpid(), "procStart": proc_start_time(os.getpid()), "since": NOW,
              "heartbeat": NOW - 60_000}  # fmt: skip
    live = _session(tmp_path, "live", {"bridge.json": bridge})
    link = link_for(live)
    reads = link_calls("read_files_and_links")
    for _ in range(3):
        assert remote_host_state(link, live, hosted=False).state == "running"
    link.close()  # the next check connects again: what it knew of the machine is read again
    assert remote_host_state(link, live, hosted=False).state == "running"
    asked = [path for call in reads for path in (*call["paths"], *call["links"])]
    assert [asked.count(p) for p in ("/proc/stat", "/proc/sys/kernel/random/boot_id", "/proc/self/ns/pid",
                                     f"/proc/{os.getpid()}/stat")] == [2, 2, 2, 4]  # fmt: skip


def test_a_second_dsh_on_standby_reads_the_same_over_ssh_as_here(
    sshd: Sshd, dsh: Any, model: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], fresh_here: None
) -> None:
    """A second DSH process that resumed a session the first one runs waits with its bridge on standby
    (``bridge.standby.json``): here inspect names it and the fleet reads ``DSH idle (+standby)``; over SSH the same
    session read as the first process's state alone, the standby not looked for."""
    from core.cli import main
    from tests.dsh.harness import DshHome, DshWeb, bridge_json, start_session, wait_for

    sshd.trust()
    world = DshHome(dsh, tmp_path / "dsh", model.url)
    with DshWeb(world) as first:
        sid, d = start_session(world, first, "The first process's turn: steps=1 sleep=0", in_flight=False)
        wait_for(lambda: (bridge_json(d) or {}).get("state") == "idle", 30, "the first bridge idle")
        with DshWeb(world) as second:
            assert second.proc is not None
            second.prompt(sid, "The second process's turn: steps=2 sleep=0")
            wait_for(lambda: (d / "bridge.standby.json").exists(), 30, "the second bridge on standby")
            reads = {}
            for where in (str(d), f"testbox:{d}"):
                assert main(["inspect", where, "--json"]) == 0
                host = orjson.loads(capsys.readouterr().out)["host"]
                del host["bridge"]["heartbeat"]  # rewritten every second
                assert main(["inspect", where]) == 0
                said = capsys.readouterr().out
                assert main(["sessions", where.removesuffix(str(d)) + str(world.sessions)]) == 0
                reads[where] = (host, said.split("  host ", 1)[1].splitlines()[0], capsys.readouterr().out)
            wait_for(lambda: not second.running(sid), 30, "the second process's turn to end")
    here, there = reads[str(d)], reads[f"testbox:{d}"]
    assert here[0]["bridge"]["standby"] == second.proc.pid
    assert there[0] == here[0] and there[1] == here[1]
    assert "DSH idle (+standby)" in here[2] and "DSH idle (+standby)" in there[2]


def test_a_session_whose_machine_id_changed_reads_as_itself_here_and_over_ssh(
    sshd: Sshd, dsh: Any, model: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A container rebuilt on its volume gets a new /etc/machine-id: the bridge.json its DSH wrote before names the
    old id, and the session read as one 'written on another machine ... (a copy brought from it, or a directory the
    two share)', here and over SSH. Its dirId's device and inode are this very directory's: it is the session
    itself, its DSH exited, with no word of another machine."""
    from core.cli import main
    from tests.dsh.harness import DshHome, DshWeb, bridge_json, start_session, wait_for

    sshd.trust()
    old = "0123456789abcdef0123456789abcdef"
    world = DshHome(dsh, tmp_path / "dsh", model.url, machine_id=old)  # DSH ran before the rebuild
    with DshWeb(world) as web:
        _, d = start_session(world, web, "Before the rebuild: steps=1 sleep=0", in_flight=False)
        wait_for(lambda: (bridge_json(d) or {}).get("state") == "idle", 30, "the bridge idle")
    st = d.stat()
    assert bridge_json(d)["dirId"] == f"{old}:{st.st_dev}:{st.st_ino}" and bridge_json(d)["dir"] == str(d)
    for where in (str(d), f"testbox:{d}"):
        assert main(["inspect", where, "--json"]) == 0
        host = orjson.loads(capsys.readouterr().out)["host"]
        assert (host["kind"], host["state"]) == ("dsh", "exited") and "otherMachine" not in host["bridge"], (where, host)
        assert main(["inspect", where]) == 0
        said = capsys.readouterr().out.split("  host ", 1)[1].splitlines()[0]
        assert "another machine" not in said and "copy" not in said, (where, said)


def test_a_remote_session_moved_and_its_old_path_made_again_reads_moved_not_copied(
    sshd: Sshd, tmp_path: Path, sleeper: Callable[[], Any], heartbeat_now: int  # noqa: F811
) -> None:
    """Over SSH the directory a bridge.json names was told from the one it is in by their real paths alone: a
    session directory moved, and a new one made at its old path, read as a copy of that new one, which no bridge
    serves. Its dirId's device and inode are the moved directory's (as locally, where they were compared): it is
    the session, moved; a copy of it (another inode) is still a copy, and the new directory is a session of its own."""
    from core.bridge.files import this_machine

    sshd.trust()
    dsh = sleeper()
    old, moved, copy = tmp_path / "old", tmp_path / "moved", tmp_path / "copy"
    _session(tmp_path, "moved", {})
    st = moved.stat()
    now = heartbeat_now
    bridge = {"state": "running", "pid": dsh.pid, "procStart": proc_start_time(dsh.pid), "since": now,
              "heartbeat": now, "bootId": BOOT_ID, "dir": str(old), "dirId": f"{this_machine()}:{st.st_dev}:{st.st_ino}"}  # fmt: skip
    (moved / "bridge.json").write_bytes(orjson.dumps(bridge))
    _session(tmp_path, "copy", {"bridge.json": bridge})
    _session(tmp_path, "old", {})  # the old path made again: a session of its own, never bridged
    # a sibling container's (pids of its own) mounting the volume at a path of its own: that path is its own, and
    # the directory, by its device and inode, this one
    sibling = _session(tmp_path, "sibling", {})
    sib = (tmp_path / "sibling").stat()
    (tmp_path / "sibling" / "bridge.json").write_bytes(orjson.dumps({
        **bridge, "pid": 7, "procStart": "1", "pidNs": os.stat("/proc/self/ns/pid").st_ino + 1, "dir": "/volume/s",
        "dirId": f"{this_machine()}:{sib.st_dev}:{sib.st_ino}"}))  # fmt: skip
    logs = [*(RemoteTarget(None, "testbox", str(d / "session.jsonl")) for d in (moved, copy, old)), sibling]
    states = remote_host_states(link_for(logs[0]), [(log, False) for log in logs])
    local = [read_host_state(Path(log.path)) for log in logs]
    assert (states[0].state, states[0].bridge.get("movedFrom")) == ("exited", str(old)), states[0]
    assert states[1].state == "none" and f"written for {old}, not for this directory" in states[1].bridge["problem"]
    assert (states[2].state, states[2].bridge) == ("none", None)
    assert (states[3].state, states[3].bridge.get("movedFrom"), states[3].bridge.get("unseen")) == ("running", None, True)
    assert states == local and [s.bridge for s in states] == [s.bridge for s in local]


def test_a_bridge_json_that_cannot_be_used_reads_the_same_over_ssh_as_here(sshd: Sshd, tmp_path: Path) -> None:
    """A bridge.json that is a symbolic link, larger than a bridge writes, or no regular file reads here as a DSH
    session whose bridge.json cannot be used, saying why; over SSH such a file was passed over, and the session
    read as one no bridge ever ran ('see `tapedeck bridge install`'), which would not help."""
    sshd.trust()
    link_to = _session(tmp_path, "link", {})
    Path(link_to.path).with_name("bridge.json").symlink_to(tmp_path / "elsewhere.json")
    (tmp_path / "elsewhere.json").write_bytes(orjson.dumps({"state": "running", "pid": os.getpid()}))
    huge = _session(tmp_path, "huge", {"bridge.json": {"state": "running", "problem": "x" * (64 << 10)}})
    directory = _session(tmp_path, "dir", {})
    Path(directory.path).with_name("bridge.json").mkdir()
    logs = [link_to, huge, directory]
    states = remote_host_states(link_for(link_to), [(log, False) for log in logs])
    local = [read_host_state(Path(log.path)) for log in logs]
    said = [describe_host(s.to_dict()) for s in states]
    assert said == [describe_host(s.to_dict()) for s in local] and states == local
    assert all("bridge.json here cannot be used" in line for line in said), said


def test_a_session_a_container_runs_on_a_volume_of_this_machine_is_live_by_its_heartbeat(
    sshd: Sshd, tmp_path: Path, heartbeat_now: int
) -> None:
    """DSH in a container (its own machine id and pids, this kernel's boot id) on a directory of this machine bind
    mounted into it: its bridge.json names the directory's device and inode here, and the path it has in the
    container (or the same path). Read here or over SSH it is the other machine's live session, judged by its
    heartbeat: with another path it read 'moved' (the inode is this directory's) and exited, with the same path its
    container pid was looked for here and it read exited; once it says it exited, it is this session, exited."""
    sshd.trust()
    now = heartbeat_now
    dirs = {"mounted": tmp_path / "mounted", "same": tmp_path / "same", "exited": tmp_path / "exited"}
    logs = []
    for name, d in dirs.items():
        target = _session(tmp_path, name, {})
        st = d.stat()
        bridge = {"state": "exited" if name == "exited" else "running", "pid": _dead_pid(), "procStart": "1",
                  "bootId": BOOT_ID, "since": now, "heartbeat": now, "dir": "/data/p/s" if name == "mounted" else str(d),
                  "dirId": f"0123456789abcdef0123456789abcdef:{st.st_dev}:{st.st_ino}"}  # fmt: skip
        (d / "bridge.json").write_bytes(orjson.dumps(bridge))
        logs.append(target)
    states = remote_host_states(link_for(logs[0]), [(log, False) for log in logs])
    local = [read_host_state(Path(log.path)) for log in logs]
    assert [(s.state, s.live, "otherMachine" in s.bridge) for s in states] == [
        ("running", True, True), ("running", True, True), ("exited", False, False)], states
    assert states == local and [s.bridge for s in states] == [s.bridge for s in local]
    assert "no process seen: live by its heartbeat" in describe_host(states[0].to_dict())


def test_a_large_host_json_reads_the_same_over_ssh_as_here(sshd: Sshd, tmp_path: Path) -> None:
    """A host.json padded past what a host writes (5 KB, then more than the most read) was read whole over SSH
    (64 KiB) and cut at 4 KiB here, so a 5 KB one said 'exited at 5000' over SSH and 'died at the log's last write'
    here: one limit (``MAX_HOST_BYTES``) holds for both, and what is past it is no record, here and there alike."""
    from core.control.host_state import MAX_HOST_BYTES

    sshd.trust()
    said = {"state": "exited", "pid": 4, "since": 5_000}
    sizes = (5_000, MAX_HOST_BYTES - 2, MAX_HOST_BYTES + 1, 70_000)
    logs = []
    for n, size in enumerate(sizes):
        body = orjson.dumps({**said, "pad": ""})
        body = body[:-2] + b"x" * (size - len(body)) + b'"}'
        assert len(body) == size
        target = _session(tmp_path, f"s{n}", {})
        (Path(target.path).parent / "host.json").write_bytes(body)
        logs.append(target)
    states = remote_host_states(link_for(logs[0]), [(log, True) for log in logs])
    local = [read_host_state(Path(log.path), True) for log in logs]
    assert states == local
    assert [s.since for s in local] == [5_000 if size <= MAX_HOST_BYTES else 1_700_000_000_000 for size in sizes]


def test_a_session_whose_directory_the_server_refuses_reads_unknown_and_leaves_the_others_read(
    sshd: Sshd, tmp_path: Path
) -> None:
    """The host states of many sessions are read in one batch. A session directory the server will not search (a
    link swapped in to a place it may not look into) failed the whole batch: no session of the machine had its
    state read with the others, and the refused one was never said to be refused. Now it reads ``unknown`` with
    the server's words, as a host.json the server will not read does, and the others are read as before."""
    from core.control.host_state import UNKNOWN

    denied = no_access_path()  # refused to root as well, in a container
    sshd.trust()
    alive = _session(tmp_path, "alive", {"host.json": {"state": "running", "pid": os.getpid(), "since": NOW}})
    (tmp_path / "refused").symlink_to(denied)
    refused = RemoteTarget(None, "testbox", str(tmp_path / "refused" / "session.jsonl"))
    states = remote_host_states(link_for(alive), [(alive, True), (refused, True)])
    assert [(s.state, s.since) for s in states] == [("running", NOW), (UNKNOWN, None)], states
    assert states[1].problem == "its host.json cannot be read (Permission denied)", states[1]


def test_a_host_json_the_server_will_not_read_reads_unknown_beside_a_bridge_json_over_ssh_as_here(
    nobody_sshd: Sshd, open_dir: Path
) -> None:
    """A session directory whose host.json its reader may not read, beside a bridge.json it may: here the refusal
    is read first (``unknown``: a host may run it, whatever a bridge says); over SSH the bridge.json was looked at
    first, and the session read as that bridge's. Both sides read as the user nobody (the far SFTP server runs as
    that user, and the local read here is made by a process that does)."""
    import json
    import shutil
    import sys

    import core
    from core.control.host_state import UNKNOWN
    from tests.remote.sshd import AS_NOBODY

    nobody_sshd.trust()
    session = open_dir / "s"
    session.mkdir(mode=0o755)
    session.chmod(0o755)
    log = session / "session.jsonl"
    log.write_bytes(b'{"type":"session","version":0,"id":"x"}\n')
    (session / "bridge.json").write_bytes(orjson.dumps({"state": "idle", "pid": os.getpid(), "since": NOW,
                                                        "procStart": proc_start_time(os.getpid()), "heartbeat": NOW}))  # fmt: skip
    (session / "host.json").write_bytes(orjson.dumps({"state": "running", "pid": os.getpid(), "since": NOW}))
    for file in ("session.jsonl", "bridge.json"):
        (session / file).chmod(0o644)
    (session / "host.json").chmod(0o600)  # root's alone
    target = RemoteTarget(None, "testbox", str(log))
    there = remote_host_state(link_for(target), target, hosted=False)
    # the reading code, copied where nobody may read it: the checkout and its virtualenv may lie in root's own dirs
    code = open_dir / "code"
    shutil.copytree(Path(core.__file__).parent, code / "core")
    shutil.copytree(Path(orjson.__file__).parent, code / "orjson")
    read = ("import json, sys; sys.path.insert(0, sys.argv[2]); from core.control.host_state import read_host_state as r; "
            "print(json.dumps(r(sys.argv[1]).to_dict()))")  # fmt: skip
    here = subprocess.run([*AS_NOBODY, sys.executable, "-c", read, str(log), str(code)], capture_output=True,
                          timeout=60, cwd=open_dir, check=True)  # fmt: skip
    assert there.to_dict() == json.loads(here.stdout), (there, here.stdout)
    assert (there.state, there.problem) == (UNKNOWN, "its host.json cannot be read (Permission denied)"), there
