"""The shell tool's confinement: no descendant outlives a call, stop kills the tree, writes and network are
confined under bubblewrap, and the unconfined fallback says so."""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path

import pytest

from core.control.config import validate_config
from core.host.loop import AgentHost, HostOptions
from core.host.providers.scripted import ScriptedModel
from core.host.tools import sandbox, workspace_tools
from core.host.tools.base import WorkspaceTool
from core.host.tools.host_config import ShellSettings
from core.host.tools.sandbox import bubblewrap, shell_mode
from core.log.vocabulary import HOST_EVENT

needs_bwrap = pytest.mark.skipif(bubblewrap() is None, reason="bubblewrap cannot build a sandbox here")
MODES = [pytest.param("auto", marks=needs_bwrap, id="bubblewrap"), pytest.param("off", id="unconfined")]


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
    command = (
        f"bash -c 'exec -a background-{marker} sleep 300' & "
        f"setsid bash -c 'exec -a setsid-{marker} sleep 300' & sleep 0.3; echo spawned"
    )
    outcome = _bash(tmp_path, sandbox).run({"command": command})
    assert outcome.text == "spawned\n(exit code 0)", outcome.text
    assert _wait_gone(marker) == []


@pytest.mark.parametrize("sandbox", MODES)
def test_stop_kills_a_running_command_and_its_tree(tmp_path: Path, sandbox: str) -> None:
    marker = f"{os.getpid()}{time.monotonic_ns()}"
    stop = threading.Event()
    threading.Timer(1.0, stop.set).start()
    command = f"setsid bash -c 'exec -a stopped-{marker} sleep 300' & echo started; sleep 120"
    outcome = _bash(tmp_path, sandbox).run({"command": command, "timeout": 300}, stop)
    assert outcome.is_error and outcome.error_code == "ABORTED", outcome.text
    assert outcome.text.startswith("started\n")
    assert _wait_gone(f"stopped-{marker}") == []


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
