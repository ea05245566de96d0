"""One SSH connection per remote machine, used through SFTP (and, for a control request, one short shell
command: ``run``), from any thread.

``asyncssh`` runs on an event loop in a daemon thread of its own; each call is submitted to it and waited for.
The connection applies the user's ``~/.ssh/config`` (host aliases, port, user, identity files, ProxyJump), keys
and agent, and checks the host key against ``~/.ssh/known_hosts`` strictly: an unknown or changed key is refused
with the command that records it after the operator checked it (``HostKeyRefused``), never accepted.

A call that finds the connection gone marks the machine ``unreachable`` (``Unreachable.since``) and reconnects
on a later call, waiting ``BACKOFF`` seconds after the first failure, doubling up to ``MAX_BACKOFF``; calls in
between fail at once, so a dead machine never blocks the fleet's poll.

``asyncio`` and ``asyncssh`` are imported where a link is used: a command that only loads this module (the fleet
over local roots, ``tapedeck sessions``) pays for neither (asyncio alone was a sixth of its start-up).
"""

from __future__ import annotations

import stat
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from core.log.layout import special_file
from core.log.skipped import UNLISTED, SkipNote, skip_note
from core.remote.target import RemoteTarget
from core.shared.clock import IMPLAUSIBLE, utc_time
from core.shared.errors import TapedeckError
from core.shared.text import quoted, quoted_path

if TYPE_CHECKING:
    import asyncio

# asyncssh's import names DSA types, which cryptography 48 deprecates with a warning: five warnings, ten lines on
# stderr before the answer of every command that reads a remote path (the user can do nothing about them)
warnings.filterwarnings("ignore", message="DSA is deprecated", module=r"asyncssh\.")

BACKOFF = 0.5  # seconds before the first reconnect; doubled after each failed one
MAX_BACKOFF = 15.0
CALL_TIMEOUT = 20.0  # one SFTP call (the connect included) gives up after this long
# a read's open still waiting after this long is asked again on a new connection, whose stat of the path decides
# (``SshLink._open``): a FIFO swapped in is given up then, well before the call would call the machine unreachable; a
# regular file slow to open is waited for
OPEN_WAIT = 2.0
READ_CHUNK = 1 << 18  # bytes per SFTP read request
# the requests of one batch (``_bounded``: stats, listings, reads of many files) in flight at once: each listing or
# read holds a directory or file open on the far side, whose server may open few at once (its limit of open files);
# past it the server fails the rest, and sessions went missing from a machine that holds many
IN_FLIGHT = 32

T = TypeVar("T")


class HostKeyRefused(TapedeckError):
    """The machine's host key is not in known_hosts (or differs from it): nothing was read or sent."""


class Unreachable(TapedeckError):
    """The machine cannot be reached now; ``since`` is when it was first found so (epoch ms)."""

    def __init__(self, message: str, since: int) -> None:
        super().__init__(message)
        self.since = since


class LostUnderWay(Unreachable):
    """The connection was lost, or the call gave up, once a command or a write had been sent: it may have taken
    effect on the far side."""


class FileGone(TapedeckError):
    """The server says the file is not there: it went since it was looked at (a read after its stat)."""


class NotRegular(TapedeckError):
    """The path is no regular file (a FIFO, a device, a directory …): it was not opened, since the server's open of
    a FIFO waits for a writer, and every call on the connection behind it waits too; ``why`` says so in a few words
    (of ``fmt``, its file type), unless given (what else showed it to be none: an open that waited)."""

    def __init__(self, where: RemoteTarget, fmt: int, why: str | None = None) -> None:
        self.fmt = fmt
        self.why = why or f"{special_file(fmt)}, not a regular file: not opened, as a read of it would hold up the connection"
        super().__init__(f"{quoted_path(str(where))}: cannot read ({self.why})")


class _Reopen(Exception):
    """An open waited past ``OPEN_WAIT``; its connection was dropped, for the call to be asked again on a new one
    (``SshLink._anew``)."""


class ChannelRefused(TapedeckError):
    """The machine would not open a channel for a command (sshd's ``MaxSessions`` taken by the link's SFTP session,
    a login that allows SFTP alone): the command never ran, and the connection is as it was."""


