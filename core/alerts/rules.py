"""What the alert rules look at, folded one event at a time, and the rules themselves as pure functions.

``Signals`` is a small projection of a session kept for the rules: the running tool-error streak, the open turn,
the host's logged state, the latest context size, the session's cost and its recent spend, the tool calls of the
turn, the latest cache break, and the rewind-guard and router facts. ``Signals.observe`` folds one event and
returns the causes whose inputs it changed; ``Signals.clock`` takes what only the world outside the log knows
(the time, the host's liveness, the file's last write).

Each rule is a function ``(signals, settings, now_ms) -> Finding | None``: a finding while its condition holds,
None while it does not. They read nothing else, so replaying a log and following it give the same answers.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import field
from typing import Any, Protocol

import orjson

from core.alerts.config import RuleConfig
from core.log.validate import INVALID
from core.log.vocabulary import GUARD_SOURCE, HOST_EVENT, ROUTE_EVENT
from core.rebuild.request_diff import break_point
from core.shared.deepjson import deep_dumps
from core.shared.records import record
from core.shared.text import json_shown, quoted, tool_block_failed, tool_result_failed
from core.shared.values import int_or_none

STATE_EVENT = "tapedeck/state"  # core.control.host_state.STATE_EVENT (not imported: that module reads files)
SEVERITY: dict[str, str] = {
    "error-streak": "warning",
    "stalled": "warning",
    "waiting": "warning",
    "context": "warning",
    "cache-break": "warning",
    "budget": "critical",
    "run-rate": "warning",
    "loop": "warning",
    "host-died": "critical",
    "turn-error": "warning",
    "rewind-guard": "info",
    "class-change": "info",
    "unreachable": "warning",
}
MIN_RATE_SPAN_MS = 60_000
# Times before 2000 are not clock times: a reader gives an event without a time the time 0, and a packed row of
# a log without times its members' offsets from 0.
MIN_EPOCH_MS = 946_684_800_000  # a run rate is never taken over less than a minute of the session
# a turn that began this long after its exited host's last sign of life (a bridge's heartbeat comes every second)
# is another process's
TAKEN_UP_MS = 5_000


class Pricing(Protocol):
    """Prices and windows by model name (``core.alerts.engine.ModelBook``)."""

    def usd(self, model: str | None, usage: Mapping[str, Any]) -> float | None:
        """The price of one usage sample (None: the model has no price)."""

    def window(self, model: str | None) -> int | None:
        """The model's context window in tokens (None: unknown)."""


@record(frozen=True, slots=True)
class Finding:
    """A rule's condition holds: since which event, and why (one line)."""

    seq: int
    reason: str


@record(slots=True)
class CacheBreak:
    """The latest request's break of the provider's prefix cache, priced: where it broke and what broke it, as
    ``core.rebuild.request_diff`` found them for ``tapedeck diff``."""

    seq: int
    cause: str | None
    tokens: float
    usd: float | None
    cause_seq: int | None = None  # the event that broke it (a cut, a header), when one did
    prefix_bytes: int = 0  # the bytes of the prompt the request shares with the one before it
    total_bytes: int = 0  # the bytes of the request's prompt


def _usd(value: float) -> str:
    """``$12.40``, ``$0.60``, ``$0.0031`` (four decimals under ten cents), ``<$0.0001``."""
    if value >= 0.0995 or value == 0:
        return f"${value:.2f}"
    return f"${value:.4f}" if value >= 0.0001 else "<$0.0001"


def _said(value: object) -> str:
    """An error's code or message from the log as its alert names it: a string as it is (quoted later with the rest),
    anything else as compact JSON, escaped and cut to 200 characters (``json_shown``), not as Python writes it."""
    return value if isinstance(value, str) else json_shown(value, 200)[0]


