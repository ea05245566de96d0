"""Time-travel subcommands: ``request``, ``diff`` and ``cost`` (``surface --at`` lives with ``surface``).

Each reads the log in one streaming pass (``core.rebuild.request.stream_requests``) and holds only what it prints:
``request --all`` prints each request as it is rebuilt, ``diff`` stops at the request it compares, ``cost``
keeps a row per request.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from core.cli import COMMANDS
from core.cli.args import add_json, add_log_path, path_argument, whole
from core.cli.common import (
    RULE_SECTIONS,
    dumps_indented,
    emit,
    emit_json_list_field,
    for_terminal,
    guarded,
    seq_width,
    write_bytes,
)
from core.read.session import Session, missing_turn_step
from core.rebuild.request import AGENT, UNFINISHED, Request, stream_requests
from core.rebuild.request_diff import break_point
from core.shared.errors import TapedeckError, seq_not_in_log
from core.shared.model_specs import missing_price
from core.shared.text import counted, model_label, path_text, quoted, usd
from core.shared.wire import call_text

CLIP = 400
COST_ROWS = 512  # request rows of ``cost --json`` dumped in one call (about 160 kB of JSON)


def _label(r: dict[str, Any]) -> str:
    again = f" attempt {r['attempt']}" if r["attempt"] > 1 else ""
    return f"turn {r['turn']} step {r['step']}{again} (seq {r['seq']}{', ' + UNFINISHED if r['unfinished'] else ''})"


def _pick(args: argparse.Namespace) -> list[Request]:
    """The requests ``--seq`` or ``--turn``/``--step`` name (``--seq`` stops the pass at the first request past it)."""
    found: list[Request] = []

    def take(request: Request, _: Session) -> bool:
        if args.seq is not None:
            if request.seq > args.seq >= 0:  # a negative seq reads on: its refusal names the log's last seq
                return True
            found[:] = [request]
            return False
        if (request.turn, request.step) == (args.turn, args.step):
            found.append(request)
        return False

    step = None if args.seq is not None else lambda point: (point.turn, point.step) == (args.turn, args.step)
    session = stream_requests(
        args.path, take, step, others=False
    )  # a step's requests are the only ones built
    # as surface --at and export --at refuse it
    if args.seq is not None and not 0 <= args.seq < session.next_seq:
        raise seq_not_in_log(args.seq, session.next_seq)
    if not found and args.seq is not None:
        raise TapedeckError(f"no model request went out at or before seq {args.seq}")
    if not found:
        lacks = missing_turn_step(session.turns, args.turn, args.step)
        raise TapedeckError(f"turn {args.turn} step {args.step} made no model request in this log{lacks}")
    return found


RENDERED_BYTES = 32 << 20  # printed wire messages ``request --all --json`` keeps for the requests after


def _render(message: dict[str, Any], indent: bytes) -> bytes:
    """One wire message as indented JSON whose lines after the first start with ``indent``."""
    return dumps_indented(message).replace(b"\n", b"\n" + indent)


def _rendered(request: Request, indent: bytes) -> Iterator[bytes]:
    """``request``'s wire messages rendered (``_render``) one at a time, as ``Request.iter_wire`` gives them."""
    for message in request.iter_wire():
        yield _render(message, indent)


class RenderedNodes:
    """The printed wire messages of surface nodes, kept up to ``budget`` bytes: every request of a log prints its
    whole surface again, and reading a node back and rendering it costs far more than writing what was kept.
    A node that left the surface (a cut) is let go when the next request is printed."""

    def __init__(self, budget: int = RENDERED_BYTES) -> None:
        self.budget = budget
        self.size = 0
        self.kept: dict[bytes, dict[int, list[bytes]]] = {}  # by indent, by node seq
        self.renders = 0  # nodes read back and rendered (each kept one once)

    def pieces(self, request: Request, indent: bytes) -> Iterator[bytes]:
        """``_rendered(request, indent)``, each node's messages from what is kept when they are."""
        kept = self.kept.setdefault(indent, {})
        seen = set()
        held = 0  # nodes of this request that are kept
        for seq, read in request.wire_nodes():
            if seq is None:
                yield from (_render(message, indent) for message in read())
                continue
            seen.add(seq)
            pieces = kept.get(seq)
            if pieces is None:
                self.renders += 1
                pieces = [_render(message, indent) for message in read()]
                size = sum(map(len, pieces))
                if self.size + size <= self.budget:
                    kept[seq] = pieces
                    self.size += size
                    held += 1
            else:
                held += 1
            yield from pieces
        if len(kept) > held:  # nodes that went off the surface since
            for seq in [seq for seq in kept if seq not in seen]:
                self.size -= sum(map(len, kept.pop(seq)))


