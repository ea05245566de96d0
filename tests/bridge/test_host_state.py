"""Liveness and kind of a DSH session from the bridge's ``bridge.json`` (``core.host_state``, ``core.bridge.files``)."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from core.bridge.files import BRIDGE_FILE, newer_release, packaged_fingerprint, read_bridge
from core.cli import main
from core.control.host_state import describe_host, read_host_state, state_label
from core.shared.text import quoted_path
from tests.bridge.conftest import BOOT_ID, dsh_log, kill_unreaped, write_bridge


def test_a_dsh_log_without_a_bridge_is_kind_dsh_and_state_none(tmp_path: Path) -> None:
    log = dsh_log(tmp_path / "s")
    state = read_host_state(log)
    assert (state.state, state.kind, state.live) == ("none", "dsh", False)
    assert "tapedeck bridge install" in describe_host(state.to_dict())


def test_a_live_bridge_gives_its_state_and_pid(bridged) -> None:
    log = bridged("paused")
    write_bridge(log.parent, read_bridge(log.parent)[0].pid, "paused", problem="control.jsonl is mode 0644")
    assert describe_host(read_host_state(log).to_dict()).endswith(
        "the bridge says: control.jsonl is mode 0644"
    )
    state = read_host_state(log)
    assert (state.state, state.kind, state.live) == ("paused", "dsh", True)
    assert state.pid is not None and state.to_dict()["bridge"]["plugin"] == "tapedeck-bridge/0.1.0"
    assert state_label(state.state, state.kind) == "DSH paused"


def test_a_copied_session_directory_is_not_live_and_says_why(bridged, capsys) -> None:
    """A copy keeps the original's bridge.json, which names the directory the plugin serves: the copy is not that
    one, so no bridge reads its inbox and a request sent to it is refused instead of going unanswered."""
    log = bridged("running")
    copy = log.parent.with_name("copied")
    shutil.copytree(log.parent, copy)
    assert read_host_state(log).live
    state = read_host_state(copy / log.name)
    assert (state.state, state.kind, state.live) == ("none", "dsh", False)
    said = describe_host(state.to_dict())
    assert f"written for {log.parent}" in said
    assert "bridge install" not in said  # installing the bridge would not make a copy live
    assert main(["control", str(copy / log.name), "pause"]) == 2
    assert f"written for {log.parent}, not for this directory" in capsys.readouterr().err
    assert not (copy / "control.jsonl").exists()


def test_a_dead_pid_with_a_stale_heartbeat_is_exited_at_its_last_heartbeat(tmp_path: Path, sleeper) -> None:
    log = dsh_log(tmp_path / "s")
    proc = sleeper()
    body = write_bridge(log.parent, proc.pid, "running", heartbeat=int(time.time() * 1000) - 60_000)
    proc.kill()
    proc.wait()
    state = read_host_state(log)
    assert (state.state, state.kind, state.since) == ("exited", "dsh", body["heartbeat"])


def test_a_running_dsh_whose_bridge_json_is_not_rewritten_is_said_to_be_silent(tmp_path: Path, sleeper, capsys) -> None:
    """A bridge that cannot write bridge.json (a read-only or full file system, a directory in its place) says so
    only to DSH's logger, which under DSH keeps it in memory: tapedeck read the last file it wrote as the state
    now, a heartbeat a minute old while DSH ran, and the operator heard of nothing. A DSH process seen running here
    whose bridge has not rewritten the file for HEARTBEAT_FRESH_MS is now said to be so."""
    log = dsh_log(tmp_path / "s")
    dsh = sleeper()
    write_bridge(log.parent, dsh.pid, "idle", bootId=BOOT_ID, heartbeat=int(time.time() * 1000) - 60_000)
    state = read_host_state(log)
    assert state.live and state.to_dict()["bridge"]["silent"] is True
    said = describe_host(state.to_dict())
    assert f"idle (DSH pid {dsh.pid}) since " in said
    assert "; nothing heard from DSH since " in said and " s ago): its bridge rewrites bridge.json every second" in said
    assert "DSH is blocked" in said and "or its bridge cannot write the file" in said
    assert main(["inspect", str(log)]) == 0
    assert "nothing heard from DSH since " in capsys.readouterr().out
    write_bridge(log.parent, dsh.pid, "idle", bootId=BOOT_ID)  # written again: nothing to say
    state = read_host_state(log)
    assert "silent" not in state.to_dict()["bridge"] and "heard" not in describe_host(state.to_dict())


def test_a_stopped_dsh_is_said_to_be_stopped_since_its_last_heartbeat(tmp_path: Path, sleeper) -> None:
    """A DSH blocked past HEARTBEAT_FRESH_MS read 'silent', with a cannot-write-the-file explanation first, when what
    is known is that it has not answered since its last heartbeat; one the kernel stopped (SIGSTOP, Ctrl-Z, a
    debugger) is seen to be so in /proc, and is said to be, with the command that lets it run on."""
    import signal

    log = dsh_log(tmp_path / "s")
    dsh = sleeper()
    beat = int(time.time() * 1000) - 60_000
    write_bridge(log.parent, dsh.pid, "running", bootId=BOOT_ID, heartbeat=beat)
    os.kill(dsh.pid, signal.SIGSTOP)
    deadline = time.monotonic() + 60
    while read_host_state(log).to_dict()["bridge"].get("stopped") is not True and time.monotonic() < deadline:
        time.sleep(0.05)  # the stop is delivered on its own time
    state = read_host_state(log)
    bridge = state.to_dict()["bridge"]
    assert state.live and bridge["silent"] is True and bridge["stopped"] is True
    said = describe_host(state.to_dict())
    assert "; nothing heard from DSH since " in said and " s ago)" in said
    assert f"DSH pid {dsh.pid} is stopped (SIGSTOP, Ctrl-Z or a debugger): `kill -CONT {dsh.pid}` lets it run on" in said
    assert "cannot write" not in said
    os.kill(dsh.pid, signal.SIGCONT)  # running again, still not rewriting the file: blocked or cannot write it
    deadline = time.monotonic() + 60
    while read_host_state(log).to_dict()["bridge"].get("stopped") and time.monotonic() < deadline:
        time.sleep(0.05)
    bridge = read_host_state(log).to_dict()["bridge"]
    assert bridge["silent"] is True and "stopped" not in bridge


def test_a_killed_dsh_not_reaped_yet_is_exited(tmp_path: Path, sleeper) -> None:
    """A zombie keeps its pid and start time until its parent reaps it; it runs nothing: the bridge is gone."""
    log = dsh_log(tmp_path / "s")
    proc = sleeper()
    stale = int(time.time() * 1000) - 60_000
    body = write_bridge(log.parent, proc.pid, "running", heartbeat=stale)
    kill_unreaped(proc)
    state = read_host_state(log)
    assert (state.state, state.live, state.since) == ("exited", False, body["heartbeat"])


def test_a_dsh_killed_a_moment_ago_on_this_machine_is_exited_at_once(tmp_path: Path, sleeper) -> None:
    """Its heartbeat is still fresh, but bridge.json says it was written on this machine (its boot id): the pid,
    gone, says all. The heartbeat stands in for the pid only for a file another machine wrote."""
    log = dsh_log(tmp_path / "s")
    proc = sleeper()
    body = write_bridge(log.parent, proc.pid, "running", bootId=BOOT_ID)
    proc.kill()
    proc.wait()
    state = read_host_state(log)
    assert (state.state, state.since) == ("exited", body["heartbeat"])
    write_bridge(log.parent, proc.pid, "running", bootId="another-machine")
    assert read_host_state(log).state == "running"


def test_a_reused_pid_is_not_the_bridge(tmp_path: Path, sleeper) -> None:
    """The pid is alive but started at another time (a reused pid), and the heartbeat is old: exited."""
    log = dsh_log(tmp_path / "s")
    write_bridge(log.parent, sleeper().pid, "idle", procStart="1", heartbeat=int(time.time() * 1000) - 60_000)
    assert read_host_state(log).state == "exited"


def test_a_fresh_heartbeat_is_live_when_the_pid_cannot_be_checked(tmp_path: Path) -> None:
    """A bridge.json written on another machine: its pid means nothing here, its heartbeat is recent."""
    log = dsh_log(tmp_path / "s")
    write_bridge(log.parent, None, "idle", pid=2**22 + 17, procStart="123")
    assert read_host_state(log).state == "idle"


def test_a_bridge_live_by_its_heartbeat_alone_does_not_pass_its_pid_for_a_process_here(tmp_path: Path, sleeper) -> None:
    """'idle (DSH pid 4242) since …' read as if process 4242 ran here, also when no such process was seen and the
    bridge was live by its heartbeat alone (written on another machine sharing the directory, or in another boot):
    the pid is said to be unseen then; a pid seen running here reads as before."""
    log = dsh_log(tmp_path / "s")
    write_bridge(log.parent, None, "idle", pid=4242, procStart="123", bootId="another-boot")
    state = read_host_state(log)
    said = describe_host(state.to_dict())
    assert state.live and "(DSH pid 4242, no process seen: live by its heartbeat)" in said, said
    assert state.to_dict()["bridge"]["unseen"] is True
    dsh = sleeper()
    write_bridge(log.parent, dsh.pid, "idle", bootId=BOOT_ID)
    state = read_host_state(log)
    assert f"(DSH pid {dsh.pid}) since" in describe_host(state.to_dict()) and "unseen" not in state.to_dict()["bridge"]


def test_a_bridge_of_another_pid_namespace_is_live_by_its_heartbeat(tmp_path: Path, sleeper) -> None:
    """Sibling containers share the kernel (its boot id) and, built from one image, may share /etc/machine-id, but
    each has pids of its own: a bridge.json the other container's DSH writes names a pid that is no process here
    (or another one), and it read exited while that DSH ran. The plugin records its pid namespace (the inode of
    /proc/self/ns/pid); a file of another one is judged by its heartbeat, as another machine's, and its standby
    file names no second DSH here."""
    from core.bridge.files import STANDBY_FILE, proc_start_time

    log = dsh_log(tmp_path / "s")
    ours = os.stat("/proc/self/ns/pid").st_ino
    other = sleeper()  # a process here under the pid the other container's DSH has there
    body = write_bridge(log.parent, other.pid, "idle", bootId=BOOT_ID, pidNs=ours + 1)
    (log.parent / STANDBY_FILE).write_bytes(json.dumps({"pid": os.getpid(), "procStart": proc_start_time(os.getpid()),
                                                        "bootId": BOOT_ID, "pidNs": ours + 1, "since": 1}).encode())  # fmt: skip
    state = read_host_state(log)
    assert (state.state, state.bridge.get("unseen"), state.bridge.get("standby")) == ("idle", True, None), state
    write_bridge(log.parent, None, "idle", pid=2**22 + 17, procStart="1", bootId=BOOT_ID, pidNs=ours + 1,
                 heartbeat=body["heartbeat"] - 6000)  # fmt: skip
    assert read_host_state(log).state == "exited"
    write_bridge(log.parent, other.pid, "idle", bootId=BOOT_ID, pidNs=ours)  # this namespace's: its pid is looked for
    state = read_host_state(log)
    assert state.live and "unseen" not in state.bridge, state


def test_a_sibling_container_mounting_the_volume_elsewhere_serves_this_directory(tmp_path: Path) -> None:
    """A sibling container (this kernel's boot, this image's machine id, pids of its own) that mounts the volume at
    a path of its own writes that path into bridge.json: read here, where nothing is at that path, the file read as
    the directory's moved here, exited while the sibling's DSH ran it. Its dirId has this directory's device and
    inode, and its pid namespace is another: the path is the sibling's, the directory this one. In this pid
    namespace a path that leads nowhere is still a move."""
    from core.bridge.files import this_machine

    log = dsh_log(tmp_path / "s")
    st = log.parent.stat()
    ours = os.stat("/proc/self/ns/pid").st_ino
    sibling = {"pid": 7, "procStart": "1", "bootId": BOOT_ID, "pidNs": ours + 1, "dir": "/volume/p/s",
               "dirId": f"{this_machine()}:{st.st_dev}:{st.st_ino}"}  # fmt: skip
    write_bridge(log.parent, None, "idle", **sibling)
    state = read_host_state(log)
    assert (state.state, state.bridge.get("unseen"), state.bridge.get("movedFrom")) == ("idle", True, None), state
    write_bridge(log.parent, None, "exited", **sibling)
    state = read_host_state(log)
    assert (state.state, state.bridge.get("movedFrom")) == ("exited", None), state
    assert "moved" not in describe_host(state.to_dict())
    write_bridge(log.parent, None, "exited", **{**sibling, "pidNs": ours})
    assert read_host_state(log).bridge["movedFrom"] == "/volume/p/s"


def test_a_bridge_unloaded_from_a_dsh_that_runs_on_is_none_not_exited(tmp_path: Path, sleeper, capsys) -> None:
    """``tapedeck bridge remove`` while DSH runs: the plugin is unloaded and writes that it exited, but DSH goes on
    with the session. It read ``DSH exited`` (and a turn in flight raised a critical host-died) while DSH ran; it is
    now a DSH session no bridge runs, saying so, until its process is gone."""
    log = dsh_log(tmp_path / "s")
    dsh = sleeper()
    body = write_bridge(log.parent, dsh.pid, "exited")
    state = read_host_state(log)
    assert (state.state, state.kind, state.live) == ("none", "dsh", False)
    said = describe_host(state.to_dict())
    assert "unloaded at " in said and f"from DSH pid {dsh.pid}, which still runs" in said and "tapedeck bridge install" in said, said
    assert main(["control", str(log), "pause"]) == 2
    assert "nothing was sent: the tapedeck bridge was unloaded" in capsys.readouterr().err  # not 'sent. the'
    dsh.kill()
    dsh.wait()
    state = read_host_state(log)
    assert (state.state, state.since) == ("exited", body["since"])


def test_an_unloaded_bridge_names_a_dsh_pid_only_when_that_process_runs_this_session(tmp_path: Path, sleeper) -> None:
    """'unloaded from DSH (pid N) … DSH still runs this session' was said whenever a process ran with the pid and
    start time an exited bridge.json recorded, also when the file recorded another boot (written before a reboot,
    or on another machine sharing the directory): there the pid is not the DSH's, whatever runs under it here (a
    pid and a start tick count that come again after a boot); a pid reused since, or none (0, missing), is exited."""
    dsh = sleeper()
    cases = {"this boot": {"bootId": BOOT_ID}, "no boot said": {}, "another boot": {"bootId": "another-boot"},
             "reused": {"bootId": BOOT_ID, "procStart": "1"}, "pid 0": {"pid": 0}, "no pid": {"pid": None}}  # fmt: skip
    said = {}
    for name, fields in cases.items():
        log = dsh_log(tmp_path / name.replace(" ", "-"))
        body = write_bridge(log.parent, dsh.pid, "exited", **fields)
        state = read_host_state(log)
        said[name] = (state.state, describe_host(state.to_dict()))
        assert state.since == body["since"], name
    for name in ("this boot", "no boot said"):
        assert said[name][0] == "none" and "the tapedeck bridge was unloaded at 20" in said[name][1], said[name]
        assert f"from DSH pid {dsh.pid}, which still runs this session" in said[name][1], said[name]
    for name in ("another boot", "reused", "pid 0", "no pid"):
        assert said[name][0] == "exited" and "unloaded" not in said[name][1], (name, said[name])
    assert "pid 0" not in said["pid 0"][1] and "pid None" not in said["no pid"][1]


def test_a_shared_directory_another_host_runs_is_live_where_the_reader_has_no_machine_id(
    tmp_path: Path, monkeypatch
) -> None:
    """NFS, seen from another host: DSH runs the session on machine A, whose mount of the share is /mnt/nfs; this
    machine mounts it elsewhere and has no /etc/machine-id (a container). With no id of its own to compare the dirId
    with, the file was judged by its path, gone here: 'moved', exited, while A's DSH ran it. The machine is named by
    its hostname then, which no dirId holds: written on another machine, live while its heartbeat is fresh."""
    from core.bridge import files

    log = dsh_log(tmp_path / "s")
    body = write_bridge(log.parent, None, "running", pid=4_000_000, procStart="1", bootId="another-boot",
                        dir="/mnt/nfs/p/s", dirId="0123456789abcdef0123456789abcdef:44:1234")  # fmt: skip
    monkeypatch.setattr(files, "MACHINE_ID_FILES", (str(tmp_path / "no-machine-id"),))
    files.this_machine.cache_clear()
    try:
        state = read_host_state(log)
    finally:
        files.this_machine.cache_clear()
    assert (state.state, state.live, state.bridge.get("movedFrom")) == ("running", True, None), state
    assert state.bridge["otherMachine"] == body["dir"]


def test_a_standby_file_of_another_boot_names_no_second_dsh(bridged, sleeper) -> None:
    """A DSH killed while its bridge waited as standby leaves bridge.standby.json; after a reboot (or written on
    another machine sharing the directory) its pid and start tick may be another process's here, which read as a
    second DSH running the session ('DSH running (+standby)'). As bridge.json's pid, the file's is asked only in the
    boot it records (or when it records none)."""
    from core.bridge.files import STANDBY_FILE, proc_start_time

    log = bridged("running")
    other = sleeper()
    seen = {}
    for boot in (BOOT_ID, None, "another-boot"):
        body = {"pid": other.pid, "procStart": proc_start_time(other.pid), "since": 1, **({"bootId": boot} if boot else {})}
        (log.parent / STANDBY_FILE).write_bytes(json.dumps(body).encode())
        seen[boot] = (read_host_state(log).bridge or {}).get("standby")
    assert seen == {BOOT_ID: other.pid, None: other.pid, "another-boot": None}


def test_a_standby_file_that_cannot_be_read_makes_the_standby_unknown(bridged, capsys) -> None:
    """A second DSH whose bridge cannot write bridge.standby.json (a directory in its place) said so only to DSH's
    logger, kept in memory: tapedeck showed the session as run by one DSH alone. Its bridge retries at every poll,
    so what keeps it from writing lasts: tapedeck sees it there, and says whether a second DSH runs it is unknown
    (inspect in words, the fleet's row as 'DSH idle (standby?)')."""
    from core.bridge.files import STANDBY_FILE

    log = bridged("idle")
    (log.parent / STANDBY_FILE / "held").mkdir(parents=True)  # a directory that is not empty: a rename onto it fails
    state = read_host_state(log).to_dict()
    assert state["state"] == "idle" and "standby" not in state["bridge"], state
    assert state_label(state["state"], state["kind"], state["bridge"]) == "DSH idle (standby?)"  # the fleet's row
    said = describe_host(state)
    assert f"; {quoted_path(log.parent / STANDBY_FILE)} is not a regular file, so whether a second DSH" in said, said
    assert main(["inspect", str(log)]) == 0
    assert "whether a second DSH process runs this session on standby is unknown" in capsys.readouterr().out
    shutil.rmtree(log.parent / STANDBY_FILE)
    state = read_host_state(log).to_dict()
    assert "standby" not in describe_host(state)
    assert state_label(state["state"], state["kind"], state["bridge"]) == "DSH idle"


def test_a_symlinked_bridge_file_is_not_followed(tmp_path: Path, sleeper) -> None:
    log = dsh_log(tmp_path / "s")
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"state": "running", "pid": sleeper().pid}))
    os.symlink(elsewhere, log.parent / BRIDGE_FILE)
    state = read_host_state(log)
    assert state.state == "none"
    assert "symbolic link" in state.to_dict()["bridge"]["problem"]
    assert "bridge.json here cannot be used: " in describe_host(state.to_dict())


