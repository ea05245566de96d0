"""What a remote directory holds instead of sessions (``remote_layout_note``) is an addition to what a command says,
read over the link after the listing; a machine that cannot be asked then adds nothing. The note says so itself
(None), so the command line and the live view, which each caught its errors, take it as it comes."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from core.log.sessions import told
from core.remote.link import link_for
from core.remote.live import RemoteLog
from core.remote.sessions import remote_layout_note
from core.remote.target import RemoteTarget
from core.shared.errors import NoLogInDirectoryError
from tests.remote.sshd import MISSING, Sshd

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def _project(tmp_path: Path) -> Path:
    """One project's directory (a session directory in it, its log), which is no sessions root: it has a note."""
    project = tmp_path / "proj"
    (project / "s1").mkdir(parents=True)
    (project / "s1" / "session.jsonl").write_bytes(b'{"type":"session","version":0,"id":"s1"}\n')
    return project


def test_the_layout_note_of_a_machine_that_cannot_be_asked_is_none_not_a_raise(
    sshd: Sshd, tmp_path: Path
) -> None:
    """The note is None once the machine stops answering (it raised ``Unreachable``, which each caller caught)."""
    target = RemoteTarget(None, "testbox", str(_project(tmp_path)))
    sshd.trust()
    note = remote_layout_note(link_for(target), target, "sessions")
    assert note is not None and "is one project's directory" in note, note
    sshd.kill()
    assert remote_layout_note(link_for(target), target, "sessions") is None


def test_sessions_of_a_machine_that_cannot_be_asked_says_only_that(
    sshd: Sshd, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """From the command line: the machine is named unreachable, once, and no layout note follows."""
    project = _project(tmp_path)
    sshd.trust()
    assert main(["sessions", f"testbox:{project}"]) == 0
    assert "is one project's directory" in capsys.readouterr().err
    sshd.kill()
    assert main(["sessions", f"testbox:{project}"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "testbox: unreachable since" in err[0], err


def test_the_live_view_s_refusal_of_a_directory_stands_alone_once_its_machine_cannot_be_asked(
    sshd: Sshd, tmp_path: Path
) -> None:
    """From the live view (``watch testbox:DIR``): a directory with no log of its own is refused, followed by what it
    holds instead; that note is read when the refusal is shown, and a machine gone by then leaves the refusal alone."""
    project = _project(tmp_path)
    sshd.trust()
    for gone in (False, True):
        remote = RemoteLog.of(f"testbox:{project}")
        assert remote is not None
        with pytest.raises(NoLogInDirectoryError) as refused:
            remote.open()
        if gone:
            sshd.kill()
        shown = told(refused.value)
        assert shown.startswith(
            f"testbox:{project}: no session.jsonl or session.jsonl.zstd in this directory"
        )
        assert ("is one project's directory" in shown) is not gone, shown
