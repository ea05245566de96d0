"""Sessions on another machine: the logs a remote target names (a log, a session directory or a sessions root in
the DSH layout), each log's header and its host's state, read over SFTP."""

from __future__ import annotations

import posixpath
import re
import shlex
import stat
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from core.bridge.files import (
    BOOT_ID_FILE,
    BRIDGE_FILE,
    HOSTNAME_FILE,
    MACHINE_ID_FILES,
    MAX_BRIDGE_BYTES,
    PID_NS_LINK,
    STANDBY_FILE,
    PidView,
    bridge_live,
    copied_problem,
    machine_id,
    namespace_named,
    parse_bridge,
    parse_standby,
    placed,
    same_machine,
    standby_runs,
    standby_unknown,
    stat_start_time,
    this_boot,
    unusable_bridge,
)
from core.control.host_state import (
    KIND_DSH,
    KIND_TAPEDECK,
    LIVE_STATES,
    MAX_HOST_BYTES,
    SCAN_BYTES,
    STATE_FILE,
    STATES,
    UNKNOWN,
    HostState,
    bridge_host_state,
    hosted_in,
    unknown_state,
    with_standby,
)
from core.log.decoder import LogDecoder
from core.log.frames import FrameStream
from core.log.layout import LOG_NAMES, RAW_NAME, ZSTD_NAME, dir_log, link_to_nothing, not_a_log
from core.log.sessions import SessionRef, layout_text, ref_from_header, sessions_root_note
from core.log.skipped import UNLISTED, UNREADABLE, SkipNote, skip_note
from core.remote.link import FileGone, RemoteStat, SshLink
from core.remote.target import RemoteTarget
from core.shared.errors import LogFormatError, LogIncompleteError, LogNotFoundError, TapedeckError
from core.shared.text import quoted, quoted_path
from core.shared.values import whole_digits

HEADER_BYTES = 1 << 16  # a header (line 1, or the first zstd frame) fits in this many bytes
FIRST_HEAD_BYTES = 1 << 12  # remote_header reads this much first, then doubles what it has read
ZSTD_READ = 1 << 20  # the bytes of a zstd log one read asks for while its text is measured (``_zstd_reaches``)
REACHES_KEPT = 4096  # measures ``_zstd_reaches`` keeps
_REACHES: dict[tuple[str, int, int, int], bool] = {}  # (zstd log, its size, its time, the raw one's size): reached


def remote_logs(link: SshLink, target: RemoteTarget, skipped: list[SkipNote] | None = None,
                roots: bool = True, links: set[str] | None = None) -> list[RemoteTarget]:  # fmt: skip
    """The session logs under ``target``: itself when it is a log, a session directory's log, or every log of a
    sessions root (``ROOT/PROJECT/SESSION/session.jsonl[.zstd]``, each level's directories listed in one round
    trip; without ``roots``, none: only a log or a directory's own are looked for). A file by another name is a log
    too, as locally; ``LogNotFoundError`` when ``target`` does not exist (an empty listing costs one stat more); a
    directory it cannot list (``target`` included, whose stat is then not raised either), a ``target`` listed as
    nothing whose stat the server refuses (``cannot stat``), or a log's name on what is no log (``target``'s own
    included), is noted in ``skipped`` when given (as ``core.log.sessions.session_logs`` notes one). ``links``, when
    given, takes the path of each log found that is reached through a symbolic link under ``target`` (its own, or its
    session's or project's directory's), as the listing saw the entries: free, no request more."""
    name = posixpath.basename(target.path)
    if name in LOG_NAMES:
        return [target]
    noted = len(skipped or [])
    entries = dict(link.listdir(target.path, skipped))
    if not entries:
        refused: dict[str, str] = {}  # a path the server will not look into: noted, unless its listing's note says so
        st = link.stat_many([target.path], refused=refused if skipped is not None else None)[0]
        if refused:
            assert skipped is not None
            if not any(note.subject == str(target) for note in skipped[noted:]):  # its listing said nothing of it
                skipped.append(skip_note(UNLISTED, target, _cannot(target, "stat", refused[target.path])))
            return []
        if st is None:
            raise LogNotFoundError(_missing(link, target))
        if st.kind == "file":
            return [target]
    linked: set[str] = set()  # the links listed on the way
    own = _dir_logs(link, [(target, entries.items())], skipped, linked)
    if own or not roots:
        return _through(own, linked, links)
    projects = _listed(link, [(target, entries.items())], "dir", skipped, linked)
    sessions = _listed(link, list(zip(projects, link.listdir_many([p.path for p in projects], skipped), strict=True)),
                       "dir", skipped, linked)  # fmt: skip
    listings = list(zip(sessions, link.listdir_many([s.path for s in sessions], skipped), strict=True))
    return _through(_dir_logs(link, listings, skipped, linked), linked, links)


