"""A remote log followed as ``core.log.tail.Tailer`` follows a local one: each poll stats the file over SFTP and
reads only the byte range appended since the last one, decoded by the same ``LogDecoder`` (raw or zstd).

A file that shrank or disappeared is read again from the start and reported with ``reset``. SFTP gives no inode
and whole-second mtimes, so a rewrite in place at the same size or larger is caught from a few bytes instead of
reading back what was read: the bytes that name the session (``HEAD_CHECK`` of its header, around its id; for a
zstd log the end of the header's frame, which holds its checksum) and the last consumed bytes must still be
there (a log followed from a point, ``follow_from_end``, reads them when it starts). Each read of appended bytes
fetches ``OVERLAP`` consumed bytes and the head's in the same round trip; a file whose mtime moved without growing
has them compared at once; and since a rewrite within the second of the last write leaves size and mtime alone,
a log read from the start has them compared once more after it was quiet for ``SETTLE_SECONDS``. A mismatch
resets the log with ``log-reset``. Left unseen: a rewrite to exactly the size just appended within the second of
that append, with the head and those last bytes unchanged. A log that was no link at its stat is read only while it
is none (``SshLink.read_ranges``' ``unlinked``): a link swapped in between gives no bytes, and the next poll stats it.
The reads trust the poll's stat that found a regular file (``read_ranges``' ``known``: no stat of their own before
the open); a FIFO swapped in since is given up at its open or seen in the reads' round trip, never read.

A dropped connection ends the poll with what was read before it (``unreachable`` says why) and leaves the offset
and decoder after the last byte decoded, so the next successful poll goes on from there: nothing is lost or read
twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from core.log.decoder import Consumer, LogDecoder
from core.log.frames import FrameError, frame_end
from core.log.tail import FINGERPRINT, FileState, Tailer, TailUpdate
from core.remote.link import READ_CHUNK, RemoteStat, SshLink, Unreachable
from core.remote.target import RemoteTarget
from core.shared.errors import TapedeckError

OVERLAP = 8  # consumed bytes read again with each range of appended bytes
HEAD_CHECK = 16  # bytes of the head that name the session
TAIL_CHECK = 16  # consumed bytes compared when the file changed without growing, or settled after a load
SETTLE_SECONDS = 1.5  # longer than the mtime's one-second grain: a same-second rewrite has happened by then


@contextmanager
def _refused_read() -> Iterator[None]:
    """A read the server refused (the file went, or may not be read) raised as the OSError a local read gives, which
    ``Tailer`` notes as a ``read-error``; a lost link stays ``Unreachable``."""
    try:
        yield
    except Unreachable:
        raise
    except TapedeckError as exc:
        raise OSError(str(exc)) from None


def file_state(st: RemoteStat) -> FileState:
    """A remote stat as the tailer's ``FileState`` (no inode over SFTP: every file has the same identity)."""
    return FileState(st.size, st.mtime_ms * 1_000_000, (0, 0), st.kind == "file")


