"""Whatever bytes another machine serves where a session's host state is read over SFTP (``host.json``,
``bridge.json``, ``bridge.standby.json``, ``/proc/stat``, ``/proc/<pid>/stat``, the boot id, the pid namespace's
link) and whatever names its directories list, the
sessions, fleet and alerts commands get a host state and a list of logs, never an exception. In memory: a fake
link answers the SFTP calls ``core.remote.sessions`` makes (no ssh server needed)."""

from __future__ import annotations

import posixpath
import time
from typing import cast

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.control.host_state import HostState
from core.remote.link import RemoteStat, SshLink
from core.remote.sessions import remote_host_states, remote_logs, remote_refs
from core.remote.target import RemoteTarget

ROOT = "/srv/sessions"
HEADER = b'{"type":"session","version":0,"id":"x"}\n'


class _Machine:
    """The SFTP calls of ``SshLink`` that ``core.remote.sessions`` makes, answered from ``files`` (path -> bytes;
    the directories above each file exist)."""

    def __init__(self, files: dict[str, bytes], stat_out: bytes | None = None,
                 links: dict[str, str] | None = None) -> None:  # fmt: skip
        self.files = files
        self.links = links or {}  # path -> what the link there names
        self.dirs = {d for path in files for d in _parents(path)}
        self.stat_out = stat_out  # what a command run there writes (the directories' devices and inodes)
        self.per_connection: dict[str, object] = {}

    def stat(self, path: str, follow: bool = True, own: bool = False) -> RemoteStat | None:
        return self.stat_many([path], follow)[0]

    def stat_many(self, paths: list[str], follow: bool = True,
                  refused: dict[str, str] | None = None, own: bool = False) -> list[RemoteStat | None]:  # fmt: skip
        return [RemoteStat(len(self.files[p]), 1_700_000_000_000, "file") if p in self.files else
                RemoteStat(0, 1_700_000_000_000, "dir") if p in self.dirs else None for p in paths]  # fmt: skip

    def output(self, command: str) -> bytes | None:
        return self.stat_out

    def read(self, path: str, offset: int, length: int, unlinked: bool = False, known: RemoteStat | None = None) -> bytes:
        return self.files.get(path, b"")[offset : offset + length]

    def read_files(self, paths: list[str], limit: int, refused: dict[str, str] | None = None) -> list[bytes | None]:
        return [self.files[p][:limit] if p in self.files else None for p in paths]

    def read_files_and_links(self, paths: list[str], limit: int, links: list[str],
                             refused: dict[str, str] | None = None) -> tuple[list[bytes | None], list[str | None]]:  # fmt: skip
        return self.read_files(paths, limit), [self.links.get(p) for p in links]

    def realpaths(self, paths: list[str]) -> list[str | None]:
        return [posixpath.normpath(p) if p in self.files or p in self.dirs else None for p in paths]

    def listdir(self, path: str, skipped: list[str] | None = None) -> list[tuple[str, str]]:
        return self.listdir_many([path], skipped)[0]

    def listdir_many(self, paths: list[str], skipped: list[str] | None = None) -> list[list[tuple[str, str]]]:
        def entries(d: str) -> list[tuple[str, str]]:
            names = {p[len(d) + 1 :].split("/")[0] for p in self.files.keys() | self.dirs if p.startswith(d + "/")}
            return sorted((n, "dir" if f"{d}/{n}" in self.dirs else "file") for n in names)

        return [entries(d) for d in paths]


def _parents(path: str) -> list[str]:
    out = []
    while (path := posixpath.dirname(path)) not in ("/", ""):
        out.append(path)
    return out


ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=5,
)  # fmt: skip
PIDS = st.one_of(st.sampled_from([1, 4242, 0, -3, 2**40]), ANY_JSON)
NUMBERS = st.one_of(st.integers(-(2**63), 2**63 - 1), ANY_JSON)


def _json(fields: dict[str, st.SearchStrategy]) -> st.SearchStrategy[bytes]:
    objects = st.fixed_dictionaries({}, optional=fields).map(orjson.dumps)
    return st.one_of(objects, st.binary(max_size=40), ANY_JSON.map(orjson.dumps))