def test_a_tapedeck_log_is_kind_tapedeck(tmp_path: Path) -> None:
    log = dsh_log(tmp_path / "s")
    (log.parent / "host.json").write_text(json.dumps({"state": "exited", "pid": 5, "since": 1}))
    assert read_host_state(log).kind == "tapedeck"


def test_inspect_and_sessions_json_carry_state_and_kind(bridged, capsys) -> None:
    log = bridged("idle")
    assert main(["inspect", str(log), "--json"]) == 0
    host = json.loads(capsys.readouterr().out)["host"]
    assert (host["state"], host["kind"]) == ("idle", "dsh")
    assert main(["sessions", str(log.parents[2]), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["host"]["state"], r["host"]["kind"]) for r in rows] == [("idle", "dsh")]
    assert main(["sessions", str(log.parents[2])]) == 0
    assert "DSH idle" in capsys.readouterr().out


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
FIELDS = st.fixed_dictionaries(
    {},
    optional={k: JSON for k in ("state", "pid", "procStart", "since", "heartbeat", "plugin", "problem", "dir")}
    | {"state": st.sampled_from(["running", "paused", "exited", "bogus"])},
)


@settings(max_examples=150, deadline=None)
@given(body=st.one_of(JSON, FIELDS, st.binary(max_size=40)))
def test_any_bridge_file_reads_without_a_crash(tmp_path_factory, body) -> None:
    directory = tmp_path_factory.mktemp("hostile")
    log = dsh_log(directory / "s")
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    (log.parent / BRIDGE_FILE).write_bytes(raw)
    info, problem = read_bridge(log.parent)
    assert (info is None) or problem is None
    state = read_host_state(log)
    assert state.kind == "dsh" and state.state in ("running", "paused", "exited", "none")