@record()
class Signals:
    """The facts the rules read, folded from a session's events in seq order (see the module docstring)."""

    seq: int = -1  # the newest event seen
    last_time: int | None = None  # the newest event time (epoch ms), if events carry times
    first_time: int | None = None
    open_turn: int | None = None
    hosted: bool = False  # a tapedeck host started on the log
    child: bool = False  # a subagent's session (its header names a parent): its parent gives it work
    logged_state: tuple[str, int] | None = None  # the newest tapedeck/state: (state, seq)
    logged_at: int | None = None  # the newest event time when that state was logged
    live_state: str | None = None  # from ``clock``: the host's state as its lock and host.json say
    exited_since: int | None = None  # from ``clock``: when the host exited (epoch ms), while ``live_state`` says so
    live_seq: int = -1  # from ``clock``: the newest event folded when ``live_state`` was read
    turn_time: int | None = None  # when the open turn began (epoch ms)
    turn_seq: int | None = None  # where the open turn began
    last_write: int | None = None  # from ``clock``: when the file last grew (epoch ms)
    died_at: int | None = None  # seq before a host started on a log whose turn was still open
    streak: int = 0
    streak_seq: int = 0
    approvals: dict[str, int] = field(default_factory=dict)  # approval/asked not decided yet: id -> seq
    model: str | None = None
    pressure: tuple[float, int] | None = None  # context used / window, and the seq that said so
    context_tokens: tuple[int, int] | None = None  # from usage: (tokens, seq)
    window: int | None = None  # the model's context window in tokens, when known
    logged_window: int | None = None  # the window the log says the requests run with (DSH's request/context)
    turn_usd: dict[int, dict[int, float]] = field(default_factory=dict)  # each priced step's cost, by turn and step
    priced_steps: int = 0  # how many steps ``turn_usd`` holds
    cost_usd: float = 0.0
    cost_seq: int = 0
    spend: deque[tuple[int, float, int]] = field(default_factory=deque)  # (time, usd added, seq) in the window
    rate: tuple[float, int] | None = None  # $/h and the seq it was taken at
    calls: dict[tuple[str, str], int] = field(default_factory=dict)  # this turn's (name, args) -> count
    loop: tuple[str, int, int] | None = None  # (tool name, times, seq) of the call seen most often this turn
    cache_break: CacheBreak | None = None
    guard_seq: int | None = None
    turn_error: tuple[int, str] | None = None  # the newest turn's end with an error (seq, why), until a turn starts
    route_class: str | None = None
    route_step: tuple[int, int, int] | None = None  # the newest route's (turn, step, hard step budget)
    class_change: tuple[str, str, int] | None = None
    title: str | None = None  # the session's newest title (no rule reads it: what its alerts are shown under)

    # the fold ------------------------------------------------------------------------------------------------
    def observe(
        self, event: Mapping[str, Any], price: Pricing, window_ms: int, sample: dict[str, Any] | None = None
    ) -> frozenset[str]:
        """Fold one event (in seq order); ``price`` knows the models' prices and windows, ``window_ms`` is the
        run rate's window. Returns the causes whose inputs changed. With ``sample``, the usage object of the usage
        sample ``event`` is (a chunk's or an assistant message's, its ``data`` an object), only what
        ``core.alerts.rate.project`` reads of it is folded (the seq, the clock and its price, not the context it
        reports) and no cause is returned."""
        seq = self.moved(event)
        when = event.get("time")
        if when.__class__ is not int:
            when = int_or_none(when)
        if when is not None and when >= MIN_EPOCH_MS:
            self.last_time = when
            self.first_time = when if self.first_time is None else self.first_time
        if INVALID in event:  # ``is_invalid``
            return frozenset()
        if sample is not None:
            self._priced(seq, event["data"], sample, price)
            return _NONE
        etype = event.get("type")
        data = event.get("data")
        if data.__class__ is not dict:
            data = data if isinstance(data, dict) else {}
        handler = _HANDLERS.get(etype) if etype.__class__ is str or isinstance(etype, str) else None
        touched = handler(self, seq, data, price) if handler is not None else _NONE
        if when is not None and when >= MIN_EPOCH_MS and self.spend and self.spend[0][0] <= when - window_ms:
            touched = touched | _RATE
        return touched

    def moved(self, event: Mapping[str, Any]) -> int:
        """Take ``event``'s seq as the newest seen (one past the last when it has none) and return it."""
        seq = event.get("seq")
        if seq.__class__ is not int:  # ints by their class first: a pass folds every usage sample
            seq = int_or_none(seq)
            seq = self.seq + 1 if seq is None else seq
        self.seq = seq
        return seq  # type: ignore[no-any-return]

    def skip(self, seq: int, times: Sequence[int], window_ms: int) -> frozenset[str]:
        """Fold stream deltas up to ``seq`` at ``times`` (in order) at once: a delta carries no usage, so only the
        seq and the time move, and with the time the run rate's window (``observe`` of each, summed up)."""
        self.seq = seq
        if not times:
            return _NONE
        clock = times if min(times) >= MIN_EPOCH_MS else [t for t in times if t >= MIN_EPOCH_MS]  # most: every time
        if not clock:
            return _NONE
        self.last_time = clock[-1]
        self.first_time = clock[0] if self.first_time is None else self.first_time
        return _RATE if self.spend and self.spend[0][0] <= clock[-1] - window_ms else _NONE

    def _turn_start(self, seq: int, data: dict[str, Any], price: Any) -> frozenset[str]:
        self.open_turn = int_or_none(data.get("turn")) or 0
        self.turn_time = self.last_time
        self.turn_seq = seq
        self.died_at = None
        self.calls.clear()
        self.loop = None
        self.guard_seq = None
        self.turn_error = None
        return _TURN

    def _turn_end(self, seq: int, data: dict[str, Any], price: Any) -> frozenset[str]:
        reason = data.get("reason")
        if isinstance(reason, dict) and reason.get("kind") == "error":
            error = reason.get("error") if isinstance(reason.get("error"), dict) else {}
            why = ": ".join(_said(error[k]) for k in ("code", "message") if error.get(k)) or "no cause recorded"
            turn = data.get("turn")  # a turn/end may leave its number out
            which = "a turn" if turn is None else f"turn {quoted(turn)}"
            self.turn_error = (seq, f"{which} ended with an error: {quoted(why, 200)}")
        self.open_turn = None
        self.died_at = None
        self.guard_seq = None
        self.approvals.clear()  # asked only inside a turn: one a killed DSH never decided ends with it
        return _TURN

    def _host(self, seq: int, data: dict[str, Any], price: Any) -> frozenset[str]:
        if self.open_turn is not None:
            self.died_at = seq - 1  # the host before this one left its turn open
        self.hosted = True
        self.logged_state = None
        self.logged_at = None
        self.live_state = None
        if isinstance(data.get("model"), str) and self.model is None:
            self.model = data["model"]
        return frozenset({"host-died", "waiting", "stalled"})

    def _state(self, seq: int, data: dict[str, Any], price: Any) -> frozenset[str]:
        if isinstance(data.get("state"), str):
            self.logged_state = (data["state"], seq)
            self.logged_at = self.last_time
            self.live_state = None  # the log is newer than the last look at host.json
        return frozenset({"waiting", "stalled", "host-died"})

    def _result(self, seq: int, data: dict[str, Any], price: Any) -> frozenset[str]:
        message = data.get("message")
        return self._streak(seq, tool_result_failed(message if isinstance(message, dict) else None))

    def _sub_call(self, seq: int, data: dict[str, Any], price: Any) -> frozenset[str]:
        """A ``run_code`` sub-call (``tool/code-dispatch``, whose data holds a tool-result block's fields) counts
        in the streak as a tool result does."""
        return self._streak(seq, tool_block_failed(data))

    def _streak(self, seq: int, failed: bool) -> frozenset[str]:
        if failed:
            self.streak += 1
            self.streak_seq = seq
        else:
            self.streak = 0
        return frozenset({"error-streak"})

    def _call(self, seq: int, data: dict[str, Any], price: Any) -> frozenset[str]:
        name, arguments = data.get("name"), data.get("arguments")
        if not isinstance(name, str):
            return _NONE
        key = (name, _canonical(arguments))
        times = self.calls.get(key, 0) + 1
        self.calls[key] = times
        if self.loop is None or times > self.loop[1]:
            self.loop = (name, times, seq)
        return frozenset({"loop"})

    def _header(self, seq: int, data: dict[str, Any], price: Any) -> frozenset[str]:
        header = data.get("header")
        config = header.get("config") if isinstance(header, dict) else None
        if isinstance(config, dict) and isinstance(config.get("model"), str):
            self.model = config["model"]
        return _NONE

    def _title(self, seq: int, data: dict[str, Any], price: Any) -> frozenset[str]:
        if isinstance(data.get("title"), str):
            self.title = data["title"]
        return _NONE

    def _request_context(self, seq: int, data: dict[str, Any], price: Any) -> frozenset[str]:
        window = int_or_none(data.get("contextWindow"))
        self.logged_window = window if window is not None and window > 0 else None
        return _NONE

    def _route(self, seq: int, data: dict[str, Any], price: Any) -> frozenset[str]:
        touched = {"context"}
        pressure = data.get("pressure")
        if isinstance(pressure, int | float) and not isinstance(pressure, bool):
            self.pressure = (float(pressure), seq)
        turn, step = int_or_none(data.get("turn")), int_or_none(data.get("step"))
        budgets = data.get("budgets")
        hard = int_or_none(budgets.get("hard")) if isinstance(budgets, dict) else None
        if turn is not None and step is not None and hard is not None:
            self.route_step = (turn, step, hard)
        task_class = data.get("taskClass")
        if isinstance(task_class, str):
            if self.route_class is not None and task_class != self.route_class:
                self.class_change = (self.route_class, task_class, seq)
            elif self.route_class is not None:
                self.class_change = None
            self.route_class = task_class
            touched.add("class-change")
        return frozenset(touched)

    def _message(self, seq: int, data: dict[str, Any], price: Any) -> frozenset[str]:
        if data.get("source") == GUARD_SOURCE:
            self.guard_seq = seq
            return frozenset({"rewind-guard"})
        return _NONE

    def _assistant(self, seq: int, data: dict[str, Any], price: Any) -> frozenset[str]:
        usage = data.get("usage")
        return self._usage(seq, data, usage, price) if isinstance(usage, dict) else _NONE

    def _chunk(self, seq: int, data: dict[str, Any], price: Any) -> frozenset[str]:
        chunk = data.get("chunk")
        if isinstance(chunk, dict) and chunk.get("type") == "usage" and isinstance(chunk.get("usage"), dict):
            return self._usage(seq, data, chunk["usage"], price)
        return _NONE

    def _usage(self, seq: int, data: dict[str, Any], usage: dict[str, Any], price: Any) -> frozenset[str]:
        get = usage.get  # the input's counts (an exact int, as logged, takes no call)
        given, hit, written = get("inputTokens"), get("cacheReadTokens"), get("cacheWriteTokens")
        tokens = (
            (given if given.__class__ is int else int_or_none(given) or 0)
            + (hit if hit.__class__ is int else int_or_none(hit) or 0)
            + (written if written.__class__ is int else int_or_none(written) or 0)
        )
        self.context_tokens = (tokens, seq)
        self.window = self.logged_window or price.window(self.model)
        return _PRICED if self._priced(seq, data, usage, price) else _CONTEXT

    def _priced(self, seq: int, data: dict[str, Any], usage: dict[str, Any], price: Any) -> bool:
        """Price a usage sample of the step ``data`` names: the step's cost (a later sample replaces the earlier
        one), the session's and the spend window's; False when its model has no price."""
        turn, step = data.get("turn"), data.get("step")
        key = (turn if turn.__class__ is int else int_or_none(turn) or 0, step if step.__class__ is int else int_or_none(step) or 0)
        usd = price.usd(self.model, usage)
        if usd is None:
            return False
        steps = self.turn_usd.setdefault(key[0], {})
        if key[1] not in steps:
            self.priced_steps += 1
        added = usd - steps.get(key[1], 0.0)  # a later sample for a step replaces the earlier one
        steps[key[1]] = usd
        self.cost_usd += added
        self.cost_seq = seq
        if self.last_time is not None:
            self.spend.append((self.last_time, added, seq))
        return True

    def _compaction(self, seq: int, data: dict[str, Any], price: Any) -> frozenset[str]:
        """DSH's compaction summary call, billed from the usage its event logs (as ``core.rebuild.cost`` bills it):
        the session's spend, not a step of a turn nor the agent's context."""
        usage, model = data.get("usage"), data.get("model")
        usd = price.usd(model if isinstance(model, str) else self.model, usage) if isinstance(usage, dict) else None
        if usd is None:
            return _NONE
        self.cost_usd += usd
        self.cost_seq = seq
        if self.last_time is not None:
            self.spend.append((self.last_time, usd, seq))
        return _SPENT

    def _approval(self, seq: int, data: dict[str, Any], price: Any) -> frozenset[str]:
        if isinstance(data.get("id"), str):
            self.approvals[data["id"]] = seq
        return _APPROVAL

    def _decided(self, seq: int, data: dict[str, Any], price: Any) -> frozenset[str]:
        self.approvals.pop(data.get("id"), None)  # type: ignore[arg-type]
        return _APPROVAL

    # what the log alone cannot say ---------------------------------------------------------------------------
    def clock(self, host_state: str | None = None, last_write: int | None = None, since: int | None = None) -> None:
        """What the world outside the log says: the host's state (``core.control.host_state``), since when it holds
        and the file's last write (epoch ms), each None when unknown. A live state older than the one the log holds
        is not taken: the host logs a change of state before it rewrites host.json, so a look between the two would
        undo the logged change for a moment (an alert cleared and raised again). That the host exited is taken
        whenever it was said: a host found dead says nothing newer in its log."""
        stale = since is not None and self.logged_at is not None and since < self.logged_at
        if host_state is not None and (host_state == "exited" or not stale):
            self.live_state = host_state
            self.exited_since = since if host_state == "exited" else None
            self.live_seq = self.seq
        if last_write is not None:
            self.last_write = last_write

    @property
    def unseen_turn(self) -> bool:
        """Whether the host was last read as exited before the open turn began in the log: a new process took the
        session up then (a DSH restarted within seconds), or the host that exited opened it before it died. Only a
        reading of the host taken since (the pid ``bridge.json`` names now, its heartbeat) tells which."""
        return self.live_state == "exited" and self.turn_seq is not None and self.turn_seq > self.live_seq

    @property
    def taken_up(self) -> bool:
        """Whether the open turn began after the exited host's last sign of life (``TAKEN_UP_MS`` later): another
        process runs it (a new DSH takes a session up before its bridge writes bridge.json), not the host that
        exited."""
        exited, began = self.exited_since, self.turn_time
        return exited is not None and began is not None and began > exited + TAKEN_UP_MS

    @property
    def host_name(self) -> str:
        """Who runs the session, as a reason names it: ``the host`` (tapedeck's, which logs its states), else
        ``DSH`` (a state read from the bridge's ``bridge.json``)."""
        return "the host" if self.hosted or self.logged_state is not None else "DSH"

    @property
    def host_state(self) -> tuple[str, int] | None:
        """The host's state and the seq it is dated by: the live reading when there is one, else the log's."""
        if self.live_state is not None and self.live_state != "none":
            return self.live_state, self.seq
        return self.logged_state

    def window_rate(self, now: int, window_ms: int, prune: bool = True) -> float | None:
        """Dollars per hour over the ``window_ms`` before ``now`` (the session's own span when shorter, a minute
        at least); None when events carry no times. The spend samples that fell out of the window go (``prune``:
        only the rules' own ``now`` may drop them; a look at another time leaves them for the events to come)."""
        if self.first_time is None:
            return None
        spend = self.spend
        if prune:
            while spend and spend[0][0] <= now - window_ms:
                spend.popleft()
            kept: Iterable[tuple[int, float, int]] = spend
        else:
            kept = itertools.dropwhile(lambda sample: sample[0] <= now - window_ms, spend)
        span = max(min(window_ms, now - self.first_time), MIN_RATE_SPAN_MS)
        return sum(usd for _, usd, _ in kept) * 3_600_000 / span


