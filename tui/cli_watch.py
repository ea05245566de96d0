"""``tapedeck watch [PATH]``: open a session log, a session directory or a sessions root in the TUI."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from core.cli.args import add_interval, check_seconds, path_argument, remote_path
from core.cli.common import guarded, warn
from core.log.layout import (
    default_sessions_root,
    missing_path,
    resolve_log_path,
    sessions_under,
    stat_or_none,
)
from core.log.reader import read_log_header
from core.log.sessions import discover_sessions
from core.log.tail import FOLLOW_INTERVAL
from core.remote.target import RemoteTarget, parse_remote
from core.shared.errors import LogIncompleteError, TapedeckError
from tui.cli import check_terminal, tui_commands


def watch_target(path: str | None) -> Path:
    """What ``watch`` opens: PATH checked for readability, or the newest session under the default root."""
    if path is None:
        root = default_sessions_root()
        skipped: list[str] = []
        refs = discover_sessions(root, skipped)
        for note in skipped:  # what the listing left out (a newer session among them), as `sessions` names it
            warn(note)
        if not refs:
            raise TapedeckError(f"{sessions_under(0, [root])}; pass a log file, a session directory or a sessions root")
        return refs[0].path
    remote = parse_remote(path)
    if remote is not None:
        return _remote_target(remote)
    target = Path(path).expanduser()
    if stat_or_none(target) is None:
        raise TapedeckError(missing_path(target))
    from tui.app import is_session_log_target

    if not is_session_log_target(target):
        return target
    with contextlib.suppress(LogIncompleteError):  # a log being born (no complete first line yet): the view waits
        read_log_header(resolve_log_path(target))  # a log that cannot be opened is refused here, with the reason
    return target


def _remote_target(remote: RemoteTarget) -> Path:
    """A remote target checked before the TUI starts (the machine answers, its host key is known): one session
    (a log or a session directory) as its log's path, whose header is read if it is complete; a sessions root as
    it is (it opens in the fleet table)."""
    from core.remote.link import link_for
    from core.remote.sessions import remote_header, remote_logs, session_log_of

    link = link_for(remote)
    log = session_log_of(remote, remote_logs(link, remote))
    if log is None:  # a sessions root, an empty one too (sessions show in the table as they appear, as locally)
        return Path(str(remote))
    with contextlib.suppress(LogIncompleteError):  # a log being born: the view waits for its header
        remote_header(link, log)
    return Path(str(log))


def run_watch(args: argparse.Namespace) -> int:
    """Start the TUI."""
    check_seconds("interval", args.interval)
    from tui.app import is_session_log_target
    from tui.cli_fleet import run_fleet
    from tui.heap import steady_heap

    steady_heap()  # a big log's load frees big buffers: they go back to the system, not into heap holes

    if len(args.path) > 1:
        return run_fleet(_live(args), args.config, args.interval)
    target = watch_target(args.path[0] if args.path else None)
    if not is_session_log_target(target):  # a sessions root: the fleet table
        return run_fleet(_live(args, [str(target)]), args.config, args.interval)
    from core.control.config import load_config
    from tui.app import TapedeckApp

    config = load_config(args.config)
    check_terminal()
    return TapedeckApp(target, follow=not args.no_follow, interval=args.interval, config=config).run_until_quit()


def _live(args: argparse.Namespace, paths: list[str] | None = None) -> list[str]:
    """The paths the fleet table opens on (``args.path`` unless given); refused with ``--no-follow``: the table
    is live, and ``tapedeck sessions`` lists the same sessions once."""
    paths = args.path if paths is None else paths
    if args.no_follow:
        raise TapedeckError(
            "--no-follow reads one session once; several paths or a sessions root open the fleet table, which "
            f"always follows: run `tapedeck sessions {' '.join(paths)}` for the sessions as they are now"
        )
    return paths


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``watch``."""
    p = sub.add_parser(
        "watch",
        help=tui_commands()["watch"].help,
        description=(
            "Open a session log (raw or zstd), a session directory, or a sessions root (which lists every "
            "session, subagent children included, in the fleet table: `tapedeck fleet`). Without PATH the newest "
            "session under the default root opens. Several paths open the fleet table of them all. Any PATH may be "
            "[user@]host:PATH on another machine, read over SSH with nothing installed there."
        ),
    )
    p.add_argument("path", nargs="*", metavar="PATH", type=remote_path,
                   help="log file, session directory or sessions root, here or [user@]host:PATH")  # fmt: skip
    p.add_argument("--no-follow", action="store_true",
                   help="read the log once and do not wait for appends (one session only: the fleet table of a "
                        "sessions root always follows; `tapedeck sessions ROOT` lists it once)")  # fmt: skip
    add_interval(p, FOLLOW_INTERVAL, "how often to check the followed file for appends")
    p.add_argument("--config", metavar="FILE", type=path_argument, help="config file (TOML or JSON) whose [alerts] and [model] sections apply")
    p.set_defaults(handler=guarded(run_watch))
