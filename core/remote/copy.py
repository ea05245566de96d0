"""A remote session log read once: copied over SFTP into a private temporary directory for the length of one
command (``inspect``, ``surface``, ``events`` on ``[user@]host:PATH``), under its own file name so a zstd log is
still read as one; the copy is removed when the command ends."""

from __future__ import annotations

import argparse
import posixpath
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.control.host_state import HostState
from core.log.layout import not_a_log
from core.remote.target import RemoteTarget, parse_remote
from core.shared.errors import TapedeckError
from core.shared.records import record
from core.shared.text import quoted_path


@record(frozen=True)
class RemoteCopy:
    """The remote log a command reads through a local copy, and the connection to its machine: what is beside the
    log there (its host's state) is read there, not beside the copy."""

    link: Any  # core.remote.link.SshLink
    log: RemoteTarget

    def host_state(self) -> HostState:
        """The session's host state on the far side."""
        from core.remote.sessions import remote_state_now

        return remote_state_now(self.link, self.log)[0]


def with_remote_copy(handler: Callable[[argparse.Namespace], int | None]) -> Callable[[argparse.Namespace], int | None]:
    """Run ``handler`` on a local copy of ``args.path`` when it names a log on another machine (``args.remote_copy``
    then says which)."""

    def run(args: argparse.Namespace) -> int | None:
        target = parse_remote(args.path)
        if target is None:
            return handler(args)
        import tempfile

        from core.remote.link import READ_CHUNK, link_for  # asyncssh and asyncio: only for a remote path
        from core.remote.live import resolve_remote_log

        link = link_for(target)
        log = resolve_remote_log(link, target)
        st = link.stat(log.path)
        if st is None:
            raise TapedeckError(f"{quoted_path(str(log))}: no such file")
        if st.kind != "file":  # what locally is said of it: a FIFO is never opened, as SFTP would wait on it
            raise TapedeckError(not_a_log(str(log), st.fmt))
        with tempfile.TemporaryDirectory(prefix="tapedeck-remote-") as tmp:
            copy = Path(tmp) / posixpath.basename(log.path)
            with open(copy, "wb") as out:
                for offset in range(0, st.size, READ_CHUNK):
                    out.write(link.read(log.path, offset, min(READ_CHUNK, st.size - offset)))
            args.path = str(copy)
            args.local_copy = True  # a throw-away copy: nothing is indexed for it
            args.remote_copy = RemoteCopy(link, log)
            return handler(args)

    return run
