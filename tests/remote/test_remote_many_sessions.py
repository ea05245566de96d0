"""A machine holding many sessions, read through the real OpenSSH server whose SFTP server may hold few files open
at once (``few_files_sshd``): the batches that list, stat and read every session's files sent all their requests at
once, so the server opened more directories and files than it may, failed the ones past its limit, and sessions
went missing from the listing (noted as skipped) or from the fleet."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from core.cli import main
from tests.remote.conftest import FEW_FILES
from tests.remote.sshd import Sshd

SESSIONS = 3 * FEW_FILES


def test_a_machine_with_more_sessions_than_its_server_may_open_files_is_read_whole(
    few_files_sshd: Sshd, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every session listed, its header and its host.json read, nothing skipped, as the local read lists them."""
    root = tmp_path / "root"
    for n in range(SESSIONS):
        session = root / "--w--" / f"s{n:03}"
        session.mkdir(parents=True)
        (session / "session.jsonl").write_bytes(b'{"type":"session","version":0,"id":"s%03d"}\n' % n)
        (session / "host.json").write_bytes(orjson.dumps({"state": "exited", "pid": 4, "since": 5_000 + n}))
    few_files_sshd.trust()
    assert main(["sessions", str(root), "--json"]) == 0
    here = capsys.readouterr()
    assert main(["sessions", f"testbox:{root}", "--json"]) == 0
    there = capsys.readouterr()
    assert there.err == here.err == "", there.err
    rows = orjson.loads(there.out)
    assert sorted((row["id"], row["host"]["since"]) for row in rows) == [
        (f"s{n:03}", 5_000 + n) for n in range(SESSIONS)
    ]
    assert len(orjson.loads(here.out)) == SESSIONS
