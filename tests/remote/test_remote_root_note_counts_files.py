"""A sessions root given where one session is wanted is refused with a note counting its sessions. The note counted
the logs its listing found, so one log the root reaches by two names (a session directory and a symbolic link to
it beside it) was "2 sessions", where ``tapedeck sessions`` lists one; here and over SSH alike. Each file counts
once now, by its real path (the far side's, over SSH), as the listing counts it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.cli import main
from tests.fleet.test_one_log_two_names import _root
from tests.remote.sshd import MISSING, Sshd

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def test_a_roots_note_counts_a_session_reached_by_two_names_once(
    sshd: Sshd, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sshd.trust()
    root = _root(tmp_path)
    (root / "--w--" / "s-2").symlink_to(root / "--w--" / "s-1")  # the one session under a second name
    for listed in (str(root), f"testbox:{root}"):
        assert main(["sessions", listed, "--json"]) in (0, None)
        assert len(json.loads(capsys.readouterr().out)) == 1  # what the listing shows: one session
    assert main(["inspect", str(root)]) == 2
    local = capsys.readouterr().err
    assert "it is a sessions root, holding 1 session: `tapedeck sessions " in local, local
    assert main(["inspect", f"testbox:{root}"]) == 2
    assert capsys.readouterr().err == local.replace(f"{root}", f"testbox:{root}")


def test_a_remote_root_named_from_the_login_directory_counts_as_named_in_full(
    sshd: Sshd, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The far side's real paths decide, whatever the root's name: relative to the login's home, or absolute."""
    sshd.trust()
    root = _root(tmp_path)
    (root / "--w--" / "s-2").symlink_to(root / "--w--" / "s-1")
    relative = os.path.relpath(root, sshd.home)
    assert main(["inspect", f"testbox:{relative}"]) == 2
    assert "it is a sessions root, holding 1 session: " in capsys.readouterr().err