STATE = st.sampled_from(["running", "paused", "idle", "exited", "none", "gone"]) | ANY_JSON
# A live host or bridge with a pid: the machine's /proc is read for it.
LIVE_HOST = st.fixed_dictionaries({"state": st.just("running"), "pid": st.just(4242), "since": NUMBERS})
LIVE_BRIDGE = st.fixed_dictionaries({"state": st.just("running"), "pid": st.just(4242), "procStart": st.just("123")})
HOST_JSON = LIVE_HOST.map(orjson.dumps) | _json({"state": STATE, "pid": PIDS, "since": NUMBERS, "kind": ANY_JSON})
BRIDGE_JSON = LIVE_BRIDGE.map(orjson.dumps) | _json({
    "state": STATE, "pid": PIDS, "procStart": st.sampled_from(["123", "é", "-1", ""]) | ANY_JSON,
    "bootId": st.sampled_from(["boot-a", "boot-b"]) | ANY_JSON, "since": NUMBERS, "heartbeat": NUMBERS,
    "dir": st.sampled_from([f"{ROOT}/p/s1", f"{ROOT}/p/s2", "/elsewhere", "", "../.."]) | ANY_JSON,
    "inFlight": ANY_JSON, "pidNs": st.sampled_from([4026531836, 0, -1, 2**64 - 1]) | ANY_JSON,
    "dirId": st.sampled_from(["0123456789abcdef0123456789abcdef:5:7", "ffffffffffffffffffffffffffffffff:5:7", "x",
                              "::", ""]) | ANY_JSON,
})  # fmt: skip
STAT_OUT = st.sampled_from([b"5:7\n5:7\n", b"5:7\n", b"-\n-\n", b"", b"\xff\n5:7\n", b"9" * 30 + b":1\n-\n"]) | st.binary(max_size=30)
STANDBY_JSON = _json({"pid": PIDS, "procStart": st.sampled_from(["123", "é", ""]) | ANY_JSON, "bootId": ANY_JSON,
                      "pidNs": ANY_JSON})
FIELD = st.sampled_from([b"123", b"0", b"x", b"\xff\xfe", b"-5", b"9" * 30, b""])
PROC_STAT = st.one_of(
    st.lists(FIELD.map(lambda value: b"btime " + value) | st.sampled_from([b"btime", b"cpu 1 2 3"]), max_size=3)
    .map(b"\n".join),
    st.binary(max_size=40),
)  # fmt: skip
PID_STAT = st.one_of(
    st.tuples(st.sampled_from([b"(dsh)", b"(a) b)", b"", b"("]), st.sampled_from([b"S", b"Z", b""]),
              st.lists(FIELD, max_size=22)).map(lambda t: b"42 " + t[0] + b" " + t[1] + b" " + b" ".join(t[2])),
    st.binary(max_size=60),
)  # fmt: skip
NAMES = st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), min_size=1, max_size=12)


@settings(max_examples=400, derandomize=True)
@given(
    host=st.none() | HOST_JSON, bridge=st.none() | BRIDGE_JSON, second_host=st.none() | HOST_JSON,
    standby=st.none() | STANDBY_JSON, stat_out=st.none() | STAT_OUT, machine_id=st.none() | st.sampled_from([
        b"0123456789abcdef0123456789abcdef\n", b"ffffffffffffffffffffffffffffffff", b"x"]),
    proc_stat=st.none() | PROC_STAT, pid_stat=st.none() | PID_STAT, boot_id=st.none() | st.binary(max_size=12),
    hosted=st.booleans(), names=st.lists(NAMES, max_size=3), head=st.sampled_from([HEADER, b"", b"\xff" * 9, b"{}\n"]),
    pid_ns=st.none() | st.sampled_from(["pid:[4026531836]", "pid:[]", "pid:[" + "9" * 30 + "]", "net:[1]", "\x00"]),
)  # fmt: skip
def test_no_bytes_on_the_far_side_raise_out_of_a_listing_or_a_host_state(
    host: bytes | None, bridge: bytes | None, second_host: bytes | None, standby: bytes | None,
    stat_out: bytes | None, machine_id: bytes | None, proc_stat: bytes | None,
    pid_stat: bytes | None, boot_id: bytes | None, hosted: bool, names: list[str], head: bytes, pid_ns: str | None,
) -> None:  # fmt: skip
    files = {f"{ROOT}/p/s1/session.jsonl": HEADER, f"{ROOT}/p/s2/session.jsonl.zstd": head}
    for path, body in [(f"{ROOT}/p/s1/host.json", host), (f"{ROOT}/p/s1/bridge.json", bridge),
                       (f"{ROOT}/p/s2/bridge.json", bridge), (f"{ROOT}/p/s2/host.json", second_host),
                       (f"{ROOT}/p/s2/bridge.standby.json", standby), ("/etc/machine-id", machine_id),
                       ("/proc/stat", proc_stat), ("/proc/sys/kernel/random/boot_id", boot_id)]:  # fmt: skip
        if body is not None:
            files[path] = body
    if pid_stat is not None:
        files.update({f"/proc/{pid}/stat": pid_stat for pid in (1, 4242, 2**40)})
    for name in names:
        files[f"{ROOT}/p/{name}/session.jsonl"] = head
        files[f"{ROOT}/{name}/x"] = b""
    link = cast(SshLink, _Machine(files, stat_out, {"/proc/self/ns/pid": pid_ns} if pid_ns is not None else {}))
    logs = remote_logs(link, RemoteTarget("me", "box", ROOT))
    assert {f"{ROOT}/p/s1/session.jsonl", f"{ROOT}/p/s2/session.jsonl.zstd"} <= {log.path for log in logs}
    states = remote_host_states(link, [(log, hosted) for log in logs])
    assert len(states) == len(logs) and all(isinstance(state, HostState) for state in states)
    assert len(remote_refs(link, logs)) == len(logs)


