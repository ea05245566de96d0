"""``tapedeck demo``: a scripted agent fixes a failing test in a throw-away workspace, live in the TUI.

The host runs as a separate process (``tapedeck run`` with the bundled script), exactly as it would for a
real session; the TUI follows its log and sends operator requests through the control inbox. Quitting the
TUI asks the host to stop through that same inbox.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from core.cli.common import guarded
from core.control import append_request, inbox_path
from core.errors import TapedeckError
from core.host.demo_scenario import TASKS, write_script
from core.host.demo_workspace import create_demo_workspace
from core.log.layout import default_sessions_root, log_path
from tui.cli import TUI_COMMANDS

BASE_PACE = 0.8  # seconds between steps at --speed 1
BASE_CHUNK_DELAY = 0.004


def host_command(args: argparse.Namespace, workspace: Path, script: Path, session_id: str, linger: bool) -> list[str]:
    """The ``tapedeck run`` command line that plays the demo."""
    pace = BASE_PACE / args.speed if args.speed > 0 else 0.0
    chunk = BASE_CHUNK_DELAY / args.speed if args.speed > 0 else 0.0
    cmd = [sys.executable, "-m", "core.cli", "run", *TASKS, "--provider", f"scripted:{script}",
           "--workspace", str(workspace), "--sessions-root", str(args.sessions_root), "--session-id", session_id,
           "--pace", str(pace), "--chunk-delay", str(chunk)]  # fmt: skip
    if args.zstd:
        cmd.append("--zstd")
    if linger:
        cmd.append("--linger")
    return cmd


def _prepare(args: argparse.Namespace) -> tuple[Path, Path]:
    if args.speed < 0:
        raise TapedeckError(f"--speed must be 0 (no pauses) or positive, not {args.speed}")
    scratch = Path(tempfile.mkdtemp(prefix="tapedeck-demo-"))
    workspace = Path(args.workspace).expanduser().resolve() if args.workspace else scratch / "workspace"
    if workspace.exists() and any(workspace.iterdir()):
        raise TapedeckError(f"--workspace {workspace} is not empty; the demo writes its own project there")
    create_demo_workspace(workspace)
    return workspace, write_script(scratch / "demo-script.json")


def run_demo(args: argparse.Namespace) -> int:
    """Run the demo with or without the TUI."""
    workspace, script = _prepare(args)
    session_id = f"demo-{uuid.uuid4().hex[:12]}"
    log = log_path(Path(args.sessions_root), str(workspace), session_id, args.zstd)
    if args.no_tui:
        print(f"workspace {workspace}\nlog {log}", flush=True)
        return subprocess.call(host_command(args, workspace, script, session_id, linger=False))
    host = subprocess.Popen(
        host_command(args, workspace, script, session_id, linger=True),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 20
        while not log.exists():
            if host.poll() is not None or time.monotonic() > deadline:
                raise TapedeckError(f"the demo host did not start (exit code {host.poll()}); try --no-tui")
            time.sleep(0.05)
        from tui.app import TapedeckApp

        TapedeckApp(log, follow=True).run()
    finally:
        _stop(host, log)
    print(f"demo log kept at {log}\nworkspace {workspace}")
    return 0


def _stop(host: subprocess.Popen[bytes], log: Path) -> None:
    if host.poll() is None:
        try:
            append_request(inbox_path(log), "stop", {"reason": "the demo TUI was closed"})
            host.wait(timeout=10)
        except (TapedeckError, subprocess.TimeoutExpired, OSError):
            os.killpg(host.pid, signal.SIGTERM)
            host.wait(timeout=5)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``demo``."""
    p = sub.add_parser(
        "demo",
        help=TUI_COMMANDS["demo"].help,
        description=(
            "Create a small Python project with a failing test in a temporary workspace, run the reference host "
            "on it with a bundled six-turn script, and open the TUI on the live log."
        ),
    )
    p.add_argument("--no-tui", action="store_true", help="print progress and the log path instead of opening the TUI")
    p.add_argument("--speed", type=float, default=1.0, help="pace multiplier; 0 runs at full speed (default 1)")
    p.add_argument("--workspace", help="an empty (or new) directory for the demo project (default: a temp dir)")
    p.add_argument(
        "--sessions-root", default=str(default_sessions_root()), help="where the log goes (default: %(default)s)"
    )
    p.add_argument("--zstd", action="store_true", help="write the log zstd-compressed")
    p.set_defaults(handler=guarded(run_demo))