@dataclass(frozen=True, slots=True)
class RemoteStat:
    """A remote file's size, last change (epoch ms), whether it is a regular file, a directory or a link, and its file
    type (``stat.S_IFMT`` of its mode: a FIFO, a socket … among the others); for a stat through links, whether the
    path itself was one (``linked``; None: not known)."""

    size: int
    mtime_ms: int
    kind: str  # "file", "dir", "link" or "other"
    fmt: int = 0
    linked: bool | None = None


_LOOP: asyncio.AbstractEventLoop | None = None
_LOOP_LOCK = threading.Lock()


def _loop() -> asyncio.AbstractEventLoop:
    """The event loop every link runs on (started once, in a daemon thread)."""
    import asyncio

    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="tapedeck-ssh", daemon=True).start()
            _LOOP = loop
        return _LOOP


def _kind(attrs: Any) -> str:
    fmt = _fmt(attrs)
    return "file" if fmt == stat.S_IFREG else "dir" if fmt == stat.S_IFDIR else "link" if fmt == stat.S_IFLNK else "other"


def _fmt(attrs: Any) -> int:
    return stat.S_IFMT(attrs.permissions or 0)


def _host_key_line(target: RemoteTarget, port: int | None) -> str:
    where = f"-p {port} " if port and port != 22 else ""
    return f"ssh {where}{target.where} true"


