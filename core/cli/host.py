"""``tapedeck run``: run an agent session with the reference host; ``tapedeck repair``: mend a damaged log."""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.cli import COMMANDS
from core.cli.args import add_json, check_seconds, check_utf8, check_utf8_path, decimal, path_argument
from core.cli.common import emit, fail, for_terminal, guarded, quiet_stdout, warn
from core.cli.stops import current, ended_by, stopped_by
from core.control.config import load_config
from core.log.layout import default_sessions_root
from core.log.sessions import discover_sessions
from core.shared.errors import TapedeckError
from core.shared.text import quoted, quoted_path

if TYPE_CHECKING:
    from core.host.loop import AgentHost, TurnOutcome

EXIT_FAILED = 1  # a turn ended without completing (an error, a block, the output limit)
EXIT_STOPPED = 4  # the operator's stop cut the run short


def find_session(root: Path, session_id: str) -> Path:
    """The log path of the one session with ``session_id`` under ``root``; several are an error naming each. None
    there: a log or session directory of that name here (``session.jsonl`` in its own directory, ``.``)."""
    found = sorted(ref.path for ref in discover_sessions(root) if ref.id == session_id)
    named = f"'{quoted(session_id)}'"  # an id of thousands of characters is not quoted whole
    if not found and os.path.exists(here := os.path.expanduser(session_id)):  # False for a name too long for one
        return Path(here)
    if not found:
        raise TapedeckError(f"no session {named} under {quoted_path(root)}")
    if len(found) > 1:
        listing = "".join(f"\n  {quoted_path(path)}" for path in found)
        raise TapedeckError(
            f"{len(found)} sessions under {quoted_path(root)} have the id {named}; resume one by its log path "
            f"(or remove the stray copy):{listing}"
        )
    return found[0]


def _resume_command(args: argparse.Namespace, session_id: str, log: Path) -> str:
    """The command that continues an interrupted run as it was started, from any directory: the id when the log is
    under the default sessions root (else the log's absolute path), and the provider, model and config it ran with,
    which a resume does not read back (a script's and a config's file by its absolute path)."""
    default_root = default_sessions_root().resolve()
    target = session_id if log.resolve().is_relative_to(default_root) else os.path.abspath(log)
    kind, scripted, script = args.provider.partition(":")
    provider = f"{kind}:{os.path.abspath(script.strip())}" if kind == "scripted" and scripted else args.provider
    config = os.path.abspath(os.path.expanduser(args.config)) if args.config is not None else None
    parts = ["tapedeck", "run"]
    for flag, value, default in (
        ("--resume", target, None),
        ("--provider", provider, "openai"),
        ("--model", args.model, None),
        ("--base-url", args.base_url, None),
        ("--config", config, None),
    ):
        if value != default:  # a value starting with '-' is joined to its flag, or it would read as an option
            parts += [f"{flag}={value}"] if value.startswith("-") else [flag, value]
    return quoted(shlex.join(parts), None)  # a path's, an id's control characters as escapes: one line, nothing run