def test_a_bridge_file_naming_a_directory_with_a_nul_byte_is_refused_saying_so(tmp_path: Path, capsys) -> None:
    """No directory's path holds a NUL byte, so a ``dir`` that does (a forged or damaged bridge.json) names none:
    every reader says the file was written for another directory (os.path.samefile raised ValueError out of
    'inspect', 'sessions', 'control' and the fleet before)."""
    log = dsh_log(tmp_path / "root" / "p" / "s")
    write_bridge(log.parent, os.getpid(), "running", dir="/tmp/a\x00b")
    state = read_host_state(log)
    assert (state.state, state.kind, state.live) == ("none", "dsh", False)
    assert "not for this directory" in describe_host(state.to_dict())
    assert main(["sessions", str(tmp_path / "root"), "--json"]) == 0
    assert main(["control", str(log), "pause"]) == 2
    assert "not for this directory" in capsys.readouterr().err


def test_a_log_swapped_for_a_fifo_never_blocks_the_host_state(tmp_path: Path) -> None:
    """A follower reads the host state of a log that someone replaced with a FIFO (or a device): looking for a
    ``tapedeck/host`` event at its start must not wait for a writer that never comes, nor read without end."""
    import threading

    for make in (lambda p: os.mkfifo(p), lambda p: os.symlink("/dev/zero", p)):
        log = tmp_path / f"s{len(list(tmp_path.iterdir()))}" / "session.jsonl"
        log.parent.mkdir()
        make(log)
        found: list[str] = []
        worker = threading.Thread(
            target=lambda log=log, found=found: found.append(read_host_state(log).state), daemon=True
        )
        worker.start()
        worker.join(60)
        if worker.is_alive():  # let it go: open a writer so the blocked open returns
            with open(log, "wb"):
                pass
        assert found == ["none"], log


