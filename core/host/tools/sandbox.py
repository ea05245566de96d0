"""How the ``bash`` tool confines a command: bubblewrap where it works, a child-subreaper shim everywhere.

With bubblewrap (``bwrap``) a command sees the whole filesystem read-only except the workspace (read-write)
and a private ``/tmp``; it has its own PID namespace, so every process it starts dies with it, and, unless
``host.shell.network`` is true, its own empty network namespace (loopback only). Without bubblewrap the command
runs unconfined under ``reaper.py``, which still kills every descendant when the call ends. Either way the
environment is an allow-list: the variables below plus ``host.shell.passEnv``, never API keys or tokens.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from core.host.tools.host_config import ShellSettings

ENV_ALLOW = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "COLORTERM", "NO_COLOR")
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
    probe = [path, *_bwrap_flags(Path("/"), network=False), "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=PROBE_SECONDS, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return path if done.returncode == 0 else None


def shell_mode(settings: ShellSettings) -> ShellMode:
    """The confinement ``settings`` give on this machine, with the warning to show when it is none."""
    if settings.sandbox == "off":
        return ShellMode("none", True, "the shell tool is not sandboxed (host.shell.sandbox = \"off\")")
    if bubblewrap() is not None:
        return ShellMode("bubblewrap", settings.network, None)
    return ShellMode(
        "none",
        True,
        "bubblewrap (bwrap) is not usable on this machine: shell commands run unconfined, with the host's "
        "permissions and network (only their environment is filtered, and their processes end with the call)",
    )


def _bwrap_flags(workspace: Path, *, network: bool) -> list[str]:
    flags = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    flags += ["--bind", str(workspace), str(workspace), "--chdir", str(workspace)]
    flags += ["--unshare-all", "--die-with-parent", "--new-session"]
    if network:
        flags.append("--share-net")
    return flags


def command_argv(
    command: str, workspace: Path, mode: ShellMode, read_only: tuple[Path, ...] = ()
) -> list[str]:
    """The argv that runs ``command`` with bash in ``workspace`` under ``mode``; ``read_only`` paths inside the
    workspace (the session's own log directory, for one) stay read-only in the sandbox."""
    bash = shutil.which("bash") or "/bin/bash"
    inner = [bash, "-c", command]
    if mode.kind == "bubblewrap":
        path = bubblewrap()
        if path is not None:
            kept = [str(p) for p in read_only if p.is_relative_to(workspace) and p.exists()]
            flags = [flag for p in kept for flag in ("--ro-bind", p, p)]
            return [path, *_bwrap_flags(workspace, network=mode.network), *flags, "--", *inner]
    return [sys.executable, "-I", "-S", str(REAPER), *inner]


def environment(settings: ShellSettings) -> dict[str, str]:
    """The allow-listed environment a command gets (``LC_*`` locale variables included)."""
    allowed = set(ENV_ALLOW) | set(settings.pass_env)
    return {k: v for k, v in os.environ.items() if k in allowed or k.startswith("LC_")}
