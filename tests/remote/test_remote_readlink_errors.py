"""A link the far server would not read (permission denied) or could not (the connection lost under the request)
was taken for no link at all: ``readlinks`` said None, as of a path that is no link or not there, and the caller
went on as if nothing were wrong. Only those two mean None now; any other failure is raised, naming the path."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.remote.link import Unreachable, link_for
from core.remote.target import RemoteTarget
from core.shared.errors import TapedeckError
from tests.conftest import no_access_path
from tests.remote.sshd import Sshd


def test_no_link_and_no_file_read_as_none(sshd: Sshd, tmp_path: Path) -> None:
    """What still means None: a regular file (no link) and a path that is not there; a link is read."""
    (tmp_path / "file").write_text("x")
    (tmp_path / "link").symlink_to("elsewhere")
    sshd.trust()
    link = link_for(RemoteTarget(None, "testbox", str(tmp_path)))
    paths = [str(tmp_path / name) for name in ("file", "nope", "link")]
    assert link.readlinks(paths) == [None, None, "elsewhere"]


def test_a_link_the_server_may_not_read_is_an_error_naming_it(sshd: Sshd) -> None:
    """Another process's working directory: a link whose target even root may not read (ptrace rules)."""
    refused = str(no_access_path())
    sshd.trust()
    link = link_for(RemoteTarget(None, "testbox", refused))
    with pytest.raises(TapedeckError) as info:
        link.readlinks([refused])
    assert str(info.value) == f"testbox:{refused}: cannot read the link (Permission denied)"
    refusals: dict[str, str] = {}  # asked to note it instead: noted
    assert link.read_files_and_links([], 1, [refused], refusals) == ([], [None])
    assert refusals == {refused: "Permission denied"}


def test_a_connection_lost_under_a_readlink_calls_the_machine_unreachable(sshd: Sshd, tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("elsewhere")
    sshd.trust()
    link = link_for(RemoteTarget(None, "testbox", str(tmp_path)))
    assert link.readlinks([str(tmp_path / "link")]) == ["elsewhere"]  # connected
    sshd.kill()
    with pytest.raises(Unreachable):
        link.readlinks([str(tmp_path / "link")])
    assert link.unreachable_since is not None