def _json_pieces(
    request: Request, body: bool, rendered: Callable[[Request, bytes], Iterator[bytes]] = _rendered
) -> Iterator[bytes]:
    """``orjson.dumps(request.to_dict(body), OPT_INDENT_2 | OPT_NON_STR_KEYS)`` as an item of a printed list
    (its lines after the first indented by two), in pieces: its messages (and the body's) written one at a time
    as ``rendered(request, indent)`` gives them; the whole request is never held."""
    whole = dumps_indented(request.to_dict(body=body, shallow=True)).replace(b"\n", b"\n  ")
    at = 0
    # the request's messages, then the body's (indented deeper)
    for indent in (b"    ", b"      ")[: 1 + body]:
        # a nested or string occurrence is indented otherwise or escaped
        mark = b"\n" + indent + b'"messages": []'
        cut = whole.index(mark, at) + len(mark) - 1
        yield whole[at:cut]
        first, next_ = b"\n" + indent + b"  ", b",\n" + indent + b"  "
        count = 0
        for piece in rendered(request, indent + b"  "):
            yield next_ if count else first
            yield piece
            count += 1
        yield b"\n" + indent if count else b""
        at = cut
    yield whole[at:]


class _JsonRequests:
    """``emit([r.to_dict(body) for r in requests], True, …)`` byte for byte, one request and one message at a
    time (``add`` each request, then ``close``)."""

    def __init__(self, body: bool, rendered: Callable[[Request, bytes], Iterator[bytes]] = _rendered) -> None:
        self.body, self.rendered, self.count = body, rendered, 0

    def add(self, request: Request) -> None:
        """Print the next request."""
        write_bytes(b"[\n  " if not self.count else b",\n  ")
        for piece in _json_pieces(request, self.body, self.rendered):
            write_bytes(piece)
        self.count += 1

    def close(self) -> None:
        """End the list (``[]`` when no request was added)."""
        write_bytes(b"\n]\n" if self.count else b"[]\n")
        sys.stdout.flush()


def _write_json_list(requests: Iterable[Request], body: bool) -> None:
    """The ``--json`` list of ``requests``, one message at a time (``_JsonRequests``)."""
    out = _JsonRequests(body)
    for request in requests:
        out.add(request)
    out.close()


def _print_all(args: argparse.Namespace) -> None:
    """Every request, each printed as soon as its attempt is over (none is kept). The pass is lean: a request's
    messages are read back from the log only to print them (``--json``), each node's kept printed
    (``RenderedNodes``) while they fit, so memory does not follow the surface."""
    out = _JsonRequests(args.full, RenderedNodes().pieces) if args.json else None
    shown = 0

    def show(request: Request, _: Session) -> None:
        nonlocal shown
        shown += 1
        if out is not None:
            out.add(request)
            return
        lines = _request_lines(args, request.to_dict(shallow=True), (), request.wire_stats()[0])
        sys.stdout.write("\n".join(lines) + "\n")

    stream_requests(args.path, show)
    if out is not None:
        out.close()
    else:
        sys.stdout.write("" if shown else "no model request in this log\n")
        sys.stdout.flush()


def _usage(usage: dict[str, Any] | None) -> str:
    return " ".join(f"{k}={v}" for k, v in usage.items()) if usage else "none logged"


def _message_text(message: dict[str, Any]) -> str:
    parts = [message.get("content") or ""]
    if message.get("reasoning_content"):
        parts.insert(0, f"(reasoning) {message['reasoning_content']}")
    for call in message.get("tool_calls") or ():
        parts.append(f"{call_text(call)} [{call.get('id', '?')}]")
    return "\n".join(p for p in parts if p)


