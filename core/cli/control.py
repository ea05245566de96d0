"""``tapedeck control``: send a request to the host running a session, and optionally wait for its outcome."""

from __future__ import annotations

import argparse
import contextlib
import posixpath
import textwrap
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from core.cli import COMMANDS
from core.cli.args import add_json, add_log_path, check_seconds, check_utf8, decimal, whole
from core.cli.common import emit, guarded, warn
from core.cli.stops import Stops, stopped_by
from core.control.config import check_section, config_events, parse_value, session_config, set_value
from core.control.host_state import (
    KIND_DSH,
    HostState,
    exited_at,
    how_it_ended,
    moved_note,
    pid_text,
    read_host_state,
)
from core.control.host_state import UNKNOWN as UNKNOWN_STATE
from core.control.inbox import (
    APPLIED,
    CANCELLED,
    CONTROL_EVENT,
    MAX_EXPIRY_SECONDS,
    UNKNOWN,
    ControlError,
    append_request,
    inbox_path,
    op_args,
    validate_request,
    withdraw_request,
)
from core.control.ops import DSH_OPS, OPS, ArgSpec
from core.control.outcome import BridgeOutcomeWatch, HostGone, OutcomeWatch, interrupted
from core.log.layout import resolve_log_path
from core.log.reader import read_header
from core.log.tail import Tailer
from core.read.summary import in_words
from core.remote.target import RemoteTarget, parse_remote
from core.shared.errors import ConfigError, LogFormatError, TapedeckError
from core.shared.text import quoted, quoted_path, shown

DEFAULT_TIMEOUT = 30.0
OP_COLUMN = 14  # where an op's arguments start in the help's table of ops
# seconds a live host gets to answer a withdrawal (it may have applied the request meanwhile)
WITHDRAW_GRACE = 2.0
EXIT_APPLIED, EXIT_REJECTED, EXIT_NO_HOST, EXIT_UNKNOWN = 0, 1, 3, 4


def parse_args(op: str, pairs: Sequence[str], kind: str = "tapedeck") -> dict[str, Any]:
    """``KEY=VALUE`` pairs as the op's arguments (for a host of ``kind``): text for string arguments, JSON for
    ``value``, ints for seqs; checked as the inbox checks a request, so a malformed one is refused before the
    host's state is looked at."""
    specs = op_args(op, kind)
    out: dict[str, Any] = {}
    given: dict[str, str] = {}  # each key's text as given
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ControlError(f"--arg expects KEY=VALUE (got {shown(pair)})")
        if key in given:
            raise ControlError(
                f"--arg {quoted(key)} is given twice ({shown(given[key])}, then {shown(text)}): give it once"
            )
        given[key] = text
        check_utf8(f"--arg {quoted(key)}", text)
        spec = specs.get(key)
        if spec is None or spec.kind == "string":
            out[key] = text
        elif spec.kind == "integer":
            try:
                out[key] = whole(text)
            except argparse.ArgumentTypeError:
                raise ControlError(f"{op}: {key!r} must be an integer (got {shown(text)})") from None
        else:
            out[key] = parse_value(text)
    if op == "config.set" and kind != KIND_DSH and isinstance(out.get("key"), str):
        try:  # the inbox words a section it does not know as a malformed key: said here as every config says it
            check_section(out["key"].partition(".")[0])
        except ConfigError as exc:
            raise ControlError(f"config.set: {exc}") from None
    return validate_request(op, out, kind)


def _check_config_set(log: Path, args: dict[str, Any]) -> None:
    """Refuse, as the host would, a ``config.set`` of ``args`` for the tapedeck session of ``log``: ``set_value`` on
    the config the session runs under (its host's start and every change its log records), so an unknown key or a
    value of the wrong type or out of range is named in the section validator's words before anything is sent."""
    from core.read.load import load_session

    session = load_session(log, retain=False, readback=True, index=True)
    try:
        set_value(session_config(config_events(session)), args["key"], args.get("value"))
    except ConfigError as exc:
        raise ControlError(f"config.set: {exc}") from None