class RemoteTailer(Tailer):
    """Incremental reader of one remote log (see the module docstring); ``offset`` and ``finish`` are the local
    ``Tailer``'s. ``prefetch`` hands it a stat the caller took for many logs at once (``SshLink.stat_many``): the
    next polls use it instead of asking again, until ``clear_prefetch``."""

    def __init__(self, link: SshLink, target: RemoteTarget, pace: Callable[[], None] | None = None,
                 consumer: Consumer | None = None) -> None:  # fmt: skip
        super().__init__(str(target), pace, consumer)
        self.link = link
        self.target = target
        self._prefetched: list[RemoteStat | None] = []  # one stat (None: no file) while the caller's round lasts
        self.last_write: int | None = None  # the file's mtime at the last poll (epoch ms)
        self.unreachable: Unreachable | None = None  # set by a poll the connection failed (None: the last one ran)
        self._lost: Unreachable | None = None  # the poll under way's
        # when the last poll that got its answers began (epoch ms): what it read holds as of then, however long the
        # one under way waits for a link that stopped answering
        self.answered_at: int | None = None
        self._verify_at: float | None = None  # when the settled file's last bytes are compared again
        self._unlinked = False  # the path was no symbolic link at the last stat: one swapped in since is not read
        # the last stat, when it found a regular file: the reads trust it instead of a stat of their own before the
        # open (``SshLink.read_ranges``' ``known``)
        self._known: RemoteStat | None = None

    @property
    def compressed(self) -> bool:
        """A zstd log, by its name."""
        return self.target.compressed

    def _read_at(self, offset: int, size: int) -> bytes:
        with _refused_read():
            return self.link.read(self.target.path, offset, min(size, READ_CHUNK), self._unlinked, self._known)

    def _go_on(self, decoder: LogDecoder, offset: int, data: bytes, st: FileState) -> None:
        self.resume(decoder, offset)
        self._early, self._identity, self._seen = data, st.identity, (st.size, st.changed_ns)

    def resume(self, decoder: LogDecoder, offset: int) -> None:
        """As ``Tailer.resume``: the bytes the rewrite checks compare with (the head's, the last ones before
        ``offset``) are read in one round trip, so that a log followed from a point is not taken for rewritten."""
        kept = min(offset, TAIL_CHECK)
        with _refused_read():
            head, tail = self.link.read_ranges(self.target.path, [(0, min(offset, FINGERPRINT)), (offset - kept, kept)],
                                               self._unlinked, self._known)  # fmt: skip
        self._decoder, self._offset, self._head, self._tail = decoder, offset, head, tail

    def poll(self, max_bytes: int | None = None) -> TailUpdate:
        """Read what is new since the last poll (up to a dropped connection: see ``unreachable``)."""
        self._lost = None
        began = int(time.time() * 1000)
        try:
            update = super().poll(max_bytes)
        except Unreachable as exc:  # the stat or a rewrite check failed: nothing was consumed
            self._lost, update = exc, TailUpdate()
        self.unreachable = self._lost  # changed once the poll is over: a reader beside it sees the last one's
        if self._lost is None:
            self.answered_at = began
        return update

    def prefetch(self, st: RemoteStat | None) -> None:
        """Use ``st`` (a stat, or None: the file does not exist) as the file's state until ``clear_prefetch``."""
        self._prefetched = [st]

    def clear_prefetch(self) -> None:
        """Stat the file again at each poll."""
        self._prefetched = []

    def _stat(self) -> FileState | None:
        st = self._prefetched[0] if self._prefetched else self.link.stat(self.target.path, own=True)
        self._known = st if st is not None and st.kind == "file" else None
        if st is None:
            return None
        self.last_write = st.mtime_ms
        self._unlinked = st.linked is False
        return file_state(st)

    def _restart(self) -> None:
        super()._restart()
        self._verify_at = None

    def _rewritten(self, changed: bool) -> bool:
        assert self._seen is not None
        size = self._seen[0]
        if changed and size > self._offset:  # appended (or rewritten larger): checked while reading the new bytes
            return self._differs(OVERLAP, min(READ_CHUNK, size - self._offset))
        if not changed and (self._verify_at is None or time.monotonic() < self._verify_at):
            return False
        self._verify_at = None
        return self._differs(TAIL_CHECK, 0)

    def _differs(self, k: int, new: int) -> bool:
        """Read the last ``k`` consumed bytes and the ``new`` bytes after them, with the head's bytes, in one round
        trip; True when the consumed bytes or the head changed (False when the server refuses the read). The new
        bytes are kept for ``_chunks``; those it holds already (read where a follow from a point started) are not
        read again."""
        k = min(k, len(self._tail))
        a, b = self._head_window()
        held = len(self._early)
        ranges = [(self._offset - k, k + (0 if held else new)), (a, b - a)]
        if held and new > held:
            ranges.append((self._offset + held, new - held))
        try:
            read, head, *more = self.link.read_ranges(self.target.path, ranges, self._unlinked, self._known)
        except Unreachable:
            raise
        except TapedeckError:  # the server refused the read: the read that follows reports it, as a local one's
            return False
        if head != self._head[a:b] or read[:k] != self._tail[len(self._tail) - k :]:
            return True
        self._early = self._early + b"".join(more) if held else read[k:]
        return False

    def _head_window(self) -> tuple[int, int]:
        """Where in the consumed head the bytes that tell this session from another are: around the header's id,
        or a zstd log's first frame's end (its checksum covers the header)."""
        head = self._head
        if self.compressed:
            try:
                end = frame_end(head, 0)
            except FrameError:
                end = None
            return (end - HEAD_CHECK, end) if end is not None and end >= HEAD_CHECK else (0, min(HEAD_CHECK, len(head)))
        line = head.find(b"\n")
        at = head.find(b'"id":', 0, line if line >= 0 else len(head))
        start = at if at >= 0 else 0
        return start, min(start + HEAD_CHECK, len(head))

    def _file_chunks(self, end: int) -> Iterator[bytes]:
        while self._offset < end:
            try:
                with _refused_read():
                    data = self.link.read(self.target.path, self._offset, min(READ_CHUNK, end - self._offset), self._unlinked,
                                          self._known)  # fmt: skip
            except Unreachable as exc:
                self._lost = exc
                return
            if not data:
                return
            if not self._offset:  # a load: a same-second rewrite after it is looked for once it settled
                self._verify_at = time.monotonic() + SETTLE_SECONDS
            yield data