def _request_lines(
    args: argparse.Namespace, r: dict[str, Any], messages: Iterable[dict[str, Any]], count: int | None = None
) -> Iterator[str]:
    """The text lines of one ``request --json`` object ``r`` whose ``count`` wire messages (``len(messages)`` when
    None) come from ``messages``, one at a time."""
    from core.read.summary import human_chars  # the text's alone: ``--json`` and ``cost`` never import it

    tools = ", ".join(r["tools"]) or "none"
    extra = [f"max_tokens {r['maxTokens']}" if r["maxTokens"] is not None else "",
             f"tool_choice {r['toolChoice']}" if r["toolChoice"] else "",
             f"reasoning {r['reasoningEffort']}" if r["reasoningEffort"] else "",
             f"temperature {r['temperature']}" if r["temperature"] is not None else "",
             f"stop {json.dumps(r['stop'], ensure_ascii=False)}" if r["stop"] is not None else ""]  # fmt: skip
    attempt = f" (attempt {r['attempt']})" if r["attempt"] > 1 else ""
    what = (
        f"turn {r['turn']} step {r['step']}{attempt}"
        if r["kind"] == AGENT
        else f"{r['kind']} call, turn {r['turn']}"
    )
    count = len(messages) if count is None else count  # type: ignore[arg-type]
    heading = [
        f"{what} · at seq {r['seq']} · {r['host']} · "
        f"{model_label(r['provider'], r['model'], 'model unknown')} · {count} messages · {human_chars(r['chars'])} chars"
        + "".join(f" · {e}" for e in extra if e)
        + (f" · {UNFINISHED}" if r["unfinished"] else ""),
        f"  tools ({len(r['tools'])}): {tools}",
        f"  usage: {_usage(r['usage'])}",
        *(f"  not in the log: {note}" for note in r["unlogged"]),
    ]
    # tapedeck's words about the request, whose names (the model, the tools, the settings, usage's keys) the log gave:
    # quoted, piped or not, one line each; the messages below are the bytes the model got (``for_terminal``)
    yield from (quoted(path_text(line), None) for line in heading)
    if args.all:
        return
    for i, m in enumerate(messages):
        text = _message_text(m)
        where = f" {m['tool_call_id']}" if m.get("tool_call_id") else ""
        shown = text if args.full or len(text) <= CLIP else text[:CLIP] + f"… (+{len(text) - CLIP} chars)"
        yield for_terminal(f"  [{i}] {m['role']}{where}")
        yield from (f"      {line}" for line in for_terminal(shown).splitlines() or [""])


def _write_text(args: argparse.Namespace, requests: list[Request]) -> None:
    """``emit`` of the requests' text, a line at a time: each request's messages read one at a time."""
    last = None
    for request in requests:
        r = request.to_dict(shallow=True)
        for line in _request_lines(args, r, request.iter_wire(), request.wire_stats()[0]):
            sys.stdout.write(line if last is None else "\n" + line)
            last = line
    sys.stdout.write("" if last is not None and last.endswith("\n") else "\n")  # as ``emit`` ends a text
    sys.stdout.flush()


def _request(args: argparse.Namespace) -> None:
    if (args.all or args.seq is not None) and (args.turn is not None or args.step is not None):
        raise TapedeckError(
            f"--turn and --step pick a request themselves: give them without {'--all' if args.all else '--seq'}"
        )
    if (args.turn is None) != (args.step is None):
        given, missing = ("turn", "step") if args.step is None else ("step", "turn")
        raise TapedeckError(f"--{given} needs --{missing}: a request is one step's (--turn T --step S)")
    if not args.all and args.seq is None and args.turn is None:
        raise TapedeckError("say which request: --turn T --step S, --seq SEQ or --all")
    if args.all:
        _print_all(args)
        return
    picked = _pick(args)
    if args.json:
        _write_json_list(picked, args.full)
        return
    _write_text(args, picked)


