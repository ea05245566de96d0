"""The ``fold`` subcommand: preview what the tool-result fold does to each tool result on the surface."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from typing import Any

import orjson

from core.cli_common import emit, guarded
from core.errors import ConfigError
from core.policies.fold import FOLD, preview_fold, shown_through
from core.policies.slice_config import SliceConfig, validate
from core.session import Session
from core.summary import human_chars


def parse_overrides(pairs: Sequence[str]) -> SliceConfig:
    """A slice config from ``KEY=VALUE`` pairs (dotted keys, optional ``slice.`` prefix, JSON or bare values)."""
    raw: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        parts = key.strip().removeprefix("slice.").split(".")
        if not sep or not all(parts):
            raise ConfigError(
                f"--set expects KEY=VALUE with a dotted slice key, e.g. fold.pinSteps=2 (got {pair!r})"
            )
        try:
            value: Any = orjson.loads(text)
        except orjson.JSONDecodeError:
            value = text
        node = raw
        for i, part in enumerate(parts[:-1]):
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(
                    f"--set {pair!r} conflicts with an earlier value for {'.'.join(parts[: i + 1])}"
                )
            node = child
        if isinstance(node.get(parts[-1]), dict):
            raise ConfigError(f"--set {pair!r} would replace the whole {key.strip()} section")
        node[parts[-1]] = value
    return validate(raw)


def fold_report(session: Session, config: SliceConfig) -> dict[str, Any]:
    """The ``fold`` preview as plain data: one row per surface tool result plus totals."""
    rows = preview_fold(session, config)
    planned = [r for r in rows if r.status == FOLD]
    return {
        "path": str(session.path) if session.path else None,
        "shownThrough": shown_through(session),
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
    lines = [f"{'seq':>6}  {'t.s.c':<8} {'tool':<16} {'status':<10} {'digest':<7} {'chars':<15} note"]
    for r in report["rows"]:
        address = f"{r['turn']}.{r['step']}.{r['call']}"
        chars = human_chars(r["charsBefore"])
        if r["charsAfter"] != r["charsBefore"]:
            chars += f" → {human_chars(r['charsAfter'])}"
        tool = r["tool"] + (f" {r['path']}" if r["path"] else "")
        lines.append(
            f"{r['seq']:>6}  {address:<8} {tool[:16]:<16} {r['status']:<10} {r['digest'] or '-':<7} {chars:<15} {r['reason']}"
        )
    summary = f"{report['results']} tool result(s) on the surface; {report['wouldFold']} would fold now"
    if report["wouldFold"]:
        summary += f" ({human_chars(report['charsBefore'])} → {human_chars(report['charsAfter'])} chars)"
    lines.append(summary)
    return "\n".join(lines)


def _fold(args: argparse.Namespace) -> None:
    config = parse_overrides(args.set)
    emit(fold_report(Session.open(args.path), config), args.json, _render)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``fold`` subcommand."""
    p = sub.add_parser(
        "fold", help="preview what the tool-result fold would do to each tool result on the surface"
    )
    p.add_argument("path", help="session log file or session directory")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a slice config key, e.g. fold.pinSteps=2 or digest.minChars=6000 (repeatable; VALUE is JSON)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=guarded(_fold))
