"""The ``fold`` subcommand: preview what the tool-result fold does to each tool result on the surface."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from typing import Any

from core.cli import COMMANDS
from core.cli.args import add_json, add_log_path, path_argument
from core.cli.common import column, emit, guarded, seq_width
from core.control.config import CONFIG_EVENT, load_config, parse_value, replay_config, set_value
from core.policies.fold import FOLD, ResultCalls, preview_fold, shown_through
from core.policies.slice_config import SliceConfig
from core.read.load import load_session
from core.read.session import Session
from core.read.summary import human_chars
from core.shared.errors import ConfigError
from core.shared.text import shown


def effective_config(session: Session, config_file: str | None, overrides: Sequence[str]) -> SliceConfig:
    """The slice config a host would run with: the file's, plus logged ``tapedeck/config`` changes, plus ``--set``."""
    changes = (session.events[seq] for seq in session.seqs_of((CONFIG_EVENT,)))
    config = replay_config(load_config(config_file), changes)
    for pair in overrides:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set expects KEY=VALUE, e.g. fold.pinSteps=2 (got {shown(pair)})")
        dotted = key.strip() if key.strip().startswith("slice.") else f"slice.{key.strip()}"
        config, _ = set_value(config, dotted, parse_value(text))
    return config.slice


def fold_report(session: Session, config: SliceConfig, calls: ResultCalls | None = None) -> dict[str, Any]:
    """The ``fold`` preview as plain data: one row per surface tool result plus totals."""
    shown = shown_through(session)
    rows = preview_fold(session, config, calls, shown)
    planned = [r for r in rows if r.status == FOLD]
    return {
        "path": str(session.path) if session.path else None,
        "shownThrough": shown,
        "results": len(rows),
        "byStatus": dict(Counter(r.status for r in rows)),
        "wouldFold": len(planned),
        "charsBefore": sum(r.chars_before for r in planned),
        "charsAfter": sum(r.chars_after for r in planned),
        "rows": [r.to_dict() for r in rows],
    }


def _render(report: dict[str, Any]) -> str:
    if not report["rows"]:
        return "no tool results on the surface"
    width = seq_width(r["seq"] for r in report["rows"])
    lines = [f"{'seq':>{width}}  {'t.s.c':<8} {'tool':<16} {'status':<10} {'digest':<7} {'chars':<15} note"]
    for r in report["rows"]:
        address = f"{r['turn']}.{r['step']}.{r['call']}"
        chars = human_chars(r["charsBefore"])
        if r["charsAfter"] != r["charsBefore"]:
            chars += f" → {human_chars(r['charsAfter'])}"
        tool = r["tool"] + (f" {r['path']}" if r["path"] else "")
        lines.append(
            f"{r['seq']:>{width}}  {address:<8} {column(tool, 16)} {r['status']:<10} {r['digest'] or '-':<7} {chars:<15} {r['reason']}"
        )
    summary = f"{report['results']} tool result(s) on the surface; {report['wouldFold']} would fold now"
    if report["wouldFold"]:
        summary += f" ({human_chars(report['charsBefore'])} → {human_chars(report['charsAfter'])} chars)"
    lines.append(summary)
    return "\n".join(lines)


def _fold(args: argparse.Namespace) -> None:
    calls = ResultCalls()
    session = load_session(
        args.path, retain=False, readback=True, observe=calls.observe, observe_types=calls.TYPE
    )
    emit(fold_report(session, effective_config(session, args.config, args.set), calls), args.json, _render)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``fold`` subcommand."""
    p = sub.add_parser(
        "fold",
        help=COMMANDS["fold"].help,
        description="For every tool result the model sees now, say what the fold policy does with it: "
        "kept raw, folded behind a digest (which kind, how many chars), pinned, or backed off. "
        "Nothing is written.",
    )
    add_log_path(p)
    p.add_argument(
        "--config",
        metavar="FILE",
        type=path_argument,
        help="policy config file (TOML or JSON) whose [slice] section applies",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a slice key after the file and the logged changes, e.g. fold.pinSteps=2 (repeatable; JSON value)",
    )
    add_json(p)
    p.set_defaults(handler=guarded(_fold))