def _diff(args: argparse.Namespace) -> None:
    from core.rebuild.request_diff import diff_base, diff_requests

    found: list[dict[str, Any]] = []
    before: list[Request] = []

    def compare(request: Request, session: Session) -> bool:
        if (request.turn, request.step, request.attempt) == (args.turn, args.step, args.attempt):
            found.append(diff_requests(before[0] if before else None, request, session).to_dict())
            return True
        before[:] = [diff_base(request)]
        return False

    session = stream_requests(
        args.path, compare, others=False
    )  # the agent's requests make the cache-break chain
    if not found:
        lacks = missing_turn_step(session.turns, args.turn, args.step)
        raise TapedeckError(
            f"turn {args.turn} step {args.step} attempt {args.attempt} made no model request{lacks}"
        )
    emit(found[0], args.json, _render_diff)


def _node(key: int | str) -> str:
    return f"phase note (anchored at seq {key.split(':', 1)[1]})" if isinstance(key, str) else f"seq {key}"


def _render_diff(d: dict[str, Any]) -> str:
    a, b = d["after"], d["before"]
    head = _label(a)
    if b is None:
        return f"{head}: the session's first request, {d['totalBytes']} bytes; nothing to compare with"
    lines = [f"{head} against {_label(b)}"]
    if d["broke"]:
        where = break_point(d["prefixBytes"], d["totalBytes"], d["cause"], d["causeSeq"])
        lines.append(f"  {where}; {d['totalBytes'] - d['prefixBytes']} bytes after it are new to the cache")
    else:
        lines.append(
            f"  prefix kept: the first {d['prefixBytes']} of {d['totalBytes']} bytes are the previous request"
        )
    for label, keys in (("added", d["added"]), ("removed", d["removed"])):
        if keys:
            lines.append(f"  {label} ({len(keys)}): " + ", ".join(_node(k) for k in keys))
    for r in d["replaced"]:
        lines.append(f"  replaced {_node(r['node'])} by seq {r['by']}")
    return "\n".join(lines)


def _cost(args: argparse.Namespace) -> None:
    from core.alerts.rate import RateFold
    from core.control.config import load_config
    from core.rebuild.cost import CostTally

    config = load_config(args.config, only=RULE_SECTIONS)
    tally, rate = CostTally(config.model), RateFold(config.model, config.alerts)

    # the run rate reads other events' times back
    def observe(session: Session, event: dict[str, Any]) -> None:
        rate.observe(session.next_seq - 1, event, session.events.iter_raw)

    session = stream_requests(args.path, tally.add, observe=observe, observe_types=RateFold.TYPES)  # one pass
    rate.finish(session.next_seq, session.events.iter_raw)
    report = tally.report(session, rows=False)  # each request's row made as it is printed
    report["projection"] = rate.projection().to_dict()
    if args.json:
        emit_json_list_field(report, "requests", group=COST_ROWS)
    else:
        emit(report, False, _render_cost)


def _usd(value: float | None) -> str:
    return "n/a" if value is None else usd(value)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _render_projection(p: dict[str, Any]) -> list[str]:
    """The run rate and the open turn's projected cost, when known."""
    lines = []
    if p["usdPerHour"] is not None:
        lines.append(f"run rate: ${p['usdPerHour']:.4f}/h at the newest event")
    if p["projectedTurnUsd"] is not None:
        lines.append(
            f"turn {p['turn']} at step {p['step']} of {p['hardStepBudget']}: {_usd(p['turnUsd'])} so far, "
            f"{_usd(p['projectedTurnUsd'])} if it runs to its hard step budget"
        )
    return lines


