"""The files the bridge plugin writes beside a DSH session log, read without trusting them.

``bridge.json`` says which DSH process runs the session and in which state (rewritten every second while the
plugin is loaded); ``control.outcomes.jsonl`` holds one outcome per line. Both are read with ``O_NOFOLLOW`` and a
size cap; anything malformed or hostile becomes a ``problem`` string, never an exception.

The plugin writes the fingerprint of its own source into ``bridge.json`` (``plugin_fingerprint``): a copy an older
tapedeck installed into a DSH home keeps running until it is replaced, and ``BridgeInfo.stale`` says so.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from core.log.vocabulary import FINAL, MAX_ID_CHARS, OUTCOMES
from core.shared.fingerprint import holds, remembered
from core.shared.records import record
from core.shared.regular import read_regular
from core.shared.text import quoted, quoted_path, shown
from core.shared.values import int_or_none, whole_digits

PLUGIN_FILE = "tapedeck-bridge.mjs"
BRIDGE_FILE = "bridge.json"
OUTCOMES_FILE = "control.outcomes.jsonl"
STANDBY_FILE = (
    "bridge.standby.json"  # a second DSH process running the session, whose bridge waits to serve it
)
BRIDGE_STATE_FILE = (
    "bridge.state.json"  # what the plugin keeps across a reload (its inbox cursor, pause, marks)
)
BRIDGE_STATES = ("running", "pausing", "paused", "idle", "exited")
HEARTBEAT_FRESH_MS = 5000  # a heartbeat younger than this means live when the pid cannot be checked
MAX_BRIDGE_BYTES = 64 << 10
MAX_OUTCOME_LINE = 1 << 20
READ_SLICE = 1 << 20  # bytes of control.outcomes.jsonl read at a time
# where the plugin reads its machine's id, the first part of the identity it writes as bridge.json's ``dirId``
MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")
HOSTNAME_FILE = "/proc/sys/kernel/hostname"  # a machine's network name (uname's nodename), read over SFTP
_MACHINE_ID = re.compile(r"[0-9a-f]{32}")
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9._-]")  # what a machine's name in a file name holds none of
_VERSION = re.compile(
    rb"""\bVERSION\s*=\s*["']([0-9A-Za-z][0-9A-Za-z.+-]*)["']|tapedeck-bridge/([0-9A-Za-z][0-9A-Za-z.+-]*)"""
)


def packaged_plugin() -> Path:
    """The plugin shipped with tapedeck."""
    return Path(__file__).with_name(PLUGIN_FILE)


def plugin_fingerprint(source: bytes) -> str:
    """A plugin source's fingerprint: the first 12 hex digits of its sha256 (the plugin computes its own alike)."""
    import hashlib  # only a bridged session's state needs it: the read commands keep it out of their start-up

    return hashlib.sha256(source).hexdigest()[:12]


@functools.cache
def packaged_fingerprint() -> str:
    """The packaged plugin's fingerprint."""
    return plugin_fingerprint(packaged_plugin().read_bytes())


def plugin_version(source: bytes) -> str | None:
    """The version a plugin source names (``const VERSION = "<version>"`` or ``tapedeck-bridge/<version>``), or
    None."""
    match = _VERSION.search(source)
    return (match.group(1) or match.group(2)).decode("ascii") if match else None


@functools.cache
def packaged_version() -> str:
    """The packaged plugin's version (``unknown`` when it names none)."""
    return plugin_version(packaged_plugin().read_bytes()) or "unknown"


def _release(version: str) -> tuple[tuple[int, str], ...] | None:
    """A plugin version's numbers (``0.1.0``), each as a key that orders as the number does (its digits' count,
    then its digits: int() takes at most 4,300 digits, and a forged ``bridge.json`` may name more), None when it is
    not plain ASCII numbers."""
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)*", version):
        return None
    return tuple((len(digits), digits) for digits in (part.lstrip("0") for part in version.split(".")))


def newer_release(version: str, packaged: str) -> bool:
    """Whether a copy of the plugin of ``version`` is a newer release than the packaged one (of ``packaged``); an
    earlier build of the same version, or a version that is not plain numbers, is not."""
    mine, theirs = _release(version), _release(packaged)
    return mine is not None and theirs is not None and mine > theirs


