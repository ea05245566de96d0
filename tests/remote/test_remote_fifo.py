"""A FIFO where a remote file was (an attacker's swap, or a mistake) is refused by the link before it is opened,
through the real OpenSSH server: the server's open of a FIFO waits for a writer, and the whole connection (every
session of the machine) waited behind it until the call gave up, 20 s later, calling the machine unreachable."""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from core.remote.link import NotRegular, link_for
from core.remote.target import RemoteTarget
from tests.procs import process_gone
from tests.remote.sshd import MISSING, Sshd

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def _fifo_beside_a_log(tmp_path: Path) -> tuple[RemoteTarget, RemoteTarget]:
    """A log and a FIFO swapped in for another one, on the test's machine."""
    (tmp_path / "s1").mkdir()
    (tmp_path / "s1" / "session.jsonl").write_bytes(b'{"type":"session","version":0,"id":"s1"}\n')
    (tmp_path / "s2").mkdir()
    os.mkfifo(tmp_path / "s2" / "session.jsonl")
    return (RemoteTarget(None, "testbox", str(tmp_path / "s1" / "session.jsonl")),
            RemoteTarget(None, "testbox", str(tmp_path / "s2" / "session.jsonl")))  # fmt: skip


def test_a_fifo_read_over_the_link_is_refused_before_it_is_opened(sshd: Sshd, tmp_path: Path) -> None:
    """A read of a FIFO is refused with words that say why, and the connection is left as it was: not called
    unreachable, and the next call on it answered."""
    sshd.trust()
    log, fifo = _fifo_beside_a_log(tmp_path)
    link = link_for(log)
    with pytest.raises(NotRegular) as refused:
        link.read(fifo.path, 0, 100)
    assert str(refused.value) == (f"testbox:{fifo.path}: cannot read (a FIFO, not a regular file: not opened, as a "
                                  "read of it would hold up the connection)")  # fmt: skip
    assert link.unreachable_since is None
    assert link.read(log.path, 0, 9) == b'{"type":"'


def test_a_fifo_among_files_read_together_is_refused_and_the_others_are_read(
    sshd: Sshd, tmp_path: Path
) -> None:
    """Files read in one batch (host states, headers): the FIFO is refused, its reason given, the others read."""
    sshd.trust()
    log, fifo = _fifo_beside_a_log(tmp_path)
    refused: dict[str, str] = {}
    link = link_for(log)
    assert link.read_files([fifo.path, log.path], 9, refused) == [None, b'{"type":"']
    assert refused == {
        fifo.path: "a FIFO, not a regular file: not opened, as a read of it would hold up the connection"
    }
    assert link.unreachable_since is None


def _swapped_for_a_fifo(path: str) -> None:
    """The regular file at ``path`` replaced by a FIFO, as a swap on the far machine would."""
    os.remove(path)
    os.mkfifo(path)


def test_a_fifo_swapped_in_after_the_stat_is_given_up_without_holding_the_link(
    sshd: Sshd, tmp_path: Path
) -> None:
    """A log's reads trust the poll's stat (no stat of their own before the open), so a FIFO swapped in after it is
    opened: the server's open waits for a writer, and it held the whole connection until the call gave up (20 s),
    calling the machine unreachable. An open still waiting after ``OPEN_WAIT`` has the path's type asked aside: a
    FIFO's is given up, in words that say why, and the connection made anew: the machine is not called unreachable,
    and its next calls, reads too, are answered."""
    sshd.trust()
    log, other = _fifo_beside_a_log(tmp_path)
    (tmp_path / "s2" / "session.jsonl").unlink()
    (tmp_path / "s2" / "session.jsonl").write_bytes(b'{"type":"session","version":0,"id":"s2"}\n')
    link = link_for(log)
    st = link.stat(log.path, own=True)
    assert st is not None and st.kind == "file"
    assert link.read(log.path, 0, 9, True, st) == b'{"type":"'
    first = _servers_of(sshd)  # the connection's SFTP server, which will wait in the open
    _swapped_for_a_fifo(log.path)
    try:
        with pytest.raises(NotRegular) as refused:
            link.read(log.path, 0, 100, True, st)
        assert str(refused.value) == (f"testbox:{log.path}: cannot read (a FIFO, not a regular file, swapped in: "
                                      "its open waited for a writer, given up, the connection made anew)")  # fmt: skip
        assert link.unreachable_since is None
        assert link.stat(other.path) is not None
        assert link.read(other.path, 0, 9, True, link.stat(other.path, own=True)) == b'{"type":"'
    finally:
        _release_the_waiting_server(sshd, log.path, first)


def _release_the_waiting_server(sshd: Sshd, fifo: str, servers: list[int]) -> None:
    """Let the far SFTP server that waits in its open of ``fifo`` (one of ``servers``) go on (a writer comes and goes
    at once: it reads nothing, and exits, its connection gone), and wait until it has: it outlives sshd's session,
    which ``Sshd.kill`` ends with its descendants, so it would be left running."""
    os.close(os.open(fifo, os.O_RDWR | os.O_NONBLOCK))
    deadline = time.monotonic() + 60
    while set(servers) & set(_servers_of(sshd)):
        assert time.monotonic() < deadline, f"the SFTP server waiting on {fifo} did not exit"
        time.sleep(0.05)


