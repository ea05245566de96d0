"""``tapedeck status``: the prolong-memory status report of a session, rebuilt from its logs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from core.cli import COMMANDS
from core.cli.args import add_json, add_log_path, path_argument, whole
from core.cli.common import emit, guarded
from core.control.config import config_events, load_config, logged_config
from core.policies import prolong_config
from core.policies.prolong import (
    ProlongError,
    render_status,
    session_workspace,
    status_from_log,
    workspace_gone,
)
from core.read.load import load_session
from core.read.session import Session
from core.shared.text import quoted_path


def register(subparsers: Any) -> None:
    """Add the ``status`` subcommand."""
    parser = subparsers.add_parser(
        "status",
        help=COMMANDS["status"].help,
        description=(
            "Report the prolong-memory state of a session: where its workspace log file is, whether the host "
            "could write it, how many sections it holds, and which of the agent's calls touching it were denied. "
            "The session log and the workspace log file are read, never written."
        ),
    )
    add_log_path(parser)
    parser.add_argument("--workspace", metavar="DIR", type=path_argument,
                        help="workspace directory (default: the one the session last ran in: its newest tapedeck/host "
                        "event's, else the header's cwd)")  # fmt: skip
    parser.add_argument(
        "--config",
        metavar="FILE",
        type=path_argument,
        help="policy config file (TOML or JSON) whose [prolong] section applies when the log records none "
        "(a DeepSeek Harness log); a tapedeck host's log records the config it ran with",
    )
    parser.add_argument("--log-file", metavar="F", help="override prolong.logFile")
    parser.add_argument(
        "--log-window",
        type=whole,
        metavar="N",
        help="override prolong.logWindow (0 full, N last N, -1 disabled)",
    )
    parser.add_argument("--deny-keep", type=whole, metavar="N", help="override prolong.denyKeep")
    add_json(parser)
    parser.set_defaults(handler=guarded(run))


def resolve_config(args: argparse.Namespace, session: Session) -> prolong_config.ProlongConfig:
    """The session's effective prolong config (from its log, else ``--config``) with the overrides applied."""
    logged = logged_config(config_events(session))
    raw: dict[str, object] = {}
    if logged is not None:
        raw = logged.prolong.to_dict()
    elif args.config:
        raw = load_config(args.config).prolong.to_dict()
    for key, value in (
        ("logFile", args.log_file),
        ("logWindow", args.log_window),
        ("denyKeep", args.deny_keep),
    ):
        if value is not None:
            raw[key] = value
    return prolong_config.validate(raw)


def resolve_workspace(session: Session, workspace: str | None) -> Path:
    """``--workspace`` when given, else the session's own (``session_workspace``)."""
    if workspace:
        path = Path(workspace)
        if not path.is_dir():
            raise ProlongError(f"--workspace {quoted_path(workspace)}: not a directory")
        return path
    try:
        return session_workspace(session)
    except ProlongError as exc:
        raise ProlongError(f"{exc}; pass --workspace DIR") from None


def run(args: argparse.Namespace) -> int:
    """Print the status report."""
    session = load_session(args.path, retain=False, readback=True, index=True)
    config = resolve_config(args, session)
    if not config.register_command:
        raise ProlongError(
            "the prolong status command is turned off for this session (prolong.registerCommand is false)"
        )
    workspace = resolve_workspace(session, args.workspace)
    # first the report, which reads events back (and says so if the log changed meanwhile); then the session's own
    # workspace, which may be gone since it ran: no log file can be looked for there, nor its probe judged
    report = status_from_log(session, workspace, config)
    gone = workspace_gone(workspace, config)
    if gone is not None:
        raise ProlongError(f"{gone}; pass --workspace DIR where it is now")
    emit(report.to_dict(), args.json, lambda _: render_status(report))
    return 0