def test_a_live_bridge_newer_than_the_packaged_plugin_is_not_called_old(bridged, capsys) -> None:
    """A plugin a newer tapedeck installed runs in DSH: it was named an old bridge, and the command said to upgrade
    it, ``tapedeck bridge install``, refuses to put this tapedeck's older plugin over a newer copy. It reads as a
    newer bridge, and what is said of it names the newer tapedeck, not that command."""
    log = bridged("running")
    write_bridge(log.parent, read_bridge(log.parent)[0].pid, "running", plugin="tapedeck-bridge/9.9.9",
                 fingerprint="0123456789ab")  # fmt: skip
    state = read_host_state(log)
    stale = state.to_dict()["bridge"]["stale"]
    assert "tapedeck-bridge/9.9.9" in stale and "newer than the one this tapedeck ships" in stale, stale
    assert "upgrades it" not in stale and "--force" in stale, stale
    assert state_label(state.state, state.kind, state.bridge) == "DSH running (newer bridge)"
    assert main(["sessions", str(log.parents[2])]) == 0
    assert "DSH running (newer bridge)" in capsys.readouterr().out


def test_a_live_bridge_older_than_the_packaged_plugin_is_named_everywhere_it_shows(bridged, capsys) -> None:
    """A plugin copy an earlier tapedeck installed keeps running in DSH: its bridge.json has no fingerprint (or
    another one). inspect, sessions, the fleet's host cell and control say so, and name the command that upgrades
    it; the packaged plugin's fingerprint says nothing."""
    log = bridged("running")
    pid = read_bridge(log.parent)[0].pid
    for fingerprint in (None, "0123456789ab"):
        write_bridge(log.parent, pid, "running", fingerprint=fingerprint)
        state = read_host_state(log)
        stale = state.to_dict()["bridge"]["stale"]
        assert "`tapedeck bridge install` upgrades it" in stale and packaged_fingerprint() in stale
        assert (fingerprint or "from before plugins had fingerprints") in stale
        assert describe_host(state.to_dict()).endswith(stale)
        assert state_label(state.state, state.kind, state.bridge) == "DSH running (old bridge)"
        assert main(["sessions", str(log.parents[2])]) == 0
        assert "DSH running (old bridge)" in capsys.readouterr().out
        assert main(["control", str(log), "checkpoint"]) == 0
        assert stale in capsys.readouterr().err
    write_bridge(
        log.parent, pid, "exited", fingerprint=None
    )  # a bridge gone runs nothing: only the JSON says it
    assert state_label("exited", "dsh", read_host_state(log).bridge) == "DSH exited"
    write_bridge(log.parent, pid, "running")  # the packaged plugin
    state = read_host_state(log)
    assert (
        "stale" not in state.to_dict()["bridge"]
        and state_label(state.state, state.kind, state.bridge) == "DSH running"
    )
    assert main(["control", str(log), "checkpoint"]) == 0
    assert capsys.readouterr().err == ""