def _through(logs: list[RemoteTarget], linked: set[str], links: set[str] | None) -> list[RemoteTarget]:
    """``logs``, the path of each one reached through one of the links ``linked`` (itself, or a directory above it)
    added to ``links`` when given."""
    if links is not None and linked:
        below = tuple(f"{p}/" for p in linked)
        links.update(log.path for log in logs if log.path in linked or log.path.startswith(below))
    return logs


def remote_real_paths(link: SshLink, logs: Sequence[RemoteTarget]) -> list[str]:
    """The real path of each log on ``link``'s machine, as ``host:PATH`` with every link resolved by the far side
    (its own name where the server resolves none), all in one round trip: what tells two names of one file there
    from two files (``core.alerts.follow.FileNames``)."""
    found = link.realpaths([log.path for log in logs])
    return [
        str(log.at(real)) if real is not None else str(log) for log, real in zip(logs, found, strict=True)
    ]


def _listed(link: SshLink, listings: Sequence[tuple[RemoteTarget, Iterable[tuple[str, str]]]], kind: str,
            skipped: list[SkipNote] | None = None, linked: set[str] | None = None) -> list[RemoteTarget]:  # fmt: skip
    """The entries of ``kind`` (``dir``, ``file``) listed in each directory of ``listings``, in their order, a
    symbolic link to one included, as the local listing follows links (``core.log.sessions``): the links' stats
    through them are asked in one round trip (none when no entry is a link). A link the server will not follow for
    us (into a place it may not search) is noted in ``skipped`` when given, in the local listing's words (raised
    when it is None); one that loops, names nothing or leads to another kind is left out without a note, as there.
    A link to an ancestor is followed as any: the layout's fixed depth bounds the listing, here as there. The links
    found go in ``linked`` when given."""
    entries = [(sdir.join(name), k) for sdir, listed in listings for name, k in listed if k in (kind, "link")]
    links = [entry.path for entry, k in entries if k == "link"]
    refused: dict[str, str] = {}
    stats = dict(zip(links, link.stat_many(links, refused=refused if skipped is not None else None), strict=True))
    found = []
    for entry, k in entries:
        if entry.path in refused:
            assert skipped is not None
            skipped.append(skip_note(UNLISTED, entry, f"{quoted_path(str(entry))}: {quoted(refused[entry.path])}"))
        elif k == kind or ((st := stats[entry.path]) is not None and st.kind == kind):
            found.append(entry)
            if k == "link" and linked is not None:
                linked.add(entry.path)
    return found


def remote_layout_note(
    link: SshLink, target: RemoteTarget, command: str, root_note: bool = False
) -> str | None:
    """``core.log.sessions.layout_note`` for a directory on another machine: what ``target`` holds instead of
    sessions in the sessions root layout (one project's session directories, or session logs lying loose in it) and
    the commands that read it, naming ``host:PATH``s (None: neither, or it holds sessions). With ``root_note``, one
    that holds sessions is named a sessions root (``sessions_root_note``), as ``core.log.sessions.no_session_note``
    names a local directory given for one session. What the server will not let us look at is passed over without a
    word, as locally (the listing notes it); the note adds to what a command says, so what cannot be read at all (not
    there, refused, the machine not answering or refused: the listing or the refusal the note follows says so) adds
    nothing (None), never an error of its own."""
    passed: list[SkipNote] = []
    try:
        if logs := remote_logs(link, target, passed):
            if not root_note:
                return None
            # a file reached by two names counts once (the far side's real paths), as the fleet lists it
            return sessions_root_note(str(target), len(set(remote_real_paths(link, logs))))
        entries = link.listdir(target.path, passed)  # one it may not list holds nothing here, as locally
        dirs = _listed(link, [(target, entries)], "dir", passed)
        listings = list(zip(dirs, link.listdir_many([d.path for d in dirs], passed), strict=True))
        sessions = _dir_logs(link, listings, passed)
        # its refusals: not a word
        files = [] if sessions else _listed(link, [(target, entries)], "file", passed)
        logs = [str(log) for log, ref in zip(files, remote_refs(link, files), strict=True) if ref is not None]
    except TapedeckError:
        return None
    parent = target.at(posixpath.dirname(posixpath.normpath(target.path)))
    return layout_text(str(target), str(parent), command, [str(log.at(posixpath.dirname(log.path))) for log in sessions],
                       logs, shell_expands=False)  # fmt: skip