def _servers_of(sshd: Sshd) -> list[int]:
    """The pids of the SFTP servers of ``sshd`` that run (its home names them), zombies left out."""
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if (
                entry.name.isdigit()
                and str(sshd.home).encode() in (entry / "cmdline").read_bytes()
                and b"sftp-server" in (entry / "cmdline").read_bytes()
                and not process_gone(int(entry.name))
            ):
                found.append(int(entry.name))
    return found


def test_a_fifo_swapped_in_with_a_writer_is_opened_and_closed_unread(sshd: Sshd, tmp_path: Path) -> None:
    """A FIFO swapped in that a writer holds open: the open does not wait, and what was opened is seen to be no
    regular file in the reads' round trip; it is refused as one, nothing of it returned, nothing waiting on it."""
    sshd.trust()
    log, _ = _fifo_beside_a_log(tmp_path)
    link = link_for(log)
    for unlinked in (True, False):  # the path's lstat tells it, or the open handle's fstat
        (tmp_path / "s1" / "session.jsonl").unlink(missing_ok=True)
        (tmp_path / "s1" / "session.jsonl").write_bytes(b'{"type":"session","version":0,"id":"s1"}\n')
        st = link.stat(log.path, own=True)
        _swapped_for_a_fifo(log.path)
        writer = os.open(log.path, os.O_RDWR | os.O_NONBLOCK)  # a writer (and reader) that never writes
        try:
            with pytest.raises(NotRegular) as refused:
                link.read(log.path, 0, 100, unlinked, st)
        finally:
            os.close(writer)
        assert refused.value.why.startswith("a FIFO, not a regular file"), refused.value
        assert link.unreachable_since is None