def _run(args: argparse.Namespace) -> int:
    # The host (and the openai SDK behind it) loads only when a session runs, keeping other commands quick.
    from core.host.loop import AgentHost, HostOptions
    from core.host.providers import make_provider

    if args.resume is not None and not args.resume.strip():
        raise TapedeckError("--resume is empty: give the id of the session to continue, or its log or directory")
    if not args.task and not args.resume:
        raise TapedeckError("give a TASK to run (or --resume ID)")
    if args.session_id is not None and not args.session_id.strip():
        raise TapedeckError("--session-id is empty: give the new session's id, or leave the option out for a random one")
    for option, value in (("--model", args.model), ("--base-url", args.base_url)):  # '"$URL"' with URL unset, say
        if value is not None and not value.strip():
            raise TapedeckError(f"{option} is empty: give one, or leave the option out for the provider's default")
    empty = next((n for n, task in enumerate(args.task, 1) if not task.strip()), None)
    if empty is not None:
        raise TapedeckError(f"TASK {empty} is empty: each TASK is the prompt of one turn; nothing was started")
    for what, text in [*((f"TASK {n}", task) for n, task in enumerate(args.task, 1)), ("--session-id", args.session_id),
                       ("--model", args.model), ("--base-url", args.base_url), ("--provider", args.provider)]:  # fmt: skip
        if text is not None:
            check_utf8(what, text)
    check_seconds("pace", args.pace, zero=True)
    check_seconds("chunk-delay", args.chunk_delay, zero=True)
    config = load_config(args.config)
    root = Path(args.sessions_root).expanduser()
    workspace = (
        None if args.workspace is None and args.resume else Path(args.workspace or ".").expanduser().resolve()
    )
    if workspace is not None and not workspace.is_dir():
        raise TapedeckError(f"workspace {quoted_path(workspace)} is not a directory")
    if workspace is not None:  # the log records it
        check_utf8_path("--workspace", workspace)
    if args.relocate and not (args.resume and args.workspace):
        raise TapedeckError(
            "--relocate moves a resumed session: give it with --resume ID and --workspace DIR"
        )
    log = _resume_log(args, root) if args.resume else None  # what is wrong with it is said before a model's key
    model = make_provider(args.provider, model=args.model, base_url=args.base_url)

    quiet = [args.json]

    def progress(line: str) -> None:
        if quiet[0]:
            return
        try:  # it quotes what the model, the workspace and the inbox said: drawn on a terminal
            print(for_terminal(line), flush=True)
        except BrokenPipeError:  # whoever read it is gone (`| head`): a side show that must not end the run
            quiet[0] = True
            quiet_stdout()
            with contextlib.suppress(OSError):  # stderr may have gone with it (`2>&1 | head`)
                warn("stdout was closed; the run goes on without printing its progress (the log has all of it)")

    options = HostOptions(
        workspace=workspace,
        pace=args.pace,
        chunk_delay=args.chunk_delay,
        progress=progress,
        linger=args.linger,
    )
    stops = current()
    stops.hold()  # a signal while the log is made or opened waits for the run, which it ends at once
    if log is not None:
        host = AgentHost.resume(log, model, config, options, relocate=args.relocate)
    else:
        host = AgentHost.create(
            root, model, config, options, tasks=args.task, compressed=args.zstd, session_id=args.session_id
        )
    progress(f"session {host.session.id}\nlog {quoted_path(host.writer.path)}")
    outcomes: list[TurnOutcome] | None = None
    ended: KeyboardInterrupt | None = None
    with stops.taken():
        try:
            stops.release()
            outcomes = host.run()
        except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: the log stays as a kill would leave it, resumable
            ended = stops.caught(exc)
        finally:
            stops.ending = True  # a signal from here on waits for the close
            host.close()
    if ended is not None:
        how, code = stopped_by(ended)
        return fail(f"{how}; `{_resume_command(args, host.session.id, host.writer.path)}` continues the session", code)
    assert outcomes is not None  # the run returned
    if stops.noted:  # the run had ended; the close it let finish
        how, code = ended_by(stops.noted[0])
        return fail(f"{how} while the host was closing, after its run had ended; it closed the session first", code)
    payload = {
        "session": host.session.id,
        "log": str(host.writer.path),
        "turns": [
            {"turn": o.turn, "reason": o.reason, "steps": o.steps, "text": o.final_text} for o in outcomes
        ],
    }
    if args.json:
        emit(payload, True, str)
    return _exit_status(host, outcomes)


def _resume_log(args: argparse.Namespace, root: Path) -> Path:
    """The log ``--resume`` names (a path, else a session id under ``root``), refused when the options given with it
    only shape a new log or DSH wrote it."""
    from core.host.resume import refuse_foreign_log

    if args.task:
        raise TapedeckError("--resume continues the recorded tasks; give no TASK with it")
    for option, given in (("--zstd", args.zstd), ("--session-id", args.session_id is not None)):
        if given:
            raise TapedeckError(f"{option} names a new session's log; --resume continues the log it finds as it is")
    by_path = os.sep in args.resume and Path(args.resume).expanduser().exists()
    log = Path(args.resume).expanduser() if by_path else find_session(root, args.resume)
    refuse_foreign_log(log)
    return log