def _missing(link: SshLink, target: RemoteTarget) -> str:
    """Why ``target``, which SFTP says is not there, cannot be read: SFTP reports a link loop as no such file, so a
    link that cannot be followed (it loops, or names nothing) is named as one."""
    st = link.stat(target.path, follow=False)
    if st is not None and st.kind == "link":
        return f"{quoted_path(str(target))}: cannot read (a symbolic link that cannot be followed: it loops, or names nothing)"
    return f"{quoted_path(str(target))}: no such file or directory"


def _dir_logs(link: SshLink, listings: Sequence[tuple[RemoteTarget, Iterable[tuple[str, str]]]],
              skipped: list[SkipNote] | None = None, linked: set[str] | None = None) -> list[RemoteTarget]:  # fmt: skip
    """The log of each listed directory that holds one, by the local listing's rule (``dir_log``): what a log's name
    holds there is looked at after links, and a directory whose log is no regular file, or a link to nothing, is
    noted in ``skipped`` when given, in the local listing's words (its stats, the times of the directories that hold
    both logs among them, are asked in one round trip, the links to nothing in one more), as is one whose log the
    server will not stat (a link into a place it may not search: ``cannot read``; raised when ``skipped`` is None). SFTP's times are whole
    seconds: of two written in the same second, the raw one is the one written last when it holds more text than the
    zstd one (it grew after a zstd copy of it was made), else the zstd one is read, as locally. A log that is a link
    goes in ``linked`` when given."""
    held = [(sdir, {name: kind for name, kind in listed if name in LOG_NAMES}) for sdir, listed in listings]
    asked = [sdir.join(name).path for sdir, names in held for name, kind in names.items()
             if len(names) > 1 or kind != "file"]  # fmt: skip
    refused: dict[str, str] = {}  # a log's stat the server refuses: its directory is left out, noted
    stats = dict(zip(asked, link.stat_many(asked, refused=refused if skipped is not None else None), strict=True))
    logs: list[RemoteTarget] = []
    for sdir, names in held:
        if denied := [sdir.join(name) for name in names if sdir.join(name).path in refused]:
            assert skipped is not None
            skipped.append(skip_note(UNLISTED, sdir, _cannot(denied[0], "read", refused[denied[0].path])))
            continue
        found: dict[str, tuple[int, int]] = {}
        for name in names:
            path = sdir.join(name).path
            if path not in stats:  # a lone regular file, whose time is not needed
                found[name] = (stat.S_IFREG, 0)
            elif (st := stats[path]) is not None:
                found[name] = (stat.S_IFREG if st.kind == "file" else st.fmt, st.mtime_ms)
        raw, zstd = stats.get(sdir.join(RAW_NAME).path), sdir.join(ZSTD_NAME)
        if raw is not None and (copy := stats.get(zstd.path)) is not None and copy.mtime_ms == raw.mtime_ms and (
            raw.kind == copy.kind == "file"
        ):
            found[RAW_NAME] = (stat.S_IFREG, raw.mtime_ms + (not _zstd_reaches(link, zstd, copy, raw.size)))
        log, why = dir_log(str(sdir), found)
        if log is not None:
            logs.append(sdir.join(log))
            if names[log] == "link" and linked is not None:
                linked.add(logs[-1].path)
        elif skipped is not None and (why := why or _dangling(link, sdir, names)) is not None:
            skipped.append(skip_note(UNLISTED, sdir, why))
    return logs