def _wait_outcome(
    watch: OutcomeWatch | BridgeOutcomeWatch,
    request: dict[str, Any],
    timeout: float,
    host: Callable[[], HostState],
    withdraw: Callable[[], None],
    stops: Stops,
    log: Path | None = None,
) -> dict[str, Any]:
    """The final outcome of ``request`` (an event), waiting ``timeout`` seconds; ``host`` reads the host's
    state now (of the local ``log``, whose host.json then says how a host that went away ended). ``stops``: the
    signals ``_sending`` took, one that came while the request was written ends the wait at once. A wait that times out, or Ctrl-C or a SIGTERM, or whose host exits first, withdraws the request (``withdraw``); the
    host's exit is answered ``cancelled`` (unless its outcome was written just before it), or ``unknown`` when
    the DSH bridge had begun to run it (``interrupted``), a timeout is a ``ControlError``."""
    began: dict[str, Any] | None = None

    def gone() -> str | None:
        nonlocal began
        state = host()
        # unknown: its host.json cannot be read now, the host may run
        if state.live or state.state == UNKNOWN_STATE:
            return None
        if (began := interrupted(state, request["id"], request["op"])) is not None:
            return str(began["error"])
        answered = "before it answered" if watch.pending is None else f"while {_pending(watch.pending)}"
        if state.kind == KIND_DSH or log is None:
            return f"the {_who(state)} exited {exited_at(state.since)} {answered}; the request was withdrawn"
        return f"the host went away {answered}: {how_it_ended(log, state)}; the request was withdrawn"

    # a second signal while the request is withdrawn is only noted: the withdrawal is written
    with stops.taken():
        try:
            stops.release()
            event = watch.wait(timeout, gone)
        except HostGone as exc:
            if began is not None:
                return watch.wait(0) or {"type": CONTROL_EVENT, "data": began, "gone": True}
            withdraw()
            data = {"requestId": request["id"], "op": request["op"], "outcome": CANCELLED, "error": str(exc)}
            return watch.wait(0) or {"type": CONTROL_EVENT, "data": data, "withdrawn": True}
        # Ctrl-C or a SIGTERM: the sender gives up, as when the wait times out
        except KeyboardInterrupt as exc:
            if not stops.ending:
                raise
            how, code = stopped_by(stops.caught(exc))
            if (event := _withdrawn(watch, host, withdraw)) is None:
                stopped = ControlError(f"{how} while waiting; request {request['id']} was withdrawn, so the "
                                       f"{_who(host())} will never apply it")  # fmt: skip
                stopped.exit_code = code
                raise stopped from None
            return event
        if event is None and (event := _withdrawn(watch, host, withdraw)) is None:
            said = (
                f"no outcome for request {request['id']}"
                if watch.pending is None
                else _pending(watch.pending)
            )
            state = host()
            said += f" after {timeout:g} s"
            paused = watch.pending is not None and state.kind != KIND_DSH and state.state == "paused"
            if paused:  # held at its step: the withdrawal means a resume will not apply it either
                said += ", while the host is paused, which holds it until a resume"
            withdrawn = f"it was withdrawn, so the {_who(state)} will never apply it"
            raise ControlError(
                f"{said}; {withdrawn}" + (": resume the host, then send it again" if paused else "")
            )
    return event


def _who(state: HostState) -> str:
    """What answers the session's requests: ``DSH bridge`` or ``host``."""
    return "DSH bridge" if state.kind == KIND_DSH else "host"


@contextlib.contextmanager
def _sending(wait: bool) -> Iterator[Stops]:
    """Within: the request is written and, with --wait, waited for. With --wait, Ctrl-C and SIGTERM are taken from
    before the request is written and held until the wait begins, so that one that comes meanwhile withdraws it
    (it killed the command between the two, and the request stayed for the host); without, they stay as they are."""
    stops = Stops()
    if not wait:
        yield stops
        return
    with stops.taken():
        stops.hold()
        yield stops


def _withdrawn(
    watch: OutcomeWatch | BridgeOutcomeWatch, host: Callable[[], HostState], withdraw: Callable[[], None]
) -> dict[str, Any] | None:
    """Withdraw the request being waited for; the outcome the host gave it before it read the withdrawal (it
    applied it meanwhile), or None when it never will."""
    withdraw()
    event = watch.wait(WITHDRAW_GRACE if host().live else 0)
    return None if event is None or (event.get("data") or {}).get("outcome") == CANCELLED else event


def _pending(pending: dict[str, Any]) -> str:
    """What the host's ``pending`` answer to a request said: ``request … was still pending (waitingFor: idle)``."""
    detail = f" ({quoted(in_words(pending['detail']), None)})" if pending.get("detail") is not None else ""
    return f"request {quoted(pending.get('requestId'))} was still pending{detail}"


