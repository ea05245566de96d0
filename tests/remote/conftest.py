"""The real OpenSSH server every remote test talks to (``tests.remote.sshd``), with the client's HOME pointed at
its generated ~/.ssh, and the real DSH for the tests of its sessions read from afar."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.remote.link import close_links
from tests.dsh.conftest import _no_dsh_left_running, dsh, model  # noqa: F401  (the real DSH's fixtures)
from tests.remote.sshd import MISSING, SFTP_SERVER, Sshd


@pytest.fixture
def sshd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sshd]:
    """A started server (its host key not trusted yet: call ``trust``); a test that takes it is skipped where the
    OpenSSH server is missing (``.ci/run`` installs it), a test of the same file that does not take it still runs."""
    yield from _served(tmp_path, monkeypatch)


@pytest.fixture
def logged_sshd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sshd]:
    """As ``sshd``, its SFTP server logging each request it serves (``Sshd.sftp_log``)."""
    yield from _served(tmp_path, monkeypatch, ("-l", "DEBUG3"))


@pytest.fixture
def statless_sshd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sshd]:
    """As ``sshd``, its SFTP server refusing every stat and lstat (``sftp-server -P``, as an operator may set it)."""
    yield from _served(tmp_path, monkeypatch, ("-P", "stat,lstat"))


def _served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sftp_flags: tuple[str, ...] = ()
) -> Iterator[Sshd]:
    """The server for a fixture (``sftp_flags``: more options for its SFTP server, ``Sshd``'s), killed after the test."""
    if MISSING is not None:
        pytest.skip(MISSING)
    if sftp_flags and not Path(SFTP_SERVER).exists():
        pytest.skip("needs the OpenSSH SFTP server program (sftp-server), not internal-sftp")
    server = Sshd(tmp_path / "sshd", sftp_flags)
    monkeypatch.setenv("HOME", str(server.home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    server.start()
    yield server
    close_links()
    server.kill()