def _dangling(link: SshLink, sdir: RemoteTarget, names: Mapping[str, str]) -> str | None:
    """What the remote session directory ``sdir`` holds by a log's name when that is a link to nothing (``names``:
    the kind of each log name it lists), as the local listing names it; None when it holds none."""
    links = [sdir.join(name) for name in LOG_NAMES if names.get(name) == "link"]
    found = next(((t, to) for t, to in zip(links, link.readlinks([t.path for t in links]), strict=True) if to), None)
    return link_to_nothing(str(found[0]), found[1]) if found is not None else None


def _zstd_reaches(link: SshLink, zstd: RemoteTarget, st: RemoteStat, size: int) -> bool:
    """Whether the remote zstd log ``zstd`` (``st``: its stat) decodes to ``size`` bytes or more, read until it
    does: once for one size and time of it and of the raw log, which the fleet and the alerts list again every few
    seconds (a tie to the second lasts: ``zstd -o`` gives its copy the original's time, and the copy is read whole)."""
    key = (str(zstd), st.size, st.mtime_ms, size)
    known = _REACHES.get(key)
    if known is not None:
        return known
    stream = FrameStream()
    offset = text = 0
    while text < size:
        data = link.read(zstd.path, offset, ZSTD_READ)
        if not data:
            break
        offset += len(data)
        text += sum(len(frame.data or b"") for frame in stream.feed(data))
    if len(_REACHES) >= REACHES_KEPT:
        _REACHES.clear()
    _REACHES[key] = reached = text >= size
    return reached


def session_log_of(target: RemoteTarget, logs: Sequence[RemoteTarget]) -> RemoteTarget | None:
    """The log of the one session ``target`` names (a log, or a session directory with its log), given ``logs``,
    what ``remote_logs`` found there; None for a sessions root, however many sessions it holds (as locally)."""
    where = posixpath.normpath(target.path)
    if len(logs) == 1 and posixpath.dirname(posixpath.normpath(logs[0].path)) in (where, posixpath.dirname(where)):
        return logs[0]
    return None


def remote_header(link: SshLink, log: RemoteTarget) -> dict[str, Any]:
    """The header of the remote log; ``LogNotFoundError`` when there is none yet (or it went since its stat),
    ``LogIncompleteError`` while its first line (or frame) is not complete, ``LogFormatError`` when it is no
    session log."""
    gone = LogNotFoundError(f"{quoted_path(str(log))}: no such file")
    st = link.stat(log.path)
    if st is None:
        raise gone
    if st.kind != "file":
        raise LogFormatError(not_a_log(str(log), st.fmt))  # in the words a local one gets
    decoder = LogDecoder(str(log), log.compressed)
    size, read = min(st.size, HEADER_BYTES), 0
    while decoder.header is None and not decoder.fatal and read < size:  # a few KB, more only for a long line 1
        step = min(size - read, max(FIRST_HEAD_BYTES, read))
        try:
            decoder.feed(link.read(log.path, read, step))
        except FileGone:  # removed since the stat: waited for, as a local one is
            raise gone from None
        read += step
    header = decoder.header
    if decoder.fatal:
        raise LogFormatError(decoder.fatal)
    if header is None:
        raise LogIncompleteError(f"{quoted_path(str(log))}: its first line is not complete yet")
    return header


def remote_refs(link: SshLink, logs: Sequence[RemoteTarget], skipped: list[SkipNote] | None = None) -> list[SessionRef | None]:
    """The ``SessionRef`` of each remote log of one machine (its ``path`` reads ``user@host:PATH``; None until its
    header can be read), in two round trips: their stats, then their heads. A log the server will not let us stat
    or read is noted in ``skipped`` when given (once), not taken for one that is not there, and costs the others
    nothing (raised when ``skipped`` is None); so is one whose head is no session log's."""
    unstated: dict[str, str] = {}
    stats = link.stat_many([log.path for log in logs], refused=unstated if skipped is not None else None)
    files = [(log, st) for log, st in zip(logs, stats, strict=True) if st is not None and st.kind == "file"]
    refused: dict[str, str] = {}
    heads = link.read_files([log.path for log, _ in files], HEADER_BYTES, refused)
    notes = [skip_note(UNREADABLE, log, _cannot(log, "stat", unstated[log.path]))
             for log in logs if log.path in unstated]  # fmt: skip
    notes += [skip_note(UNREADABLE, log, _cannot(log, "read", refused[log.path]))
              for log, _ in files if log.path in refused]  # fmt: skip
    if skipped is not None:
        skipped += [note for note in notes if note not in skipped]
    found: dict[str, SessionRef | None] = {}
    for (log, st), head in zip(files, heads, strict=True):
        decoder = LogDecoder(str(log), log.compressed)
        header = decoder.feed(head[: st.size]).header if head else None
        found[log.path] = ref_from_header(Path(str(log)), header, st.size, st.mtime_ms / 1000) if header else None
        if decoder.fatal and skipped is not None:  # no session log (garbage, a link to another file), as locally
            note = skip_note(UNREADABLE, log, decoder.fatal)
            if note not in skipped:
                skipped.append(note)
    return [found.get(log.path) for log in logs]