def test_inspect_names_the_requests_a_dead_bridge_was_running(tmp_path: Path, capsys) -> None:
    """DSH died while its bridge ran a request (bridge.json's inFlight): inspect says which, and that whether it
    took effect is unknown, for an operator who sent it without --wait. It said 'it was running request req-7 when
    it stopped: whether it took effect is unknown': not what 'it' was, nor the op, nor where to look; it says each
    now, by op as control --wait's unknown outcome does (``unknown_hint``)."""
    log = dsh_log(tmp_path / "s")
    write_bridge(log.parent, None, "exited", inFlight=[{"id": "req-7", "op": "pause"}, {"id": "req-8", "op": "x"}])
    assert main(["inspect", str(log)]) == 0
    out = capsys.readouterr().out
    assert ("; DSH stopped while its bridge was running the pause request req-7, before it wrote the outcome, so it "
            "may or may not have taken effect: the session's state says whether it is paused (tapedeck inspect, the "
            "TUI's header); DSH stopped while its bridge was running request req-8, before it wrote the outcome, so "
            "it may or may not have taken effect: the session's events after it was sent tell whether it did "
            "(tapedeck events, the TUI)") in out, out


def test_a_bridge_json_of_many_requests_in_flight_gives_a_line_of_a_few(tmp_path: Path) -> None:
    """Each inFlight request got a clause of some 230 characters, with no cap: a 64 KiB bridge.json of thousands
    made a line of a megabyte (found reviewing a6020479). The first few are said in full, the rest named by id."""
    log = dsh_log(tmp_path / "s")
    write_bridge(log.parent, None, "exited", inFlight=[{"id": f"r{n}", "op": "pause"} for n in range(2000)])
    said = describe_host(read_host_state(log).to_dict())
    assert said.count("DSH stopped while its bridge was running") == 3 and len(said) < 2000, len(said)
    assert "; and 1997 more requests it was running, each as uncertain: r3, r4, r5, and 1994 more" in said, said


