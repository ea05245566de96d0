"""Whether a tapedeck host runs a session right now, and in which state, read without racing it.

Liveness comes from the OS: a live host holds the owner lock on its log (``core.log.owner``), which the kernel
drops the moment the process dies. The state a live host is in lives in ``host.json`` beside the log, which the
host replaces atomically at every change (and logs as a ``tapedeck/state`` event). States:

- ``running``: working on a turn; ``pausing``: a pause arrived, it holds before its next model or tool call;
  ``paused``: holding; ``idle``: lingering between turns, waiting for requests;
- ``exited``: a tapedeck host owned the log once but none holds it now (``since`` = when it exited, or the log's
  last write after a crash);
- ``none``: no tapedeck host has ever owned the log (a real DeepSeek Harness log) and no bridge ever ran it.

``kind`` says who runs the log: ``tapedeck`` (our host) or ``dsh`` (the real DeepSeek Harness). A DSH session is
controllable through the bridge plugin (``core.bridge``): its states come from the ``bridge.json`` the plugin keeps
beside the log, live while the DSH process it names is (docs/contracts.md, "DSH bridge").
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import time
from dataclasses import asdict, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from core.bridge.files import (
    BridgeInfo,
    bridge_live,
    dsh_runs,
    heartbeat_fresh,
    pid_view,
    proc_stopped,
    read_bridge,
    same_machine,
    standby_pid,
    this_machine,
)
from core.log.layout import is_compressed
from core.log.owner import is_owned
from core.log.vocabulary import HOST_EVENT, LOST_EVENT
from core.shared.clock import IMPLAUSIBLE, utc_time
from core.shared.records import record
from core.shared.regular import open_regular, read_regular
from core.shared.text import counted, first_few, quoted, quoted_path
from core.shared.values import int_or_none

if TYPE_CHECKING:  # the inbox's module (and hashlib) is not loaded by a command that only reads a host state
    from core.control.inbox import InboxPosition

STATE_FILE = "host.json"
MAX_HOST_BYTES = 4096  # the most of host.json read, here and over SSH (a host writes a record of some 100 bytes)
STATE_EVENT = "tapedeck/state"
LIVE_STATES = ("running", "pausing", "paused", "idle")
STATES = (*LIVE_STATES, "exited", "none")
# a host.json that cannot be looked at (``Refused``), and what a follower's row says before it believes a reading
# of the host (``core.fleet.follow``)
UNKNOWN = "unknown"
KIND_TAPEDECK = "tapedeck"
KIND_DSH = "dsh"
PID_MAX_LIMIT = 1 << 22  # the largest pid Linux can be set to hand out
SCAN_BYTES = 1 << 18  # a tapedeck host logs its tapedeck/host event right after the header
HostRecord = tuple[dict[str, Any] | None, str | None]  # host.json's record, or None and why there is none
_NEEDLE = b'"type":"' + HOST_EVENT.encode() + b'"'
_LEADING_TYPE = re.compile(rb'\{\s*"type"\s*:\s*"([^"\\]+)"')  # the type a line names first, as every writer puts it


@record(frozen=True)
class HostState:
    """The host state of one session log: ``state`` (one of ``STATES``), the host's ``pid``, ``since`` (epoch ms),
    ``kind`` (``tapedeck`` or ``dsh``), for a bridged DSH session what its ``bridge.json`` says and, for an
    ``unknown`` state (a ``host.json`` the system will not let be read, here or over SSH), why it is not known
    (``problem``)."""

    state: str
    pid: int | None = None
    since: int | None = None
    kind: str = KIND_TAPEDECK
    bridge: dict[str, Any] | None = field(default=None, compare=False)
    problem: str | None = field(default=None, compare=False)

    @property
    def live(self) -> bool:
        """Whether a live host owns the log (it reads control requests)."""
        return self.state in LIVE_STATES

    def to_dict(self) -> dict[str, Any]:
        """The ``inspect --json`` form (``bridge`` only for a DSH session whose bridge was seen, ``problem`` only
        when there is one)."""
        out = asdict(self)
        for key in ("bridge", "problem"):
            if out[key] is None:
                del out[key]
        return out


def state_path(log: str | os.PathLike[str]) -> Path:
    """``host.json`` beside the log (the file itself, when ``log`` is a symbolic link to it)."""
    return Path(log).resolve().parent / STATE_FILE


def write_state(
    log: str | os.PathLike[str], state: str, pid: int, since: int, inbox: InboxPosition | None = None
) -> None:
    """Replace ``host.json`` atomically (the host calls this at every change of state, and after it took lines
    from its control inbox). ``inbox`` is how far the host has read its inbox (``InboxReader.position``), so a
    host resumed after a kill does not report those lines again."""
    target = state_path(log)
    tmp = target.with_name(f".{STATE_FILE}.{_machine()}.{pid}.tmp")
    record: dict[str, Any] = {"state": state, "pid": pid, "since": since}
    if inbox is not None:
        record["inbox"] = list(inbox)
    try:
        tmp.write_bytes(orjson.dumps(record))
        os.replace(tmp, target)  # replaces a symlink itself, never what it points to
    except OSError:
        with contextlib.suppress(OSError):  # a directory at host.json's place: no later resume would take it away
            tmp.unlink()
        raise


def remove_stale_temporaries(log: str | os.PathLike[str]) -> None:
    """Remove the temporary files ``write_state`` left beside ``log``'s ``host.json`` whose writer is dead (a host
    killed between writing one and renaming it); a living process's, which may be renaming it now, stays. A file
    names its writer's machine and pid (``.host.json.<machine>.<pid>.tmp``; one named by a pid alone is from this
    machine, as hosts before the machine was named wrote them): another machine's, on a file system both share,
    stays, since no pid here says whether its writer lives."""
    target = state_path(log)
    here = _machine()
    for tmp in target.parent.glob(f".{STATE_FILE}.*.tmp"):
        machine, _, pid = tmp.name[len(STATE_FILE) + 2 : -len(".tmp")].rpartition(".")
        if machine not in ("", here) or not pid.isascii() or not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            with contextlib.suppress(OSError):
                tmp.unlink()
        except (OSError, OverflowError):
            continue  # alive under another user, or no pid: left alone


def _machine() -> str:
    """This machine as a file name holds it (``core.bridge.files.this_machine``)."""
    return this_machine() or "localhost"


def read_inbox_position(log: str | os.PathLike[str]) -> InboxPosition | None:
    """How far the last host of ``log`` read its control inbox, as ``host.json`` records it (None: not recorded,
    or recorded without the digest of the file's first bytes that tells the file it read from one written again
    in place)."""
    position = (_recorded(Path(log)) or {}).get("inbox")
    if not isinstance(position, list) or len(position) != 4 or not isinstance(digest := position[3], str):
        return None
    dev, ino, offset = (int_or_none(v) for v in position[:3])
    return None if dev is None or ino is None or offset is None else (dev, ino, offset, digest)


def _recorded(log: Path) -> dict[str, Any] | None:
    return host_record(log)[0]


def how_it_ended(log: str | os.PathLike[str], state: HostState, record: HostRecord | None = None) -> str:
    """How the tapedeck host of ``log``, which runs no more (``state``), ended, as far as ``host.json`` says:
    ``it exited at … (5 min ago)`` when it said so; else when the log was last written (``state.since``), after
    what the file says instead (the host was killed, the file is damaged, or there is none). ``record``: the
    file's ``host_record`` as read already (then it is not read here)."""
    recorded, problem = record if record is not None else host_record(Path(log))
    if recorded is not None and recorded.get("state") == "exited":
        return f"it exited {exited_at(state.since)}"
    last = f"the log was last written {exited_at(state.since)}"
    if problem is not None:
        return f"its host.json {problem}, so when it exited is unknown; {last}"
    if recorded is not None:
        return f"it stopped without saying so, as a killed host does; {last}"
    return f"no host.json says when it exited; {last}"


