"""The shell tool's confinement: no descendant outlives a call, stop kills the tree, writes and network are
confined under bubblewrap, and the unconfined fallback says so."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from core.control.config import validate_config
from core.host.host_config import ShellSettings
from core.host.loop import AgentHost, HostOptions
from core.host.providers.scripted import ScriptedModel
from core.host.tools import sandbox, seccomp, workspace_tools
from core.host.tools.base import WorkspaceTool
from core.host.tools.sandbox import bubblewrap, shell_mode
from core.log.vocabulary import HOST_EVENT
from tests.conftest import Processes

needs_bwrap = pytest.mark.skipif(bubblewrap() is None, reason="bubblewrap cannot build a sandbox here")
MODES = [pytest.param("auto", marks=needs_bwrap, id="bubblewrap"), pytest.param("off", id="unconfined")]

# The interpreter itself, not a virtualenv's link to it: a venv under /tmp is hidden by the sandbox's private /tmp.
_PYTHON = os.path.realpath(shutil.which("python3") or sys.executable)


def _bash(ws: Path, sandbox: str = "auto", network: bool = False) -> WorkspaceTool:
    settings = ShellSettings(sandbox=sandbox, network=network)
    return {t.name: t for t in workspace_tools(ws, shell=lambda: settings)}["bash"]


def _host_pids_with(marker: str) -> list[int]:
    """Host pids whose command line holds ``marker`` (pids inside a PID namespace mean nothing out here)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(name))
    return found


def _wait_gone(marker: str) -> list[int]:
    for _ in range(200):
        left = _host_pids_with(marker)
        if not left:
            return []
        time.sleep(0.05)
    return left


@pytest.mark.parametrize("sandbox", MODES)
def test_setsid_children_do_not_outlive_the_call(tmp_path: Path, sandbox: str) -> None:
    marker = f"{os.getpid()}{time.monotonic_ns()}"
    go = tmp_path / "go"  # the command ends once both children run (not after a fixed 0.3 s)
    toucher = threading.Thread(target=_once_running, args=(go.touch, f"background-{marker}", f"setsid-{marker}"))
    toucher.start()
    command = (  # the names made when it runs, so that only the processes named so hold them, not the command line
        f'n={marker}; bash -c "exec -a background-$n sleep 300" & setsid bash -c "exec -a setsid-$n sleep 300" & '
        "until [ -e go ]; do sleep 0.01; done; echo spawned"
    )
    outcome = _bash(tmp_path, sandbox).run({"command": command})
    toucher.join()
    assert outcome.text == "spawned\n(exit code 0)", outcome.text
    assert _wait_gone(marker) == []


@pytest.mark.parametrize("sandbox", MODES)
def test_stop_kills_a_running_command_and_its_tree(tmp_path: Path, sandbox: str) -> None:
    marker = f"{os.getpid()}{time.monotonic_ns()}"
    stop = threading.Event()
    stopper = threading.Thread(target=_once_running, args=(stop.set, f"stopped-{marker}", f"running-{marker}"))
    stopper.start()
    command = (  # names made as it runs, as above
        f'n={marker}; setsid bash -c "exec -a stopped-$n sleep 300" & echo started; '
        'bash -c "exec -a running-$n sleep 120"'
    )
    outcome = _bash(tmp_path, sandbox).run({"command": command, "timeout": 300}, stop)
    stopper.join()
    assert outcome.is_error and outcome.error_code == "ABORTED", outcome.text
    assert outcome.text.startswith("started\n")
    assert _wait_gone(f"stopped-{marker}") == []


def _once_running(then: Callable[[], object], *names: str) -> None:
    """Call ``then`` once a process of each of ``names`` runs (60 s at most)."""
    deadline = time.monotonic() + 60
    while not all(_host_pids_with(name) for name in names) and time.monotonic() < deadline:
        time.sleep(0.02)
    then()


@needs_bwrap
def test_sandboxed_commands_write_only_inside_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = Path(tempfile.mkdtemp(dir="/var/tmp"))  # not under /tmp, which the sandbox replaces
    try:
        command = f"echo in > inside.txt; echo out > {outside}/escaped.txt; echo tmp > /tmp/private.txt"
        outcome = _bash(ws).run({"command": command})
        assert "Read-only file system" in outcome.text, outcome.text
        assert (ws / "inside.txt").read_text() == "in\n"
        assert list(outside.iterdir()) == []
        assert not Path("/tmp/private.txt").exists()
    finally:
        shutil.rmtree(outside)


@needs_bwrap
@pytest.mark.parametrize("network", [False, True])
def test_network_only_when_configured(tmp_path: Path, network: bool) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    try:
        command = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        outcome = _bash(tmp_path, network=network).run({"command": command, "timeout": 20})
    finally:
        server.close()
    assert ("connected" in outcome.text) is network, outcome.text


