"""How the ``bash`` tool confines a command: bubblewrap where it works, a child-subreaper shim everywhere.

With bubblewrap (``bwrap``) a command sees the whole filesystem read-only except the workspace (read-write)
and a private ``/tmp``; it has its own PID namespace, so every process it starts dies with it, and, unless
``host.shell.network`` is true, its own empty network namespace (loopback only). A seccomp filter
(``seccomp.py``) keeps it from creating Unix sockets, so no Unix-socket service is reachable, wherever its socket
lies. Without bubblewrap the command runs unconfined under ``reaper.py``, which still kills every descendant
when the call ends. Either way the environment is an allow-list: the variables below, the real locale
categories and ``host.shell.passEnv`` (which refuses secret-looking names), never API keys or tokens.
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from core.host.host_config import ShellSettings
from core.host.tools.seccomp import filter_fd as seccomp_filter_fd
from core.host.tools.seccomp import program as seccomp_program

ENV_ALLOW = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "COLORTERM", "NO_COLOR")
# The locale categories of POSIX and glibc: the only LC_* names a command gets.
LOCALE_VARIABLES = (
    "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_MONETARY", "LC_NUMERIC", "LC_TIME",
    "LC_ADDRESS", "LC_IDENTIFICATION", "LC_MEASUREMENT", "LC_NAME", "LC_PAPER", "LC_TELEPHONE",
)  # fmt: skip
REAPER = Path(__file__).with_name("reaper.py")
PROBE_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class ShellMode:
    """Which confinement the shell gets on this machine: ``kind`` is ``bubblewrap`` or ``none``."""

    kind: str
    network: bool
    warning: str | None

    def to_dict(self) -> dict[str, object]:
        """The form recorded in the session log."""
        return {"sandbox": self.kind, "network": self.network, "warning": self.warning}


@functools.cache
def bubblewrap() -> str | None:
    """The ``bwrap`` binary when it can build a sandbox here (checked once by running one), else None."""
    path = shutil.which("bwrap")
    if path is None:
        return None
    with filter_fd() as fd:
        probe = [path, *_bwrap_flags(Path("/"), network=False, seccomp_fd=fd), "--", "true"]
        try:
            done = subprocess.run(
                probe, capture_output=True, timeout=PROBE_SECONDS, check=False, pass_fds=_fds(fd)
            )
        except (OSError, subprocess.SubprocessError):
            return None
    return path if done.returncode == 0 else None


@contextlib.contextmanager
def filter_fd() -> Iterator[int | None]:
    """The seccomp filter's file descriptor for one ``bwrap`` start (None where there is no filter), closed after."""
    fd = seccomp_filter_fd()
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def _fds(fd: int | None) -> tuple[int, ...]:
    return () if fd is None else (fd,)


def shell_mode(settings: ShellSettings) -> ShellMode:
    """The confinement ``settings`` give on this machine, with the warning to show when it is none."""
    if settings.sandbox == "off":
        return ShellMode("none", True, "the shell tool is not sandboxed (host.shell.sandbox = \"off\")")
    if bubblewrap() is not None:
        if seccomp_program() is None:
            return ShellMode(
                "bubblewrap",
                settings.network,
                f"no seccomp filter for {platform.machine()}: sandboxed commands can still connect to Unix-socket "
                "services (a Docker or D-Bus socket, an SSH agent) that the host's user can reach",
            )
        return ShellMode("bubblewrap", settings.network, None)
    return ShellMode(
        "none",
        True,
        "bubblewrap (bwrap) is not usable on this machine: shell commands run unconfined, with the host's "
        "permissions and network (only their environment is filtered, and their processes end with the call)",
    )


def _bwrap_flags(workspace: Path, *, network: bool, seccomp_fd: int | None) -> list[str]:
    flags = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    flags += ["--bind", str(workspace), str(workspace), "--chdir", str(workspace)]
    flags += ["--unshare-all", "--die-with-parent", "--new-session"]
    if network:
        flags.append("--share-net")
    if seccomp_fd is not None:
        flags += ["--seccomp", str(seccomp_fd)]
    return flags


def start(
    command: str, workspace: Path, mode: ShellMode, env: dict[str, str], read_only: tuple[Path, ...] = ()
) -> subprocess.Popen[bytes]:
    """Start ``command`` with bash in ``workspace`` under ``mode`` (its own session, no stdin, stdout and stderr
    on one pipe); ``read_only`` paths inside the workspace (the session's own log directory, for one) stay
    read-only in the sandbox."""
    bash = shutil.which("bash") or "/bin/bash"
    inner = [bash, "-c", command]
    path = bubblewrap() if mode.kind == "bubblewrap" else None
    with filter_fd() if path is not None else contextlib.nullcontext() as fd:
        if path is not None:
            kept = [str(p) for p in read_only if p.is_relative_to(workspace) and p.exists()]
            flags = [flag for p in kept for flag in ("--ro-bind", p, p)]
            argv = [path, *_bwrap_flags(workspace, network=mode.network, seccomp_fd=fd), *flags, "--", *inner]
        else:
            argv = [sys.executable, "-I", "-S", str(REAPER), str(os.getpid()), *inner]
        return subprocess.Popen(
            argv,
            cwd=workspace,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            pass_fds=_fds(fd),
        )


def environment(settings: ShellSettings) -> dict[str, str]:
    """The allow-listed environment a command gets (the real ``LC_*`` locale categories included)."""
    allowed = {*ENV_ALLOW, *LOCALE_VARIABLES, *settings.pass_env}
    return {k: v for k, v in os.environ.items() if k in allowed}
