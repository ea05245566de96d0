"""``tapedeck route``: how the adaptive policy would handle a request (task class, caps, budgets, risk)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from core.cli import COMMANDS
from core.cli.args import add_json, path_argument
from core.cli.common import emit, guarded
from core.control.config import load_config
from core.policies.adaptive import CHECKPOINT, classify_task, phase_text
from core.policies.adaptive_config import TASK_CLASSES, AdaptiveConfig
from core.policies.risk import route_risk
from core.shared.errors import TapedeckError
from core.shared.parsers import NotUtf8, user_text
from core.shared.regular import read_capped
from core.shared.text import quoted_path, utf16_len

MAX_EVIDENCE_BYTES = 64 << 20  # far more tool output than the risk router inspects


def register(subparsers: Any) -> None:
    """Add the ``route`` subcommand."""
    parser = subparsers.add_parser(
        "route",
        help=COMMANDS["route"].help,
        description=(
            "Run the adaptive policy's routers on a request without a session: the task class, the output "
            "cap, the soft and hard step budgets, and the risk the checkpoint would target given optional "
            "tool-output evidence. Nothing is read or written besides the files named."
        ),
    )
    parser.add_argument("text", metavar="TEXT", help="the human request ('-' reads it from stdin)")
    parser.add_argument("--class", dest="task_class", choices=TASK_CLASSES, help="skip classification")
    parser.add_argument("--evidence", metavar="FILE", type=path_argument, help="recent tool output to weigh (UTF-8 text file)")
    parser.add_argument("--config", metavar="FILE", type=path_argument, help="policy config file (TOML or JSON) whose [adaptive] section applies")
    add_json(parser)
    parser.set_defaults(handler=guarded(run))


def read_text(path: str, what: str) -> str:
    """A UTF-8 text file's content (a pipe too, up to ``MAX_EVIDENCE_BYTES``); TapedeckError naming ``what`` when it
    cannot be read."""
    try:
        data = read_capped(path, MAX_EVIDENCE_BYTES)
    except OSError as exc:
        raise TapedeckError(f"{what} {quoted_path(path)}: cannot read ({exc.strerror or exc})") from exc
    if len(data) > MAX_EVIDENCE_BYTES:
        raise TapedeckError(
            f"{what} {quoted_path(path)}: larger than {MAX_EVIDENCE_BYTES >> 20} MiB; give the recent output only"
        )
    return _utf8(data, f"{what} {quoted_path(path)}", "convert the file to UTF-8 (iconv -f ITS-ENCODING -t UTF-8) and give that one")


def _utf8(data: bytes, what: str, fix: str) -> str:
    """``data`` as text, as a config file's is read (``user_text``); else a TapedeckError naming ``what``, the first
    byte that is not UTF-8 and ``fix``, what to do."""
    try:
        return user_text(data, fix)
    except NotUtf8 as exc:
        raise TapedeckError(f"{what}: {exc}") from None


def route_report(text: str, task_class: str | None, evidence: str, config: AdaptiveConfig) -> dict[str, Any]:
    """The routing of one request as a plain dict."""
    classified = classify_task(text)
    chosen = task_class or classified
    profile = config.profile(chosen)
    decision = route_risk(chosen, text, evidence, config.risk_router)
    return {
        "taskClass": chosen,
        "classifiedAs": classified,
        "requestChars": utf16_len(text),
        "evidenceChars": utf16_len(evidence),
        "caps": {"maxTokens": profile.max_tokens},
        "budgets": {"soft": profile.soft_step_budget, "hard": profile.hard_step_budget},
        "risk": decision.to_dict(),
        "checkpointText": phase_text(chosen, CHECKPOINT, decision),
    }


def render(report: dict[str, Any]) -> str:
    """The human-readable form."""
    chosen, classified = report["taskClass"], report["classifiedAs"]
    origin = (
        "classified from the request" if chosen == classified else f"given; the request reads as {classified}"
    )
    risk = report["risk"]
    target = risk["risk"] or "none"
    budgets = report["budgets"]
    body = report["checkpointText"].split("\n")[1]
    return "\n".join(
        [
            f"task class  {chosen} ({origin})",
            f"caps        maxTokens {report['caps']['maxTokens']}",
            f"budgets     checkpoint from step {budgets['soft']}, finalization (no tools) from step {budgets['hard']}",
            f"risk        {target}: {risk['reason']}, score {risk['score']} "
            f"(inspected {risk['requestCharsInspected']} of {report['requestChars']} request units, "
            f"{risk['evidenceCharsInspected']} of {report['evidenceChars']} evidence units)",
            f"checkpoint  {body}",
        ]
    )


def _stdin_text() -> str:
    """The request piped in, as UTF-8 text, read up to ``MAX_EVIDENCE_BYTES`` as the evidence is (a pipe without end,
    ``< /dev/zero``, is not read until memory runs out); a TapedeckError naming the first byte that is not UTF-8."""
    try:
        raw = sys.stdin.buffer.read(MAX_EVIDENCE_BYTES + 1)
    except OSError as exc:
        raise TapedeckError(f"could not read the request on stdin ({exc.strerror or exc})") from None
    if len(raw) > MAX_EVIDENCE_BYTES:
        raise TapedeckError(f"the request on stdin is larger than {MAX_EVIDENCE_BYTES >> 20} MiB, which no request is")
    return _utf8(raw, "the request on stdin", "convert it to UTF-8 (iconv -f ITS-ENCODING -t UTF-8) and pipe that")


def run(args: argparse.Namespace) -> int:
    """Print the routing of the request."""
    config = load_config(args.config).adaptive
    text = _stdin_text() if args.text == "-" else args.text
    if not text.strip():
        raise TapedeckError("the request is empty: give its text, or '-' with the text on stdin")
    evidence = read_text(args.evidence, "--evidence") if args.evidence else ""
    emit(route_report(text, args.task_class, evidence, config), args.json, render)
    return 0