def _render_outcome(event: dict[str, Any]) -> str:
    """An outcome as text: what became of the request, where the outcome came from, its error and detail. Each is
    read back from a log (the host's, or the DSH bridge's outcomes): quoted (``quoted``), the error and the detail
    whole, so that nothing in them acts on a terminal or forges a line, piped or not."""
    data = event.get("data") or {}
    if "seq" in event:
        where = f"seq {event.get('seq')}"  # logged by a tapedeck host
    elif event.get("withdrawn"):
        where = "withdrawn by tapedeck"
    elif event.get("gone"):
        where = "told by tapedeck: the DSH bridge is gone"
    else:
        where = "from the DSH bridge"
    line = f"{quoted(data.get('outcome'))}: {quoted(data.get('op'))} (request {quoted(data.get('requestId'))}, {where})"
    if data.get("error"):
        line += f"\n  error: {quoted(data['error'], None)}"
    if data.get("detail") is not None:
        line += f"\n  detail: {quoted(in_words(data['detail']), None)}"
    return line


class NoLiveHost(ControlError):
    """The session's host has exited: nothing was sent (exit code 3)."""

    exit_code = EXIT_NO_HOST


def _check_host(log: Path | RemoteTarget, session_id: str, queue: bool, state: HostState) -> HostState:
    """``state`` when a request may be sent to the session's host now (or queued); else why not."""
    if state.state == "none":
        problem = (state.bridge or {}).get("problem")
        raise ControlError(
            f"{quoted_path(str(log))}: a DeepSeek Harness session that no tapedeck bridge runs, so nobody would read the "
            "request; nothing was sent"
            + (f": {problem}" if problem else ". `tapedeck bridge install DSH_HOME` adds the bridge to DSH")
            if state.kind == KIND_DSH
            else f"{quoted_path(str(log))}: no tapedeck host has ever run this session, so nobody would read the request; nothing "
            "was sent"
        )
    if state.state == UNKNOWN_STATE and not queue:  # a host.json that cannot be read: its host may well run
        raise ControlError(
            f"session {session_id}: whether a host runs it is unknown: {state.problem}; nothing was sent"
        )
    if not state.live and not queue:
        who, later = (
            ("DSH bridge", "the bridge's next start")
            if state.kind == KIND_DSH
            else ("host", "`tapedeck run --resume`")
        )
        local = isinstance(log, Path) and state.kind != KIND_DSH  # its host.json says how it ended
        ended = (
            how_it_ended(log, state)
            if local
            else f"it exited {exited_at(state.since)}{moved_note(state.bridge)}"
        )
        raise NoLiveHost(
            f"session {session_id}: no live {who} ({ended}); nothing was sent. --queue leaves the request for {later}"
        )
    stale = (state.bridge or {}).get("stale") if state.live else None
    if stale:
        warn(f"session {session_id}: {stale}")
    return state


def _run(args: argparse.Namespace) -> int:
    if args.timeout is not None and not args.wait:
        raise ControlError("--timeout only applies together with --wait")
    if args.expires is not None and not args.queue:
        raise ControlError("--expires only applies together with --queue")
    if args.expires is not None:  # refused here, before the log, its host or its bridge is looked at
        check_seconds("expires", args.expires, most=MAX_EXPIRY_SECONDS)
    timeout = DEFAULT_TIMEOUT if args.timeout is None else args.timeout
    check_seconds("timeout", timeout)
    remote = parse_remote(args.path)
    if remote is not None:
        return _run_remote(args, remote, timeout)
    log = resolve_log_path(args.path)
    header = read_header(log)
    if header is None:
        raise LogFormatError(f"{quoted_path(log)}: not a session log (its first line is no session header)")
    session_id = quoted(header.get("id"))
    state = read_host_state(log)
    op_args = parse_args(args.op, args.arg, state.kind)
    if args.op == "config.set" and state.kind != KIND_DSH:
        _check_config_set(log, op_args)
    state = _check_host(log, session_id, args.queue, state)
    inbox = inbox_path(log)
    if args.wait and not state.live:
        raise ControlError("--wait needs a live host; a queued request is applied at the next resume")

    # asked again under the inbox's lock, which an exiting host holds for its last read
    def still_live() -> None:
        if not read_host_state(log).live:
            raise NoLiveHost(f"session {session_id}: its host exited just now; nothing was sent")

    tailer = Tailer(str(log))
    # the answer comes after the request: the log before it is not read
    if args.wait and state.kind != KIND_DSH:
        tailer.follow_from_end(header)
    with _sending(args.wait) as stops:
        request = append_request(
            inbox, args.op, op_args, check=None if args.queue else still_live, queued=args.queue,
            expires_in=args.expires, kind=state.kind,
        )  # fmt: skip
        if not args.wait:
            if state.live:
                pid = f" ({pid_text(state.pid)})" if state.pid is not None else ""
                said = f"to the live {_who(state)} of session {session_id}{pid}"
            else:
                said = f"for the next resume of session {session_id} ({inbox})"
            verb = "sent" if state.live else "queued"
            emit(request, args.json, lambda r: f"{verb} {r['op']} request {r['id']} {said}")
            return 0
        watch = (
            BridgeOutcomeWatch(log, request["id"])
            if state.kind == KIND_DSH
            else OutcomeWatch(log, request["id"], tailer)
        )
        event = _wait_outcome(
            watch, request, timeout, lambda: read_host_state(log), lambda: withdraw_request(inbox, request["id"]),
            stops, log,
        )  # fmt: skip
    emit(event, args.json, _render_outcome)
    return _exit_code(event)