def host_record(log: Path) -> HostRecord:
    """``host.json``'s record, or None and why not when a file is there that holds none."""
    try:  # never through a link, nor waiting on a FIFO there
        data = read_regular(state_path(log), MAX_HOST_BYTES, follow=False)
    except FileNotFoundError:
        return None, None
    except PermissionError as exc:  # its directory may not be searched, or the file read: a host may well run
        return None, Refused(exc.strerror or str(exc))
    except OSError as exc:
        why = "is a symbolic link" if exc.errno == errno.ELOOP else f"cannot be read ({exc.strerror or exc})"
        return None, why
    if len(data) > MAX_HOST_BYTES:
        return None, f"is larger than the {MAX_HOST_BYTES} bytes a host's record can take"
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None, "is not JSON"
    if not isinstance(obj, dict) or obj.get("state") not in STATES:
        return None, "names no host state"
    return obj, None


class Refused(str):
    """Why there is no record when the system refuses to let host.json be looked at (``cannot be read (…)``), its
    ``reason`` in the system's (or the SFTP server's) words: whether a host runs the session is unknown."""

    reason: str

    def __new__(cls, reason: str) -> Refused:
        why = super().__new__(cls, f"cannot be read ({quoted(reason)})")
        why.reason = reason
        return why

    def __reduce__(self) -> tuple[type[Refused], tuple[str]]:
        """Copied and pickled whole, its reason with it."""
        return Refused, (self.reason,)


