"""A remote log followed as ``core.log.tail.Tailer`` follows a local one: each poll stats the file over SFTP and
reads only the byte range appended since the last one, decoded by the same ``LogDecoder`` (raw or zstd).

A file that shrank or disappeared is read again from the start and reported with ``reset`` (a rewrite in place
at the same size or larger is not noticed remotely: that would take reading back what was already read). A
dropped connection ends the poll with what was read before it (``unreachable`` says why) and leaves the offset
and decoder after the last byte decoded, so the next successful poll goes on from there: nothing is lost or read
twice.
"""

from __future__ import annotations

from core.log.decoder import LogDecoder
from core.log.tail import READ_CHUNK, Tailer, TailUpdate
from core.remote.link import SshLink, Unreachable
from core.remote.target import RemoteTarget
from core.shared.diagnostics import Diagnostic


class RemoteTailer(Tailer):
    """Incremental reader of one remote log (see the module docstring); ``offset`` and ``finish`` are the local
    ``Tailer``'s."""

    def __init__(self, link: SshLink, target: RemoteTarget) -> None:
        super().__init__(str(target))
        self.link = link
        self.target = target
        self.last_write: int | None = None  # the file's mtime at the last poll (epoch ms)
        self.unreachable: Unreachable | None = None  # set by a poll the connection failed (None: the last one ran)

    def poll(self, max_bytes: int | None = None) -> TailUpdate:
        """Read what is new since the last poll (up to a dropped connection: see ``unreachable``)."""
        update = TailUpdate()
        try:
            self._poll(update, max_bytes)
            self.unreachable = None
        except Unreachable as exc:
            self.unreachable = exc
        return update

    def _poll(self, update: TailUpdate, max_bytes: int | None) -> None:
        st = self.link.stat(self.target.path)
        if st is None or st.size < self._offset:
            if self._decoder is not None:
                what = "disappeared" if st is None else f"was truncated to {st.size} bytes"
                update.diagnostics.append(Diagnostic("log-reset", f"{self.target} {what}; re-reading from the start",
                                                     self._offset, None, "warning"))  # fmt: skip
                update.reset = True
                self._decoder, self._offset = None, 0
            if st is None:
                update.waiting = True
                return
        if st.kind != "file":
            update.fatal = f"{self.target}: is not a regular file"
            return
        self.last_write = st.mtime_ms
        if self._decoder is None:
            self._decoder = LogDecoder(str(self.target), self.target.compressed)
        end = st.size if max_bytes is None else min(st.size, self._offset + max_bytes)
        while self._offset < end:
            data = self.link.read(self.target.path, self._offset, min(READ_CHUNK, end - self._offset))
            if not data:
                break
            self._offset += len(data)
            batch = self._decoder.feed(data)
            update.events.extend(batch.events)
            update.diagnostics.extend(batch.diagnostics)
            update.header = batch.header if batch.header is not None else update.header
        if self._decoder.fatal:
            update.fatal = self._decoder.fatal