def _exit_code(event: dict[str, Any]) -> int:
    """``control --wait``'s exit code for a final outcome: applied, not applied, or unknown."""
    outcome = (event.get("data") or {}).get("outcome")
    return EXIT_APPLIED if outcome == APPLIED else EXIT_UNKNOWN if outcome == UNKNOWN else EXIT_REJECTED


def _run_remote(args: argparse.Namespace, target: RemoteTarget, timeout: float) -> int:
    """``control`` on ``[user@]host:PATH``: the request appended to the remote inbox over SFTP with the checks and
    exit codes of a local one; ``--wait`` reads the outcome back remotely (a tapedeck host's from its log, a DSH
    bridge's from ``control.outcomes.jsonl`` beside it)."""
    from core.remote.inbox import RemoteHostExited, append_remote_request, withdraw_remote_request
    from core.remote.link import Unreachable, link_for
    from core.remote.live import RemoteOutcomes, resolve_remote_log
    from core.remote.sessions import remote_header, remote_host_state, remote_state_now
    from core.remote.tail import RemoteTailer

    link = link_for(target)
    log = resolve_remote_log(link, target)
    header = remote_header(link, log)
    session_id = quoted(header.get("id"))
    state, hosted = remote_state_now(link, log)
    op_args = parse_args(args.op, args.arg, state.kind)
    state = _check_host(log, session_id, args.queue, state)
    if args.wait and not state.live:
        raise ControlError("--wait needs a live host; a queued request is applied at the next resume")
    tailer = RemoteTailer(link, log)
    if args.wait and state.kind != KIND_DSH:  # the answer comes after the request
        tailer.follow_from_end(header)
    with _sending(args.wait) as stops:
        try:
            request = append_remote_request(link, log, args.op, op_args, live=not args.queue, warn=warn,
                                            queued=args.queue, expires_in=args.expires, kind=state.kind)  # fmt: skip
        except RemoteHostExited:  # asked on the far side under the inbox's lock, which an exiting host holds
            raise NoLiveHost(f"session {session_id}: its host exited just now; nothing was sent") from None
        if not args.queue:
            _live_after(link, log, hosted, request, session_id)
        if not args.wait:
            verb = "sent" if state.live else "queued"
            host = _who(state)
            emit(request, args.json, lambda r: f"{verb} {r['op']} request {r['id']} to the {host} of session "
                                               f"{session_id} on {log.where}")  # fmt: skip
            return 0
        session_dir = log.at(posixpath.dirname(log.path))
        watch: OutcomeWatch | BridgeOutcomeWatch = (
            BridgeOutcomeWatch(Path(str(log)), request["id"], RemoteOutcomes(link, session_dir))
            if state.kind == KIND_DSH
            else OutcomeWatch(Path(log.path), request["id"], tailer)
        )
        try:
            event = _wait_outcome(watch, request, timeout, lambda: remote_host_state(link, log, hosted),
                                  lambda: withdraw_remote_request(link, log, request["id"]), stops)  # fmt: skip
        except Unreachable as exc:  # the request is over there, and nothing can withdraw it now
            raise ControlError(f"{exc}; request {request['id']} ({request['op']}) was sent to session {session_id} "
                               "and could not be withdrawn: it may still be applied") from None  # fmt: skip
    emit(event, args.json, _render_outcome)
    return _exit_code(event)