@record(frozen=True)
class BridgeInfo:
    """``bridge.json`` as read: the fields tapedeck relies on, each checked for its type."""

    state: str
    pid: int | None
    proc_start: str | None
    boot_id: (
        str | None
    )  # the machine's boot id where the plugin runs: its pid can be checked where it is the same
    since: int | None
    heartbeat: int | None
    session_id: str | None
    plugin: str | None
    dsh: str | None
    problem: str | None
    fingerprint: str | None = None  # of the plugin's own source (None: a plugin from before fingerprints)
    dir: str | None = None  # the session directory the plugin serves (None: a plugin from before it said so)
    dir_id: str | None = (
        None  # that directory's ``<machine id>:<device>:<inode>``, which requests sent to it carry
    )
    moved: bool = False  # read in another directory than ``dir``, which was moved there (see ``read_bridge``)
    brought: bool = (
        False  # written on another machine (``dirId``), which shares the directory or it was copied from
    )
    in_flight: tuple[
        tuple[str, str | None], ...
    ] = ()  # (id, op) of each request whose run began, no outcome yet
    paused: bool = False  # the operator's pause holds: a DSH that exits leaves the session to start held
    pid_ns: int | None = (
        None  # the inode of the plugin's pid namespace (None: a plugin from before it said so)
    )

    @property
    def stale(self) -> str | None:
        """Why the plugin that wrote this file is not the one this tapedeck ships (None: it is)."""
        if self.fingerprint == packaged_fingerprint():
            return None
        what = f"{quoted(self.plugin or 'tapedeck-bridge')}, " + (  # a forged file's long strings, cut
            f"fingerprint {quoted(self.fingerprint)}"
            if self.fingerprint
            else "from before plugins had fingerprints"
        )
        if self.newer:
            return (
                f"the bridge plugin DSH loaded ({what}) is newer than the one this tapedeck ships "
                f"({packaged_version()}, {packaged_fingerprint()}): a newer tapedeck installed it, and this one's "
                "`tapedeck bridge install` refuses to put the older plugin back unless --force"
            )
        return (
            f"the bridge plugin DSH loaded ({what}) is not the one this tapedeck ships "
            f"({packaged_fingerprint()}): `tapedeck bridge install` upgrades it in place"
        )

    @property
    def newer(self) -> bool:
        """Whether the plugin that wrote this file is a newer release than the one this tapedeck ships."""
        version = plugin_version(self.plugin.encode()) if self.plugin else None
        return version is not None and newer_release(version, packaged_version())

    def summary(self) -> dict[str, Any]:
        """The ``host.bridge`` object of ``inspect --json``."""
        out: dict[str, Any] = {"plugin": self.plugin, "dsh": self.dsh, "heartbeat": self.heartbeat,
                               "fingerprint": self.fingerprint}  # fmt: skip
        if self.problem:
            out["problem"] = self.problem
        if self.in_flight:
            out["inFlight"] = [{"id": request_id, "op": op} for request_id, op in self.in_flight]
        if self.paused:
            out["paused"] = True
        if self.moved:
            out["movedFrom"] = self.dir
        if self.brought:
            out["otherMachine"] = self.dir or "a session directory"
        if stale := self.stale:
            out["stale"] = stale
            if self.newer:
                out["newer"] = True
        return out


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _read_small(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes (at most ``limit``, and one more when it is longer), never through a symlink; None
    when absent or unreadable."""
    try:
        return read_regular(path, limit, follow=False)
    except OSError:
        return None


def read_bridge(session_dir: str | os.PathLike[str]) -> tuple[BridgeInfo | None, str | None]:
    """``(info, None)`` for a readable ``bridge.json`` in ``session_dir``; ``(None, why)`` for a bad one, or one
    written for another directory that this one is a copy of; ``(None, None)`` when there is none (the session was
    never bridged). One written for a directory that was moved here, or on another machine, is ``info`` with
    ``moved`` or ``brought`` set (see ``_placed``)."""
    path = Path(session_dir) / BRIDGE_FILE
    try:
        st = os.lstat(path)
    except OSError:
        return None, None
    raw = None if stat.S_ISLNK(st.st_mode) else _read_small(path, MAX_BRIDGE_BYTES)
    if raw is None:
        return None, unusable_bridge(path, stat.S_ISLNK(st.st_mode))
    info, problem = parse_bridge(raw, path)
    return _placed(info, path) if info is not None else (None, problem)


def unusable_bridge(path: str | os.PathLike[str], link: bool) -> str:
    """Why the ``bridge.json`` at ``path`` (here or on another machine) is not read: it is a symbolic ``link``, or
    it cannot be read (no regular file, or not readable)."""
    return (
        f"{quoted_path(path)} is a symbolic link; not followed"
        if link
        else f"{quoted_path(path)} cannot be read"
    )


def _placed(info: BridgeInfo, path: Path) -> tuple[BridgeInfo | None, str | None]:
    """``info``, read from ``path``, as it stands for the directory it is in (``placed``, with this machine's facts);
    ``(None, why)`` for a copy's."""
    try:
        st = os.stat(path.parent)
        here: str | None = f"{st.st_dev}:{st.st_ino}"
    except OSError:
        here = None
    same = info.dir is None or _same_dir(info.dir, path.parent)
    found = placed(info, this_machine(), here, same, not same and _gone(info.dir or ""), pid_namespace())
    return (found, None) if found is not None else (None, copied_problem(path, info.dir or ""))


def placed(
    info: BridgeInfo, machine: str | None, here: str | None, same: bool, gone: bool, ns: int | None
) -> BridgeInfo | None:
    """``info``, a ``bridge.json`` read in a directory of the machine ``machine`` (``this_machine``, or another
    machine's), as it stands for that directory, by one rule here and over SFTP; None for a copy's, which no bridge
    serves. ``here``: that directory's ``<device>:<inode>`` (None: unknown); ``same``: the path ``info.dir`` names
    is that directory; ``gone``: nothing is at that path; ``ns``: the reader's pid namespace there (None: unknown).

    A file whose ``dirId`` names another machine is ``brought`` (that machine runs the session in a directory the
    two share, a container's volume among them, live while its heartbeat is, or this is a copy brought from there),
    unless it has this directory's device and inode and its path, and no bridge writes it now (its state is exited
    or its heartbeat old): the machine's id changed (a container rebuilt on its volume), and it is the session
    itself. One with this directory's device and inode written in another pid namespace than the reader's is this
    directory's whatever path it names: that path is the one its writer sees (a sibling container mounting the
    volume at a path of its own), which says nothing here. Else one written for another directory is the file of
    that directory moved here (``moved``) when this directory has the device and inode its ``dirId`` names (the
    path it names is another directory now, made again since) or that path is gone, and else a copy's."""
    recorded = info.dir_id.split(":") if info.dir_id is not None else None
    own = recorded is not None and here is not None and recorded[1:] == here.split(":")
    written_now = info.state != "exited" and heartbeat_fresh(
        info
    )  # by the machine it names, whose pids are not ours
    if (
        recorded is not None
        and machine is not None
        and recorded[0] != machine
        and not (own and same and not written_now)
    ):
        return replace(info, brought=True)
    if info.dir is None or same or (own and info.pid_ns not in (None, ns)):
        return info
    if own or (gone and "\x00" not in info.dir):  # no path holds a NUL byte: that names no directory
        return replace(info, moved=True)
    return None


def _gone(path: str) -> bool:
    """Whether nothing is at ``path`` here (a path that cannot be asked about, or holds a NUL byte, is not gone)."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except (OSError, ValueError):
        pass
    return False


def served_dir(session_dir: str | os.PathLike[str]) -> str | None:
    """The identity of the directory the bridge serving ``session_dir`` runs in (``bridge.json``'s ``dirId``), which
    a request sent there carries as ``to``; None when no bridge serves it, its plugin names none, or the file is a
    copy's (``addressed``)."""
    info, _ = read_bridge(
        session_dir
    )  # None for a copy made on this machine: the file names another directory
    return addressed(info, this_machine())


def machine_id(contents: Iterable[bytes | None], name: bytes | None = None) -> str | None:
    """Which machine it is, the one rule tapedeck tells machines by (the bridge files it wrote, the directory a
    request goes to, the temporary files its hosts leave): its id as the plugin reads it, the first of the contents
    of its ``MACHINE_ID_FILES`` (None: not there) that is 32 hex digits; where it has none, ``host-<name>`` (its
    network ``name``, what a file name cannot hold made ``_``), which no ``dirId`` names (the plugin writes one only
    with an id); None when it has neither."""
    for raw in contents:
        text = (raw or b"").decode("ascii", "replace").strip().lower()
        if _MACHINE_ID.fullmatch(text):
            return text
    named = _NOT_IN_NAME.sub("_", (name or b"").decode("utf-8", "replace").strip())[:64]
    return f"host-{named}" if named else None


@functools.cache
def this_machine() -> str | None:
    """This machine (``machine_id``: its id, else its network name)."""
    return machine_id(
        (_read_small(Path(name), 64) for name in MACHINE_ID_FILES), os.uname().nodename.encode()
    )


def addressed(info: BridgeInfo | None, machine: str | None) -> str | None:
    """The ``to`` of a request sent to the session whose ``bridge.json`` says ``info``, on the machine of id
    ``machine``: the ``dirId`` the bridge wrote, when it wrote it on that machine; None for a file a copy of the
    directory brought from another machine holds (at the same path, it names this directory too), whose DSH takes
    a request naming no directory by its time, as the copy's."""
    if info is None or info.dir_id is None or machine is None:
        return None
    return info.dir_id if info.dir_id.partition(":")[0] == machine else None


def copied_problem(path: str | os.PathLike[str], served: str) -> str:
    """Why the ``bridge.json`` at ``path``, written by a plugin serving the directory ``served``, says nothing of
    the session beside it (the directory is a copy of that session)."""
    return (f"{quoted_path(path)} was written for {quoted_path(served)}, not for this directory (a copy of that "
            "session): no bridge serves this one")  # fmt: skip


def _same_dir(recorded: str, here: Path) -> bool:
    """Whether ``recorded`` (the directory a plugin serves) is the directory ``here`` (by device and inode); a
    ``recorded`` holding a NUL byte names no directory."""
    try:
        return os.path.samefile(recorded, here)
    except (OSError, ValueError):
        return False


def parse_bridge(raw: bytes, path: str | os.PathLike[str]) -> tuple[BridgeInfo | None, str | None]:
    """``bridge.json``'s bytes (read from ``path``, here or on another machine) as ``read_bridge`` answers."""
    if len(raw) > MAX_BRIDGE_BYTES:
        return None, f"{quoted_path(path)} is larger than {MAX_BRIDGE_BYTES} bytes"
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return None, f"{quoted_path(path)} is not valid JSON ({exc})"
    if not isinstance(obj, dict):
        return None, f"{quoted_path(path)} is not a JSON object"
    state = obj.get("state")
    if state not in BRIDGE_STATES:
        return None, f"{quoted_path(path)}: unknown state {shown(state)}"
    pid = int_or_none(obj.get("pid"))
    proc_start = obj.get("procStart")
    dir_id = _str(obj.get("dirId"))
    return (
        BridgeInfo(
            state=state,
            pid=pid if pid is not None and pid > 0 else None,
            proc_start=str(proc_start)
            if isinstance(proc_start, str | int) and not isinstance(proc_start, bool)
            else None,
            boot_id=_str(obj.get("bootId")),
            since=int_or_none(obj.get("since")),
            heartbeat=int_or_none(obj.get("heartbeat")),
            session_id=_str(obj.get("sessionId")),
            plugin=_str(obj.get("plugin")),
            dsh=_str(obj.get("dsh")),
            problem=_str(obj.get("problem")),
            fingerprint=_str(obj.get("fingerprint")),
            dir=_str(obj.get("dir")),
            dir_id=dir_id if dir_id is not None and len(dir_id) <= MAX_ID_CHARS else None,
            in_flight=_in_flight(obj.get("inFlight")),
            paused=obj.get("paused") is True
            or state in ("pausing", "paused"),  # a plugin before the field said it
            pid_ns=_pid_ns(obj.get("pidNs")),
        ),
        None,
    )


def _pid_ns(value: Any) -> int | None:
    """A recorded pid namespace (``pidNs``, the inode of ``/proc/self/ns/pid``), None when it is none."""
    ns = int_or_none(value)
    return ns if ns is not None and ns > 0 else None


def _in_flight(value: Any) -> tuple[tuple[str, str | None], ...]:
    """The request ids and ops of ``bridge.json``'s ``inFlight`` (``[{"id", "op", "origin"?}]``), whatever else it
    holds (an op that is none of the bridge's, a list or an object too, is None)."""
    from core.control.ops import DSH_OPS  # only a bridge.json with requests in flight needs it

    items = [item for item in (value if isinstance(value, list) else []) if isinstance(item, dict)]
    return tuple(
        (item["id"], op if isinstance(op := item.get("op"), str) and op in DSH_OPS else None)
        for item in items
        if isinstance(item.get("id"), str) and 0 < len(item["id"]) <= MAX_ID_CHARS
    )


def _proc_stat(pid: int) -> bytes:
    """The bytes of ``/proc/<pid>/stat`` (empty when no such process is here)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read()
    except OSError:
        return b""


def proc_start_time(pid: int) -> str | None:
    """Field 22 of ``/proc/<pid>/stat`` (the process's start time in clock ticks), or None when no such process
    runs here (see ``stat_start_time``)."""
    return stat_start_time(_proc_stat(pid))


def proc_stopped(pid: int) -> bool:
    """Whether the process ``pid`` here is stopped (its state, field 3: ``T`` by SIGSTOP or Ctrl-Z, ``t`` by a
    debugger), so that it runs nothing until it is let go on."""
    return _stat_fields(_proc_stat(pid))[:1] in ([b"T"], [b"t"])


def _stat_fields(raw: bytes) -> list[bytes]:
    """The fields of a ``/proc/<pid>/stat`` from the third (the state) on: the command name (field 2) is in
    parentheses and may hold spaces, so they are counted after its last ')'."""
    return raw[raw.rfind(b")") + 2 :].split()


_ENDED = (b"Z", b"X", b"x")  # a zombie (exited, not reaped yet: its stat stays, start time and all) or dead


def stat_start_time(raw: bytes) -> str | None:
    """The start time (field 22, clock ticks since boot) in the bytes of a ``/proc/<pid>/stat``; None when the
    process has exited (its state, field 3, is zombie or dead), which runs nothing though its stat is there."""
    rest = _stat_fields(raw)
    # another system's file may hold anything: a start time is digits that int() takes (not more than it converts)
    ok = len(rest) > 19 and rest[0] not in _ENDED and rest[19].isdigit()
    return rest[19].decode("ascii") if ok and whole_digits(rest[19].decode("ascii")) is not None else None


class PidView(NamedTuple):
    """Where pids are looked for: the boot id of the machine and the pid namespace (the inode of
    ``/proc/self/ns/pid``) of the reader, here or over SFTP; None where it is not known."""

    boot: str | None
    ns: int | None


def bridge_live(info: BridgeInfo, runs: bool, view: PidView, now_ms: int | None = None) -> bool:
    """Whether the plugin that wrote ``info`` is loaded right now (see the contract's liveness rule), read where
    pids are ``view``, where the DSH process it names ``runs`` or not (``dsh_runs``)."""
    return info.state != "exited" and (
        runs or (not same_machine(info, view) and heartbeat_fresh(info, now_ms))
    )


def standby_pid(session_dir: str | os.PathLike[str], info: BridgeInfo) -> tuple[int | None, str | None]:
    """The pid of another DSH process that runs the session in ``session_dir`` too, whose bridge waits as standby
    while the one ``info`` names answers the inbox (``bridge.standby.json``, while that process runs here), or None;
    and why that is not known (None: it is): something other than a file at that name, which a standby bridge
    cannot replace with its own, or a file this user may not read."""
    path = Path(session_dir) / STANDBY_FILE
    try:
        raw = read_regular(path, MAX_BRIDGE_BYTES, follow=False)
    except OSError as exc:
        if exc.errno in (
            errno.ENOENT,
            errno.ELOOP,
        ):  # none, or a symbolic link, which a bridge's rename replaces
            return None, None
        return None, standby_unknown(path, exc.errno != errno.EINVAL, exc.strerror or str(exc))
    named = parse_standby(raw, info)
    return standby_runs(named, proc_start_time(named[0]) if named is not None else None, pid_view()), None


def standby_unknown(path: str | os.PathLike[str], regular: bool, why: str | None = None) -> str:
    """Why whether a second DSH process runs a session on standby is not known from the ``bridge.standby.json`` at
    ``path`` (here or on another machine): it is no ``regular`` file, or it cannot be read (``why``, where known)."""
    if not regular:
        return f"{quoted_path(path)} is not a regular file"
    return f"{quoted_path(path)} cannot be read" + (f" ({why})" if why else "")


def parse_standby(raw: bytes | None, info: BridgeInfo) -> tuple[int, str, PidView] | None:
    """The pid, recorded start time and boot id and pid namespace (each None: not said) of the process a
    ``bridge.standby.json`` (its bytes, here or on another machine; None: no file) names, when that is another
    process than the one ``info`` names; None otherwise (``standby_runs`` says whether it runs)."""
    try:
        obj = orjson.loads(raw) if raw is not None and len(raw) <= MAX_BRIDGE_BYTES else None
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict):
        return None
    pid, start = int_or_none(obj.get("pid")), obj.get("procStart")
    if pid is None or pid <= 0 or pid == info.pid or not isinstance(start, str):
        return None
    return pid, start, PidView(_str(obj.get("bootId")), _pid_ns(obj.get("pidNs")))


def standby_runs(named: tuple[int, str, PidView] | None, start: str | None, view: PidView) -> int | None:
    """The pid of the standby process ``named`` (``parse_standby``) when it runs where pids are ``view``, where its
    pid's start time is ``start`` now: asked only in the boot and pid namespace the file records (or when it records
    none), as a bridge.json's pid (``this_boot``)."""
    if named is None or not _seen_from(named[2], view) or start != named[1]:
        return None
    return named[0]


def _seen_from(recorded: PidView, view: PidView) -> bool:
    """Whether a pid recorded in the boot and pid namespace ``recorded`` (each None: not said) can name a process
    where pids are ``view``."""
    return recorded.boot in (None, view.boot) and recorded.ns in (None, view.ns)


def dsh_runs(info: BridgeInfo) -> bool:
    """Whether the DSH process ``info`` names runs here now (its pid, with the start time the plugin recorded, in
    this boot: ``this_boot``)."""
    return this_boot(info, pid_view()) and proc_start_time(info.pid or 0) == info.proc_start


def this_boot(info: BridgeInfo, view: PidView) -> bool:
    """Whether the pid ``info`` records can name a process where pids are ``view``: it records a pid and its start
    time, and the boot and pid namespace it was written in are those (or it names none: a plugin from before it
    said so). A file of another boot, before a reboot or on another machine sharing the directory, names no process
    there, whatever runs there under its pid with its start time (a pid and a tick count can come again); nor does
    one of another machine id (``brought``) or another pid namespace: a container's pids are its own, though its
    boot is its host's, and its machine id may be its sibling's (one image)."""
    return (not info.brought and info.pid is not None and info.proc_start is not None
            and _seen_from(PidView(info.boot_id, info.pid_ns), view))  # fmt: skip


BOOT_ID_FILE = "/proc/sys/kernel/random/boot_id"
PID_NS_LINK = (
    "/proc/self/ns/pid"  # the reader's pid namespace: its inode, or ``pid:[<inode>]`` as a link's text
)


def boot_id() -> str | None:
    """This machine's boot id (None where there is no ``/proc``)."""
    try:
        with open(BOOT_ID_FILE, "rb") as f:
            return f.read().decode("ascii", "replace").strip() or None
    except OSError:
        return None


def pid_namespace() -> int | None:
    """This process's pid namespace, the inode of ``/proc/self/ns/pid`` (None where there is no ``/proc``)."""
    try:
        return os.stat(PID_NS_LINK).st_ino
    except OSError:
        return None


def namespace_named(link: str | None) -> int | None:
    """The pid namespace the text of a ``/proc/<pid>/ns/pid`` link (``pid:[<inode>]``, read over SFTP) names."""
    match = re.fullmatch(r"pid:\[([0-9]{1,20})\]", link or "")
    return int(match.group(1)) if match else None


def pid_view() -> PidView:
    """Where this process looks for pids: this machine's boot id and its pid namespace."""
    return PidView(boot_id(), pid_namespace())


def same_machine(info: BridgeInfo, view: PidView) -> bool:
    """Whether ``info`` was written where pids are ``view`` (this boot of the machine, this pid namespace): there
    its pid says whether the plugin runs, and the heartbeat (which stands in for a pid that cannot be checked) is
    not asked."""
    return this_boot(info, view) and view.boot is not None and info.boot_id == view.boot


def heartbeat_fresh(info: BridgeInfo, now_ms: int | None = None) -> bool:
    """Whether the bridge's last heartbeat is recent enough to mean live (when its process cannot be checked)."""
    if info.heartbeat is None:
        return False
    now = int(time.time() * 1000) if now_ms is None else now_ms
    return abs(now - info.heartbeat) < HEARTBEAT_FRESH_MS


def outcomes_path(session_dir: str | os.PathLike[str]) -> Path:
    """``control.outcomes.jsonl`` in a session directory."""
    return Path(session_dir) / OUTCOMES_FILE


def _outcome(raw: bytes) -> dict[str, Any] | None:
    """One outcome line as the data of a ``tapedeck/control`` event, or None when it is not one."""
    if len(raw) > MAX_OUTCOME_LINE:
        return None
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict):
        return None
    request_id = obj.get("requestId")
    if not isinstance(request_id, str) or not 0 < len(request_id) <= MAX_ID_CHARS:
        return None
    if obj.get("outcome") not in OUTCOMES:
        return None
    if not isinstance(obj.get("op"), str | None):
        return None
    return obj


class OutcomeReader:
    """Reads ``control.outcomes.jsonl`` incrementally; ``outcomes`` maps each request id to its latest outcome
    (a final outcome is never replaced by a later ``pending``). A file replaced, cut, removed and made again (even
    with the old inode number) or written again in place is read again from its start: one with another identity
    or shorter than what was read, and, once its size or modification time moved (a rewrite at the same size too),
    one whose first bytes or those before the offset changed."""

    def __init__(self, session_dir: str | os.PathLike[str]) -> None:
        self.path = outcomes_path(session_dir)
        self.outcomes: dict[str, dict[str, Any]] = {}
        self.skipped = 0  # lines that were no outcome
        self._identity: tuple[int, int] | None = None
        self._offset = 0
        self._seen: tuple[int, int] | None = None  # the size and modification time at the last read
        self._head = self._tail = b""  # what was read of the file (``core.shared.fingerprint``)
        self._pending = b""
        self._overlong = (
            False  # the bytes up to the next newline are the rest of a line too long to be an outcome
        )

    def read(self) -> list[dict[str, Any]]:
        """The outcomes completed since the last call (the file is read again if it was replaced or cut)."""
        found = self._stat()
        if found is None:
            self._identity = None  # the next file of that name is a new one, whatever its inode number
            return []
        identity, size, mtime = found
        stale = identity != self._identity or size < self._offset
        moved, self._seen = (size, mtime) != self._seen, (size, mtime)
        if stale or (
            moved and self._offset > 0 and not holds(self._read_range, self._head, self._tail, self._offset)
        ):
            self._identity, self._offset, self._pending, self._overlong = identity, 0, b"", False
            self._head = self._tail = b""
            self.outcomes.clear()
        fresh: list[dict[str, Any]] = []
        while (
            self._offset < size
        ):  # a slice at a time: a huge file (forged, or a runaway plugin's) is never held
            data = self._read_range(self._offset, min(size - self._offset, READ_SLICE))
            if not data:  # gone, or cut short since the stat
                break
            self._head, self._tail = remembered(self._head, self._tail, data)
            self._offset += len(data)
            fresh.extend(self._take(data))
        return fresh

    def _take(self, data: bytes) -> list[dict[str, Any]]:
        """The outcomes completed by ``data``, the file's next bytes (a line's start is kept for the next)."""
        if self._overlong:  # the rest of a line too long to be an outcome, up to its end
            end = data.find(b"\n")
            if end < 0:
                return []
            data, self._overlong = data[end + 1 :], False
        lines = (self._pending + data).split(b"\n")
        self._pending = lines.pop()
        if len(self._pending) > MAX_OUTCOME_LINE:  # an endless line is never an outcome: skipped, to its end
            self._pending, self._overlong = b"", True
            self.skipped += 1
        fresh = []
        for raw in lines:
            if not raw.strip():
                continue
            outcome = _outcome(raw)
            if outcome is None:
                self.skipped += 1
                continue
            known = self.outcomes.get(outcome["requestId"])
            if known is not None and known.get("outcome") in FINAL:
                continue
            self.outcomes[outcome["requestId"]] = outcome
            fresh.append(outcome)
        return fresh

    def _stat(self) -> tuple[tuple[int, int], int, int] | None:
        """The file's identity, size and modification time; None when it is absent, a symbolic link or not a
        regular file (a subclass reads the file on another machine)."""
        try:
            st = os.lstat(self.path)
        except OSError:
            return None
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
            return None
        return (st.st_dev, st.st_ino), st.st_size, st.st_mtime_ns

    def _read_range(self, offset: int, length: int) -> bytes | None:
        """``length`` bytes from ``offset``, never through a symbolic link; None when the file went away, or is no
        longer a regular file (a FIFO put in its place since ``_stat`` is opened without waiting, never read)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENXIO):  # ENXIO: a socket
                return None
            raise
        try:
            return os.pread(fd, length, offset) if stat.S_ISREG(os.fstat(fd).st_mode) else None
        finally:
            os.close(fd)
