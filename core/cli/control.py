"""``tapedeck control``: send a request to the host running a session, and optionally wait for its outcome."""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from typing import Any

from core.cli import COMMANDS
from core.cli.common import emit, guarded
from core.config import parse_value
from core.control import CONTROL_EVENT, OPS, ControlError, append_request, inbox_path, op_args
from core.errors import LogFormatError
from core.log.layout import read_header, resolve_log_path
from core.log.tail import Tailer

DEFAULT_TIMEOUT = 30.0
POLL_SECONDS = 0.1
EXIT_APPLIED, EXIT_REJECTED = 0, 1


def parse_args(op: str, pairs: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as the op's arguments: text for string arguments, JSON for ``value``, ints for seqs."""
    specs = op_args(op)
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ControlError(f"--arg expects KEY=VALUE (got {pair!r})")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ControlError(f"--arg {key} is not valid UTF-8 (check the terminal's encoding)") from None
        spec = specs.get(key)
        if spec is None or spec.kind == "string":
            out[key] = text
        elif spec.kind == "integer":
            try:
                out[key] = int(text)
            except ValueError:
                raise ControlError(f"{op}: {key!r} must be an integer (got {text!r})") from None
        else:
            out[key] = parse_value(text)
    return out


def wait_for_outcome(log: str, request_id: str, timeout: float) -> dict[str, Any] | None:
    """Follow the session log until the outcome event of ``request_id`` appears; None after ``timeout``."""
    tailer = Tailer(log)
    deadline = time.monotonic() + timeout
    while True:
        update = tailer.poll()
        if update.fatal:
            raise LogFormatError(str(update.fatal))
        for event in update.events:
            if (
                event.get("type") == CONTROL_EVENT
                and (event.get("data") or {}).get("requestId") == request_id
            ):
                return event
        if time.monotonic() >= deadline:
            return None
        time.sleep(POLL_SECONDS)


def _render_outcome(event: dict[str, Any]) -> str:
    data = event.get("data") or {}
    line = (
        f"{data.get('outcome')}: {data.get('op')} (request {data.get('requestId')}, seq {event.get('seq')})"
    )
    if data.get("error"):
        line += f"\n  error: {data['error']}"
    if data.get("detail") is not None:
        line += f"\n  detail: {data['detail']}"
    return line


def _run(args: argparse.Namespace) -> int:
    if args.timeout is not None and not args.wait:
        raise ControlError("--timeout only applies together with --wait")
    timeout = DEFAULT_TIMEOUT if args.timeout is None else args.timeout
    if not math.isfinite(timeout) or timeout <= 0:
        raise ControlError(f"--timeout must be a positive number of seconds (got {timeout:g})")
    log = resolve_log_path(args.path)
    if read_header(log) is None:
        raise LogFormatError(f"{log}: not a session log (its first line is no session header)")
    inbox = inbox_path(log)
    request = append_request(inbox, args.op, parse_args(args.op, args.arg))
    if not args.wait:
        emit(request, args.json, lambda r: f"queued {r['op']} request {r['id']} in {inbox}")
        return 0
    event = wait_for_outcome(str(log), request["id"], timeout)
    if event is None:
        raise ControlError(
            f"no outcome for request {request['id']} after {timeout:g} s; is a tapedeck host running this "
            f"session? The request stays queued in {inbox}"
        )
    emit(event, args.json, _render_outcome)
    return EXIT_APPLIED if (event.get("data") or {}).get("outcome") == "applied" else EXIT_REJECTED


def _ops_help() -> str:
    lines = ["ops and their arguments:"]
    for op, specs in OPS.items():
        names = " ".join(f"{s.name}=…" if s.required else f"[{s.name}=…]" for s in specs) or "(none)"
        lines.append(f"  {op:<11} {names}")
    return "\n".join(lines)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``control``."""
    p = subparsers.add_parser(
        "control",
        help=COMMANDS["control"].help,
        description=(
            "Append a request to the session's control inbox (control.jsonl beside the log). The host applies it "
            "at its next safe point and records the outcome in the log. With --wait, follow the log until that "
            "outcome arrives: exit 0 when applied, 1 when rejected, 2 on timeout or error."
        ),
        epilog=_ops_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", metavar="PATH", help="session log file or session directory")
    p.add_argument("op", metavar="OP", help=f"one of: {', '.join(OPS)}")
    p.add_argument(
        "--arg", action="append", default=[], metavar="KEY=VALUE", help="an argument of the op (repeatable)"
    )
    p.add_argument("--wait", action="store_true", help="wait for the host's outcome and print it")
    p.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help=f"seconds to wait with --wait (default {DEFAULT_TIMEOUT:g})",
    )
    p.add_argument(
        "--json", action="store_true", help="print the request (or, with --wait, the outcome event) as JSON"
    )
    p.set_defaults(handler=guarded(_run))