def unknown_state(reason: str) -> HostState:
    """The state of a session whose host.json the system refuses to let be looked at (``reason``, its words), here
    and over SSH alike: ``unknown``, since its host may run."""
    return HostState(UNKNOWN, problem=f"its host.json {Refused(reason)}")


def _head(log: Path) -> bytes | None:
    """The first ``SCAN_BYTES`` of the log, decompressed (None when it is no regular file that can be read)."""
    try:  # a log swapped for a FIFO or a device: not waited for, not read on
        with open_regular(log) as f:
            return _head_of(f, log)
    except OSError:
        return None


def _head_of(f: BinaryIO, log: Path) -> bytes:
    """The first ``SCAN_BYTES`` of ``f``, the log at ``log`` opened, decompressed."""
    return _zstd_head(f) if is_compressed(log) else f.read(SCAN_BYTES)


# (device, inode) -> (size, settled, hosted, first bytes) at the read
_SCANNED: dict[tuple[int, int], tuple[int, bool, bool, bytes]] = {}
_SCANNED_MAX = 4096  # files remembered: past that the memo starts again
_SAME_START = 1024  # bytes of the file compared to tell it from another written at its place (a header and more)


def _ever_hosted(log: Path) -> bool:
    """Whether the start of the log holds a ``tapedeck/host`` event (logs from before ``host.json``), read once per
    file: a log only grows, so what its start says is kept for its device and inode with the file's first bytes,
    and read again when they differ (another log written at its place: ``cp`` keeps the inode, a new file may take
    a deleted one's), when the file is shorter than it was, or when it has grown and its start could still change
    (it had no such event and was shorter than ``SCAN_BYTES``)."""
    try:  # a log swapped for a FIFO or a device: not waited for, not read on
        with open_regular(log) as f:
            st = os.fstat(f.fileno())
            key = (st.st_dev, st.st_ino)
            known = _SCANNED.get(key)
            start = f.read(_SAME_START)
            if (
                known is not None
                and (known[0] == st.st_size or (known[1] and known[0] < st.st_size))
                and start.startswith(known[3])
            ):
                return known[2]
            f.seek(0)
            head = _head_of(f, log)
    except OSError:
        return False
    hosted = _NEEDLE in head
    if len(_SCANNED) >= _SCANNED_MAX:
        _SCANNED.clear()
    _SCANNED[key] = (st.st_size, hosted or len(head) >= SCAN_BYTES, hosted, start)
    return hosted


def written_by_another(log: Path) -> bool:
    """Whether the session log at ``log`` was started by another program than a tapedeck host (the DeepSeek Harness):
    it has a session header but its first event is not the ``tapedeck/host`` event a tapedeck host publishes with
    the header. False when the file cannot be read or has no session header (a writer says what is wrong then)."""
    head = _head(log)
    first, _, rest = (head or b"").partition(b"\n")
    try:
        header = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    if not isinstance(header, dict) or header.get("type") != "session":
        return False
    if not rest.strip():
        return True  # a tapedeck host publishes its first event with the header
    first_event = _LEADING_TYPE.match(rest)  # a damaged line, or the stand-in repair left for it: not judged here
    return first_event is not None and first_event.group(1) not in (HOST_EVENT.encode(), LOST_EVENT.encode())


def hosted_in(head: bytes, compressed: bool) -> bool:
    """Whether ``head``, the first ``SCAN_BYTES`` of a log (here or on another machine), holds a ``tapedeck/host``
    event: a log a tapedeck host ran, whatever became of its ``host.json``."""
    return _NEEDLE in (_zstd_head(io.BytesIO(head)) if compressed else head)


def _zstd_head(f: BinaryIO) -> bytes:
    """The first ``SCAN_BYTES`` decompressed bytes of a zstd log (empty when they do not decompress)."""
    import zstandard  # only zstd logs need it, and it costs ms to import

    try:
        return zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True).read(SCAN_BYTES)
    except zstandard.ZstdError:
        return b""


