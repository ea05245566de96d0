"""``tapedeck alerts``: the alerts of session logs, as they are or as they grow."""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Sequence
from typing import Any

from core.alerts.engine import Alert
from core.alerts.hook import HookRunner
from core.cli import COMMANDS
from core.cli.args import (
    add_interval,
    add_json,
    check_seconds,
    decimal,
    layout_notes,
    path_argument,
    remote_path,
)
from core.cli.common import RULE_SECTIONS, emit, for_terminal, guarded, warn
from core.control.config import PolicyConfig, load_config, parse_value, set_value
from core.fleet.alerts import AlertSources
from core.log.layout import sessions_under
from core.shared.clock import IMPLAUSIBLE, utc_time
from core.shared.errors import TapedeckError
from core.shared.text import path_text, quoted, short_session, shown


def alerts_config(config_file: str | None, overrides: Sequence[str]) -> PolicyConfig:
    """The config file's (or the default) ``alerts`` and ``model`` sections with ``--set KEY=VALUE`` applied."""
    config = load_config(
        config_file, only=None if overrides else RULE_SECTIONS
    )  # a change re-validates them all
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep:
            raise TapedeckError(f"--set {shown(item)}: expected KEY=VALUE, such as alerts.budget.usd=5")
        config, _ = set_value(config, key.strip(), parse_value(text))
    return config


def render_alert(alert: Alert) -> str:
    """One line: when, severity, cause, session, seq and the reason."""
    when = (
        (utc_time(alert.at, "%Y-%m-%d %H:%M:%S") or IMPLAUSIBLE) if alert.at else "-" * 19
    )  # 19 wide, as a date
    where = quoted(short_session(alert.session)) or path_text(
        alert.path
    )  # the log's id, its controls escaped
    return f"{when}  {alert.severity:<8} {alert.cause:<13} {where}  seq {alert.seq}  {alert.reason}"


def _once(args: argparse.Namespace, config: PolicyConfig, hook: HookRunner | None) -> int:
    sources = AlertSources(args.paths, config, warn=warn)
    found = sources.poll(final=True)
    payload = [a.to_dict() for a in found]
    unread = sources.unreached or sources.unread
    none = "no alerts in the logs that could be read (some could not: see stderr)" if unread else "no alerts"
    if not (unread or sources.watches or (sources.remote and sources.remote.watches)):
        none += f": {sessions_under(0, args.paths)}"  # nothing was read: not a quiet run
    emit(payload, args.json, lambda _: "\n".join(render_alert(a) for a in found) or none)
    for alert in found:
        if hook is not None:
            hook.submit(alert)
    if unread:  # a root, or a log among several, that could not be read: the report is not an answer
        return 2
    return 1 if found else 0


def _follow(args: argparse.Namespace, config: PolicyConfig, hook: HookRunner | None) -> int:
    """Print each alert as the logs grow, until SIGTERM or Ctrl-C ends the command (``core.cli.stops.ending``).
    The hook runs for the alerts raised after the follow began, not for those of a log's history: the same log
    would otherwise run it for every past alert again at each start."""
    follower = AlertSources(args.paths, config, act=config.alerts.acts, warn=warn)
    for alert in follower.follow(threading.Event(), args.interval):
        line = alert.to_json().decode() if args.json else for_terminal(render_alert(alert))
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        if hook is not None and not _replayed(follower, alert):
            hook.submit(alert)
    return 0


def _replayed(follower: AlertSources, alert: Alert) -> bool:
    """Whether ``alert`` was raised by its log's history (``AlertWatch.replayed``), here or on another machine."""
    watch = follower.watch_for(alert)
    if watch is None and follower.remote is not None:
        watch = follower.remote.watch_for(alert)
    return watch is not None and watch.replayed(alert)


def run(args: argparse.Namespace) -> int:
    """Report or follow the alerts."""
    check_seconds("interval", args.interval)
    check_seconds("exec-timeout", args.exec_timeout)
    config = alerts_config(args.config, args.set)
    hook = HookRunner(args.exec, args.exec_timeout, warn) if args.exec else None
    for note in layout_notes(args.paths, "alerts"):
        warn(note)  # a directory that holds no session where a root would
    try:
        return (_follow if args.follow else _once)(args, config, hook)
    finally:
        if hook is not None:
            hook.close(None if not args.follow else args.exec_timeout)


def register(subparsers: Any) -> None:
    """Add the ``alerts`` subcommand."""
    p = subparsers.add_parser(
        "alerts",
        help=COMMANDS["alerts"].help,
        description=(
            "Run the alert rules over session logs (log files, session directories, sessions roots), here or on "
            "another machine as [user@]host:PATH (over SSH's SFTP, with your ssh config, keys and known_hosts). "
            "Without --follow, report the alerts of the logs as they are and exit 1 when any fired (0 when none, 2 "
            "when a machine could not be reached, a log named is no session log (empty, or its first line no "
            "session header) or a log was truncated, replaced or removed while read: one of several is named on "
            "stderr, the others' alerts reported); with --follow, print each alert as the logs grow, new sessions "
            "under a root included, until interrupted: a remote log that cannot be read raises 'unreachable'."
        ),
    )
    p.add_argument("paths", nargs="+", metavar="PATH", type=remote_path,
                   help="log file, session directory or sessions root; [user@]host:PATH on another machine")  # fmt: skip
    p.add_argument("--follow", action="store_true", help="keep reading as the logs grow; one line per alert")
    add_json(p, "JSON: a list, or with --follow one object per line")
    p.add_argument(
        "--exec",
        metavar="CMD",
        help="run CMD (with /bin/sh) for each alert, the alert's JSON on stdin; with --follow, "
        "only for the alerts raised after it began (the logs' past alerts are listed, not run)",
    )
    p.add_argument("--exec-timeout", type=decimal, default=10.0, metavar="S",
                   help="time limit of each --exec command (default 10)")  # fmt: skip
    p.add_argument(
        "--config",
        metavar="FILE",
        type=path_argument,
        help="config file (TOML or JSON) whose [alerts] and [model] sections apply",
    )
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="change one config key, such as alerts.budget.usd=5 (repeatable)")  # fmt: skip
    add_interval(p, 0.1, "how often --follow checks the logs")
    p.set_defaults(handler=guarded(run))
