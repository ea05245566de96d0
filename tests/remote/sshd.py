"""A real OpenSSH server on a loopback port for the remote tests: a generated host key and user key, running as
the test user, and a HOME whose ~/.ssh (config, known_hosts, the key) is what the client reads."""

from __future__ import annotations

import contextlib
import getpass
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from tests.conftest import Processes
from tests.procs import proc_stat

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
SFTP_SERVER = next((p for p in ("/usr/lib/openssh/sftp-server", "/usr/libexec/openssh/sftp-server") if Path(p).exists()),
                   "/usr/lib/openssh/sftp-server")  # fmt: skip
# the SFTP server run as the user nobody (``Sshd.wrapper``), for what a root server would read whatever its mode
AS_NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
MISSING = (
    None
    if Path(SSHD).exists() and shutil.which("ssh-keygen")
    else "needs the OpenSSH server (sshd) and ssh-keygen"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Sshd:
    """``sshd -D`` on 127.0.0.1:``port`` in a process group of its own (``kill`` ends its sessions too). ``sftp_flags``:
    more options for its SFTP server (``-l DEBUG3``: each request it serves is logged, in ``sftp_log``); ``wrapper``:
    the command that runs it (``AS_NOBODY``: as another user)."""

    def __init__(self, base: Path, sftp_flags: tuple[str, ...] = (), wrapper: tuple[str, ...] = ()) -> None:
        self.base = base
        self.sftp_flags = sftp_flags
        self.wrapper = wrapper
        self.sftp_log = base / "sftp.log"
        base.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.host_key = base / "host_ed25519"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.host_key)], check=True)
        self.home = base / "home"
        ssh = self.home / ".ssh"
        ssh.mkdir(parents=True)
        self.user_key = ssh / "id_ed25519"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.user_key)], check=True)
        (base / "authorized_keys").write_text(self.user_key.with_suffix(".pub").read_text())
        self._configure()
        self.proc: subprocess.Popen[bytes] | None = None

    def _configure(self) -> None:
        """Write the server's config and the client's for ``port`` (and known_hosts, once ``trust`` wrote it)."""
        base, ssh = self.base, self.home / ".ssh"
        sftp = SFTP_SERVER if Path(SFTP_SERVER).exists() else "internal-sftp"
        # the flags, and what the server logs to ``sftp_log`` (sshd runs an SFTP server program through a shell)
        logged = f" {' '.join(self.sftp_flags)} -e 2>>{self.sftp_log}" if self.sftp_flags else ""
        (base / "sshd_config").write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {self.host_key}\nPidFile {base / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {base / 'authorized_keys'}\nStrictModes no\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nUsePAM no\nPermitRootLogin prohibit-password\n"
            f"Subsystem sftp {' '.join((*self.wrapper, sftp))} -d {self.home}{logged}\n"  # the far side's home is the client's: ``box:~/x`` lands there
        )
        (ssh / "config").write_text(
            f"Host testbox\n  HostName 127.0.0.1\n  Port {self.port}\n  User {getpass.getuser()}\n"
            f"  IdentityFile {self.user_key}\n"
        )
        if (ssh / "known_hosts").exists():
            self.trust()

    def trust(self) -> None:
        """Record the server's host key in the client's known_hosts."""
        key = " ".join(self.host_key.with_suffix(".pub").read_text().split()[:2])
        (self.home / ".ssh" / "known_hosts").write_text(f"[127.0.0.1]:{self.port} {key}\n")

    def start(self) -> None:
        """Start the server and wait until it listens (its log says so). The port ``_free_port`` found free may be
        taken before sshd binds it (another test's server, any process's connection): sshd then exits, and the
        server is started again on another free port, the configs rewritten for it."""
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # a root sshd's privilege separation directory
        log = self.base / "sshd.log"
        for _ in range(20):
            said = log.stat().st_size if log.exists() else 0
            with open(log, "ab") as errors:
                self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(self.base / "sshd_config")],
                                             stdout=subprocess.DEVNULL, stderr=errors, start_new_session=True)  # fmt: skip
            listening = f"Server listening on 127.0.0.1 port {self.port}.".encode()
            deadline = time.monotonic() + 60
            while listening not in log.read_bytes()[said:]:
                if self.proc.poll() is not None:
                    break
                assert time.monotonic() < deadline, "sshd did not listen: " + log.read_text()[said:]
                time.sleep(0.05)
            else:
                return
            assert b"Address already in use" in log.read_bytes()[said:], log.read_text()[said:]
            self.port = _free_port()
            self._configure()
        raise AssertionError("sshd found no free port in 20 tries")

    def kill(self) -> None:
        """Kill the server and every session it serves."""
        if self.proc is not None and self.proc.poll() is None:
            for pid in [
                self.proc.pid,
                *_descendants(self.proc.pid),
            ]:  # each session calls setsid: not in our group
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None


def _descendants(root: int) -> list[int]:
    """Every process below ``root``, from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        stat = proc_stat(entry.name) if entry.name.isdigit() else None  # None too once gone meanwhile
        if stat is not None:
            parents[int(entry.name)] = stat.parent
    found, frontier = [], [root]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        found.extend(children)
        frontier = children
    return found


def demo_host(processes: Processes, tmp_path: Path, root: Path) -> subprocess.Popen[bytes]:
    """A real tapedeck host (the scripted demo, paced, lingering when done) writing session ``far-1`` under
    ``root``: the live host on the far side, started through ``processes``, so it is killed with its process group
    and reaped when the test ends, whether it passed or failed."""
    import sys

    from core.host.demo_scenario import TASKS, write_script
    from core.host.demo_workspace import create_demo_workspace

    argv = [str(Path(sys.prefix) / "bin" / "tapedeck"), "run", "--provider",
            f"scripted:{write_script(tmp_path / 'script.json')}", "--workspace",
            str(create_demo_workspace(tmp_path / "ws")), "--sessions-root", str(root), "--session-id", "far-1",
            "--pace", "0.5", "--linger", *TASKS]  # fmt: skip
    return processes.start(argv, env={**os.environ, "TAPEDECK_HOME": str(tmp_path / "th")},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
