"""A sessions root whose project or session directories are symbolic links lists the same through the real OpenSSH
server as here: the listing here follows a link to a directory, the remote one kept only what SFTP calls a
directory and skipped every link. A link to an ancestor is followed once per level, as here (the layout's fixed
depth bounds it), and one that loops or names nothing is left out without a note, as here."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.log.sessions import session_logs
from core.remote.link import link_for
from core.remote.sessions import remote_layout_note, remote_logs
from core.remote.target import RemoteTarget
from tests.conftest import refused_path
from tests.remote.sshd import MISSING, Sshd

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def _log(sdir: Path) -> None:
    sdir.mkdir(parents=True)
    (sdir / "session.jsonl").write_bytes(b'{"type":"session","version":0,"id":"%s"}\n' % sdir.name.encode())


def _tree(tmp_path: Path) -> Path:
    """A root with a real project, a linked project, a linked session directory, links to its ancestors, a link
    loop and a link to nothing."""
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    _log(root / "real" / "s1")
    _log(elsewhere / "proj" / "s2")
    _log(elsewhere / "lone" / "s3")
    (root / "linked").symlink_to(elsewhere / "proj")
    (root / "real" / "s3").symlink_to(elsewhere / "lone" / "s3")
    (root / "up").symlink_to(root)  # the root itself: its projects read as its sessions, holding no log
    (root / "real" / "top").symlink_to(tmp_path)  # an ancestor two levels up
    (root / "loop").symlink_to(root / "loop")
    (root / "gone").symlink_to(tmp_path / "nothing")
    # a link into a place this user may not search, where the machine has one: noted on both sides
    if (denied := refused_path()) is not None:
        (root / "denied").symlink_to(denied / "x")
    return root


def test_a_linked_project_or_session_directory_is_followed_over_ssh_as_here(
    sshd: Sshd, tmp_path: Path
) -> None:
    """The same logs (the linked project's and the linked session's among them), the same notes."""
    root = _tree(tmp_path)
    sshd.trust()
    target = RemoteTarget(None, "testbox", str(root))
    here: list[str] = []
    there: list[str] = []
    local = [str(log) for log in session_logs(root, here)]
    far = [log.path for log in remote_logs(link_for(target), target, there)]
    assert far == local
    assert str(root / "linked" / "s2" / "session.jsonl") in far
    assert str(root / "real" / "s3" / "session.jsonl") in far
    assert there == [note.replace("skipped ", "skipped testbox:", 1) for note in here]
    denied = [str(root / "denied"), str(root / "up" / "denied")]  # as a project, and a session through ``up``
    assert [note.subject for note in here] == (denied if (root / "denied").is_symlink() else [])


def test_a_project_directory_of_linked_sessions_is_named_as_one_over_ssh(sshd: Sshd, tmp_path: Path) -> None:
    """A project's directory given for a sessions root: its linked session directory counts as one of its own."""
    _log(tmp_path / "elsewhere" / "s1")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "s1").symlink_to(tmp_path / "elsewhere" / "s1")
    sshd.trust()
    target = RemoteTarget(None, "testbox", str(tmp_path / "proj"))
    note = remote_layout_note(link_for(target), target, "sessions")
    assert note is not None and "is one project's directory" in note, note