class SshLink:
    """The SFTP session to one machine (see the module docstring). ``port`` and ``options`` override the ssh
    config (tests, and the rare caller that must)."""

    def __init__(self, target: RemoteTarget, *, port: int | None = None, **options: Any) -> None:
        self.target = target
        self.port = port
        self.options = options
        self.unreachable_since: int | None = None
        self.bytes_read = 0
        # what callers read of the far machine that cannot change while one connection lasts (its boot, the pid
        # namespace its SFTP server runs in): a new dict at each connect, so what was read over a connection since
        # lost is never taken for the new one's
        self.per_connection: dict[str, Any] = {}
        self.refused: HostKeyRefused | None = None  # an unknown host key is refused once and for all
        self._conn: Any = None
        self._sftp: Any = None
        self._retry_at = 0.0
        self._backoff = BACKOFF
        self._lock = threading.Lock()

    # the connection ---------------------------------------------------------------------------------------
    async def _connect(self) -> Any:
        import asyncssh

        kwargs: dict[str, Any] = dict(self.options)
        if self.port is not None:
            kwargs["port"] = self.port
        if self.target.user:
            kwargs["username"] = self.target.user
        try:
            conn = await asyncssh.connect(self.target.host, **kwargs)
        except ValueError as exc:  # unreachable, saying why, as with a name DNS does not know (no traceback)
            # UnicodeError: the lookup cannot encode the name (a label past 63 bytes, an empty one, a byte of no
            # encoding); else asyncssh cannot read ~/.ssh/config or a key (ConfigParseError, KeyImportError)
            why = f"no host name DNS can look up: {exc}" if isinstance(exc, UnicodeError) else str(exc)
            raise OSError(why or type(exc).__name__) from None
        except asyncssh.HostKeyNotVerifiable as exc:
            self.refused = HostKeyRefused(
                f"{self.target.where}: its host key is not in your known_hosts ({quoted(exc.reason, 200)}); nothing "
                "was read. "
                f"Check the key's fingerprint with the machine's owner, then record it by running: "
                f"{_host_key_line(self.target, self.port)}"
            )
            raise self.refused from None
        self._conn = conn
        self._sftp = await conn.start_sftp_client()
        self.per_connection = {}
        return self._sftp

    async def _sftp_client(self) -> Any:
        return self._sftp if self._sftp is not None else await self._connect()

    def call(self, make: Callable[[Any], Awaitable[T]]) -> T:
        """Run ``make(sftp)`` on the link's loop and return its result; connects (or reconnects) first."""
        import asyncio

        import asyncssh

        now = time.monotonic()
        with self._lock:
            if self.refused is not None:
                raise self.refused
            if self.unreachable_since is not None and now < self._retry_at:
                raise Unreachable(f"{self.target.where}: unreachable since {_clock(self.unreachable_since)}",
                                  self.unreachable_since)  # fmt: skip

            async def run() -> T:
                return await make(await self._sftp_client())

            future = asyncio.run_coroutine_threadsafe(asyncio.wait_for(run(), CALL_TIMEOUT), _loop())
            try:
                result = future.result()
            except (TimeoutError, OSError, asyncssh.Error, EOFError) as exc:
                if isinstance(exc, asyncssh.SFTPError) and not _link_lost(exc):  # the file failed, not the link
                    raise TapedeckError(f"{self.target.where}: {quoted(exc.reason)}") from None  # as listdir's
                self._drop()
                first = self.unreachable_since is None
                self.unreachable_since = self.unreachable_since or int(time.time() * 1000)
                self._retry_at = time.monotonic() + (0 if first else self._backoff)
                self._backoff = BACKOFF if first else min(self._backoff * 2, MAX_BACKOFF)
                raise Unreachable(f"{self.target.where}: unreachable since {_clock(self.unreachable_since)} "
                                  f"({quoted(str(exc) or type(exc).__name__, 200)})",  # the server's words too
                                  self.unreachable_since) from None  # fmt: skip
            self.unreachable_since = None
            self._backoff = BACKOFF
            return result

    def _changing(self, make: Callable[[Any], Awaitable[T]], sent: threading.Event) -> T:
        """``call(make)`` for a call that changes the far side, where ``make`` sets ``sent`` just before it sends the
        change: an ``Unreachable`` after that is ``LostUnderWay``; before it (the link backing off, the connect
        failing) nothing was sent."""
        try:
            return self.call(make)
        except Unreachable as exc:
            if not sent.is_set():
                raise
            raise LostUnderWay(str(exc), exc.since) from None

    def _file_failed(self, exc: Any, path: str, doing: str) -> Exception:
        """What the server's SFTP status ``exc`` for ``path`` raises: named as a local file's failure is, what was
        being done and on which file (``me@box:/s/session.jsonl: cannot read (Permission denied)``), the server's
        words quoted (``FileGone`` when it says the file is not there); a status that says the link is lost as it is
        (``call`` calls the machine unreachable)."""
        import asyncssh

        if _link_lost(exc):
            return exc
        said = f"{quoted_path(str(self.target.at(path)))}: cannot {doing} ({quoted(exc.reason)})"
        return FileGone(said) if isinstance(exc, asyncssh.SFTPNoSuchFile) else TapedeckError(said)

    async def _regular(self, sftp: Any, path: str, known: RemoteStat | None = None) -> None:
        """Raise ``NotRegular`` when ``path`` (through links, as an open goes) is no regular file: asked before it
        is opened, since the server's open of a FIFO waits for a writer, and the whole connection with it (until
        ``CALL_TIMEOUT``). ``known``: its stat as the caller took it a moment ago, trusted instead of asking again."""
        if known is None:
            attrs = await sftp.stat(path)
            known = RemoteStat(0, 0, _kind(attrs), _fmt(attrs))
        if known.kind != "file":
            raise NotRegular(self.target.at(path), known.fmt)

    async def _open(self, sftp: Any, path: str, patient: bool = False) -> Any:
        """``path`` opened for reading. SFTP has no open that does not wait, and the server's open of a FIFO swapped
        in since its stat waits for a writer, with every later request of its session behind it (OpenSSH's server
        answers one request after another: a stat of the path too). An open still waiting after ``OPEN_WAIT`` has its
        connection dropped, not called unreachable, and ``_Reopen`` raised, for the call to be asked again on a new
        connection (``_anew``), where the path's stat before the open decides what it is: the link keeps one SFTP
        session, and asks nothing on another. ``patient`` (that second time): the open is waited for (a regular file
        slow to open: a slow disk, a loaded machine), within the call's ``CALL_TIMEOUT``. The server's process that
        waits in the first open is left to the far machine."""
        import asyncio

        opening = asyncio.ensure_future(sftp.open(path, "rb"))
        try:
            if not patient:
                await asyncio.wait({opening}, timeout=OPEN_WAIT)
                if not opening.done():
                    # dropped unless another open of the batch did, or it was made anew since
                    if sftp is self._sftp:
                        self._drop()
                    raise _Reopen(path)
            return await opening
        finally:
            opening.cancel()  # nothing when it is done; else the open is no longer waited for

    async def _anew(self, sftp: Any, go: Callable[[Any, bool], Awaitable[T]]) -> T:
        """``go(sftp, False)``; when one of its opens dropped the connection under it (``_open``: the call's other
        requests, which waited behind that open, are cut short too), ``go(sftp, True)`` on a new connection, once."""
        try:
            return await go(sftp, False)
        except Exception:
            if sftp is self._sftp:
                raise
            return await go(await self._sftp_client(), True)

    async def _checked_read(self, sftp: Any, path: str, read: Callable[[Any], Awaitable[T]],
                            known: RemoteStat | None = None, unlinked: bool = False,
                            patient: bool = False) -> tuple[T, str]:  # fmt: skip
        """``read(f)`` of ``path`` opened by the checked open, and the kind of what was read: the stat that makes
        sure it is a regular file first (``_regular``; ``known`` stands for it), the open that gives up a FIFO
        swapped in since (``_open``, ``patient`` as there), then, in the read's round trip, a look at what was opened
        (the path's ``lstat`` with ``unlinked``, else the handle's ``fstat``): a FIFO a writer holds open opens at
        once, and is closed unread (``NotRegular``). The kind is ``link`` only with ``unlinked``, when the path is a
        link now."""
        import asyncio

        await self._regular(sftp, path, known)
        async with await self._open(sftp, path, patient) as f:
            looked = sftp.lstat(path) if unlinked else f.stat()
            now, data = await asyncio.gather(looked, read(f), return_exceptions=True)
            if isinstance(now, BaseException):
                raise now
            if _kind(now) not in ("file", "link"):  # swapped in since the stat (a read of it fails, or waits)
                raise NotRegular(self.target.at(path), _fmt(now))
            if isinstance(data, BaseException):
                raise data
        return data, _kind(now)

    def _drop(self) -> None:
        conn, self._conn, self._sftp = self._conn, None, None
        if conn is not None:
            conn.abort()

    def close(self) -> None:
        """Close the connection."""
        import asyncio

        with self._lock:
            if self._conn is not None:
                asyncio.run_coroutine_threadsafe(self._close(), _loop()).result(CALL_TIMEOUT)

    async def _close(self) -> None:
        conn, self._conn, self._sftp = self._conn, None, None
        if conn is not None:
            conn.close()
            await conn.wait_closed()

    # SFTP calls ---------------------------------------------------------------------------------------------
    def stat(self, path: str, follow: bool = True, own: bool = False) -> RemoteStat | None:
        """The file's stat (``follow=False``: of a link itself; ``own`` as ``stat_many``'s), or None when it does not
        exist."""
        return self.stat_many([path], follow, own=own)[0]

    def _each(self, paths: Sequence[str], one: Callable[[Any, str], Awaitable[T]]) -> list[T]:
        """``one(sftp, path)`` for every path, ``IN_FLIGHT`` requests in flight at once: one round trip for a batch
        that small, not one per path."""

        async def go(sftp: Any) -> list[T]:
            return await _bounded([one(sftp, path) for path in paths])

        return self.call(go) if paths else []

    def read(self, path: str, offset: int, length: int, unlinked: bool = False, known: RemoteStat | None = None) -> bytes:
        """Up to ``length`` bytes of the file from ``offset`` (fewer at its end; ``unlinked`` and ``known`` as
        ``read_ranges``)."""
        return self.read_ranges(path, [(offset, length)], unlinked, known)[0]

    def read_ranges(self, path: str, ranges: Sequence[tuple[int, int]], unlinked: bool = False,
                    known: RemoteStat | None = None) -> list[bytes]:  # fmt: skip
        """The bytes of each ``(offset, length)`` range of the file (fewer at its end), read through one open
        handle with every request in flight at once: one round trip for them all, after the stat that makes sure it
        is a regular file (``NotRegular`` when it is not: it is never opened), which a caller that passes what its
        own stat of a moment ago found skips (``known``: a request and a round trip fewer). With ``unlinked`` (the
        path was no symbolic link when its stat was taken) none are returned (empty) when the path is a link once it
        is open: SFTP opens through links and gives no inode to tell files apart, so the bytes may be another file's
        than the one that stat measured (a local read's ``O_NOFOLLOW`` or ``fstat``).

        A FIFO swapped in after that stat: its open is given up once it waited ``OPEN_WAIT``, and the read asked
        again on a new connection, whose stat says what the path is (``_open``; a regular file slow to open is
        then waited for); one a writer holds open opens at once, and is told from a file in the reads' round trip
        (the path's ``lstat`` with ``unlinked``, else the open handle's ``fstat``): closed, nothing of it returned
        (``NotRegular``)."""

        async def one(f: Any, offset: int, length: int) -> bytes:
            parts = []
            done = 0
            while done < length:
                chunk = await f.read(min(READ_CHUNK, length - done), offset + done)
                if not chunk:
                    break
                parts.append(chunk)
                done += len(chunk)
            return b"".join(parts)

        async def every(f: Any) -> list[bytes]:
            import asyncio

            return list(await asyncio.gather(*(one(f, offset, length) for offset, length in ranges)))

        async def once(sftp: Any, again: bool) -> list[bytes]:
            import asyncssh

            seen = None if again else known  # asked again: stat'ed again, ``known`` being from before
            try:
                data, kind = await self._checked_read(sftp, path, every, seen, unlinked, again)
            except asyncssh.SFTPError as exc:
                raise self._file_failed(exc, path, "read") from None
            except NotRegular as exc:
                if not again:
                    raise
                raise NotRegular(self.target.at(path), exc.fmt, f"{special_file(exc.fmt)}, not a regular file, swapped "
                                 "in: its open waited for a writer, given up, the connection made anew") from None  # fmt: skip
            return [b"" for _ in ranges] if kind == "link" else data

        async def go(sftp: Any) -> list[bytes]:
            return await self._anew(sftp, once)

        data = self.call(go)
        self.bytes_read += sum(map(len, data))
        return data

    def read_files(self, paths: Sequence[str], limit: int, refused: dict[str, str] | None = None) -> list[bytes | None]:
        """The first ``limit`` bytes of each file (None where it cannot be opened: it is not there, or the server
        refuses it, or it is no regular file and is not opened, whose reason goes in ``refused`` by path when given),
        ``IN_FLIGHT`` at a time, after their stats. Reads to the end of file whatever its stat says
        (``/proc`` files show size 0)."""
        return self.read_files_and_links(paths, limit, [], refused)[0]

    def read_files_and_links(
        self, paths: Sequence[str], limit: int, links: Sequence[str], refused: dict[str, str] | None = None
    ) -> tuple[list[bytes | None], list[str | None]]:
        """``read_files(paths, limit, refused)`` and ``readlinks(links)`` in one round trip (``IN_FLIGHT`` at once); a
        link the server will not read is raised, or, when ``refused`` is given, None with its reason there. Each file is read through the checked open (``_checked_read``), as a log's reads are: a FIFO swapped in after
        its stat is refused, not waited for (nor a writer's bytes read for the file's)."""
        import asyncssh

        async def one(sftp: Any, path: str, again: bool) -> bytes | None:
            try:
                data, _ = await self._checked_read(sftp, path, lambda f: f.read(limit, 0), patient=again)
                return bytes(data)
            except asyncssh.SFTPNoSuchFile:
                return None
            except (asyncssh.SFTPPermissionDenied, NotRegular) as exc:
                if refused is not None:
                    refused[path] = exc.reason if isinstance(exc, asyncssh.SFTPError) else exc.why
                return None
            except asyncssh.SFTPError as exc:
                raise self._file_failed(exc, path, "read") from None

        async def batch(sftp: Any, again: bool) -> tuple[list[bytes | None], list[str | None]]:
            found: list[Any] = await _bounded([*(one(sftp, path, again) for path in paths),
                                               *(self._readlink(sftp, path, refused) for path in links)])  # fmt: skip
            return found[: len(paths)], found[len(paths) :]

        async def go(sftp: Any) -> tuple[list[bytes | None], list[str | None]]:
            return await self._anew(sftp, batch)  # asked again: a FIFO swapped in is refused by its stat

        data, named = self.call(go) if paths or links else ([], [])
        self.bytes_read += sum(len(d) for d in data if d)
        return data, named

    def stat_many(self, paths: Sequence[str], follow: bool = True, refused: dict[str, str] | None = None,
                  own: bool = False) -> list[RemoteStat | None]:  # fmt: skip
        """``stat`` of every path (None where none exists), ``IN_FLIGHT`` requests in flight at a time: one round
        trip for that many, not one per path. A stat the server refuses (not the link: a directory on the way it
        may not search) is raised, or, when ``refused`` is given, None with the server's reason in ``refused`` by
        path, so that one path refused does not fail the others. With ``own`` (and ``follow``), whether each path is itself a link
        is asked too (``linked``: one more request each, in the same round trip)."""
        import asyncssh

        async def one(sftp: Any, path: str) -> RemoteStat | None:
            import asyncio

            try:  # through links, the path's own kind when asked (first: a read compares it, ``read_ranges``)
                if follow and own:
                    itself, attrs = await asyncio.gather(sftp.lstat(path), sftp.stat(path))
                else:
                    itself, attrs = None, await (sftp.stat(path) if follow else sftp.lstat(path))
            except asyncssh.SFTPNoSuchFile:
                return None
            except asyncssh.SFTPError as exc:
                if refused is None or _link_lost(exc):
                    raise self._file_failed(exc, path, "stat") from None
                refused[path] = exc.reason
                return None
            linked = _kind(itself) == "link" if itself is not None else None
            return RemoteStat(attrs.size or 0, int((attrs.mtime or 0) * 1000), _kind(attrs), _fmt(attrs), linked)

        return self._each(paths, one)

    def readlinks(self, paths: Sequence[str]) -> list[str | None]:
        """What each link names (None where the path is no link, or is not there), ``IN_FLIGHT`` at a time; any
        other failure is raised, naming the path (``_readlink``)."""
        return self._each(paths, self._readlink)

    async def _readlink(self, sftp: Any, path: str, refused: dict[str, str] | None = None) -> str | None:
        """What the link at ``path`` names; None where it is no link or is not there. The server's word for "no
        link" varies (OpenSSH's says "bad message", of its ``EINVAL``), so a failed readlink of a path that is there
        is told from a refusal by the path's ``lstat`` (one request more, on that path only): no link, None; else
        the failure (permission denied, an I/O error) is raised naming the path, or, with ``refused``, None and the
        server's reason in ``refused`` by path. A lost connection is raised as it is (``call``: unreachable)."""
        import asyncssh

        try:
            return str(await sftp.readlink(path))
        except asyncssh.SFTPNoSuchFile:
            return None
        except asyncssh.SFTPError as exc:
            failed = exc
        if not _link_lost(failed):
            try:
                itself = await sftp.lstat(path)
            except asyncssh.SFTPNoSuchFile:
                return None  # gone since
            except asyncssh.SFTPError as exc:
                itself, failed = None, exc if _link_lost(exc) else failed
            if itself is not None and _kind(itself) != "link":
                return None
        if refused is not None and not _link_lost(failed):
            refused[path] = failed.reason
            return None
        raise self._file_failed(failed, path, "read the link") from None

    def realpaths(self, paths: Sequence[str]) -> list[str | None]:
        """Each path with every link resolved (None where it does not resolve), ``IN_FLIGHT`` at a time."""
        import asyncssh

        async def one(sftp: Any, path: str) -> str | None:
            try:
                return str(await sftp.realpath(path))
            except asyncssh.SFTPError:
                return None

        return self._each(paths, one)

    def listdir(self, path: str, skipped: list[SkipNote] | None = None) -> list[tuple[str, str]]:
        """``(name, kind)`` of each entry of the directory (empty when it does not exist; see ``listdir_many``)."""
        return self.listdir_many([path], skipped)[0]

    def listdir_many(self, paths: Sequence[str], skipped: list[SkipNote] | None = None) -> list[list[tuple[str, str]]]:
        """``listdir`` of every path, ``IN_FLIGHT`` requests in flight at a time. A directory the far side refuses to list
        (permission denied, not a directory) is empty and noted in ``skipped`` (``skipped PATH: reason``, as
        ``core.log.sessions`` notes a local one) when given; else the refusal is raised."""
        import asyncssh

        async def one(sftp: Any, path: str) -> list[tuple[str, str]]:
            try:
                entries = await sftp.readdir(path)
            except asyncssh.SFTPNoSuchFile:
                return []
            except asyncssh.SFTPError as exc:
                if skipped is None or _link_lost(exc):
                    raise self._file_failed(exc, path, "list") from None
                where = self.target.at(path)
                skipped.append(skip_note(UNLISTED, where, f"{quoted_path(str(where))}: {quoted(exc.reason)}"))
                return []
            return sorted((e.filename, _kind(e.attrs)) for e in entries if e.filename not in (".", ".."))

        return self._each(paths, one)

    def append(self, path: str, data: bytes, mode: int) -> None:
        """Append ``data`` to the file as one write (created with ``mode``), never through a symbolic link; a
        torn last line gets a newline first; flushed to disk before returning. ``LostUnderWay`` when the link went
        once the write was sent."""
        import asyncssh

        sent = threading.Event()

        async def go(sftp: Any) -> None:
            try:
                attrs = await sftp.lstat(path)
            except asyncssh.SFTPNoSuchFile:
                attrs = None
            except asyncssh.SFTPError as exc:
                raise self._file_failed(exc, path, "stat") from None
            if attrs is not None and _kind(attrs) != "file":
                raise TapedeckError(f"{quoted_path(str(self.target.at(path)))}: the control inbox is not a regular file "
                                    f"(a {_kind(attrs)}); refusing to write through it")  # fmt: skip
            body = data
            flags = asyncssh.FXF_READ | asyncssh.FXF_WRITE | asyncssh.FXF_APPEND | asyncssh.FXF_CREAT
            try:
                async with sftp.open(path, flags, asyncssh.SFTPAttrs(permissions=mode), encoding=None) as f:
                    size = (await f.stat()).size or 0
                    if size and await f.read(1, size - 1) != b"\n":
                        body = b"\n" + data
                    sent.set()
                    await f.write(body)
                    await f.fsync()
            except asyncssh.SFTPError as exc:
                raise self._file_failed(exc, path, "append to") from None

        self._changing(go, sent)


    def run(self, command: str, stdin: bytes) -> tuple[int | None, str]:
        """Run ``command`` (a line for the login shell) on the machine with ``stdin`` as its input; its exit status
        (None when it ended without one) and what it wrote on stderr. ``LostUnderWay`` when the link went (or the
        call gave up) once the command was sent; ``ChannelRefused`` when the machine would not open its channel."""
        import asyncssh

        sent = threading.Event()

        async def go(_sftp: Any) -> tuple[int | None, str]:
            sent.set()
            try:
                done = await self._conn.run(command, input=stdin, encoding=None, check=False)
            except asyncssh.ChannelOpenError as exc:  # refused before the command went: it never ran
                raise ChannelRefused(f"{self.target.where} would not open a channel to run a command "
                                     f"({quoted(exc.reason)})") from None  # fmt: skip
            return done.exit_status, bytes(done.stderr or b"").decode("utf-8", "replace").strip()

        return self._changing(go, sent)


    def output(self, command: str) -> bytes | None:
        """What ``command`` (a line for the login shell) writes on stdout when it exits 0; None when it fails, or the
        machine runs no command for this login (an SFTP-only account): never a reason to call the link down."""
        import asyncssh

        async def go(_sftp: Any) -> bytes | None:
            try:
                done = await self._conn.run(command, encoding=None, check=False, stdin=asyncssh.DEVNULL)
            except asyncssh.ChannelOpenError:
                return None
            return bytes(done.stdout or b"") if done.exit_status == 0 else None

        return self.call(go)


