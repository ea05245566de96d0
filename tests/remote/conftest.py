"""The real OpenSSH server every remote test talks to (``tests.remote.sshd``), with the client's HOME pointed at
its generated ~/.ssh, and the real DSH for the tests of its sessions read from afar."""

from __future__ import annotations

import inspect
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from core.remote.link import SshLink, close_links
from tests.dsh.conftest import _no_dsh_left_running, dsh, model  # noqa: F401  (the real DSH's fixtures)
from tests.remote.sshd import AS_NOBODY, MISSING, SFTP_SERVER, Sshd


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


LinkCalls = Callable[[str], list[dict[str, Any]]]  # ``link_calls``' spy


@pytest.fixture
def link_calls(monkeypatch: pytest.MonkeyPatch) -> LinkCalls:
    """``link_calls(NAME)``: the calls of ``SshLink.NAME`` made from then on, in order, each its arguments by name
    (``self`` left out) and what it returned (``returned``, set once it has); the method runs as it is."""

    def spy(name: str) -> list[dict[str, Any]]:
        real = getattr(SshLink, name)
        signature = inspect.signature(real)
        calls: list[dict[str, Any]] = []

        def spied(self: SshLink, *args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            call = {key: value for key, value in bound.arguments.items() if key != "self"}
            calls.append(call)
            call["returned"] = real(self, *args, **kwargs)
            return call["returned"]

        monkeypatch.setattr(SshLink, name, spied)
        return calls

    return spy


FEW_FILES = 64  # the open files ``few_files_sshd``'s SFTP server may hold at once


@pytest.fixture
def nobody_sshd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sshd]:
    """As ``sshd``, its SFTP server run as the user nobody (``AS_NOBODY``), which is refused what its mode keeps from
    it, as a root server never is; it reads only what lies outside the test's own directories (``open_dir``).
    Skipped unless the tests run as root, with ``setpriv``."""
    if os.geteuid() != 0 or shutil.which(AS_NOBODY[0]) is None:
        pytest.skip("needs root and setpriv, to run the SFTP server as another user")
    yield from _served(tmp_path, monkeypatch, wrapper=AS_NOBODY)


@pytest.fixture
def few_files_sshd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sshd]:
    """As ``sshd``, its SFTP server allowed ``FEW_FILES`` open files (``prlimit``), as a machine's limit may be far
    below what the sessions it holds number."""
    if shutil.which("prlimit") is None:
        pytest.skip("needs prlimit, to bound the SFTP server's open files")
    yield from _served(tmp_path, monkeypatch, wrapper=("prlimit", f"--nofile={FEW_FILES}"))


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory every user may search, outside pytest's (root's own, mode 700), removed after the test."""
    made = Path(tempfile.mkdtemp(prefix="tapedeck-open-"))
    made.chmod(0o755)
    yield made
    shutil.rmtree(made)


def _served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sftp_flags: tuple[str, ...] = (),
            wrapper: tuple[str, ...] = ()) -> Iterator[Sshd]:  # fmt: skip
    """The server for a fixture (``sftp_flags``, ``wrapper``: ``Sshd``'s, for its SFTP server), killed after the
    test."""
    if MISSING is not None:
        pytest.skip(MISSING)
    if (sftp_flags or wrapper) and not Path(SFTP_SERVER).exists():
        pytest.skip("needs the OpenSSH SFTP server program (sftp-server), not internal-sftp")
    server = Sshd(tmp_path / "sshd", sftp_flags, wrapper)
    monkeypatch.setenv("HOME", str(server.home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    server.start()
    yield server
    close_links()
    server.kill()