def test_a_log_replaced_in_place_by_a_longer_one_is_judged_by_what_it_holds_now(tmp_path: Path) -> None:
    """``cp`` over a log keeps its inode, and the copy may be longer than the log was: whether a tapedeck host ever
    ran it is read again from the new start, not kept from the file's old one (no host.json says it here)."""
    header = {"type": "session", "version": 0, "id": "0b5e", "createdAt": 1, "cwd": "/w", "delegationDepth": 0}
    hosted = tmp_path / "hosted.jsonl"
    hosted.write_text(json.dumps(header) + '\n{"type":"tapedeck/host","data":{}}\n')
    dsh = dsh_log(tmp_path / "dsh")
    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    shutil.copyfile(hosted, log)
    inode = log.stat().st_ino
    assert read_host_state(log).kind == "tapedeck"
    shutil.copyfile(dsh, log)  # longer, same file
    assert log.stat().st_ino == inode and log.stat().st_size > hosted.stat().st_size
    assert (read_host_state(log).kind, read_host_state(log).state) == ("dsh", "none")
    padding = "".join(json.dumps({"type": "turn/note", "data": {"n": n, "text": "x" * 200}}) + "\n" for n in range(1500))
    log.write_text(log.read_text() + padding)  # past the start read for a host event: settled, never hosted
    assert read_host_state(log).kind == "dsh"
    log.write_text(hosted.read_text() + padding + padding)
    assert log.stat().st_ino == inode
    assert read_host_state(log).kind == "tapedeck"