def _cannot(log: RemoteTarget, doing: str, reason: str) -> str:
    """Why a remote log is left out when the server will not let us ``doing`` it (stat, read; ``reason``: its
    words), as a local one's."""
    return f"{quoted_path(str(log))}: cannot {doing} ({quoted(reason)})"


def remote_state_now(link: SshLink, log: RemoteTarget) -> tuple[HostState, bool]:
    """The host state of a remote session for a command that reads no more of its log, and ``hosted`` for asking
    again (``remote_host_state``): only when neither ``host.json`` nor ``bridge.json`` says who ran it, the log's
    first ``SCAN_BYTES`` are read for a ``tapedeck/host`` event (a tapedeck host that exited, not a DSH session)."""
    state = remote_host_state(link, log, False)
    if state.state != "none" or state.bridge is not None:
        return state, False
    hosted = hosted_in(link.read(log.path, 0, SCAN_BYTES), log.compressed)
    return (remote_host_state(link, log, True), True) if hosted else (state, False)


STATE_RECHECK_SECONDS = 5.0  # ``RemoteStateCheck`` reads a state again this often when no file of it changed


class RemoteStateCheck:
    """``remote_state_now`` of one remote session for a caller that asks it again and again (a row action's wait for
    its answer looks every second): the stats of its log and of the files its state is read from are asked first,
    in one round trip, and the state is read again only when one of them changed since the last read, or
    ``STATE_RECHECK_SECONDS`` after it (a host that dies without a word changes no file: its process is looked at
    then; so is a file rewritten at its size within the second of its last stat, which SFTP's whole-second mtimes
    hide)."""

    def __init__(self, link: SshLink, log: RemoteTarget) -> None:
        self.link, self.log = link, log
        where = posixpath.dirname(log.path)
        self._paths = [log.path, *(posixpath.join(where, name) for name in (STATE_FILE, BRIDGE_FILE, STANDBY_FILE))]
        self._seen: list[tuple[int, int, int] | None] | None = None
        self._state: HostState | None = None
        self._read_at = float("-inf")

    def state(self) -> HostState:
        """The session's host state now (the one last read while its files are as they were then)."""
        stats = self.link.stat_many(self._paths, follow=False, refused={})  # a refusal: the read says it
        seen = [(st.size, st.mtime_ms, st.fmt) if st is not None else None for st in stats]
        now = time.monotonic()
        if self._state is None or seen != self._seen or now - self._read_at >= STATE_RECHECK_SECONDS:
            self._state, self._seen, self._read_at = remote_state_now(self.link, self.log)[0], seen, now
        return self._state


def remote_host_state(link: SshLink, log: RemoteTarget, hosted: bool) -> HostState:
    """The host state of one remote session (see ``remote_host_states``)."""
    return remote_host_states(link, [(log, hosted)])[0]


