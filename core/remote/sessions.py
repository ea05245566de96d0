"""Sessions on another machine: the logs a remote target names (a log, a session directory or a sessions root in
the DSH layout), each log's header and its host's state, read over SFTP."""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any

import orjson

from core.bridge.files import BRIDGE_FILE
from core.control.host_state import KIND_DSH, KIND_TAPEDECK, STATE_FILE, STATES, HostState
from core.log.decoder import LogDecoder
from core.log.layout import RAW_NAME, ZSTD_NAME
from core.log.sessions import SessionRef, ref_from_header
from core.remote.link import SshLink
from core.remote.target import RemoteTarget
from core.shared.errors import LogFormatError, LogIncompleteError, LogNotFoundError

HEADER_BYTES = 1 << 16  # a header (line 1, or the first zstd frame) fits in this many bytes


def remote_logs(link: SshLink, target: RemoteTarget) -> list[RemoteTarget]:
    """The session logs under ``target``: itself when it is a log, a session directory's log, or every log of a
    sessions root (``ROOT/PROJECT/SESSION/session.jsonl[.zstd]``)."""
    name = posixpath.basename(target.path)
    if name in (RAW_NAME, ZSTD_NAME):
        return [target]
    entries = dict(link.listdir(target.path))
    for log in (ZSTD_NAME, RAW_NAME):
        if entries.get(log) == "file":
            return [target.join(log)]
    logs: list[RemoteTarget] = []
    for project, kind in entries.items():
        if kind != "dir":
            continue
        for session, skind in link.listdir(target.join(project).path):
            if skind != "dir":
                continue
            found = dict(link.listdir(target.join(project, session).path))
            logs.extend(target.join(project, session, log) for log in (ZSTD_NAME, RAW_NAME) if found.get(log) == "file")
    return logs


def remote_header(link: SshLink, log: RemoteTarget) -> dict[str, Any]:
    """The header of the remote log; ``LogNotFoundError`` when there is none yet, ``LogIncompleteError`` while its
    first line (or frame) is not complete, ``LogFormatError`` when it is no session log."""
    st = link.stat(log.path)
    if st is None:
        raise LogNotFoundError(f"{log}: no such file")
    if st.kind != "file":
        raise LogFormatError(f"{log}: not a regular file")
    decoder = LogDecoder(str(log), log.compressed)
    header = decoder.feed(link.read(log.path, 0, min(st.size, HEADER_BYTES))).header
    if decoder.fatal:
        raise LogFormatError(decoder.fatal)
    if header is None:
        raise LogIncompleteError(f"{log}: its first line is not complete yet")
    return header


def remote_ref(link: SshLink, log: RemoteTarget) -> SessionRef | None:
    """The ``SessionRef`` of a remote log (its ``path`` reads ``user@host:PATH``), None until its header can be
    read."""
    st = link.stat(log.path)
    if st is None or st.kind != "file":
        return None
    decoder = LogDecoder(str(log), log.compressed)
    header = decoder.feed(link.read(log.path, 0, min(st.size, HEADER_BYTES))).header
    if header is None:
        return None
    return ref_from_header(Path(str(log)), header, st.size, st.mtime_ms / 1000)


def remote_host_state(link: SshLink, log: RemoteTarget, hosted: bool) -> HostState:
    """The session's host state from its ``host.json`` (or DSH bridge's ``bridge.json``) on the remote machine.

    The owner lock cannot be probed over SFTP, so a remote host that died without saying so keeps its last
    recorded state; ``hosted`` (a ``tapedeck/host`` event was read) tells a tapedeck log from a DSH one.
    """
    directory = posixpath.dirname(log.path)
    for name, kind in ((STATE_FILE, KIND_TAPEDECK), (BRIDGE_FILE, KIND_DSH)):
        recorded = _small_json(link, posixpath.join(directory, name))
        if isinstance(recorded, dict) and recorded.get("state") in STATES:
            pid, since = recorded.get("pid"), recorded.get("since")
            return HostState(recorded["state"], pid if isinstance(pid, int) else None,
                             since if isinstance(since, int) else None, kind)  # fmt: skip
    return HostState("exited") if hosted else HostState("none", kind=KIND_DSH)


def _small_json(link: SshLink, path: str) -> Any:
    st = link.stat(path, follow=False)
    if st is None or st.kind != "file" or st.size > 65_536:
        return None
    try:
        return orjson.loads(link.read(path, 0, st.size))
    except orjson.JSONDecodeError:
        return None