def test_a_bridge_naming_a_version_of_more_digits_than_int_takes_is_read_and_said(bridged, capsys) -> None:
    """A forged or damaged bridge.json whose plugin is ``tapedeck-bridge/<5,000 nines>``: comparing it with the
    packaged version raised ValueError (int() takes at most 4,300 digits) out of inspect, sessions, control and the
    fleet. It is a newer release than any, compared digit by digit as the numbers are."""
    log = bridged("running")
    huge = "9" * 5000
    write_bridge(log.parent, read_bridge(log.parent)[0].pid, "running", plugin=f"tapedeck-bridge/{huge}",
                 fingerprint="0123456789ab")  # fmt: skip
    state = read_host_state(log)
    assert state_label(state.state, state.kind, state.bridge) == "DSH running (newer bridge)"
    assert main(["inspect", str(log)]) == 0
    assert main(["sessions", str(log.parents[2])]) == 0
    capsys.readouterr()
    assert main(["control", str(log), "checkpoint"]) == 0
    err = capsys.readouterr().err
    assert "newer than the one this tapedeck ships" in err and huge not in err, err[:300]  # named, cut


@settings(max_examples=200, deadline=None)
@given(a=st.lists(st.integers(0, 10**6), min_size=1, max_size=4), b=st.lists(st.integers(0, 10**6), min_size=1, max_size=4),
       digits=st.integers(0, 9000), text=st.text(st.sampled_from("0123456789.a-+٣"), max_size=12))  # fmt: skip
