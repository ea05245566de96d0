"""A session directory this user may not search reads the same here and through the real OpenSSH server: its host
state is ``unknown`` (its host.json cannot be looked at, so a host may well run it), with the same words on both
sides. It read ``none`` here (a DSH session no bridge runs) or ``exited``, and ``unknown`` over SSH."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.control.host_state import UNKNOWN, HostState, read_host_state
from core.remote.link import link_for
from core.remote.sessions import remote_host_states
from core.remote.target import RemoteTarget
from tests.conftest import no_access_path
from tests.remote.sshd import Sshd

WORDS = "its host.json cannot be read (Permission denied)"


def _unsearchable(tmp_path: Path) -> Path:
    """A session log's path under a directory this user may not search (a link to one); skips where there is none."""
    (tmp_path / "refused").symlink_to(no_access_path())
    return tmp_path / "refused" / "session.jsonl"


@pytest.mark.parametrize("hosted", [None, False, True])
def test_an_unsearchable_session_directory_reads_unknown_here(tmp_path: Path, hosted: bool | None) -> None:
    """Here, whatever the log was found to hold: the directory hides host.json and the log alike."""
    state = read_host_state(_unsearchable(tmp_path), hosted)
    assert state == HostState(UNKNOWN), state
    assert state.problem == WORDS


def test_an_unsearchable_session_directory_reads_the_same_here_and_over_ssh(
    sshd: Sshd, tmp_path: Path
) -> None:
    """The same directory read both ways: the same state, the same words."""
    log = _unsearchable(tmp_path)
    sshd.trust()
    far = RemoteTarget(None, "testbox", str(log))
    for hosted in (False, True):
        [there] = remote_host_states(link_for(far), [(far, hosted)])
        here = read_host_state(log, hosted)
        assert (here, here.problem) == (there, there.problem) == (HostState(UNKNOWN), WORDS), (here, there)
