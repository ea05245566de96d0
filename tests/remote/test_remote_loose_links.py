"""Session logs lying loose in a directory (no session directories) are counted the same here and through the real
OpenSSH server when some are symbolic links: the local note follows a link to a regular file and keeps it, the
remote one kept only what SFTP lists as a plain file. A link to nothing, to a non-regular file, or into a place
that may not be searched is left out on both sides."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.log.sessions import layout_note
from core.remote.link import link_for
from core.remote.sessions import remote_layout_note
from core.remote.target import RemoteTarget
from tests.conftest import no_access_path, refused_path
from tests.remote.sshd import MISSING, Sshd

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def _log(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'{"type":"session","version":0,"id":"%s"}\n' % path.stem.encode())


def _loose(tmp_path: Path) -> Path:
    """A directory holding a plain log, a link to a log elsewhere, a link to nothing, one to a directory, one to a
    FIFO, and (where the machine has a place root may not search) one into it."""
    loose, elsewhere = tmp_path / "loose", tmp_path / "elsewhere"
    _log(loose / "plain.jsonl")
    _log(elsewhere / "real.jsonl")
    (elsewhere / "dir.jsonl").mkdir()
    os.mkfifo(elsewhere / "fifo.jsonl")
    (loose / "linked.jsonl").symlink_to(elsewhere / "real.jsonl")
    (loose / "gone.jsonl").symlink_to(tmp_path / "nothing.jsonl")
    (loose / "dir.jsonl").symlink_to(elsewhere / "dir.jsonl")
    (loose / "fifo.jsonl").symlink_to(elsewhere / "fifo.jsonl")
    if (denied := refused_path()) is not None:
        (loose / "denied.jsonl").symlink_to(denied / "x")
    return loose


def test_a_loose_log_that_is_a_link_is_counted_over_ssh_as_here(sshd: Sshd, tmp_path: Path) -> None:
    """The same tree read both ways: two logs (the plain one and the linked one), the links that lead to no regular
    file left out."""
    loose = _loose(tmp_path)
    sshd.trust()
    target = RemoteTarget(None, "testbox", str(loose))
    here = layout_note(loose, "sessions")
    there = remote_layout_note(link_for(target), target, "sessions")
    assert here is not None and "holds 2 session logs of its own" in here, here
    assert there is not None and "holds 2 session logs of its own" in there, there


@pytest.mark.parametrize("why", ["refused", "missing"])
def test_a_directory_that_cannot_be_listed_has_no_layout_note_over_ssh_as_here(
    sshd: Sshd, tmp_path: Path, why: str
) -> None:
    """A directory that may not be listed (a link into a place root may not search), or is not there: the local note
    is None (the listing's own note, or error, says why); over SSH the note's own listing raised."""
    if why == "refused":
        (tmp_path / why).symlink_to(no_access_path())  # skipped where root may look there
    sshd.trust()
    target = RemoteTarget(None, "testbox", str(tmp_path / why))
    assert layout_note(tmp_path / why, "sessions") is None
    assert remote_layout_note(link_for(target), target, "sessions") is None