def test_versions_order_as_their_numbers_whatever_their_length(a: list[int], b: list[int], digits: int, text: str) -> None:
    def dotted(parts: list[int]) -> str:
        return ".".join(map(str, parts))

    assert newer_release(dotted(a), dotted(b)) == (a > b)
    long = "1" + "0" * digits
    assert newer_release(long, dotted(b)) == ([10**digits] > b if digits < 4000 else True)
    assert newer_release(text, long) in (True, False) and newer_release(long, text) in (True, False)


def test_a_bridge_files_unknown_state_is_shown_as_its_json(tmp_path: Path) -> None:
    """A state no bridge writes was named as Python writes it and whole (a forged bridge.json's 60 KB state, an
    escape sequence in it, in every reader's problem line; None for none), where every other message shows a value
    from a file as JSON (``shown``: cut, its length said, controls as escapes)."""
    log = dsh_log(tmp_path / "s")
    for state, said in (("\x1b[2J" + "x" * 60_000, '"\\u001b[2J' + "x" * 75 + '…" (60,004 characters)'),
                        (None, "null"), (["running"], '["running"]')):  # fmt: skip
        (log.parent / BRIDGE_FILE).write_bytes(json.dumps({"state": state, "pid": os.getpid()}).encode())
        assert read_bridge(log.parent) == (None, f"{log.parent / BRIDGE_FILE}: unknown state {said}")


def test_the_directory_a_bridge_json_names_is_escaped_in_what_control_says(tmp_path: Path, capsys) -> None:
    """A bridge.json names the directory its plugin served (``dir``), and control's refusal of a copy or of a moved
    session quoted it as the file holds it: an escape sequence in it (a forged file, or a real directory so named)
    went raw to stderr and retitled the operator's terminal. It is named as control names a path now, whole, each
    character a terminal acts on as its escape."""
    named = str(tmp_path / "old\x1b]2;PWNED\x07")
    log = dsh_log(tmp_path / "s")
    os.mkdir(named)  # another directory: this one is a copy of it
    write_bridge(log.parent, None, "idle", pid=4242, procStart="1", bootId=BOOT_ID, dir=named)
    assert main(["control", str(log), "pause"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and f"written for {tmp_path}/old\\u001b]2;PWNED\\u0007, not for this" in err, err
    os.rmdir(named)  # the path is gone: this directory was moved from there
    assert main(["control", str(log), "pause"]) == 3
    err = capsys.readouterr().err
    assert "\x1b" not in err and f"moved here from {tmp_path}/old\\u001b]2;PWNED\\u0007:" in err, err


def test_what_bridge_json_names_is_quoted_in_the_host_line(bridged, tmp_path: Path) -> None:
    """``inspect``'s host line wrote the ids of bridge.json's ``inFlight`` and the bridge's ``problem`` as they are,
    so, piped, a forged file's newline made a line of its own and its escape sequence went out raw: each is quoted
    as every other id in a message is (``\\n``, ``\\u001b``)."""
    forged = "x\n\x1b]52;c;Zm9yZ2Vk\x07"
    live = bridged("running")
    write_bridge(live.parent, read_bridge(live.parent)[0].pid, "running", problem=f"the inbox {forged}")
    exited = dsh_log(tmp_path / "exited")
    write_bridge(exited.parent, None, "exited", inFlight=[{"id": f"req-{forged}", "op": "pause"}])
    for log, said in ((live, "the bridge says: the inbox x\\n\\u001b]52;c;Zm9yZ2Vk\\u0007"),
                      (exited, "running the pause request req-x\\n\\u001b]52;c;Zm9yZ2Vk\\u0007, before")):  # fmt: skip
        line = describe_host(read_host_state(log).to_dict())
        assert said in line and not [c for c in line if ord(c) < 32], line


def test_an_in_flight_op_that_is_no_string_is_no_op(tmp_path: Path, capsys) -> None:
    """A forged ``inFlight`` entry whose ``op`` is a list or an object (unhashable) made reading bridge.json raise
    TypeError out of ``inspect`` (the op was looked up in the ops' table as it came): such an op is none of DSH's,
    read as an entry without one, as the plugin reads it."""
    log = dsh_log(tmp_path / "s")
    write_bridge(log.parent, None, "exited", inFlight=[{"id": "req-7", "op": ["pause"]}, {"id": "req-8", "op": {}}])
    assert read_bridge(log.parent)[0].in_flight == (("req-7", None), ("req-8", None))
    assert main(["inspect", str(log)]) == 0
    out = capsys.readouterr().out
    assert "running request req-7, before" in out and "running request req-8, before" in out, out