def test_a_regular_file_slow_to_open_is_waited_for_not_taken_for_a_fifo(
    sshd: Sshd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A regular file whose open takes longer than ``OPEN_WAIT`` (a slow disk, a loaded machine) was given up as if
    it were a FIFO (``NotRegular``: 'its open waited 10 s, as a FIFO's does'), the connection made anew and the log
    left unread. What the file is decides now: its type, asked aside while the open waits, is a regular file's, so
    the open is waited for and its bytes read. The open is held here by the kernel, while this process keeps a
    write lease on the file, for many times ``OPEN_WAIT`` (made short, so that the test is)."""
    import core.remote.link

    monkeypatch.setattr(core.remote.link, "OPEN_WAIT", 0.5)
    sshd.trust()
    log, _ = _fifo_beside_a_log(tmp_path)
    link = link_for(log)
    st = link.stat(log.path, own=True)
    with _slow_to_open(Path(log.path), hold=6 * core.remote.link.OPEN_WAIT) as held:
        assert link.read(log.path, 0, 9, True, st) == b'{"type":"'
    assert held.is_set(), "the open was never held"
    assert link.unreachable_since is None


@contextlib.contextmanager
def _slow_to_open(
    path: Path, hold: float, then: Callable[[], None] = lambda: None
) -> Iterator[threading.Event]:
    """``path``'s next open by another process held ``hold`` seconds: a write lease taken on it here makes the
    kernel hold another's open until the lease is let go, which is done ``hold`` seconds after ``/proc/locks`` says
    an open is waiting (the event is set then, and ``then`` run first). The lease's signal to this process is
    ignored meanwhile."""
    import fcntl
    import signal

    held = threading.Event()
    fd = os.open(path, os.O_RDWR)
    before = signal.signal(signal.SIGIO, signal.SIG_IGN)
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
    inode = f":{os.fstat(fd).st_ino} "

    def let_go() -> None:
        deadline = time.monotonic() + 60
        while not any(
            "BREAKING" in line and inode in line for line in Path("/proc/locks").read_text().splitlines()
        ):
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        else:
            then()
            held.set()
            time.sleep(hold)  # the slow open itself
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)

    releaser = threading.Thread(target=let_go, daemon=True)
    releaser.start()
    try:
        yield held
    finally:
        releaser.join(120)
        os.close(fd)
        signal.signal(signal.SIGIO, before)


def _swapped_in_a_batch(sshd: Sshd, tmp_path: Path, swap: Callable[[str], None],
                        served: list[int]) -> tuple[list[bytes | None], dict[str, str]]:  # fmt: skip
    """``read_files`` of two files in one batch, the second swapped (``swap(its path)``) after the server answered
    its stat and before it opened it: the server serves one request after another, and the batch's stats are sent
    together, so while the first file's open is held (a lease on it: ``_slow_to_open``) the second's stat has been
    answered and its open waits behind. What the batch returned, and the reasons of what it refused; ``served``
    gets the pid of the SFTP server the batch was sent to."""
    first = tmp_path / "first.jsonl"
    first.write_bytes(b'{"type":"session","version":0,"id":"first"}\n')
    log, _ = _fifo_beside_a_log(tmp_path)
    link = link_for(log)
    assert link.stat(log.path) is not None  # connected: the lease holds the batch's open, not the login
    served += _servers_of(sshd)
    refused: dict[str, str] = {}
    with _slow_to_open(first, hold=0, then=lambda: swap(log.path)) as held:
        data = link.read_files([str(first), log.path], 9, refused)
    assert held.is_set(), "the first file's open was never held"
    assert link.unreachable_since is None
    return data, refused


def test_a_fifo_swapped_in_between_a_batch_read_s_stat_and_its_open_is_refused_and_the_others_read(
    sshd: Sshd, tmp_path: Path
) -> None:
    """The reads of many files in one batch (host states, headers, ``/proc`` files) opened each file themselves
    after its stat: a FIFO swapped in between was opened, the server's open waited for a writer, and every read of
    the batch behind it, until the call gave up (20 s) and called the machine unreachable. They go through the
    link's checked open now: the FIFO is given up, its reason given, the other file read."""
    sshd.trust()
    served: list[int] = []
    swapped = str(tmp_path / "s1" / "session.jsonl")
    try:
        data, refused = _swapped_in_a_batch(sshd, tmp_path, _swapped_for_a_fifo, served)
        assert data == [b'{"type":"', None]
        assert refused[swapped].startswith("a FIFO, not a regular file"), refused
    finally:
        if served and stat.S_ISFIFO(os.stat(swapped).st_mode):
            _release_the_waiting_server(sshd, swapped, served)


def test_a_fifo_swapped_in_with_a_writer_between_a_batch_read_s_stat_and_its_open_is_not_read(
    sshd: Sshd, tmp_path: Path
) -> None:
    """As above, a FIFO a writer holds open (and has written to): its open does not wait, and the batch read what the
    writer wrote for the log's bytes (or failed). What was opened is looked at in the read's round trip now (the
    handle's ``fstat``): no regular file, closed, nothing of it returned."""
    sshd.trust()
    writers: list[int] = []

    def swap(path: str) -> None:
        _swapped_for_a_fifo(path)
        writers.append(os.open(path, os.O_RDWR | os.O_NONBLOCK))
        os.write(writers[0], b"not the log's bytes\n")

    try:
        data, refused = _swapped_in_a_batch(sshd, tmp_path, swap, [])
    finally:
        for fd in writers:
            os.close(fd)
    assert data == [b'{"type":"', None]
    assert refused[str(tmp_path / "s1" / "session.jsonl")].startswith("a FIFO, not a regular file"), refused


def _sessions_per_connection(sshd: Sshd) -> tuple[int, int]:
    """How many connections the server accepted (its log) and how many SFTP sessions they opened (its SFTP
    server's log, one line as each starts)."""
    accepted = (sshd.base / "sshd.log").read_text().count("Accepted publickey")
    return accepted, sshd.sftp_log.read_text().count("session opened for local user")


@pytest.mark.parametrize("held", ["fifo", "slow regular file"])
def test_an_open_that_waits_is_asked_again_on_one_new_session_not_a_second_one(
    logged_sshd: Sshd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held: str
) -> None:
    """An open still waiting after ``OPEN_WAIT`` had the path's type asked on a second SFTP session of the link's
    connection (its own session waits behind the open: the server answers one request after another), one session
    more than the link's, which a login's ``MaxSessions`` may not allow. The link keeps one session now: the read is
    asked again on a new connection, whose stat decides. A FIFO swapped in is given up there, a regular file slow
    to open is waited for; counted on the server, each connection served one SFTP session."""
    import core.remote.link

    monkeypatch.setattr(core.remote.link, "OPEN_WAIT", 0.5)
    sshd = logged_sshd
    sshd.trust()
    log, _ = _fifo_beside_a_log(tmp_path)
    link = link_for(log)
    st = link.stat(log.path, own=True)
    first = _servers_of(sshd)
    if held == "fifo":
        _swapped_for_a_fifo(log.path)
        try:
            with pytest.raises(NotRegular) as refused:
                link.read(log.path, 0, 100, True, st)
            assert "swapped in: its open waited for a writer, given up" in str(refused.value), refused.value
        finally:
            _release_the_waiting_server(sshd, log.path, first)
    else:
        with _slow_to_open(Path(log.path), hold=6 * core.remote.link.OPEN_WAIT) as slow:
            assert link.read(log.path, 0, 9, True, st) == b'{"type":"'
        assert slow.is_set(), "the open was never held"
    assert link.unreachable_since is None
    other = tmp_path / "other.jsonl"
    other.write_bytes(b"{}\n")
    assert link.read(str(other), 0, 2) == b"{}"  # the new connection answers
    connections, sessions = _sessions_per_connection(sshd)
    assert connections == 2 and sessions == connections, (connections, sessions)