def test_the_unconfined_fallback_warns() -> None:
    mode = shell_mode(ShellSettings(sandbox="off"))
    assert mode.kind == "none" and mode.warning and "not sandboxed" in mode.warning


def test_without_bubblewrap_required_refuses_and_auto_runs_unconfined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "bubblewrap", lambda: None)  # a machine where bwrap cannot build a sandbox
    refused = _bash(tmp_path, "required").run({"command": "touch ran"})
    assert refused.is_error and refused.error_code == "SANDBOX_UNAVAILABLE"
    assert "not usable" in refused.text and not (tmp_path / "ran").exists()
    assert shell_mode(ShellSettings()).warning and "unconfined" in (shell_mode(ShellSettings()).warning or "")
    assert _bash(tmp_path).run({"command": "touch ran; echo ok"}).text == "ok\n(exit code 0)"


def test_the_host_records_and_says_how_the_shell_is_confined(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "m", "responses": [{"text": "ok"}]}))
    (tmp_path / "ws").mkdir()
    said: list[str] = []
    options = HostOptions(workspace=tmp_path / "ws", progress=said.append)
    config = validate_config({"host": {"shell": {"sandbox": "off"}}})
    host = AgentHost.create(tmp_path / "root", ScriptedModel(script), config, options, tasks=["hello"])
    host.close()
    [started] = [e for e in host.session.events if e["type"] == HOST_EVENT]
    assert started["data"]["shell"]["sandbox"] == "none" and "not sandboxed" in started["data"]["shell"]["warning"]
    assert any(line.startswith("warning: the shell tool is not sandboxed") for line in said)


@needs_bwrap
def test_a_session_directory_inside_the_workspace_stays_read_only(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "m", "responses": [{"text": "ok"}]}))
    ws = tmp_path / "ws"
    ws.mkdir()
    host = AgentHost.create(ws / "sessions", ScriptedModel(script), validate_config({}), HostOptions(workspace=ws),
                            tasks=["hello"])  # fmt: skip
    try:
        before = host.writer.path.read_bytes()
        inbox = host.writer.path.parent / "control.jsonl"
        outcome = host.toolbox.run("bash", json.dumps({"command": f"echo junk >> {host.writer.path}; echo x > {inbox}; touch mine"}))
        assert "Read-only file system" in outcome.text, outcome.text
        assert host.writer.path.read_bytes() == before and not inbox.exists()
        assert (ws / "mine").exists()
    finally:
        host.close()


def _connect_command(target: str, kind: str = "stream") -> str:
    """A command that tries to reach the Unix socket ``target`` (a path, or ``@name`` for an abstract one)."""
    code = (
        "import socket, sys\n"
        f"t = {target!r}\n"
        "addr = '\\0' + t[1:] if t.startswith('@') else t\n"
        f"kind = {kind!r}\n"
        "try:\n"
        "    if kind == 'dgram-pair':\n"
        "        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
        "        a.sendto(b'hello', addr)\n"
        "    else:\n"
        "        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
        "        s.connect(addr)\n"
        "        s.sendall(b'hello')\n"
        "    print('reached')\n"
        "except OSError as exc:\n"
        "    print('refused', exc.strerror)\n"
    )
    return f"{_PYTHON} -c {shlex.quote(code)}"


class _UnixServer:
    """A listening Unix socket that records whether anything connected to it."""

    def __init__(self, address: str, kind: int = socket.SOCK_STREAM) -> None:
        self.sock = socket.socket(socket.AF_UNIX, kind)
        self.sock.bind("\0" + address[1:] if address.startswith("@") else address)
        if kind == socket.SOCK_STREAM:
            self.sock.listen(4)
        self.sock.settimeout(0)
        self.kind = kind

    def reached(self) -> bool:
        try:
            if self.kind == socket.SOCK_STREAM:
                self.sock.accept()[0].close()
            else:
                self.sock.recv(16)
        except (BlockingIOError, TimeoutError):
            return False
        return True

    def close(self) -> None:
        self.sock.close()


UNIX_CASES = [
    pytest.param("outside", False, "stream", id="outside-tmp"),
    pytest.param("outside", True, "stream", id="outside-tmp-with-network"),
    pytest.param("workspace", False, "stream", id="in-the-workspace"),
    pytest.param("abstract", True, "stream", id="abstract-with-network"),
    pytest.param("outside", False, "dgram-pair", id="datagram-pair-sendto"),
]


@needs_bwrap
@pytest.mark.parametrize(("where", "network", "kind"), UNIX_CASES)
def test_no_unix_socket_service_is_reachable(tmp_path: Path, where: str, network: bool, kind: str) -> None:
    outside = Path(tempfile.mkdtemp(dir="/var/tmp"))  # not under /tmp, which the sandbox replaces
    target = {
        "outside": str(outside / "service.sock"),
        "workspace": str(tmp_path / "service.sock"),
        "abstract": f"@tapedeck-test-{os.getpid()}-{time.monotonic_ns()}",
    }[where]
    server = _UnixServer(target, socket.SOCK_DGRAM if kind == "dgram-pair" else socket.SOCK_STREAM)
    try:
        outcome = _bash(tmp_path, network=network).run({"command": _connect_command(target, kind)})
        assert outcome.text.startswith("refused Permission denied"), outcome.text
        assert not server.reached()
    finally:
        server.close()
        shutil.rmtree(outside)


