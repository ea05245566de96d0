"""A remote log followed over SFTP through the real OpenSSH server: raw and zstd logs decoded as the local tailer
decodes them from their new bytes only, and a log rewritten in place (at the same size or larger, which no stat
over SFTP shows) noticed from its bytes and re-read with ``log-reset``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.log.reader import read_log
from core.log.tail import Tailer
from core.remote import tail as remote_tail
from core.remote.link import RemoteStat, Unreachable, link_for
from core.remote.tail import RemoteTailer
from core.remote.target import RemoteTarget
from core.shared.errors import TapedeckError
from tests.log.helpers import HEADER, number, raw_log, user, zstd_log
from tests.remote.sshd import Sshd


def _log(session: str, texts: list[str], compressed: bool = False) -> bytes:
    header = {**HEADER, "id": session}
    events = number([user(text) for text in texts])
    return zstd_log(events, batch=2, header=header) if compressed else raw_log(events, header=header)


def _tailer(path: Path) -> RemoteTailer:
    target = RemoteTarget(None, "testbox", str(path))
    return RemoteTailer(link_for(target), target)


def _texts(events: list[dict]) -> list[str]:
    return [e["data"]["content"][0]["text"] for e in events if e["type"] == "user/message"]


@pytest.mark.parametrize("compressed", [False, True])
def test_a_growing_remote_log_is_decoded_from_its_new_bytes_only(sshd: Sshd, tmp_path: Path, compressed: bool) -> None:
    sshd.trust()
    path = tmp_path / ("session.jsonl.zstd" if compressed else "session.jsonl")
    texts = ["one", "two", "three", "four"]
    first, grown = _log("a", texts[:2], compressed), _log("a", texts, compressed)
    assert grown.startswith(first)  # an append (a zstd writer adds whole frames)
    path.write_bytes(first)
    tailer = _tailer(path)
    update = tailer.poll()
    assert update.header is not None and _texts(update.events) == ["one", "two"]
    path.write_bytes(grown)
    before = tailer.link.bytes_read
    update = tailer.poll()
    assert _texts(update.events) == ["three", "four"] and not update.reset
    assert [e["seq"] for e in update.events] == [e["seq"] for e in Tailer(path).poll().events][2:]
    checked = remote_tail.OVERLAP + remote_tail.HEAD_CHECK  # the consumed bytes compared, not read again
    assert tailer.link.bytes_read - before == len(grown) - len(first) + checked


def test_a_remote_log_followed_from_its_end_is_never_read_from_its_start(sshd: Sshd, tmp_path: Path) -> None:
    """A control wait follows the log from its end (``follow_from_end``). The tailer kept the first bytes it consumed
    there as the log's head, and the next poll that saw the log grow compared them with the file's first bytes:
    they differed, so a log merely appended to was taken for rewritten, reset and read again whole (a flaky bound
    in test_remote_fleet.py's control test, whose wait polled more than once under load)."""
    sshd.trust()
    path = tmp_path / "session.jsonl"
    texts = ["one", "two", "three", "four", "five"]
    logs = [_log("a", texts[:n]) for n in (2, 3, 5)]
    path.write_bytes(logs[0])
    tailer = _tailer(path)
    tailer.follow_from_end({**HEADER, "id": "a"})
    assert not tailer.poll()
    with open(path, "ab") as f:
        f.write(logs[1][len(logs[0]) :])
    assert _texts(tailer.poll().events) == ["three"]
    with open(path, "ab") as f:
        f.write(logs[2][len(logs[1]) :])
    before = tailer.link.bytes_read
    update = tailer.poll()
    assert _texts(update.events) == ["four", "five"] and not update.reset and not update.diagnostics
    checked = remote_tail.OVERLAP + remote_tail.HEAD_CHECK  # the consumed bytes compared, not read again
    assert tailer.link.bytes_read - before == len(logs[2]) - len(logs[1]) + checked


@pytest.mark.parametrize("same_second", [False, True])
def test_a_remote_log_rewritten_in_place_at_the_same_size_is_re_read(
    sshd: Sshd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, same_second: bool
) -> None:
    sshd.trust()
    path = tmp_path / "session.jsonl"
    path.write_bytes(_log("a", ["first try", "aaaa"]))
    if same_second:
        monkeypatch.setattr(remote_tail, "SETTLE_SECONDS", 0.0)  # the file counts as settled at once
    tailer = _tailer(path)
    assert _texts(tailer.poll().events) == ["first try", "aaaa"]
    mtime = path.stat().st_mtime_ns
    rewritten = _log("b", ["other one", "bbbb"])
    assert len(rewritten) == path.stat().st_size
    path.write_bytes(rewritten)  # the same inode, the same size
    if same_second:  # the same whole-second mtime, as a rewrite within the second of the last write leaves it
        os.utime(path, ns=(mtime, mtime))
    else:
        os.utime(path, ns=(mtime + 2_000_000_000, mtime + 2_000_000_000))
    update = tailer.poll()
    assert update.reset and [d.code for d in update.diagnostics] == ["log-reset"]
    assert update.header is not None and update.header["id"] == "b"
    assert _texts(update.events) == ["other one", "bbbb"]
    assert not tailer.poll()  # settled: nothing more, no second reset


@pytest.mark.parametrize("compressed", [False, True])
def test_a_remote_log_rewritten_in_place_larger_is_re_read_not_merged(sshd: Sshd, tmp_path: Path,
                                                                       compressed: bool) -> None:  # fmt: skip
    sshd.trust()
    path = tmp_path / ("session.jsonl.zstd" if compressed else "session.jsonl")
    path.write_bytes(_log("a", ["one", "two"], compressed))
    tailer = _tailer(path)
    assert _texts(tailer.poll().events) == ["one", "two"]
    with open(path, "r+b") as f:  # truncate and regrow through one descriptor: never seen shorter
        f.truncate(0)
        f.write(_log("b", ["uno", "dos", "tres", "quatro", "cinco"], compressed))
    update = tailer.poll()
    assert update.reset and [d.code for d in update.diagnostics] == ["log-reset"]
    assert update.header is not None and update.header["id"] == "b"
    assert _texts(update.events) == ["uno", "dos", "tres", "quatro", "cinco"]
    assert [e["seq"] for e in update.events] == [e["seq"] for e in read_log(path).events]


class _Probe:
    """The tailer's real link, noting what the tailer's ``unreachable`` says whenever the tailer stats the file."""

    def __init__(self, tailer: RemoteTailer) -> None:
        self.link, self.tailer, self.seen = tailer.link, tailer, []

    def __getattr__(self, name: str) -> object:
        return getattr(self.link, name)

    def stat(self, *args: object, **kwargs: object) -> object:
        self.seen.append(self.tailer.unreachable)
        return self.link.stat(*args, **kwargs)


def test_a_lost_machine_stays_unreachable_while_the_next_poll_runs(sshd: Sshd, tmp_path: Path) -> None:
    """A reader beside the poller (the alert feed) sees the last finished poll's verdict, never a poll half done:
    the flag was cleared when a poll began, so a reader that looked during each poll saw the machine as back."""
    sshd.trust()
    path = tmp_path / "session.jsonl"
    path.write_bytes(_log("a", ["one"]))
    tailer = _tailer(path)
    assert tailer.poll().header is not None and tailer.unreachable is None
    sshd.kill()
    tailer.poll()
    lost = tailer.unreachable
    assert lost is not None
    probe = _Probe(tailer)
    tailer.link = probe  # type: ignore[assignment]
    probe.link._retry_at = 0.0  # the next call tries the machine again now
    tailer.poll()
    assert probe.seen == [lost] and tailer.unreachable is not None



class _Machine:
    """A stand-in for the link to a machine, serving a local file; the read calls numbered in ``lost`` fail as a
    dropped connection does."""

    def __init__(self) -> None:
        self.lost: set[int] = set()
        self.reads = 0

    def stat(self, path: str, follow: bool = True, own: bool = False) -> RemoteStat | None:
        st = os.stat(path)
        return RemoteStat(st.st_size, st.st_mtime_ns // 1_000_000, "file")

    def read(self, path: str, offset: int, length: int, unlinked: bool = False, known: RemoteStat | None = None) -> bytes:
        return self.read_ranges(path, [(offset, length)])[0]

    def read_ranges(self, path: str, ranges: list[tuple[int, int]], unlinked: bool = False, known: RemoteStat | None = None) -> list[bytes]:
        self.reads += 1
        if self.reads in self.lost:
            raise Unreachable("testbox: the connection was lost", 0)
        data = Path(path).read_bytes()
        return [data[offset : offset + length] for offset, length in ranges]


def _followed_from_end(tmp_path: Path, machine: _Machine) -> tuple[Path, list[bytes], RemoteTailer]:
    """A log of two lines, its growth to three (``logs``), and a tailer through ``machine`` following it from its
    end."""
    path = tmp_path / "session.jsonl"
    logs = [_log("a", ["one", "two", "three"][:n]) for n in (2, 3)]
    path.write_bytes(logs[0])
    tailer = RemoteTailer(machine, RemoteTarget(None, "testbox", str(path)))  # type: ignore[arg-type]
    tailer.follow_from_end({**HEADER, "id": "a"})
    return path, logs, tailer


class _Refusing(_Machine):
    """``_Machine`` whose read calls numbered in ``refused`` the server refuses, as it does a file it will not let
    us read."""

    refused: set[int] = set()

    def read_ranges(self, path: str, ranges: list[tuple[int, int]], unlinked: bool = False, known: RemoteStat | None = None) -> list[bytes]:
        if self.reads + 1 in self.refused:
            self.reads += 1
            raise TapedeckError(f"testbox:{path}: cannot read (Permission denied)")
        return super().read_ranges(path, ranges)


def test_a_connection_lost_as_a_log_followed_from_its_end_starts_does_not_read_it_from_its_start(
    tmp_path: Path,
) -> None:
    """75d86d5 reads the log's head and last bytes over the link when a tailer following from a point starts there,
    after the start point was already cleared: a connection lost on that read left the tailer with no decoder at
    the point, and the next poll read the log from byte 0, its old events decoded again as new (what a control wait
    follows, over SSH). The point is kept until the start has gone through, so the next poll starts there again."""
    machine = _Machine()
    path, logs, tailer = _followed_from_end(tmp_path, machine)
    assert not tailer.poll() and machine.reads == 0  # nothing after the end yet: the stat alone
    path.write_bytes(logs[1])
    machine.lost = {2}  # the new line is read (1), then the read of the head and last bytes (2) is lost
    lost = tailer.poll()
    assert tailer.unreachable is not None and not lost.events
    update = tailer.poll()  # the old events are not decoded again: only the line after the point
    assert tailer.unreachable is None and _texts(update.events) == ["three"] and not update.reset, update


def test_a_poll_with_no_answer_yet_never_lets_stalled_run_ahead_of_unreachable(tmp_path: Path) -> None:
    """A link that stops answering holds the view's poll for up to the call's timeout, and ``unreachable`` says so
    only when it gives up; meanwhile the alert feed ticked with the file's last change as the last poll that
    answered saw it, and raised ``stalled`` for a log it could not read: the operator was told the agent stalled,
    then that the machine was lost. The clock rules now stand at the last answer (the start of the last poll that
    got one), so nothing is judged for the time no answer covers."""
    import threading

    from core.alerts.follow import now_ms
    from core.control.config import validate_config
    from core.control.host_state import HostState
    from core.fleet.alerts import RemoteFedWatch
    from core.remote.live import RemoteLog

    class Hung(_Machine):  # the second stat waits for ``go``, then fails as a link that gave up
        asked, go = threading.Event(), threading.Event()

        def stat(self, path: str, follow: bool = True, own: bool = False) -> RemoteStat | None:
            if self.reads:
                self.asked.set()
                self.go.wait(60)
                raise Unreachable("testbox: unreachable since now (no answer)", 0)
            return super().stat(path, follow)

    path = tmp_path / "session.jsonl"
    path.write_bytes(_log("a", ["one"]))
    remote = RemoteLog(RemoteTarget(None, "testbox", str(path)))
    remote.host = HostState("running", os.getpid(), now_ms())
    tailer = remote.tailer(None, None)
    tailer.link = Hung()  # type: ignore[assignment]
    assert tailer.poll().header is not None and tailer.unreachable is None
    watch = RemoteFedWatch(validate_config({"alerts": {"stalled": {"seconds": 3}}}), remote)
    hung = threading.Thread(target=tailer.poll)
    hung.start()
    try:
        assert Hung.asked.wait(60)  # the poll is under way, waiting for the link
        assert [a.cause for a in watch.tick(now_ms() + 60_000)] == []  # a minute with no answer: not stalled
    finally:
        Hung.go.set()
        hung.join()
    assert tailer.unreachable is not None
    assert [a.cause for a in watch.engine.reachable(False, now_ms(), str(tailer.unreachable))] == ["unreachable"]
    assert watch.tick(now_ms() + 120_000) == []


def test_a_read_the_server_refuses_is_a_read_error_as_locally_not_the_end_of_the_follow(tmp_path: Path) -> None:
    """A local log that cannot be read at a poll gives a ``read-error`` diagnostic and is read on at the next one;
    over SFTP the server's refusal of a read (the file removed between the stat and the read, its permissions
    changed) was a plain TapedeckError out of ``poll``: the view ended on its error screen, the fleet stopped.
    It is now the same diagnostic, and the next poll goes on from where the reader stood."""
    path = tmp_path / "session.jsonl"
    logs = [_log("a", ["one", "two", "three"][:n]) for n in (2, 3)]
    path.write_bytes(logs[0])
    machine = _Refusing()
    tailer = RemoteTailer(machine, RemoteTarget(None, "testbox", str(path)))  # type: ignore[arg-type]
    assert _texts(tailer.poll().events) == ["one", "two"]
    path.write_bytes(logs[1])
    machine.refused = {machine.reads + 1, machine.reads + 2}  # the rewrite check's read, then the read of the line
    update = tailer.poll()
    assert not update.events and [d.code for d in update.diagnostics] == ["read-error"], update
    assert "cannot read (Permission denied)" in update.diagnostics[0].message
    assert tailer.unreachable is None
    assert _texts(tailer.poll().events) == ["three"]


def test_a_refused_read_where_a_follow_from_the_end_starts_is_a_read_error_not_a_raise(tmp_path: Path) -> None:
    """``control --wait`` follows the log from its end (``follow_from_end``): the first poll past it reads the byte
    before the start point and the line there (``_started``), then the rewrite checks' bytes (``resume``). A read
    the server refused there was a TapedeckError out of ``poll``, where the follow's own reads give a ``read-error``
    diagnostic since the last commits; it is that diagnostic now, and the next poll starts there again."""
    machine = _Refusing()
    path, logs, tailer = _followed_from_end(tmp_path, machine)
    path.write_bytes(logs[1])
    machine.refused = {1, 3}  # the read of the line at the start point; then, once that one went through, resume's
    for _ in range(2):
        update = tailer.poll()
        assert not update.events and [d.code for d in update.diagnostics] == ["read-error"], update
        assert "cannot read (Permission denied)" in update.diagnostics[0].message
    assert _texts(tailer.poll().events) == ["three"]


def test_a_link_swapped_in_for_a_remote_log_after_its_stat_is_not_read_through(sshd: Sshd, tmp_path: Path) -> None:
    """A poll stats the log, then reads the bytes that stat measured; SFTP opens through links and gives no inode, so
    a log replaced by a link to another file between the two was read through it: the other file's first bytes,
    cut at the old log's size, decoded as the log (a local read opens the file and checks it with ``fstat``). The
    path is looked at again once open, in the reads' round trip: a link that was not there at the stat gives no
    bytes, and the next poll, which stats the link, reads the file it names whole, as a replaced log."""
    sshd.trust()
    path = tmp_path / "session.jsonl"
    path.write_bytes(_log("a", ["one"]))
    other = tmp_path / "other.jsonl"
    other.write_bytes(_log("b", [f"b{n}" for n in range(40)]))
    tailer = _tailer(path)
    assert _texts(tailer.poll().events) == ["one"]
    with path.open("ab") as f:
        f.write(_log("a", ["one", "two"])[len(_log("a", ["one"])):])
    stat = tailer._stat

    def swapped_after_the_stat() -> object:
        st = stat()
        (tmp_path / "link").symlink_to(other)
        (tmp_path / "link").rename(path)
        tailer._stat = stat  # type: ignore[method-assign]
        return st

    tailer._stat = swapped_after_the_stat  # type: ignore[method-assign]
    update = tailer.poll()
    assert not any(text.startswith("b") for text in _texts(update.events)), _texts(update.events)
    update = tailer.poll()  # the link is stat'ed: the file it names is read whole
    assert _texts(update.events) == [f"b{n}" for n in range(40)], _texts(update.events)


def test_only_a_stat_that_asks_whether_the_path_is_a_link_sends_an_lstat_beside_it(
    sshd: Sshd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """7d809da1 made every stat through links ask ``lstat`` beside ``stat``, for the tailer to know whether its log
    was a link: the listings and host-state stats, which never look, doubled their SFTP requests at each poll. Only
    a stat that asks (``own``) sends one; the tailer's and the fleet's prefetch for it do."""
    import asyncssh

    sshd.trust()
    path = tmp_path / "session.jsonl"
    path.write_bytes(_log("a", ["one"]))
    asked: list[object] = []
    lstat = asyncssh.SFTPClient.lstat

    async def counted(self: asyncssh.SFTPClient, *args: object, **kwargs: object) -> object:
        asked.append(args[0])
        return await lstat(self, *args, **kwargs)

    monkeypatch.setattr(asyncssh.SFTPClient, "lstat", counted)
    link = link_for(RemoteTarget(None, "testbox", str(path)))
    [plain] = link.stat_many([str(path)])
    assert (plain is not None and plain.linked is None, asked) == (True, [])
    [own] = link.stat_many([str(path)], own=True)
    assert (own is not None and own.linked is False, len(asked)) == (True, 1)
    tailer = _tailer(path)
    assert _texts(tailer.poll().events) == ["one"]
    assert len(asked) == 3 and tailer._unlinked  # the tailer's stat asked, and its read looked again once open