def _link_lost(exc: Any) -> bool:
    """Whether an SFTP status says the connection is gone, not that the server refused a file."""
    import asyncssh

    return exc.code in (asyncssh.sftp.FX_NO_CONNECTION, asyncssh.sftp.FX_CONNECTION_LOST)


async def _bounded(calls: Sequence[Awaitable[T]]) -> list[T]:
    """What each of ``calls`` returns, in their order, as ``asyncio.gather`` gives it, with at most ``IN_FLIGHT`` of
    them under way at once (each is started as one before it ends)."""
    import asyncio

    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one(call: Awaitable[T]) -> T:
        async with gate:
            return await call

    return list(await asyncio.gather(*(one(call) for call in calls)))


def _clock(ms: int) -> str:
    """``ms`` (this machine's clock) as a date, or what it is when no clock gives it."""
    return utc_time(ms) or IMPLAUSIBLE


_LINKS: dict[tuple[str | None, str, int | None], SshLink] = {}


def link_for(target: RemoteTarget, port: int | None = None, **options: Any) -> SshLink:
    """The one link to ``target``'s machine (shared by every path on it)."""
    key = (target.user, target.host, port)
    if key not in _LINKS:
        _LINKS[key] = SshLink(target, port=port, **options)
    return _LINKS[key]


def close_links() -> None:
    """Close every link (the end of a run, or of a test)."""
    while _LINKS:
        _LINKS.popitem()[1].close()
