"""A target the far SFTP server lists as nothing and will not stat (a server set to refuse stat requests,
``sftp-server -P stat,lstat``) was left out without a word: a log given by its path, an empty directory and a path
that is not there all listed as no session at all. The operator is now told which target could not be looked at,
and why, once."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.log.skipped import SkipNote
from core.remote.link import link_for
from core.remote.sessions import remote_logs
from core.remote.target import RemoteTarget
from tests.conftest import no_access_path
from tests.remote.sshd import Sshd


@pytest.mark.parametrize("name", ["a.log", "empty", "nope"])
def test_a_target_the_server_will_not_stat_is_noted_not_left_out_silently(
    statless_sshd: Sshd, tmp_path: Path, name: str
) -> None:
    """Each is noted, in the words a remote log the server will not stat gets (``cannot stat (…)``)."""
    (tmp_path / "a.log").write_bytes(b'{"type":"session","version":0,"id":"a"}\n')
    (tmp_path / "empty").mkdir()
    statless_sshd.trust()
    target = RemoteTarget(None, "testbox", str(tmp_path / name))
    skipped: list[SkipNote] = []
    assert remote_logs(link_for(target), target, skipped) == []
    assert skipped == [f"skipped testbox:{tmp_path / name}: cannot stat (Permission denied)"]
    assert [(note.kind, note.subject) for note in skipped] == [("unlisted", str(target))]  # type: ignore[attr-defined]


def test_a_target_the_server_will_not_list_is_noted_once(sshd: Sshd, tmp_path: Path) -> None:
    """A directory the server will neither list nor stat (one it may not search) keeps the listing's note, alone."""
    (tmp_path / "refused").symlink_to(no_access_path())
    sshd.trust()
    target = RemoteTarget(None, "testbox", str(tmp_path / "refused"))
    skipped: list[SkipNote] = []
    assert remote_logs(link_for(target), target, skipped) == []
    assert skipped == [f"skipped testbox:{tmp_path / 'refused'}: Permission denied"]


def test_a_note_another_listing_made_of_a_target_does_not_stand_for_its_own(statless_sshd: Sshd, tmp_path: Path) -> None:
    """The notes of every target go in one list (the fleet's rescan, ``sessions`` of many roots). A target listed as
    nothing whose stat is refused is noted unless its own listing noted it: any note naming it, made by another
    target's listing (a link in a root the server would not stat through), silenced its own ``cannot stat``."""
    (tmp_path / "root" / "p").mkdir(parents=True)
    (tmp_path / "empty").mkdir()
    (tmp_path / "root" / "p" / "s").symlink_to(tmp_path / "empty")
    statless_sshd.trust()
    root, inner = (RemoteTarget(None, "testbox", str(tmp_path / "root" / "p")),
                   RemoteTarget(None, "testbox", str(tmp_path / "root" / "p" / "s")))  # fmt: skip
    skipped: list[SkipNote] = []
    for target in (root, inner):
        assert remote_logs(link_for(target), target, skipped) == []
    assert skipped == [f"skipped {inner}: Permission denied", f"skipped {inner}: cannot stat (Permission denied)"]