def remote_host_states(link: SshLink, logs: Sequence[tuple[RemoteTarget, bool]]) -> list[HostState]:
    """Each session's host state from its ``host.json`` (or DSH bridge's ``bridge.json``) on the remote machine,
    for many sessions in three round trips (the files' stats, their bytes, the processes they name).

    The owner lock cannot be probed over SFTP; where the machine has a ``/proc``, a live state is believed only
    while its process runs: a tapedeck host's pid started no later than its recorded ``since`` (a later start is
    another process that got the pid), a DSH bridge's pid with the start time it recorded. A host that died
    without saying so is ``exited`` since the log's last write, a bridge since its last heartbeat; a ``host.json``
    the server will not let us read or stat (a directory it may not search) is ``unknown``, its ``problem`` the
    server's reason (its host may run, whatever a ``bridge.json`` beside it says), and costs the others nothing. Without a
    ``/proc`` a tapedeck host keeps its last recorded state and a bridge is live while its heartbeat is fresh.
    ``hosted`` (a ``tapedeck/host`` event was read) tells a tapedeck log without a state file from a DSH one. A
    live bridge names a second DSH process on standby (``bridge.standby.json``) while that pid runs with the start
    time the file records, as ``core.control.host_state.bridge_state`` does here, and says whether one runs is
    unknown when that file is no regular file or cannot be read (``standby_unknown``), as there.
    """
    dirs = [posixpath.dirname(log.path) for log, _ in logs]
    names = [posixpath.join(d, name) for d in dirs for name in (STATE_FILE, BRIDGE_FILE, STANDBY_FILE)]
    # a file whose stat the server refuses (its directory one it may not search) is noted as one it will not read
    refused: dict[str, str] = {}
    stats = dict(zip(names, link.stat_many(names, follow=False, refused=refused), strict=True))
    # a bridge.json of any size is read (one byte past the most a bridge writes says it is too large, as here); a
    # host.json past the most read here is no record, as here
    most = {STATE_FILE: MAX_HOST_BYTES, STANDBY_FILE: MAX_BRIDGE_BYTES}
    small = [p for p, st in stats.items() if st is not None and st.kind == "file" and
             st.size <= most.get(posixpath.basename(p), st.size)]  # fmt: skip
    # the machine's id tells a copy brought there from another machine: read only where a bridge.json is to judge
    bridged = any(posixpath.basename(p) == BRIDGE_FILE for p in small)
    asked = [*small, *MACHINE_ID_FILES, HOSTNAME_FILE] if bridged else small
    found = dict(zip(asked, link.read_files(asked, MAX_BRIDGE_BYTES + 1, refused), strict=True))
    recorded: list[tuple[str, Any]] = []
    for d in dirs:
        host = _json(found.get(posixpath.join(d, STATE_FILE)))
        bridge = found.get(posixpath.join(d, BRIDGE_FILE))
        if isinstance(host, dict) and host.get("state") in STATES:
            recorded.append((KIND_TAPEDECK, host))
        elif (why := refused.get(posixpath.join(d, STATE_FILE))) is not None:  # its host may run, whatever a bridge
            recorded.append((UNKNOWN, why))  # says: not known (as ``read_host_state`` reads it, before the bridge)
        elif bridge is not None:
            recorded.append((KIND_DSH, parse_bridge(bridge, posixpath.join(d, BRIDGE_FILE))))
        elif (st := stats[posixpath.join(d, BRIDGE_FILE)]) is not None:  # one that is no file, or was not read
            recorded.append((KIND_DSH, (None, unusable_bridge(posixpath.join(d, BRIDGE_FILE), st.kind == "link"))))
        else:
            recorded.append(("", None))
    _placed_bridges(link, dirs, recorded, machine_id((found.get(name) for name in MACHINE_ID_FILES), found.get(HOSTNAME_FILE)))
    bridged = [kind == KIND_DSH and rec[0] is not None for kind, rec in recorded]
    standbys = [parse_standby(found.get(posixpath.join(d, STANDBY_FILE)), rec[0]) if ok else None
                for d, (_, rec), ok in zip(dirs, recorded, bridged, strict=True)]  # fmt: skip
    unknown = [_standby_unknown(posixpath.join(d, STANDBY_FILE), stats, found) if ok else None
               for d, ok in zip(dirs, bridged, strict=True)]  # fmt: skip
    pids = sorted({pid for pid in map(_live_pid, recorded) if pid is not None} |
                  {standby[0] for standby in standbys if standby is not None})  # fmt: skip
    boot, view, starts = _processes(link, pids)
    states = [with_standby(_state(kind, rec, hosted, boot, starts, view),
                           standby_runs(standby, starts.get(standby[0]) if standby else None, view), why)
              for (kind, rec), (_, hosted), standby, why in zip(recorded, logs, standbys, unknown, strict=True)]  # fmt: skip
    died = [i for i, state in enumerate(states) if state.state == "exited" and state.since is None and
            state.kind == KIND_TAPEDECK]  # fmt: skip
    for i, st in zip(died, link.stat_many([logs[i][0].path for i in died]), strict=True):
        states[i] = HostState("exited", states[i].pid, st.mtime_ms if st is not None else None)
    return states


