"""``tapedeck demo``: a scripted agent fixes a failing test in a throw-away workspace, live in the TUI.

The host runs as a separate process (``tapedeck run`` with the bundled script), exactly as it would for a
real session; the TUI follows its log and sends operator requests through the control inbox. The host lives only
as long as the TUI: quitting asks it to stop through the inbox, a closed terminal (SIGHUP) or a SIGTERM quits the TUI
the same way, and if the TUI process dies anyway the kernel kills the host (``PR_SET_PDEATHSIG``); without the TUI, the
demo process stands for it. The throw-away workspace is removed on exit unless ``--keep``.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import math
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from core.cli.args import MAX_SECONDS, check_utf8_path, decimal, path_argument
from core.cli.common import guarded
from core.control.inbox import append_request, inbox_path
from core.host.demo_scenario import TASKS, write_script
from core.host.demo_workspace import create_demo_workspace, make_scratch, unowned_scratches
from core.log.layout import default_sessions_root, log_path
from core.shared.errors import TapedeckError
from core.shared.held_signals import block
from core.shared.text import first_few, plain_number, quoted_path
from tui.cli import check_terminal, tui_commands

BASE_PACE = 1.5  # seconds between steps at --speed 1: time for a newcomer to try the controls
BASE_CHUNK_DELAY = 0.004
MIN_SPEED = BASE_PACE / MAX_SECONDS  # the slowest pace the host takes: a step a day
PR_SET_PDEATHSIG = 1  # prctl(2)
START_SECONDS = 20  # how long the TUI waits for the host's log
FORWARDED = (signal.SIGTERM, signal.SIGINT)  # what a demo without the TUI passes on to its host
NAMED_SCRATCHES = 3  # demo directories no demo removes that the closing lines name (the rest are counted)


def host_command(
    args: argparse.Namespace, workspace: Path, script: Path, session_id: str, linger: bool
) -> list[str]:
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


def _prepare(args: argparse.Namespace) -> tuple[Path, Path, Path]:
    if not (args.speed == 0 or MIN_SPEED <= args.speed < math.inf):
        raise TapedeckError(
            f"--speed must be 0 (no pauses) or a finite number from {plain_number(MIN_SPEED)} (a step a day), not {args.speed:g}"
        )
    given = Path(args.workspace).expanduser().resolve() if args.workspace else None
    if given is not None and given.exists() and not given.is_dir():
        raise TapedeckError(f"--workspace {quoted_path(given)} is not a directory")
    if given is not None:  # before the demo writes its project there: the host refuses it, the log records it
        check_utf8_path("--workspace", given)
    scratch = make_scratch(args.keep)
    workspace = given or scratch / "workspace"
    if workspace.exists() and any(workspace.iterdir()):
        shutil.rmtree(scratch)
        raise TapedeckError(
            f"--workspace {quoted_path(workspace)} is not empty; the demo writes its own project there"
        )
    create_demo_workspace(workspace)
    return scratch, workspace, write_script(scratch / "demo-script.json")


def _tie_to_demo() -> None:
    """In the host child, before its exec: SIGTERM and Ctrl-C wait until the host holds them (``block``), so one the
    demo passes on while the host's interpreter starts is not lost to the default action (exit -15, no word); and
    the kernel sends SIGTERM when the demo process dies, however it dies (Linux)."""
    block()
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def run_demo(args: argparse.Namespace) -> int:
    """Run the demo with or without the TUI; the host never outlives it, the scratch files only with --keep."""
    if not args.no_tui:
        check_terminal()  # before a workspace is made or a host started
    scratch, workspace, script = _prepare(args)
    session_id = f"demo-{uuid.uuid4().hex[:12]}"
    log = log_path(Path(args.sessions_root), str(workspace), session_id, args.zstd)
    stopped = False  # a signal ended the host, which named the `tapedeck run --resume` that continues it
    try:
        if args.no_tui:
            print(f"workspace {quoted_path(workspace)}", flush=True)  # the host names the log next
            code = _play(host_command(args, workspace, script, session_id, linger=False))
            stopped = code in (128 + signal.SIGINT, 128 + signal.SIGTERM)
            return code
        _watch(args, workspace, script, session_id, log, lambda: _cleanup(args, scratch, workspace, log))
        return 0
    finally:
        _cleanup(args, scratch, workspace, log, stopped)


def _play(command: list[str]) -> int:
    """Run the host without the TUI, tied to this process as under it: the kernel ends the host when this process
    dies, and a SIGTERM or Ctrl-C here is passed on to it, so it stops as ``tapedeck run`` does (its log resumable,
    its state ``exited``, exit 143 or 130) before the caller cleans up. In a session of its own, it gets each once."""
    host = subprocess.Popen(command, start_new_session=True, preexec_fn=_tie_to_demo)  # noqa: PLW1509 - a signal mask and a prctl call, before exec
    previous = {sig: signal.signal(sig, lambda signum, _frame: host.send_signal(signum)) for sig in FORWARDED}
    try:
        code = host.wait()
        return 128 - code if code < 0 else code  # killed by signal N: 128 + N, as a shell reports it
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _watch(
    args: argparse.Namespace,
    workspace: Path,
    script: Path,
    session_id: str,
    log: Path,
    cleanup: Callable[[], None],
) -> None:
    errors = script.with_name("host-errors.txt")  # what the host says on stderr, named if it fails to start
    with errors.open("wb") as err:
        host = subprocess.Popen(
            host_command(args, workspace, script, session_id, linger=True),
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
            preexec_fn=_tie_to_demo,  # noqa: PLW1509 - a signal mask and a prctl call, before exec
        )
    try:
        deadline = time.monotonic() + START_SECONDS
        while not log.exists():
            if host.poll() is not None:
                said = errors.read_text(errors="replace").strip().splitlines()
                why = (
                    said[-1].removeprefix("tapedeck: ") if said else f"it exited with code {host.returncode}"
                )
                raise TapedeckError(f"the demo host did not start: {why}")
            if time.monotonic() > deadline:
                raise TapedeckError(f"the demo host wrote no log within {START_SECONDS} s; try --no-tui")
            time.sleep(0.05)
        from tui.app import TapedeckApp
        from tui.screens.control import first_run_hint

        def hangup(*_: object) -> None:
            # The terminal is gone, and the TUI with it: stop the host and clean up here, then leave at once.
            _stop(host, log)
            cleanup()
            os._exit(128 + signal.SIGHUP)

        previous = signal.signal(signal.SIGHUP, hangup)
        try:  # a SIGTERM (kill, a service manager) quits as q does: the terminal is given back, then the host stopped
            code = TapedeckApp(log, follow=True, hint=first_run_hint).run_until_quit()
        finally:
            signal.signal(signal.SIGHUP, previous)
        if code:
            raise SystemExit(code)
    finally:
        _stop(host, log)


def _cleanup(
    args: argparse.Namespace, scratch: Path, workspace: Path, log: Path, stopped: bool = False
) -> None:
    """Remove the scratch files (unless --keep) and say what is left; ``stopped``: the host, stopped by a signal,
    named a resume that needs the demo's script."""
    # without the TUI the host named the log as it started, still on the screen; a TUI covered its words
    kept = "demo log kept (its path above)" if args.no_tui else f"demo log kept at {quoted_path(log)}"
    lines = [kept if log.exists() else "no demo log was written"]
    if args.keep:
        lines.append(f"workspace kept at {quoted_path(workspace)} (--keep)")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
        lines.append(
            f"workspace {quoted_path(workspace)} " + ("kept (yours)" if args.workspace else "removed")
        )
        if stopped:
            lines.append("the demo's script is removed too (--keep keeps it), so the `tapedeck run --resume` above "
                         "cannot continue it")  # fmt: skip
    if others := unowned_scratches(scratch):
        named = first_few([quoted_path(p) for p in others], NAMED_SCRATCHES)
        lines.append(
            "demo directories no demo removes (kept with --keep, or left by a demo killed before demos locked "
            f"theirs; rm -r them when done): {named}"
        )
    with contextlib.suppress(OSError):  # the terminal may be gone
        print("\n".join(lines), flush=True)


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
        help=tui_commands()["demo"].help,
        description=(
            "Create a small Python project with a failing test in a temporary workspace, run the reference host "
            "on it with a bundled six-turn script, and open the TUI on the live log. The host lives only as long as "
            "the demo: quitting the TUI stops it (so does a SIGTERM, which quits as q does: exit 143); with --no-tui "
            "the demo ends with the run and takes the run's exit status (0 when every turn completed, 130 or 143 "
            "when Ctrl-C or a SIGTERM stopped it). The log is kept; the temporary workspace is removed unless --keep."
        ),
    )
    p.add_argument(
        "--no-tui", action="store_true", help="print progress and the log path instead of opening the TUI"
    )
    p.add_argument(
        "--speed",
        type=decimal,
        default=1.0,
        metavar="X",
        help="how fast it plays: 2 plays twice as fast, 0.5 half as fast, 0 with no pauses (default 1)",
    )
    p.add_argument(
        "--workspace",
        metavar="DIR",
        type=path_argument,
        help="an empty (or new) directory for the demo project (default: a temp dir)",
    )
    p.add_argument(
        "--sessions-root",
        default=str(default_sessions_root()),
        metavar="DIR",
        type=path_argument,
        help="where the log goes (default: %(default)s)",
    )
    p.add_argument("--zstd", action="store_true", help="write the log zstd-compressed")
    p.add_argument(
        "--keep", action="store_true", help="keep the throw-away workspace and script after the demo"
    )
    p.set_defaults(handler=guarded(run_demo))
