"""``tapedeck run``: run an agent session with the reference host."""

from __future__ import annotations

import argparse
from pathlib import Path

from core.cli.common import emit, guarded
from core.config import load_config
from core.errors import TapedeckError
from core.log.layout import default_sessions_root, discover_sessions


def find_session(root: Path, session_id: str) -> Path:
    """The log path of the session with ``session_id`` under ``root``."""
    for ref in discover_sessions(root):
        if ref.id == session_id:
            return ref.path
    raise TapedeckError(f"no session {session_id!r} under {root}")


def _run(args: argparse.Namespace) -> int:
    # The host (and the openai SDK behind it) loads only when a session runs, keeping other commands quick.
    from core.host.loop import AgentHost, HostOptions
    from core.host.providers import make_provider

    if not args.task and not args.resume:
        raise TapedeckError("give a TASK to run (or --resume ID)")
    config = load_config(args.config)
    model = make_provider(args.provider, model=args.model, base_url=args.base_url)
    root = Path(args.sessions_root).expanduser()
    workspace = Path(args.workspace).expanduser().resolve()
    if not workspace.is_dir():
        raise TapedeckError(f"workspace {workspace} is not a directory")

    def progress(line: str) -> None:
        if not args.json:
            print(line, flush=True)

    options = HostOptions(
        workspace=workspace, pace=args.pace, chunk_delay=args.chunk_delay, progress=progress, linger=args.linger
    )
    if args.resume:
        if args.task:
            raise TapedeckError("--resume continues the recorded tasks; give no TASK with it")
        host = AgentHost.resume(find_session(root, args.resume), model, config, options)
    else:
        host = AgentHost.create(
            root, model, config, options, tasks=args.task, compressed=args.zstd, session_id=args.session_id
        )
    progress(f"session {host.session.id}\nlog {host.writer.path}")
    try:
        outcomes = host.run()
    finally:
        host.close()
    payload = {
        "session": host.session.id,
        "log": str(host.writer.path),
        "turns": [
            {"turn": o.turn, "reason": o.reason, "steps": o.steps, "text": o.final_text} for o in outcomes
        ],
    }
    if args.json:
        emit(payload, True, str)
    failed = [o for o in outcomes if o.reason.get("kind") != "completed"]
    return 1 if failed else 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``run``."""
    p = sub.add_parser("run", help="run an agent session (each TASK is one turn) with the reference host")
    p.add_argument("task", nargs="*", help="the task prompt(s); each becomes one turn")
    p.add_argument(
        "--provider", default="openai", help="model provider: openai or scripted:FILE (default: openai)"
    )
    p.add_argument("--model", help="model name (default: the provider's)")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (default: DeepSeek's)")
    p.add_argument("--workspace", default=".", help="directory the agent works in (default: .)")
    p.add_argument(
        "--sessions-root", default=str(default_sessions_root()), help="where logs go (default: %(default)s)"
    )
    p.add_argument("--config", help="policy config file (TOML or JSON)")
    p.add_argument("--resume", metavar="ID", help="continue the session with this id after a crash or stop")
    p.add_argument("--zstd", action="store_true", help="write session.jsonl.zstd instead of raw JSONL")
    p.add_argument("--pace", type=float, default=0.0, help="seconds to pause between steps")
    p.add_argument("--chunk-delay", type=float, default=0.0, help="seconds between streamed chunks (scripted models)")
    p.add_argument("--session-id", help="id for the new session (default: a random UUID)")
    p.add_argument(
        "--linger", action="store_true", help="after the tasks, keep obeying the control inbox until a stop request"
    )
    p.add_argument("--json", action="store_true", help="print a JSON summary at the end instead of progress")
    p.set_defaults(handler=guarded(_run))