def _standby_unknown(path: str, stats: dict[str, RemoteStat | None], found: dict[str, bytes | None]) -> str | None:
    """Why whether a second DSH process runs a session on standby is not known from the far ``bridge.standby.json``
    at ``path`` (``standby_unknown``; ``stats``: the stats made, ``found``: the files read), or None: none is there,
    a symbolic link (a waiting bridge's rename replaces it), or it was read."""
    st = stats.get(path)
    if st is None or st.kind == "link":
        return None
    if st.kind != "file":
        return standby_unknown(path, False)
    # a file past the most a bridge writes is not read, and names no standby, as here
    return standby_unknown(path, True) if found.get(path) is None and st.size <= MAX_BRIDGE_BYTES else None


def _processes(link: SshLink, pids: list[int]) -> tuple[int | None, PidView, dict[int, str | None]]:
    """The far machine's boot time, where its pids are read (its boot id, and the pid namespace of its SFTP server,
    whose ``/proc`` shows that namespace's pids) and each pid's start time (None: no such process), in one round
    trip; nothing is read for no pid. The boot time and the view are read once per connection
    (``SshLink.per_connection``): a reboot ends the connection, and the server process keeps its namespace while it
    runs; ``btime`` moves only when the far clock is stepped, by the step, which then puts every process start read
    afterwards off by it as much as the recorded times it is compared with."""
    if not pids:
        return None, PidView(None, None), {}
    stats = [f"/proc/{pid}/stat" for pid in pids]
    known = link.per_connection  # the connection's before the read: a reconnect during it leaves this one unused
    machine: tuple[int | None, PidView] | None = known.get(PROC_STAT)
    if machine is None:
        # a namespace link the server will not read leaves the namespace unknown (``PidView``), as one not there
        procs, ns = link.read_files_and_links(
            [PROC_STAT, BOOT_ID_FILE, *stats], PROC_BYTES, [PID_NS_LINK], {}
        )
        boot_id = (procs[1] or b"").decode("ascii", "replace").strip() or None
        machine = known[PROC_STAT] = (_boot_time(procs[0]), PidView(boot_id, namespace_named(ns[0])))
        procs = procs[2:]
    else:
        procs = link.read_files(stats, PROC_BYTES)
    return *machine, {pid: stat_start_time(raw) if raw else None for pid, raw in zip(pids, procs, strict=True)}


def _placed_bridges(link: SshLink, dirs: list[str], recorded: list[tuple[str, Any]], machine: str | None) -> None:
    """Place each ``bridge.json`` read (``recorded``) for the directory it is in, of the machine ``machine``, by the
    rule of ``core.bridge.files.placed``: a copy's reads as no bridge at all. What it needs is asked only of the
    files in question, for them all at once: whether the path a file names is its directory (their real paths, one
    round trip), the directories' devices and inodes (SFTP gives none: ``stat`` run on the machine, once, which
    also names the pid namespace it runs in) where a file names another machine or another path, and whether the
    paths named are gone (one more round trip)."""
    infos = {i: rec[0] for i, (kind, rec) in enumerate(recorded) if kind == KIND_DSH and rec[0] is not None}
    apart = [i for i, info in infos.items() if info.dir is not None and
             posixpath.normpath(info.dir) != posixpath.normpath(dirs[i])]  # fmt: skip
    real = link.realpaths([p for i in apart for p in (infos[i].dir, dirs[i])])
    other = {i for n, i in enumerate(apart) if real[2 * n] is None or real[2 * n] != real[2 * n + 1]}
    asked = [i for i, info in infos.items() if info.dir_id is not None and (i in other or (
             machine is not None and info.dir_id.partition(":")[0] != machine))]  # fmt: skip
    ids, ns = _dir_ids(link, [dirs[i] for i in asked])
    here = dict(zip(asked, ids, strict=True))
    looked = [i for i in other if infos[i].dir is not None]
    there = dict(zip(looked, link.stat_many([infos[i].dir or "" for i in looked]), strict=True))
    for i, info in infos.items():
        found = placed(info, machine, here.get(i), i not in other, i in there and there[i] is None, ns)
        problem = copied_problem(posixpath.join(dirs[i], BRIDGE_FILE), info.dir or "") if found is None else None
        recorded[i] = (KIND_DSH, (found, problem))


