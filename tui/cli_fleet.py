"""``tapedeck fleet [ROOT…]`` (and ``tapedeck watch ROOT ROOT…``): the fleet table of every session under the roots."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from core.cli.args import add_interval, add_roots, check_local_roots, check_seconds, path_argument
from core.cli.common import guarded
from core.control.config import load_config
from core.log.tail import FOLLOW_INTERVAL
from core.remote.target import parse_remote
from tui.cli import check_terminal, tui_commands


def run_fleet(roots: Sequence[str], config_file: str | None, interval: float) -> int:
    """Check the roots and the interval, then start the TUI on the fleet table."""
    check_seconds("interval", interval)
    check_local_roots(roots)
    config = load_config(config_file)
    check_terminal()
    from tui.app import TapedeckApp

    targets = [Path(root) if parse_remote(root) else Path(root).expanduser() for root in roots]
    return TapedeckApp(targets[0], interval=interval, fleet_roots=targets, config=config).run_until_quit()


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``fleet``."""
    p = sub.add_parser(
        "fleet",
        help=tui_commands()["fleet"].help,
        description=(
            "One table of every session under the sessions roots (or of the logs and session directories given): "
            "title, host state, attention (why a session needs you now), turn.step, how the last turn ended, phase "
            "and class, time since the last write, context and cache-hit %, cost and $/h. Rows needing attention "
            "come first; n jumps to the next one, / filters (words, state:paused, host:local, attention), Enter "
            "opens a session, P, m and S pause or resume, message and stop the session under the cursor after a "
            "confirm, and a toast gives the host's (or the DSH bridge's) answer."
        ),
    )
    add_roots(p)
    p.add_argument("--config", metavar="FILE", type=path_argument, help="config file whose alerts and model sections apply")
    add_interval(p, FOLLOW_INTERVAL, "how often an opened session's file is checked for appends")
    p.set_defaults(handler=guarded(lambda a: run_fleet(a.roots, a.config, a.interval)))