_NONE: frozenset[str] = frozenset()
_RATE = frozenset({"run-rate"})
_CONTEXT = frozenset({"context"})
_PRICED = frozenset({"context", "budget", "run-rate"})  # what a priced usage sample moves
_SPENT = frozenset({"budget", "run-rate"})  # what a priced call outside the agent's steps moves
_TURN = frozenset({"stalled", "host-died", "loop", "rewind-guard", "waiting", "turn-error"})
_APPROVAL = frozenset({"waiting", "stalled"})  # an approval asked or decided
_HANDLERS: dict[str, Callable[[Signals, int, dict[str, Any], Any], frozenset[str]]] = {
    "turn/start": Signals._turn_start,
    "turn/end": Signals._turn_end,
    HOST_EVENT: Signals._host,
    STATE_EVENT: Signals._state,
    "tool/result": Signals._result,
    "tool/code-dispatch": Signals._sub_call,
    "tool/call": Signals._call,
    "request/header": Signals._header,
    "request/context": Signals._request_context,
    "session/title": Signals._title,
    ROUTE_EVENT: Signals._route,
    "user/message": Signals._message,
    "assistant/message": Signals._assistant,
    "assistant/chunk": Signals._chunk,
    "compaction/summary": Signals._compaction,
    "approval/asked": Signals._approval,
    "approval/decided": Signals._decided,
}