# the pid namespace the command runs in (its /proc/self link), then a line each, "-" where it fails
_STAT_DIRS = (
    "readlink /proc/self/ns/pid 2>/dev/null || echo -; "
    'for d; do stat -L -c %d:%i -- "$d" 2>/dev/null || echo -; done'
)


def _dir_ids(link: SshLink, dirs: list[str]) -> tuple[list[str | None], int | None]:
    """Each remote directory's ``<device>:<inode>`` (None: unknown) and the pid namespace the login's commands run
    in there (None: unknown), by running ``stat`` there once for them all; all None when the machine runs no command
    for this login, or its answer is not a line and one per directory."""
    if not dirs:
        return [], None
    out = link.output(shlex.join(["sh", "-c", _STAT_DIRS, "sh", *dirs]))
    lines = out.decode("ascii", "replace").splitlines() if out is not None else []
    if len(lines) != len(dirs) + 1:
        return [None] * len(dirs), None
    return [line if re.fullmatch(r"\d+:\d+", line) else None for line in lines[1:]], namespace_named(lines[0])


PROC_STAT = "/proc/stat"  # its btime line: the machine's boot time (a process's start is counted from it)
PROC_BYTES = 1 << 18
CLOCK_TICKS = 100  # USER_HZ, what /proc counts a process's start time in (100 on every Linux build in use)


def _json(raw: bytes | None) -> Any:
    if raw is None:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def _live_pid(recorded: tuple[str, Any]) -> int | None:
    """The pid whose process a recorded live state rests on (None: nothing to check); a bridge's also when it said
    it exited (its DSH may run on: the bridge was unloaded)."""
    kind, rec = recorded
    if kind == KIND_TAPEDECK and rec.get("state") in LIVE_STATES:
        pid = rec.get("pid")
        return pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 else None
    if kind == KIND_DSH and rec[0] is not None:
        return rec[0].pid
    return None


def _boot_time(raw: bytes | None) -> int | None:
    """The ``btime`` of ``/proc/stat`` (epoch seconds); None where the machine has no ``/proc``."""
    for line in (raw or b"").splitlines():
        fields = line.split()
        if fields[:1] == [b"btime"] and len(fields) > 1 and fields[1].isdigit():
            return whole_digits(fields[1].decode("ascii"))  # None: more digits than int() takes, no real btime
    return None


def _state(kind: str, rec: Any, hosted: bool, boot: int | None, starts: dict[int, str | None],
           view: PidView) -> HostState:  # fmt: skip
    """One session's host state from what was read (see ``remote_host_states``; ``view``: where the machine's pids
    were read)."""
    if kind == KIND_DSH:
        info, problem = rec
        if info is None:
            return HostState("none", kind=KIND_DSH, bridge={"problem": problem} if problem else None)
        runs = boot is not None and this_boot(info, view) and starts.get(info.pid or 0) == info.proc_start
        return bridge_host_state(info, bridge_live(info, runs, view), runs, same_machine(info, view))
    if kind == UNKNOWN:
        return unknown_state(rec)
    if kind != KIND_TAPEDECK:
        return HostState("exited") if hosted else HostState("none", kind=KIND_DSH)
    pid, since, state = _live_pid((kind, rec)), rec.get("since"), rec["state"]
    since = since if isinstance(since, int) and not isinstance(since, bool) else None
    if pid is None or boot is None:
        return HostState(state, rec.get("pid") if isinstance(rec.get("pid"), int) else None, since)
    started = starts.get(pid)
    if started is not None and (since is None or boot + int(started) / CLOCK_TICKS <= since / 1000 + 2):
        return HostState(state, pid, since)
    return HostState("exited", pid, None)  # died without saying so: since its log's last write (filled in above)