def read_host_state(
    log: str | os.PathLike[str], hosted: bool | None = None, record: HostRecord | None = None
) -> HostState:
    """The host state of the session log at ``log`` (cheap: one lock probe and one small file; ``hosted``: whether
    the log holds a ``tapedeck/host`` event, when the caller read it whole, else its start is looked at;
    ``record``: ``host_record`` of the log, when the caller read it just now, else it is read here). ``unknown``
    when host.json may not be looked at (``Refused``) and no host is seen to hold the log, as over SSH."""
    path = Path(log)
    recorded, problem = record if record is not None else host_record(path)
    pid = int_or_none((recorded or {}).get("pid"))
    since = int_or_none((recorded or {}).get("since"))
    if is_owned(path):
        state = (recorded or {}).get("state")
        return HostState(state if state in LIVE_STATES else "running", pid, since)
    if isinstance(problem, Refused):  # neither its record nor the log's start can be trusted to say none runs
        return unknown_state(problem.reason)
    if recorded is None and not (_ever_hosted(path) if hosted is None else hosted):
        return bridge_state(path)
    if recorded is None or recorded.get("state") != "exited":
        try:
            since = int(path.stat().st_mtime * 1000)  # it died without saying so: its last write
        except OSError:
            since = None
    return HostState("exited", pid, since)


def bridge_state(log: Path) -> HostState:
    """The host state of a DSH log from its bridge: ``none`` when no bridge ever ran it."""
    info, problem = read_bridge(log.parent)
    if info is None:
        return HostState("none", kind=KIND_DSH, bridge={"problem": problem} if problem else None)
    runs, view = dsh_runs(info), pid_view()
    state = bridge_host_state(info, bridge_live(info, runs, view), runs, same_machine(info, view))
    if state.live and runs and not heartbeat_fresh(info):
        # Its DSH runs here, yet the file it rewrites every second is old: it cannot write it, and says why only to
        # DSH's logger, which keeps it in memory. (Here only: another machine's clock may run apart from ours.)
        # Or DSH is blocked: one the kernel stopped is seen to be (``stopped``); any other cause is known only to DSH.
        stopped = {"stopped": True} if proc_stopped(info.pid or 0) else {}
        state = HostState(state.state, state.pid, state.since, KIND_DSH, {**(state.bridge or {}), "silent": True, **stopped})
    return with_standby(state, *(standby_pid(log.parent, info) if state.live else (None, None)))


def with_standby(state: HostState, standby: int | None, unknown: str | None = None) -> HostState:
    """``state``, a DSH session's, naming in ``bridge.standby`` the pid of a second DSH process that runs the session
    too, its bridge waiting (``standby``, None: there is none) while this one's is live; or in
    ``bridge.standbyUnknown`` why whether one does is not known (``unknown``)."""
    if not state.live or (standby is None and unknown is None):
        return state
    said = {"standby": standby} if standby is not None else {"standbyUnknown": unknown}
    return HostState(state.state, state.pid, state.since, KIND_DSH, {**(state.bridge or {}), **said})


def moved_note(bridge: dict[str, Any] | None) -> str:
    """What a DSH session directory moved, or copied from another machine, since its bridge last ran means
    (``HostState.bridge``), or ``""``."""
    bridge = bridge or {}
    then = "no bridge reads its inbox until DSH resumes the session here, and then the requests queued for it"
    if bridge.get("movedFrom"):
        return f"; moved here from {quoted_path(bridge['movedFrom'])}: {then} (control --queue), before the move or since, run"
    if bridge.get("otherMachine"):
        return (f"; its bridge.json was written on another machine, for {quoted_path(bridge['otherMachine'])} there (this is a "
                f"copy brought from it, or a directory the two share): {then} (control --queue) run, none of those "
                "sent there")  # fmt: skip
    return ""