def _canonical(arguments: Any) -> str:
    """Tool-call arguments in one spelling: JSON text re-serialized with sorted keys, anything else as is."""
    if isinstance(arguments, str):
        try:
            arguments = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return arguments
    try:
        return deep_dumps(arguments, orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return repr(arguments)


# the rules ---------------------------------------------------------------------------------------------------
Rule = Callable[[Signals, RuleConfig, int | None], Finding | None]


def error_streak(s: Signals, rule: RuleConfig, now: int | None) -> Finding | None:
    """``count`` failed tool results in a row."""
    if s.streak >= rule["count"]:
        calls = "tool call" if s.streak == 1 else "tool calls"
        return Finding(s.streak_seq, f"{s.streak} {calls} failed in a row")
    return None


def stalled(s: Signals, rule: RuleConfig, now: int | None) -> Finding | None:
    """Running or pausing (its step still runs) or, with no host state known, a turn open, but nothing written for
    ``seconds`` (needs the time); not while a tool call waits for the operator's approval (``waiting`` says so)."""
    state = s.host_state
    running = state[0] in ("running", "pausing") if state is not None else s.open_turn is not None
    last = max((t for t in (s.last_time, s.last_write) if t is not None), default=None)
    if now is None or last is None or not running or s.approvals:
        return None
    quiet = (now - last) / 1000
    if quiet >= rule["seconds"]:
        what = state[0] if state is not None else f"turn {s.open_turn} is open"  # a DSH log no bridge runs, say
        return Finding(s.seq, f"{what}, but nothing written for {_span(quiet)}")
    return None


def waiting(s: Signals, rule: RuleConfig, now: int | None) -> Finding | None:
    """The host holds for the operator (paused, or idle between turns: a top-level session) or a tool call waits
    for approval (not while its host is known to have exited: nobody asks then)."""
    state = s.host_state
    if s.approvals and (state is None or state[0] != "exited"):
        ask = min(s.approvals.values())
        return Finding(ask, "a tool call waits for the operator's approval")
    if state is not None and state[0] == "paused":
        return Finding(state[1], f"paused: {s.host_name} holds until it is resumed")
    if state is not None and state[0] == "idle" and not s.child:  # a child's next task is its parent's to give
        return Finding(state[1], f"idle: {s.host_name} waits for the next task")
    return None


def context_ratio(s: Signals) -> tuple[float | None, int]:
    """Context used as a share of the model's window and the seq that said so: the newest of the router's pressure
    and the last usage over the known window (a usage says nothing of the share while the window is unknown; None:
    neither is known)."""
    usage = (s.context_tokens[0] / s.window, s.context_tokens[1]) if s.context_tokens is not None and s.window else None
    if s.pressure is not None and (usage is None or s.pressure[1] >= usage[1]):
        return s.pressure
    return usage if usage is not None else (None, 0)


def context(s: Signals, rule: RuleConfig, now: int | None) -> Finding | None:
    """Context used ≥ ``percent`` of the model's window: the router's pressure, else the last usage."""
    ratio, seq = context_ratio(s)
    if ratio is not None and ratio * 100 >= rule["percent"]:
        return Finding(seq, f"context at {ratio:.0%} of the model's window")
    return None


def cache_break(s: Signals, rule: RuleConfig, now: int | None) -> Finding | None:
    """The latest request broke the prefix cache at a cost of ≥ ``tokens`` re-billed tokens or ≥ ``usd``."""
    b = s.cache_break
    if b is None or not b.tokens:
        return None
    over_tokens = b.tokens >= rule["tokens"]
    over_usd = b.usd is not None and b.usd >= rule["usd"]
    if not (over_tokens or over_usd):
        return None
    price = f" ({_usd(b.usd)})" if b.usd is not None else ""
    where = break_point(b.prefix_bytes, b.total_bytes, b.cause, b.cause_seq)
    return Finding(b.seq, f"{where}; {b.tokens:,.0f} input tokens re-billed{price}")


def budget(s: Signals, rule: RuleConfig, now: int | None) -> Finding | None:
    """The session cost ≥ ``usd``."""
    if s.priced_steps and s.cost_usd >= rule["usd"]:
        return Finding(s.cost_seq, f"the session cost {_usd(s.cost_usd)} (budget {_usd(rule['usd'])})")
    return None


def run_rate(s: Signals, rule: RuleConfig, now: int | None) -> Finding | None:
    """Spend over the last ``windowMinutes`` ≥ ``usdPerHour`` (at the newest event's time, or ``now``)."""
    at = now if now is not None else s.last_time
    if at is None or not s.priced_steps:
        return None
    rate = s.window_rate(at, int(rule["windowMinutes"] * 60_000))
    if rate is None or rate < rule["usdPerHour"]:
        return None
    return Finding(s.cost_seq, f"spending {_usd(rate)}/h (limit {_usd(rule['usdPerHour'])}/h)")


def loop(s: Signals, rule: RuleConfig, now: int | None) -> Finding | None:
    """The same tool call with the same arguments ≥ ``count`` times in the open turn."""
    if s.loop is not None and s.loop[1] >= rule["count"]:
        name, times, seq = s.loop
        return Finding(seq, f"{quoted(name)} called {times} times with the same arguments in this turn")
    return None


def host_died(s: Signals, rule: RuleConfig, now: int | None) -> Finding | None:
    """The host exited (or was replaced by a new one) while a turn was open."""
    state = s.host_state
    if s.open_turn is not None and state is not None and state[0] == "exited" and not (s.taken_up or s.unseen_turn):
        return Finding(state[1], f"{s.host_name} exited in the middle of turn {s.open_turn}")
    if s.died_at is not None and (state is None or state[0] not in ("running", "pausing", "paused", "idle")):
        return Finding(s.died_at, "the host exited in the middle of a turn and a new one took over")
    return None


def turn_error(s: Signals, rule: RuleConfig, now: int | None) -> Finding | None:
    """The newest turn ended with an error (the model's server refused, the host failed): the run stopped short of
    its task until someone looks."""
    if s.turn_error is not None:
        return Finding(*s.turn_error)
    return None


def rewind_guard(s: Signals, rule: RuleConfig, now: int | None) -> Finding | None:
    """The turn tried to end with a checkpoint still open, and the rewind guard reminded the model."""
    if s.guard_seq is not None:
        return Finding(s.guard_seq, "the rewind guard fired: the turn tried to end with a checkpoint open")
    return None


def class_change(s: Signals, rule: RuleConfig, now: int | None) -> Finding | None:
    """The router put the session in another task class than its previous decision."""
    if s.class_change is not None:
        old, new, seq = s.class_change
        return Finding(seq, f"the router changed the task class from {quoted(old)} to {quoted(new)}")
    return None


def _span(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"