@pytest.mark.parametrize(
    ("proc_stat", "pid_stat"),
    [
        (b"btime x", b"42 (dsh) S" + b" 1" * 19 + b" 100"),
        (b"btime ", b"42 (dsh) S" + b" 1" * 19 + b" 100"),
        (b"btime 5", b"42 (dsh) S" + b" 1" * 18 + b" \xff"),
        (b"btime 5", b"42 (dsh) S" + b" 1" * 18 + b" z1"),
    ],
)
def test_a_proc_that_is_no_linux_proc_leaves_the_recorded_state(proc_stat: bytes, pid_stat: bytes) -> None:
    """A btime or a start time that is no number (another system's /proc, or a file in its place) raised
    ValueError, IndexError or UnicodeDecodeError out of the sessions command and the fleet's refresh."""
    files = {f"{ROOT}/p/s1/session.jsonl": HEADER, "/proc/stat": proc_stat, "/proc/4242/stat": pid_stat,
             f"{ROOT}/p/s1/host.json": orjson.dumps({"state": "running", "pid": 4242, "since": 5})}  # fmt: skip
    log = RemoteTarget(None, "box", f"{ROOT}/p/s1/session.jsonl")
    [state] = remote_host_states(cast(SshLink, _Machine(files)), [(log, True)])
    assert (state.state, state.pid) in {("running", 4242), ("exited", 4242)}


@pytest.mark.parametrize("where", ["btime", "start time"])
def test_a_proc_number_too_long_to_convert_leaves_the_recorded_state(where: str) -> None:
    """656460a let a btime or start time through when its bytes were digits, and int() refuses more than 4,300 of
    them (ValueError), so such a /proc still raised out of the sessions command and the fleet's refresh."""
    huge = b"9" * 5000
    proc_stat = b"btime " + (huge if where == "btime" else b"5")
    pid_stat = b"42 (dsh) S" + b" 1" * 18 + b" " + (huge if where == "start time" else b"100")
    test_a_proc_that_is_no_linux_proc_leaves_the_recorded_state(proc_stat, pid_stat)


def test_a_zstd_copy_tied_to_its_raw_log_by_the_second_is_measured_once_not_at_every_listing() -> None:
    """e159503 tells a raw log and a zstd copy of it whose SFTP times tie to the second apart by their text, reading
    the zstd one until it decodes to the raw one's size: for a copy as ``zstd -o`` leaves it (one text, one time)
    that is the whole file, and the fleet and the alerts list their roots every few seconds, so a 50 MB copy was
    read whole over SSH at every listing. Unchanged files are measured once."""
    import zstandard

    text = HEADER + b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\n' * 2000
    files = {f"{ROOT}/p/s/session.jsonl": text, f"{ROOT}/p/s/session.jsonl.zstd": zstandard.ZstdCompressor().compress(text)}
    read: list[int] = []

    class Counting(_Machine):
        def read(self, path: str, offset: int, length: int, unlinked: bool = False, known: RemoteStat | None = None) -> bytes:
            data = super().read(path, offset, length)
            read.append(len(data))
            return data

    link = cast(SshLink, Counting(files))
    for _ in range(3):
        [log] = remote_logs(link, RemoteTarget("me", "box", ROOT))
        assert log.path == f"{ROOT}/p/s/session.jsonl.zstd"  # one text: the zstd one, as locally
    assert sum(read) == len(files[f"{ROOT}/p/s/session.jsonl.zstd"])