def bridge_host_state(info: BridgeInfo, live: bool, runs: bool = False, checked: bool = True) -> HostState:
    """A DSH session's host state from its bridge's ``info``, ``live`` or not, whether the DSH process it names
    still ``runs`` and whether that process could be ``checked`` at all (each found by the caller: its pid, with the
    start time recorded, in the boot the file was written in, ``core.bridge.files.this_boot`` and
    ``same_machine``). A bridge that said it exited while its DSH runs on was unloaded (``tapedeck bridge remove``,
    or its row taken out): DSH goes on with the session, which no bridge runs now. The bridge of a directory moved
    since (``info.moved``) serves its old path, if any: none reads this inbox. A bridge found dead by its
    heartbeat's age alone (its process not ``checked``, and it said nothing of exiting) is ``unseen`` too: a read
    served from a cache (NFS) can be seconds behind, so an alert believes it only when readings confirm it."""
    if info.moved:
        return HostState("exited", info.pid, _exit_time(info), KIND_DSH, info.summary())
    if live:  # by its heartbeat alone when its process was not seen: its pid is another machine's, or none now
        return HostState(info.state, info.pid, info.since, KIND_DSH, {**info.summary(), **({} if runs else {"unseen": True})})
    if runs and info.state == "exited" and info.pid is not None:
        problem = (f"the tapedeck bridge was unloaded {exited_at(info.since)} from DSH {pid_text(info.pid)}, which "
                   "still runs this session (the start time the bridge recorded is that process's); `tapedeck bridge "
                   "install` loads it again")  # fmt: skip
        return HostState("none", since=info.since, kind=KIND_DSH,
                         bridge={**info.summary(), "unloaded": True, "problem": problem})  # fmt: skip
    unseen = {"unseen": True} if not checked and info.state != "exited" else {}
    return HostState("exited", info.pid, _exit_time(info), KIND_DSH, {**info.summary(), **unseen})


def _exit_time(info: BridgeInfo) -> int | None:
    """When a bridge stopped: its own exit time, else (it died without saying so) its last heartbeat."""
    return info.since if info.state == "exited" else info.heartbeat or info.since


OLD_BRIDGE = "(old bridge)"  # after a DSH state whose live bridge is not the plugin this tapedeck ships
NEWER_BRIDGE = "(newer bridge)"  # … when that plugin is a newer release (a newer tapedeck installed it)


def state_label(state: str, kind: str, bridge: dict[str, Any] | None = None) -> str:
    """A host state as lists show it: ``paused`` for our host, ``DSH paused`` through the bridge (``DSH paused (old
    bridge)`` while the live plugin is not the packaged one, ``(newer bridge)`` when it is a newer release;
    ``DSH exited, left paused`` when its next start holds, ``DSH idle (+standby)`` while a second DSH process runs
    it too, ``DSH idle (standby?)`` when whether one does is unknown: ``bridge`` is ``HostState.bridge``), ``none``."""
    if kind != KIND_DSH or state == "none":
        return state
    bridge = bridge or {}
    if state in LIVE_STATES and bridge.get("stale"):
        return f"DSH {state} {NEWER_BRIDGE if bridge.get('newer') else OLD_BRIDGE}"
    if state in LIVE_STATES and bridge.get("standby"):
        return f"DSH {state} (+standby)"
    if state in LIVE_STATES and bridge.get("standbyUnknown"):
        return f"DSH {state} (standby?)"
    return f"DSH {state}{', left paused' if state == 'exited' and bridge.get('paused') else ''}"


def pid_text(pid: int) -> str:
    """``pid 812``; a number no process can have (below 1, or past Linux's ``PID_MAX_LIMIT``) is called so."""
    return f"pid {pid}" if 1 <= pid <= PID_MAX_LIMIT else f"pid {pid}, which no process can have"


# Where to look for whether a request DSH died running took effect, by op (the plugin's UNKNOWN_HINTS say the same,
# tests/dsh/test_unknown_hints.py holds them to it).
UNKNOWN_HINTS = {
    "pause": "the session's state says whether it is paused (tapedeck inspect, the TUI's header)",
    "resume": "the session's state says whether it is paused (tapedeck inspect, the TUI's header)",
    "config.set": "a model or reasoningEffort change lasts only as long as the DSH process that took it, so send it "
                  "again; a <namespace>.<key> setting shows in DSH's own settings if it was changed",
    "checkpoint": "the TUI's Checkpoints screen lists the mark if it was placed",
    "stop": "the turn it was sent to ended aborted by the operator if it did (tapedeck events, the TUI)",
    "message": "the session's events after it was sent hold the message if DSH took it (tapedeck events, the TUI)",
    "rewind": "the session's events hold the rewind's note in place of the history after the mark if it ran "
              "(tapedeck events, the TUI)",
    "expand": "the session's events hold the tool result in full again if it ran (tapedeck events, the TUI)",
}  # fmt: skip
IN_FLIGHT_SHOWN = 3  # inFlight requests described one by one; the rest are named by id, as many again
UNKNOWN_HINT = "the session's events after it was sent tell whether it did (tapedeck events, the TUI)"


def unknown_hint(op: str | None) -> str:
    """Where to look for whether a request of ``op`` that DSH died running took effect."""
    return UNKNOWN_HINTS.get(op or "", UNKNOWN_HINT)