def _render_cost(r: dict[str, Any]) -> str:
    from core.read.summary import human_chars

    lines = ["turn step  hit       miss      output    cached  cost      cache break"]
    for q in r["requests"]:
        step = (
            f"{q['step']}" + (f".{q['attempt']}" if q["attempt"] > 1 else "") if q["kind"] == AGENT else "-"
        )
        note = q["cacheBreak"] or "" if q["kind"] == AGENT else f"({q['kind']} call at seq {q['seq']})"
        note = f"{note} ({UNFINISHED})".lstrip() if q["unfinished"] else note
        lines.append(
            f"{q['turn']:>4} {step:<5} {q['hit'] if q['hit'] is not None else '-':<9} {q['miss']:<9} "
            f"{q['output']:<9} {_pct(q['cached']):>6}  {_usd(q['usd']):<9} {note}".rstrip()
        )
    lines.append("")
    for t in r["turns"]:
        lines.append(
            f"turn {t['turn']}: {counted(t['requests'], 'request')}, {_usd(t['usd'])}, {_pct(t['cached'])} cached"
        )
    total = r["total"]
    lines.append(
        f"session: {counted(total['requests'], 'request')}, hit {total['hit']} / miss {total['miss']} / output "
        f"{total['output']} tokens, {_usd(total['usd'])}, {_pct(total['cached'])} cached"
    )
    lines.extend(missing_price(model) for model in r["unpriced"])
    lines.extend(_render_projection(r["projection"]))
    if r["cuts"]:
        lines.append(f"cuts (estimates at {r['bytesPerToken']} bytes per token):")
    width = seq_width(c["seq"] for c in r["cuts"])
    for c in r["cuts"]:
        broke = (
            f"broke the cache, {c['rebilledTokens']} tokens re-billed"
            if c["brokeCache"]
            else "no cache break"
        )
        if c["callUsd"] is not None:
            broke += f", summary call {_usd(c['callUsd'])}"
        # negative when the cut grew the requests: a checkpoint longer than the span it replaced
        removed = c["charsRemoved"]
        change = f"{'-' if removed > 0 else '+' if removed < 0 else ''}{human_chars(abs(removed))} chars"
        lines.append(
            f"  seq {c['seq']:>{width}} {c['kind']:<10} turn {c['turn']:<3} {change:>11} "
            f"for {counted(c['laterRequests'], 'request')}: saved {_usd(c['savedUsd'])}, {broke} "
            f"({_usd(c['costUsd'])}), net {_usd(c['netUsd'])}"
        )
    return "\n".join(lines)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``request``, ``diff`` and ``cost``."""
    p = sub.add_parser(
        "request",
        help=COMMANDS["request"].help,
        description="Rebuild a model request from the log: the chat-completions messages, the tools and "
        "the settings it went out with, plus the usage logged for it. For a tapedeck host's log this is "
        "exactly the body the host sent; for a DSH log it is the request header plus the surface as it "
        "stood when the request went out.",
    )
    add_log_path(p)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--seq", type=whole, metavar="SEQ", help="the request in flight at event SEQ")
    which.add_argument("--all", action="store_true", help="every model request in order, retries included")
    p.add_argument("--turn", type=whole, metavar="T", help="with --step: that step's request (each attempt)")
    p.add_argument("--step", type=whole, metavar="S", help="with --turn: the step whose request to print")
    p.add_argument("--full", action="store_true",
                   help="print whole messages (text output clips long ones); with --json, each request's whole body")  # fmt: skip
    add_json(p, "print a JSON list, one object per request")
    p.set_defaults(handler=guarded(_request))

    p = sub.add_parser(
        "diff",
        help=COMMANDS["diff"].help,
        description="Compare a step's request with the request before it: the byte offset where their "
        "shared prefix ends (where the provider's prompt cache broke), the event that caused it (seal, "
        "fold, prune, rewind, compaction, phase note, header change) and the nodes added, removed or replaced.",
    )
    add_log_path(p)
    p.add_argument("--turn", type=whole, required=True, metavar="T", help="turn of the request to compare")
    p.add_argument("--step", type=whole, required=True, metavar="S", help="step of that turn")
    p.add_argument(
        "--attempt",
        type=whole,
        default=1,
        metavar="N",
        help="which attempt of a retried step, from 1 (default 1)",
    )
    add_json(p)
    p.set_defaults(handler=guarded(_diff))

    p = sub.add_parser(
        "cost",
        help=COMMANDS["cost"].help,
        description="Price the logged usage: cache-hit, cache-miss and output tokens of every request, "
        "per-turn and session totals, and for each seal, fold, prune, rewind or compaction an estimate of "
        "what it saved and what its cache break cost. Prices are DeepSeek's unless the config's model "
        "section says otherwise.",
    )
    add_log_path(p)
    p.add_argument(
        "--config",
        metavar="FILE",
        type=path_argument,
        help="config file whose [model.prices] table overrides prices",
    )
    add_json(p)
    p.set_defaults(handler=guarded(_cost, paused=True))