def _live_after(link: Any, log: RemoteTarget, hosted: bool, request: dict[str, Any], session_id: str) -> None:
    """Look again at the host of the remote session ``log`` once ``request`` was written for it: the request is
    withdrawn, saying what is known of the host, when it is not live now (it exited between the check and the
    write, or its ``host.json`` can no longer be read); a host that cannot be looked at leaves it as it is."""
    from core.remote.inbox import withdraw_remote_request
    from core.remote.sessions import remote_host_state

    sent = f"request {request['id']} ({request['op']})"
    try:
        state = remote_host_state(link, log, hosted)
    except TapedeckError as exc:
        raise ControlError(f"{exc}; {sent} was sent to session {session_id}, whose host could not be looked at again: "
                           "it may be applied") from None  # fmt: skip
    if state.live:
        return
    withdraw_remote_request(link, log, request["id"])
    if state.state == UNKNOWN_STATE:  # its host may run, and may have taken the request already
        raise ControlError(f"session {session_id}: whether a host runs it became unknown once {sent} was written: "
                           f"{state.problem}; the request was withdrawn, so a host that runs it cancels it unless it "
                           "has applied it already")  # fmt: skip
    raise NoLiveHost(f"session {session_id}: its host exited just now; the request was withdrawn")


# How ``parse_args`` reads an --arg of each kind, which only this command line does (the inbox takes JSON values)
_AS_GIVEN = {"any": "; given here as JSON where it parses (2, true, [1]), else as text"}


def _ops_help() -> str:
    """The ops table of ``control --help``: each op's arguments from ``OPS``, then, from ``DSH_OPS``, the arguments a
    DSH session's op takes that our host's does not or takes otherwise."""
    lines = ["ops and their arguments:"]
    for op, spec in OPS.items():
        lines += _op_lines(op, spec.args)
    lines.append("on a DSH session (through the bridge):")
    for op, spec in DSH_OPS.items():
        ours = OPS[op].args if op in OPS else ()
        if other := [s for s in spec.args if s not in ours]:
            lines += _op_lines(
                op, other, "also " if all(s.name not in {o.name for o in ours} for s in other) else ""
            )
    return "\n".join(lines)


def _op_lines(op: str, args: Sequence[ArgSpec], lead: str = "") -> list[str]:
    """``op``'s line of ``args`` (``lead`` before them), then a line per argument saying what it is."""
    names = " ".join(f"{s.name}=…" if s.required else f"[{s.name}=…]" for s in args) or "(none)"
    return [f"  {op:<{OP_COLUMN - 3}} {lead}{names}",
            *(f"{' ' * OP_COLUMN}{s.name}: {s.description}{_AS_GIVEN.get(s.kind, '')}" for s in args)]  # fmt: skip


class _ControlHelp(argparse.HelpFormatter):
    """The description wrapped as every command's; the ops table (the text laid out in lines) line by line, each
    row's words that do not fit under its arguments' column."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" not in text:
            return super()._fill_text(text, width, indent)
        under = indent + " " * OP_COLUMN
        return "\n".join(textwrap.fill(line, width, initial_indent=indent, subsequent_indent=under)
                         for line in text.splitlines())  # fmt: skip


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``control``."""
    p = subparsers.add_parser(
        "control",
        help=COMMANDS["control"].help,
        description=(
            "Append a request to the session's control inbox (control.jsonl beside the log) for the live host that "
            "runs the session; it answers within a second and records the outcome in the log. With --wait, follow "
            "the log until the final outcome: exit 0 when applied, 1 when rejected, cancelled or expired, 4 when "
            "DSH died while running it (unknown: it may have taken effect); a wait that times out withdraws the "
            "request (exit 2), and so does Ctrl-C or a SIGTERM while it waits (exit 130 or 143). No live host: exit 3 and nothing is written, unless "
            "--queue leaves the request for the next resume. A session run by DSH is controlled through the "
            "tapedeck bridge plugin (`tapedeck bridge install`), which answers in control.outcomes.jsonl; a log "
            "that neither a tapedeck host nor the bridge ever ran: exit 2."
        ),
        epilog=_ops_help(),
        formatter_class=_ControlHelp,
    )
    add_log_path(p, remote=True)
    p.add_argument("op", metavar="OP", help=f"one of: {', '.join(OPS)}")
    p.add_argument(
        "--arg", action="append", default=[], metavar="KEY=VALUE", help="an argument of the op (repeatable)"
    )
    p.add_argument("--wait", action="store_true", help="wait for the host's outcome and print it")
    p.add_argument(
        "--queue",
        action="store_true",
        help="write the request even when no host is running; the next `run --resume` applies it, or on a DSH "
        "session the bridge's next start",
    )
    p.add_argument(
        "--expires", type=decimal, metavar="S", help="with --queue: the request expires S seconds from now"
    )
    p.add_argument(
        "--timeout",
        type=decimal,
        metavar="S",
        help=f"seconds to wait with --wait (default {DEFAULT_TIMEOUT:g})",
    )
    add_json(p, "print the request (or, with --wait, the outcome event) as JSON")
    p.set_defaults(handler=guarded(_run))