def describe_host(state: dict[str, Any]) -> str:
    """One line for a ``HostState.to_dict()``: ``paused (pid 812) since 2026-12-03 06:40:12 UTC``."""
    name = state.get("state")
    dsh = state.get("kind") == KIND_DSH
    bridge = state.get("bridge") or {}
    # what bridge.json says, another process's words (``MAX_BRIDGE_BYTES`` at most): whole, its control characters
    # escaped, as are the ids it names
    said = quoted(bridge["problem"], None) if bridge.get("problem") else ""
    problem = f"; the bridge says: {said}" if said else ""
    if bridge.get("stale") and name in LIVE_STATES:
        problem += f"; {bridge['stale']}"
    if bridge.get("silent") and name in LIVE_STATES:
        number = int_or_none(state.get("pid"))
        why = (f"DSH {pid_text(number)} is stopped (SIGSTOP, Ctrl-Z or a debugger): `kill -CONT {number}` lets it run on"
               if bridge.get("stopped") else
               "DSH is blocked (a long synchronous task, a debugger) or its bridge cannot write the file (a read-only "
               "or full file system, a directory it may not write to, something else at that name; DSH's own log "
               "says which)")  # fmt: skip
        problem += (f"; nothing heard from DSH since {exited_at(int_or_none(bridge.get('heartbeat'))).removeprefix('at ')}: "
                    f"its bridge rewrites bridge.json every second while DSH runs, so the state shown is as of then; "
                    f"{why}")  # fmt: skip
    if name == "none":
        if dsh and bridge.get("unloaded"):
            return f"none (read-only: {said})"
        if dsh and said:  # a bridge.json that cannot be used: installing the bridge would not help
            return f"none (read-only: the bridge.json here cannot be used: {said})"
        if dsh:
            return "none (a DSH session without the tapedeck bridge: read-only; see `tapedeck bridge install`)"
        return "none (no tapedeck host has run this log)"
    running = list(bridge.get("inFlight", ())) if name == "exited" else []
    for request in running[:IN_FLIGHT_SHOWN]:  # what to look at, by op
        what = f"the {request['op']} request" if request.get("op") else "request"
        problem += (f"; DSH stopped while its bridge was running {what} {quoted(request['id'])}, before it wrote the "
                    f"outcome, so it may or may not have taken effect: {unknown_hint(request.get('op'))}")  # fmt: skip
    if rest := running[IN_FLIGHT_SHOWN:]:  # a bridge.json may name thousands: the line stays readable
        ids = first_few([quoted(r["id"]) for r in rest], IN_FLIGHT_SHOWN)
        problem += f"; and {counted(len(rest), 'more request')} it was running, each as uncertain: {ids}"
    number = int_or_none(state.get("pid"))
    unseen = ", no process seen: live by its heartbeat" if name in LIVE_STATES and bridge.get("unseen") else ""
    pid = f" ({'DSH ' if dsh else ''}{pid_text(number)}{unseen})" if number is not None else ""
    since = state.get("since")
    when = f" since {utc_time(since) or IMPLAUSIBLE}" if since else ""
    if name in LIVE_STATES and bridge.get("standby"):
        problem += (f"; DSH pid {bridge['standby']} runs this session too, its bridge on standby: the state is this "
                    "process's, not what that one runs, and it takes requests once this one exits")  # fmt: skip
    if name in LIVE_STATES and bridge.get("standbyUnknown"):
        problem += (f"; {bridge['standbyUnknown']}, so whether a second DSH process runs this session on standby is "
                    "unknown (a bridge on standby says so in that file)")  # fmt: skip
    if name == "exited" and bridge.get("paused"):
        problem += ("; the operator left it paused: when DSH resumes the session the bridge holds it before its "
                    "first step until it is resumed (tapedeck control … resume)")  # fmt: skip
    return f"{name}{pid}{when}{problem}{moved_note(bridge) if name == 'exited' else ''}"


def exited_at(since: int | None) -> str:
    """``at 2026-12-03 06:40:12 UTC (5 min ago)`` for an exit time in epoch ms."""
    if since is None:
        return "at an unknown time"
    at = utc_time(since)
    if at is None:
        return f"at {IMPLAUSIBLE}"
    ago = int(time.time() - since / 1000)
    if ago < 0:
        return f"at {at}, a time still to come by this machine's clock"
    span = f"{ago} s" if ago < 120 else f"{ago // 60} min" if ago < 7200 else f"{ago // 3600} h"
    return f"at {at} ({span} ago)"
