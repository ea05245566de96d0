"""A FIFO where a remote file was (an attacker's swap, or a mistake) is refused by the link before it is opened,
through the real OpenSSH server: the server's open of a FIFO waits for a writer, and the whole connection (every
session of the machine) waited behind it until the call gave up, 20 s later, calling the machine unreachable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.remote.link import NotRegular, link_for
from core.remote.target import RemoteTarget
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
