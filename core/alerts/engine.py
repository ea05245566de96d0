"""The alert engine of one session: fed its events as they arrive, it raises each cause once until it clears.

``AlertEngine.feed`` folds events into ``core.alerts.rules.Signals`` and, after every single event, re-evaluates
the rules whose inputs that event changed, so where a log is cut into reads never changes what fires: replaying a
log whole and following it in torn chunks raise the same alerts. ``tick`` evaluates what depends on the time or
on the world outside the log (stalled, the host's liveness, a run rate that decays); ``reachable`` is for a
transport that lost (or regained) a remote log. An alert fires when its rule's condition starts to hold and
again only after the condition stopped holding; ``active`` is what holds now (the fleet's attention column).

With the ``cache-break`` rule on, the engine also keeps the session's projection and rebuilds each model request
as it goes out (``core.rebuild.request.RequestPass``), diffs it against the one before (``core.rebuild.request_diff``) and prices
what the break re-bills (``core.rebuild.cost``), as the request view does.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from itertools import islice
from operator import le
from typing import Any

from core.alerts.config import CAUSES, AlertsConfig
from core.alerts.rules import (
    MIN_EPOCH_MS,
    SEVERITY,
    CacheBreak,
    Finding,
    Rule,
    Signals,
    budget,
    cache_break,
    class_change,
    context,
    error_streak,
    host_died,
    loop,
    rewind_guard,
    run_rate,
    stalled,
    turn_error,
    waiting,
)
from core.log.records import PackedRow
from core.log.store import KeptEvents
from core.log.validate import INVALID, readable
from core.log.vocabulary import HOST_EVENT, ROUTE_EVENT
from core.rebuild.cost import bytes_per_token, rebilled, usage_usd
from core.shared.jsonout import dumps, inert
from core.shared.model_specs import ModelConfig, limits_for, price_lookup
from core.shared.records import record

RULES: dict[str, Rule] = {
    "error-streak": error_streak,
    "stalled": stalled,
    "waiting": waiting,
    "context": context,
    "cache-break": cache_break,
    "budget": budget,
    "run-rate": run_rate,
    "loop": loop,
    "host-died": host_died,
    "turn-error": turn_error,
    "rewind-guard": rewind_guard,
    "class-change": class_change,
}
CLOCK_CAUSES = ("stalled", "waiting", "run-rate", "host-died")  # what ``tick`` re-evaluates
# what the run is now (not something that happened): once it no longer holds, such an alert is over
STATE_CAUSES = frozenset({"stalled", "waiting", "host-died", "unreachable"})
_BREAK = frozenset({"cache-break"})  # what a request going out touches
INFORM_ONLY = frozenset({"class-change"})  # active, listed, never a reason to call the operator over
ALERT_KEYS = ("session", "path", "cause", "seq", "severity", "reason", "at")


@record(frozen=True, slots=True)
class Alert:
    """One alert: which session, what caused it, the event that triggered it, how bad, why, and when (epoch ms;
    the triggering event's time when it has one)."""

    session: str
    path: str
    cause: str
    seq: int
    severity: str
    reason: str
    at: int | None

    def to_dict(self) -> dict[str, Any]:
        """The alert's JSON object (keys in ``ALERT_KEYS`` order)."""
        return {key: getattr(self, key) for key in ALERT_KEYS}

    def to_json(self) -> bytes:
        """``to_dict`` on one line, as ``alerts --follow --json`` prints it and ``--exec`` reads it: written as every
        JSON output is (``core.shared.jsonout``: a path that is not UTF-8 named by ``path_text``, no control a
        terminal acts on)."""
        return inert(dumps(self.to_dict()))


class ModelBook:
    """Prices and context windows by model name, the ``model`` config section's entries first (each model's
    looked up once: a log prices every usage sample)."""

    def __init__(self, config: ModelConfig | None = None) -> None:
        self.config = config
        self.price = price_lookup(config)
        self.windows = functools.cache(lambda model: limits_for(model, config).context_window)

    def usd(self, model: str | None, usage: Mapping[str, Any]) -> float | None:
        """The price of one usage sample (None: the model has no price)."""
        return usage_usd(usage, self.price(model)) if model else None

    def window(self, model: str | None) -> int | None:
        """The model's context window in tokens (None: unknown)."""
        return self.windows(model) if model else None  # type: ignore[no-any-return]


class _Requests:
    """Each model request rebuilt as it goes out and diffed against the one before: the latest cache break.

    Given a store that reads any event back (``lines``: a ``core.log.linestore.LineStore`` of the file it is fed
    from, or a ``core.log.store.BorrowedEvents`` of the store of the view that feeds it), the pass is lean: each
    request holds a ``Digest`` and the diff reads back only the few lines where two prompts part, so memory does
    not follow the surface. Otherwise the projection holds only what the rebuild reads back (``core.log.store.KeptEvents``): the
    surface's events while they are on it (``RequestPass`` keeps them) and the open turn's route events (its phase
    notes), so its memory follows the surface, not the log."""

    def __init__(self, header: dict[str, Any], book: ModelBook, lines: Any = None) -> None:
        from core.rebuild.request import PassProjection, RequestPass, prompt_bytes
        from core.rebuild.request_diff import diff_base, diff_requests

        self._prompt_bytes, self._diff_base, self._diff_requests = prompt_bytes, diff_base, diff_requests
        self.book = book
        self.store = KeptEvents() if lines is None else lines
        # nothing per event and no tool-call filing: the pass reads neither, and a log has millions of events
        self.session = PassProjection(header, self.store) if lines is None else PassProjection(header, lines, retain=False)
        self.routes: list[int] = []  # the kept route events' seqs
        # (prompt bytes, billed input tokens) summed over the finished requests that report usage (None: none did):
        # the bytes per token is their ratio, so the requests are not kept (19,343 on a 500 MB log)
        self.billed: tuple[int, int] | None = None
        self.before: Any = None
        self.before_bytes = 0
        self.passes = RequestPass(self._done, keep=True, others=False, lean=lines is not None)  # the agent's requests: the break chain

    def _done(self, request: Any, session: Any) -> bool:
        usage = request.usage or {}
        billed = sum(v for k in ("inputTokens", "cacheReadTokens", "cacheWriteTokens")
                     if isinstance(v := usage.get(k), int) and not isinstance(v, bool))  # fmt: skip
        if billed and (request.prompt is not None or request.digest is not None):
            size = len(request.prompt) if request.prompt is not None else request.digest.size
            before = self.billed or (0, 0)
            self.billed = (before[0] + size, before[1] + billed)
        return False

    def apply(self, event: dict[str, Any] | PackedRow) -> CacheBreak | None:
        """Project ``event`` (or a packed row); the break of the request that went out right before it, if one
        did."""
        sent = self.passes.open
        shown = event if type(event) is PackedRow or INVALID not in event else readable(event)  # as load_session
        self.passes.before(self.session, shown)
        request = self.passes.open
        found = None
        if request is not None and request is not sent:
            diff = self._diff_requests(self.before, request, self.session)
            if diff.broke and self.before is not None:
                lost = max(0, self.before_bytes - diff.prefix_bytes)
                tokens, usd = rebilled(lost, bytes_per_token(() if self.billed is None else (self.billed,)),
                                       self.book.price(request.model) if request.model else None)  # fmt: skip
                found = CacheBreak(request.seq, diff.cause, tokens, usd, diff.cause_seq, diff.prefix_bytes,
                                   diff.total_bytes)  # fmt: skip
            else:
                found = CacheBreak(request.seq, None, 0.0, None)
            self.before_bytes = diff.total_bytes if request.digest is not None else len(self._prompt_bytes(request))
            self.before = self._diff_base(request)
        if type(event) is PackedRow:
            self.session.apply_row(event)
            return found  # stream deltas: nothing after them to note
        self.session.apply(event)
        self.passes.after(self.session, shown)
        etype = event.get("type")
        if etype == "turn/start":  # the phase notes read the open turn's routes only
            for seq in self.routes:
                self.store.forget(seq)
            self.routes.clear()
        elif etype == ROUTE_EVENT:
            seq = self.session.next_seq - 1
            self.store.keep(seq, event)
            self.routes.append(seq)
        return found


class AlertEngine:
    """The alerts of one session, fed incrementally (see the module docstring)."""

    def __init__(
        self,
        config: AlertsConfig,
        models: ModelConfig | None = None,
        *,
        path: str = "",
        session: str = "",
        lines: Any = None,
    ) -> None:
        self.config = config
        self.lines = lines  # a store that reads any event of the log back (see ``_Requests``), if there is one
        self.book = ModelBook(models)
        self.path = path
        self.session = session
        self.signals = Signals()
        self.active: dict[str, Alert] = {}
        self.fired: list[Alert] = []
        self.transitions: list[tuple[str, bool]] = []  # (cause, raised) at each rise and each clear, in order
        self.undated: list[Alert] = []  # those of ``fired`` an event raised before any event had a time: dated ``now``
        self.host_guards: frozenset[str] = frozenset()  # causes the session's own tapedeck host acts on
        self.out_of_reach = False  # a transport said the log cannot be read now (``reachable``)
        self._requests: _Requests | None = None
        self._window_ms = int(config.rule("run-rate")["windowMinutes"] * 60_000)
        self._rules = {cause: rule for cause, rule in RULES.items() if config.enabled(cause)}

    def start(self, header: Mapping[str, Any]) -> None:
        """Take the log's header (line 1): the session id, whether a parent session spawned it, and the projection
        the cache-break rule needs."""
        if not self.session and isinstance(header.get("id"), str):
            self.session = header["id"]
        parent = header.get("parentSession")
        self.signals.child = isinstance(parent, str) and bool(parent)
        if "cache-break" in self._rules and self._requests is None:
            self._requests = _Requests(dict(header), self.book, self.lines)

    def feed(self, events: Iterable[Mapping[str, Any] | PackedRow], now: int | None = None) -> list[Alert]:
        """Fold ``events`` (in seq order; a ``PackedRow`` stands for its member deltas) and return the alerts they
        raised; ``now`` (epoch ms) dates an alert whose event carries no time."""
        out: list[Alert] = []
        for event in events:
            if type(event) is PackedRow:
                self._row(event, now, out)
            else:
                self._event(event, now, out)  # type: ignore[arg-type]
        return out

    @property
    def projects(self) -> bool:
        """Whether the engine keeps a projection of the session (the cache-break rule is on)."""
        return "cache-break" in self._rules

    def project(self, events: Iterable[Mapping[str, Any] | PackedRow]) -> None:
        """Fold ``events`` into the cache-break rule's projection alone: no rule runs and no signal moves but the
        seq. What an engine needs that reads again the events whose signals and alerts it is then given
        (``core.alerts.follow``), at a fraction of ``feed``'s cost."""
        signals, requests = self.signals, self._requests
        for event in events:
            if isinstance(event, PackedRow):
                signals.seq = event.seq0 + event.count - 1
                if requests is not None:
                    requests.apply(event)
                continue
            signals.moved(event)
            if requests is not None and isinstance(event, dict):
                requests.apply(event)

    def _event(self, event: Mapping[str, Any], now: int | None, out: list[Alert]) -> None:
        sent = self._requests is not None and isinstance(event, dict) and self._sent(event)
        touched = self.signals.observe(event, self.book, self._window_ms)
        if event.get("type") == HOST_EVENT:
            self._host_config(event.get("data"))
        self._settle(touched | _BREAK if sent else touched, now, out)

    def _sent(self, event: dict[str, Any] | PackedRow) -> bool:
        """Project ``event`` for the cache-break rule; whether a request went out right before it (its break, or
        none, is then the signals' ``cache_break``: the one input of that rule, judged again only then)."""
        found = self._requests.apply(event)  # type: ignore[union-attr]
        if found is None:
            return False
        self.signals.cache_break = found
        return True

    def _row(self, row: PackedRow, now: int | None, out: list[Alert]) -> None:
        """Fold a packed row as its members one by one would be, without building them: stream deltas carry no
        usage and never reach the surface, so only the seq, the time and with it the run rate's window move. The
        first member is judged alone (a request may have gone out right before it). While the clock only goes
        forward the rate only falls (nothing is spent), so each stretch of the rest of the row over which it does
        is judged once, at its end; a clock that goes back starts a new stretch, since it can raise the rate
        again."""
        sent = self._requests is not None and self._sent(row)
        signals, window = self.signals, self._window_ms
        touched = signals.skip(row.seq0, (row.time0,), window)  # the first member, as ``observe`` of it, unbuilt
        self._settle(touched | _BREAK if sent else touched, now, out)
        if row.count == 1:
            return
        steady = row.steady()  # the rest's first and last time, when its clock never goes back
        if steady is not None and steady[0] >= MIN_EPOCH_MS:  # one stretch, all dated: its ends are what counts
            self._settle(signals.skip(row.seq0 + row.count - 1, steady, window), now, out)
            return
        rest = row.times()[1:]
        if all(map(le, rest, islice(rest, 1, None))):  # the clock never goes back (compared in C): one stretch
            self._settle(signals.skip(row.seq0 + len(rest), rest, window), now, out)
            return
        seq, stretch = row.seq0, []
        for when in rest:
            if stretch and when < stretch[-1]:
                self._settle(signals.skip(seq, stretch, window), now, out)
                stretch = []
            stretch.append(when)
            seq += 1
        self._settle(signals.skip(seq, stretch, window), now, out)

    def _settle(self, touched: frozenset[str], now: int | None, out: list[Alert]) -> None:
        """Judge the rules whose inputs the last event changed."""
        if touched:
            at = self.signals.last_time if self.signals.last_time is not None else now
            before = len(self.fired)
            for cause in CAUSES:
                if cause in touched and cause in self._rules:
                    self._judge(cause, None, at, out)
            if self.signals.last_time is None:
                self.undated += self.fired[before:]

    def tick(
        self, now: int, host_state: str | None = None, last_write: int | None = None, since: int | None = None
    ) -> list[Alert]:
        """Re-evaluate the rules that depend on time or on the host's liveness; ``host_state`` is
        ``core.control.host_state``'s reading (None: not known) and ``since`` when that state began, ``last_write``
        the file's last change (epoch ms)."""
        self.signals.clock(host_state, last_write, since)
        out: list[Alert] = []
        for cause in CLOCK_CAUSES:
            if cause in self._rules and not (cause == "stalled" and self.out_of_reach):
                self._judge(cause, now, now, out)
        return out

    def reachable(self, ok: bool, now: int, reason: str = "") -> list[Alert]:
        """A transport says whether the log can be read: ``unreachable`` fires when it cannot, clears when it can.
        Whether a log out of reach is written to is not known: ``stalled`` is withdrawn then, and judged again only
        once it is reached."""
        self.out_of_reach = not ok
        out: list[Alert] = []
        if not ok:
            self._latch("stalled", None, now, out)
        if not self.config.enabled("unreachable"):
            return out
        finding = None if ok else Finding(self.signals.seq, reason or "the log cannot be reached")
        self._latch("unreachable", finding, now, out)
        return out

    @property
    def attention(self) -> list[Alert]:
        """The alerts whose condition holds now and that ask for the operator, in cause order: every cause but
        ``class-change``, which only informs (the fleet's attention column, its sort and its next-one key)."""
        return [self.active[c] for c in CAUSES if c in self.active and c not in INFORM_ONLY]

    def _judge(self, cause: str, now: int | None, at: int | None, out: list[Alert]) -> None:
        rule = self.config.rule(cause)
        self._latch(cause, self._rules[cause](self.signals, rule, now), at, out)

    def _latch(self, cause: str, finding: Finding | None, at: int | None, out: list[Alert]) -> None:
        if finding is None:
            if self.active.pop(cause, None) is not None:
                self.transitions.append((cause, False))
            return
        if cause in self.active:
            return
        alert = Alert(self.session, self.path, cause, finding.seq, SEVERITY[cause], finding.reason, at)
        self.active[cause] = alert
        self.fired.append(alert)
        self.transitions.append((cause, True))
        out.append(alert)

    def _host_config(self, data: Any) -> None:
        """Note which rules the session's own host acts on (its logged config's ``alerts`` section)."""
        from core.alerts.config import validate
        from core.shared.errors import ConfigError

        config = data.get("config") if isinstance(data, dict) else None
        raw = config.get("alerts") if isinstance(config, dict) else None
        try:
            guard = validate(raw if isinstance(raw, Mapping) else {})
        except ConfigError:
            guard = validate({})
        self.host_guards = frozenset(c for c, r in guard.rules.items() if r.enabled and r.action != "none")