def _exit_status(host: AgentHost, outcomes: list[TurnOutcome]) -> int:
    """0 when every turn completed; ``EXIT_STOPPED`` when the operator's ``stop`` cut the run short (it ended a
    turn, or a task never ran); 1 when a turn ended otherwise (an error, a block, the output limit)."""
    from core.host.loop import ABORTED_BY_USER
    from core.host.resume import recorded_tasks, task_turns

    stopped = host.stop_record is not None
    ended = [o for o in outcomes if o.reason.get("kind") != "completed"]
    if any(not (stopped and o.reason == ABORTED_BY_USER) for o in ended):
        return EXIT_FAILED
    if stopped and (ended or task_turns(host.session) < len(recorded_tasks(host.session))):
        return EXIT_STOPPED
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``run``."""
    p = sub.add_parser(
        "run",
        help=COMMANDS["run"].help,
        description=(
            "Run an agent session with the reference host; each TASK is one turn. Exit status: 0 when every turn "
            "completed, 1 when a turn ended otherwise (an error, a block, the output limit), 4 when the "
            "operator's stop cut the run short (it ended a turn, or a task never ran; a --linger host stopped "
            "while idle after its tasks exits 0), 2 when the run could not start or had to stop because its log was cut "
            "short, replaced or removed under it or could not be written (a full disk), 130 when Ctrl-C interrupted "
            "it, 143 when a SIGTERM ended it the same way (the session stays as it was, for --resume); a second "
            "signal while the host closes is only noted, and the close finishes."
        ),
    )
    p.add_argument("task", nargs="*", metavar="TASK", help="the task prompt(s); each becomes one turn")
    p.add_argument(
        "--provider", default="openai", metavar="NAME", help="model provider: openai or scripted:FILE (default: openai)"
    )
    p.add_argument("--model", metavar="M", help="model name (default: the provider's)")
    p.add_argument("--base-url", metavar="URL", help="OpenAI-compatible endpoint (default: DeepSeek's)")
    p.add_argument(
        "--workspace",
        metavar="DIR",
        type=path_argument,
        help="directory the agent works in (default: the current directory; for --resume, the one the log records)",
    )
    p.add_argument(
        "--sessions-root", default=str(default_sessions_root()), metavar="DIR", type=path_argument,
        help="where logs go (default: %(default)s)",
    )
    p.add_argument("--config", metavar="FILE", type=path_argument, help="policy config file (TOML or JSON)")
    p.add_argument(
        "--resume", metavar="ID", type=path_argument, help="continue the session with this id (or its log or session directory) after a "
        "crash or stop"
    )
    p.add_argument(
        "--relocate",
        action="store_true",
        help="with --resume: continue in --workspace instead of the recorded one",
    )
    p.add_argument("--zstd", action="store_true", help="write session.jsonl.zstd instead of raw JSONL")
    p.add_argument("--pace", type=decimal, default=0.0, metavar="S", help="seconds to pause between steps")
    p.add_argument(
        "--chunk-delay", type=decimal, default=0.0, metavar="S", help="seconds between streamed chunks (scripted models)"
    )
    p.add_argument("--session-id", metavar="ID", help="id for the new session (default: a random UUID)")
    p.add_argument(
        "--linger",
        action="store_true",
        help="after the tasks, keep obeying the control inbox until a stop request",
    )
    add_json(p, "print a JSON summary at the end instead of progress")
    p.set_defaults(handler=guarded(_run))

    r = sub.add_parser(
        "repair",
        help=COMMANDS["repair"].help,
        description=(
            "Make a session log damaged in the middle (torn or garbled lines, seqs out of order or twice) resumable "
            "again: the damaged file is kept beside it as <log>.damaged-<time>, every intact event keeps its seq, "
            "and each lost seq gets a tapedeck/lost event in its place. An undamaged log is left as it is. No host "
            "may be running the session; a log DSH wrote is refused and left untouched. A repair killed midway, or "
            "one the disk has no room for, leaves the log and its directory as they were. Exit 2 when nothing was "
            "repaired: the log is refused, a host holds it, or the repair could not be finished."
        ),
    )
    r.add_argument("path", metavar="PATH", type=path_argument, help="the session log or its directory (no host may be running on it)")
    add_json(r, "print the report as JSON")
    r.set_defaults(handler=guarded(_repair))


def _repair(args: argparse.Namespace) -> int:
    from core.control.host_state import written_by_another
    from core.log.layout import resolve_log_path
    from core.log.reader import read_log_header
    from core.log.repair import repair_log

    log = resolve_log_path(args.path)
    read_log_header(log)  # a header the readers refuse is named as such first
    if written_by_another(log):  # a torn last line is how a log DSH is writing looks: never cut it
        raise TapedeckError(
            f"{quoted_path(log)} is a DeepSeek Harness (DSH) session log, not one a tapedeck host started: tapedeck never "
            "rewrites a DSH log (DSH may be writing it), so nothing was changed; tapedeck's readers skip its damaged "
            "lines (`tapedeck inspect` lists them)"
        )
    report = repair_log(log)

    def text(r: dict[str, Any]) -> str:
        if not r["backup"]:
            return f"{quoted_path(r['path'])}: no damage found; nothing changed"
        lines = [
            f"{quoted_path(r['path'])}: repaired, {r['events']} events; "
            f"the damaged file is kept as {quoted_path(r['backup'])}"
        ]
        for hole in r["holes"]:
            seqs = hole["seqs"]
            if seqs:
                lost = f"seqs {seqs[0]}-{seqs[-1]} now tapedeck/lost"
            else:
                lost = "nothing after it; dropped" if hole["trailing"] else "held no seq the log lacks; left out"
            lines.append(f"  offset {hole['offset']} ({hole['length']} bytes, {hole['reason']}): {lost}")
        if r["droppedDuplicates"]:
            lines.append(f"  {r['droppedDuplicates']} event(s) repeating a seq already used were left out")
        if r["reordered"]:
            lines.append(f"  {r['reordered']} intact line(s) out of seq order were put back in order")
        return "\n".join(lines)

    emit(report.to_dict(), args.json, text)
    return 0
