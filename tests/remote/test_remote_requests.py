"""How many SFTP requests a remote log's poll costs, counted where they are served: the real OpenSSH SFTP server
logs each request it answers (``-l DEBUG3``, ``Sshd.sftp_log``). A poll that finds bytes appended stats the log
(its ``lstat`` and ``stat``, one round trip), then reads them with the rewrite checks' bytes through one open handle.
Each read asked the server for a stat of its own before the open, though the poll's stat had just found a regular
file of that size: it is trusted now, a request and a round trip fewer (8 requests in 5 round trips before, 7 in
4 now)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from core.remote.link import link_for
from core.remote.tail import RemoteTailer
from core.remote.target import RemoteTarget
from tests.remote.sshd import Sshd

REQUEST = re.compile(r"^debug\d: request \d+: (?!sent )(\w[\w-]*)", re.MULTILINE)


def _served(server: Sshd, since: int) -> Counter[str]:
    """The requests the server answered since its log was ``since`` bytes long, by name."""
    return Counter(REQUEST.findall(server.sftp_log.read_bytes()[since:].decode("utf-8", "replace")))


def test_a_poll_that_finds_bytes_appended_asks_no_stat_beyond_its_own(
    logged_sshd: Sshd, tmp_path: Path
) -> None:
    """The poll's own stat (lstat and stat), the open, the link check (lstat) and the two reads (the appended bytes
    with the last consumed ones, the head's bytes), the close: nothing else."""
    log = tmp_path / "s1" / "session.jsonl"
    log.parent.mkdir()
    log.write_bytes(b'{"type":"session","version":0,"id":"s1","cwd":"/w"}\n')
    logged_sshd.trust()
    target = RemoteTarget(None, "testbox", str(log))
    tailer = RemoteTailer(link_for(target), target)
    tailer.poll()  # the load: the connection, its sessions and the header
    assert tailer.unreachable is None
    with log.open("ab") as f:
        f.write(b'{"type":"user/message","seq":0,"ts":1,"data":{"text":"hi"}}\n')
    since = logged_sshd.sftp_log.stat().st_size
    update = tailer.poll()
    assert tailer.unreachable is None
    assert [event["type"] for event in update.events] == ["user/message"], update
    assert _served(logged_sshd, since) == Counter({"lstat": 2, "stat": 1, "open": 1, "read": 2, "close": 1})