@needs_bwrap
def test_stream_pairs_and_tcp_on_loopback_still_work(tmp_path: Path) -> None:
    code = (
        "import socket\n"
        "a, b = socket.socketpair()\n"
        "a.sendall(b'pair')\n"
        "s = socket.create_server(('127.0.0.1', 0))\n"
        "c = socket.create_connection(s.getsockname())\n"
        "c.sendall(b'tcp')\n"
        "print(b.recv(8).decode(), s.accept()[0].recv(8).decode())\n"
    )
    outcome = _bash(tmp_path).run({"command": f"{_PYTHON} -c {shlex.quote(code)}"})
    assert outcome.text == "pair tcp\n(exit code 0)", outcome.text


def test_a_resumed_host_keeps_the_host_section_it_started_with(tmp_path: Path) -> None:
    from core.control.config import config_event

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "m", "responses": [{"text": "ok"}, {"text": "again"}]}))
    (tmp_path / "ws").mkdir()
    host = AgentHost.create(tmp_path / "root", ScriptedModel(script), validate_config({}),
                            HostOptions(workspace=tmp_path / "ws"), tasks=["hello"])  # fmt: skip
    # What an older host applied from its inbox: the sandbox switched off, the slice policy changed.
    host.append([config_event({"host.shell.sandbox": ("auto", "off"), "slice.fold.pinSteps": (0, 3)}, "operator")])
    host.close()
    resumed = AgentHost.resume(host.writer.path, ScriptedModel(script), validate_config({}), HostOptions(None))
    try:
        assert resumed.hooks.config.host.shell.sandbox == "auto"
        assert resumed.hooks.config.slice.fold.pinSteps == 3
    finally:
        resumed.close()


@needs_bwrap
def test_without_a_filter_for_the_architecture_the_host_says_unix_sockets_stay_reachable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "seccomp_program", lambda: None)  # a machine the filter has no numbers for
    mode = shell_mode(ShellSettings(sandbox="required"))
    assert mode.kind == "bubblewrap" and "can still connect to Unix-socket services" in (mode.warning or "")
    assert _bash(tmp_path, "required").run({"command": "echo ran"}).text == "ran\n(exit code 0)"


@pytest.mark.parametrize("machine", sorted(seccomp.ABIS))
def test_the_filter_is_whole_instructions_that_jump_forward_only(machine: str) -> None:
    program = seccomp.build(seccomp.ABIS[machine])
    assert len(program) % 8 == 0
    count = len(program) // 8
    for i in range(count):
        code, jt, jf, _k = struct.unpack("=HBBI", program[i * 8 : i * 8 + 8])
        if code == seccomp.JEQ_K or code == seccomp.JGE_K:
            assert i + 1 + max(jt, jf) < count
        if i == count - 1:
            assert code == seccomp.RET_K


@pytest.mark.parametrize("sandbox", MODES)
def test_a_command_does_not_outlive_a_host_killed_while_it_runs(
    tmp_path: Path, sandbox: str, processes: Processes
) -> None:
    """Unconfined, the reaper outlived a host killed with SIGKILL, and so did the command and all it started, for as
    long as they ran (a dev server: for good); like bubblewrap's, it now goes with the host."""
    marker = f"{os.getpid()}{time.monotonic_ns()}"
    command = f'n={marker}; setsid bash -c "exec -a orphan-$n sleep 300" & exec -a running-$n sleep 300'  # names made as it runs
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"toolCalls": [{"name": "bash", "arguments": {"command": command}}]},
                                                {"text": "done"}]}))  # fmt: skip
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"host": {"shell": {"sandbox": sandbox}}}))
    (tmp_path / "ws").mkdir()
    host = processes.start([sys.executable, "-m", "core.cli", "run", "task", "--provider", f"scripted:{script}",
                            "--workspace", str(tmp_path / "ws"), "--sessions-root", str(tmp_path / "root"),
                            "--config", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        started = lambda: all(_host_pids_with(f"{name}-{marker}") for name in ("running", "orphan"))  # noqa: E731
        for _ in range(600):  # both sleeps run: the sandbox (or the reaper) is set up, the host's death is watched
            if started() or host.poll() is not None:
                break
            time.sleep(0.05)
        assert started(), "the command did not start"
        host.kill()
        host.wait()
        assert _wait_gone(marker) == []
    finally:
        for pid in _host_pids_with(marker):  # what the test failed on: not left running
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
