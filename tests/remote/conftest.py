"""The real OpenSSH server every remote test talks to (``tests.remote.sshd``), with the client's HOME pointed at
its generated ~/.ssh, and the real DSH for the tests of its sessions read from afar."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.remote.link import close_links
from tests.dsh.conftest import _no_dsh_left_running, dsh, model  # noqa: F401  (the real DSH's fixtures)
from tests.remote.sshd import MISSING, Sshd


@pytest.fixture
def sshd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sshd]:
    """A started server (its host key not trusted yet: call ``trust``); a test that takes it is skipped where the
    OpenSSH server is missing (``.ci/run`` installs it), a test of the same file that does not take it still runs."""
    if MISSING is not None:
        pytest.skip(MISSING)
    server = Sshd(tmp_path / "sshd")
    monkeypatch.setenv("HOME", str(server.home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    server.start()
    yield server
    close_links()
    server.kill()