@pytest.mark.parametrize("held", ["directory", "unreadable"])
def test_a_far_standby_file_that_cannot_be_read_makes_the_standby_unknown_as_here(held: str) -> None:
    """4ab3c2e9 says whether a second DSH runs a session on standby is unknown when bridge.standby.json is no regular
    file or cannot be read, on this machine only: over SSH the same session read as one DSH alone, without a word.
    Over SSH it reads as here, in the same words (the fleet's row: 'DSH idle (standby?)')."""
    from core.bridge.files import STANDBY_FILE, packaged_fingerprint
    from core.control.host_state import describe_host, state_label
    from core.shared.text import quoted_path

    now = int(time.time() * 1000)
    standby = f"{ROOT}/s/{STANDBY_FILE}"
    files = {f"{ROOT}/s/session.jsonl": HEADER, "/proc/sys/kernel/random/boot_id": b"b1\n", "/proc/stat": b"btime 5\n",
             "/proc/4242/stat": b"4242 (dsh) S" + b" 1" * 18 + b" 123",
             f"{ROOT}/s/bridge.json": orjson.dumps({"state": "idle", "pid": 4242, "procStart": "123", "bootId": "b1",
                                                    "since": now, "heartbeat": now, "plugin": "tapedeck-bridge/0.1.0",
                                                    "fingerprint": packaged_fingerprint()}),
             **({f"{standby}/held": b""} if held == "directory" else {standby: b'{"pid": 4343}'})}  # fmt: skip

    class Denying(_Machine):  # the standby file's mode lets this login stat it, not read it
        def read_files(self, paths: list[str], limit: int, refused: dict[str, str] | None = None) -> list[bytes | None]:
            return [None if p == standby else data for p, data in zip(paths, super().read_files(paths, limit), strict=True)]

    [state] = remote_host_states(cast(SshLink, Denying(files)), [(RemoteTarget(None, "box", f"{ROOT}/s/session.jsonl"), False)])
    why = "is not a regular file" if held == "directory" else "cannot be read"
    assert state.state == "idle" and (state.bridge or {}).get("standbyUnknown") == f"{quoted_path(standby)} {why}", state
    assert state_label(state.state, state.kind, state.bridge) == "DSH idle (standby?)"
    assert "whether a second DSH process runs this session on standby is unknown" in describe_host(state.to_dict())


def test_one_remote_log_the_server_will_not_stat_leaves_the_rest_of_the_fleet_polled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fleet stats every log of a machine in one round trip: a file status the server refuses for one of them
    (not the link's: a directory it may list but not search) raised out of that stat, so out of every poll of the
    whole fleet, and no session of any machine was read again. That session alone is now unreadable
    (``unreachable``, with the server's words), and the others are read as before."""
    from core.control.config import validate_config
    from core.fleet.follow import Fleet
    from core.shared.errors import TapedeckError

    log = HEADER + b'{"type":"user/message","seq":0,"data":{"content":[{"type":"text","text":"hi"}]}}\n'
    denied, fine = f"{ROOT}/p/s1/session.jsonl", f"{ROOT}/p/s2/session.jsonl"

    class Refusing(_Machine):  # serves both logs, but refuses a stat of s1's once the fleet watches it
        refusing = False

        def stat_many(self, paths: list[str], follow: bool = True, refused: dict[str, str] | None = None,
                      own: bool = False) -> list[RemoteStat | None]:  # fmt: skip
            if self.refusing and denied in paths:  # as the link does: raised, or noted when the caller takes notes
                if refused is None:
                    raise TapedeckError(f"box:{denied}: cannot stat (Permission denied)")
                refused[denied] = "Permission denied"
                return [None if p == denied else st for p, st in zip(paths, super().stat_many(paths, follow), strict=True)]
            return super().stat_many(paths, follow)

        def read_ranges(self, path: str, ranges: list[tuple[int, int]], unlinked: bool = False, known: RemoteStat | None = None) -> list[bytes]:
            return [self.read(path, offset, length) for offset, length in ranges]

        def readlinks(self, paths: list[str]) -> list[str | None]:
            return [self.links.get(p) for p in paths]

    machine = Refusing({denied: log, fine: log})
    fleet = Fleet([f"box:{ROOT}"], validate_config({}))
    monkeypatch.setattr(fleet, "link", lambda _target: machine)
    fleet.poll(now=1_700_000_000_000)
    assert sorted(fleet.watches) == [f"box:{denied}", f"box:{fine}"]
    machine.refusing = True
    machine.files[fine] = log + log.splitlines(keepends=True)[1].replace(b'"seq":0', b'"seq":1')  # s2 grows
    raised: list = []
    fleet.poll(now=1_700_000_001_000, raised=raised)
    assert fleet.watches[f"box:{fine}"].engine.signals.seq == 1  # read on
    assert [(a.path, a.cause, a.reason) for a in raised] == [
        (f"box:{denied}", "unreachable", f"box:{denied}: cannot stat (Permission denied)")]
    late = Fleet([f"box:{ROOT}"], validate_config({}))  # found while the server refuses it: the others are watched
    monkeypatch.setattr(late, "link", lambda _target: machine)
    late.poll(now=1_700_000_002_000)
    assert sorted(late.watches) == [f"box:{fine}"]
    assert late.skipped == [f"skipped box:{denied}: cannot stat (Permission denied)"]
    machine.refusing = False  # it may be read: watched at the next poll, its note gone then, not at the next listing
    monkeypatch.setattr("core.fleet.follow.RESCAN_SECONDS", 3600.0)
    late.poll(now=1_700_000_003_000)
    assert sorted(late.watches) == [f"box:{denied}", f"box:{fine}"] and late.skipped == []
