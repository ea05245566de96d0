"""What a session cost: tokens per request from the logged usage, priced, and what each cut saved or cost.

Usage is DSH ``TokenUsage``: ``inputTokens`` is the input that missed the provider's prefix cache,
``cacheReadTokens`` the input served from it (DeepSeek's ``prompt_cache_hit_tokens``; absent when the provider
does not report hits) and ``outputTokens`` the output, reasoning included. Prices come from
``core.shared.model_specs.price_for`` (DeepSeek's table unless the ``model`` config section says otherwise).

A cut (seal, fold, prune, rewind, compaction) has two effects on the bill, both estimated here:

- it *saves*: the tokens it removed are not sent again by any later request, where they would mostly have been
  cache hits (``removed tokens × later requests × hit price``); a cut that grew the requests (a checkpoint longer
  than the span it replaced) saves a negative amount, the added tokens sent by every later request;
- it *costs*: the request right after it breaks the cached prefix where the cut begins, so the previously
  cached tokens after that point are billed as misses once (``tokens after the break × (miss − hit)``).

Tokens are estimated from bytes with the session's own ratio (billed input tokens per prompt byte over the
agent requests that report usage; 4 bytes per token when none does). ``unpriced`` lists the models no price table
knows.

DSH's other model calls are rows of their own ``kind`` (``core.rebuild.request``): the session-title call (DSH logs no
usage for it, so it is listed unpriced) and each compaction summary call, billed from the usage its
``compaction/summary`` logs and counted in that compaction's cost (``callUsd``). Neither takes part in the
cache-break chain of the agent's requests. A cut is booked in the turn in progress when it was made.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping
from operator import attrgetter
from typing import Any

from core.read.session import Session
from core.read.usage import usage_tokens
from core.rebuild.request import AGENT, COMPACTION, Request, prompt_bytes
from core.rebuild.request_diff import CAUSE_NAMES, RequestDiff, diff_base, diff_requests
from core.shared.model_specs import ModelConfig, Prices, price_for, price_lookup
from core.shared.records import record

BYTES_PER_TOKEN = 4.0


@record(slots=True)
class RequestCost:
    """One request's tokens and price."""

    turn: int
    step: int
    attempt: int
    seq: int
    kind: str  # agent, title or compaction (core.rebuild.request)
    model: str | None
    hit: int | None  # None: the provider did not report cache hits
    miss: int
    output: int
    usd: float | None  # None: no usage logged, or no price for the model
    prompt_bytes: int
    cause: str | None  # what broke the cache before this request, if it broke
    unfinished: bool = False  # in flight when the log ended (``Request.unfinished``): no usage logged for it

    @property
    def cached(self) -> float | None:
        """Share of the input served from the cache (``cached_share``)."""
        return cached_share(self.hit, self.miss)


CACHED_MEANS = (
    "cache-hit input tokens / all input tokens (hits + misses), summed over the requests counted (a request "
    "with more input weighs more); what the provider reported, never estimated"
)


def cached_share(hit: int | None, miss: int) -> float | None:
    """The one definition of "cached" (``CACHED_MEANS``); None when cache hits were not reported or no input."""
    return None if hit is None or not hit + miss else hit / (hit + miss)


def usage_cached(usage: dict[str, Any] | None) -> float | None:
    """``cached_share`` of one logged usage record."""
    tokens = usage_tokens(usage)
    return None if tokens is None else cached_share(tokens[0], tokens[1])


def _price(model: str | None, config: ModelConfig | None) -> Prices | None:
    return price_for(model, config) if model else None


def _sum(rows: Iterable[RequestCost]) -> dict[str, Any]:
    count = hit = miss = output = 0
    priced: list[float] = []  # summed by ``sum``, as elsewhere: Python 3.12's ``sum`` of floats compensates
    reported = False
    for r in rows:  # one walk (a session's rows are thousands)
        count += 1
        miss += r.miss
        output += r.output
        if r.hit is not None:
            hit += r.hit
            reported = True
        if r.usd is not None:
            priced.append(r.usd)
    return {
        "requests": count,
        "hit": hit,
        "miss": miss,
        "output": output,
        "usd": sum(priced) if priced else None,
        "cached": _rounded(cached_share(hit if reported else None, miss)),
    }


def _rounded(share: float | None) -> float | None:
    return None if share is None else round(share, 4)


@record(frozen=True, slots=True)
class _Break:
    """What a cut's estimate needs of a request's diff against the one before it."""

    broke: bool  # and there was a request before it
    cause_seq: int | None
    prefix_bytes: int


_UNBROKEN = _Break(False, None, 0)


class CostTally:
    """The cost report built one request at a time, holding a small row per request and the last request.

    Without ``diffs`` (for a report whose requests' rows and ``bytesPerToken`` are not shown) an agent request is
    diffed against the one before it only where a cut came between them (its estimate reads the diff): a lean
    request's row then takes its size from its digest and no cause."""

    def __init__(self, config: ModelConfig | None = None, diffs: bool = True) -> None:
        self.config = config
        self.price = price_lookup(config)
        self.diffs = diffs
        self.rows: list[RequestCost] = []
        self.breaks: list[_Break] = []
        self.before: Request | None = None
        self.diff: RequestDiff | None = None  # the last request's against the agent request before it
        # when that diff was left out: the request it is against (``diff_requests(skipped, last, session)`` makes
        # it at any later time: a lean diff reads nothing the log's later events change)
        self.skipped: Request | None = None

    def add(self, request: Request, session: Session) -> None:
        """Count the next request; ``session`` has projected at least up to it."""
        self.skipped = None
        if request.kind != AGENT:
            self._row(request, len(prompt_bytes(request)), None)
            self.breaks.append(_UNBROKEN)
            self.diff = None
            return
        before = self.before
        if not self.diffs and before is not None and _lean(before) and _lean(request):
            cuts = session.cuts
            after = bisect.bisect_right(cuts, request.seq, key=_SEQ)  # the cuts up to it
            # none since ``before``: no estimate reads the diff
            if not after or cuts[after - 1].seq <= before.seq:
                self.diff, self.skipped = None, before
                self.breaks.append(_UNBROKEN)
                self._row(request, request.digest.size, None)  # type: ignore[union-attr]
                self.before = request
                return
        self.diff = diff = diff_requests(before, request, session)
        broke = diff.broke and before is not None
        self.breaks.append(_Break(broke, diff.cause_seq, diff.prefix_bytes))
        self._row(request, diff.total_bytes, diff.cause if broke else None)
        self.before = diff_base(request)

    def _row(self, request: Request, prompt: int, cause: str | None) -> None:
        tokens = usage_tokens(request.usage)
        price = self._price(request.model)
        hit, miss, output = tokens if tokens else (None, 0, 0)
        usd = price.cost(hit or 0, miss, output) if tokens and price else None
        self.rows.append(RequestCost(request.turn, request.step, request.attempt, request.seq, request.kind,
                                     request.model, hit, miss, output, usd, prompt, cause,
                                     request.unfinished))  # fmt: skip

    def _price(self, model: str | None) -> Prices | None:
        return self.price(model) if model else None

    def report(self, session: Session, rows: bool = True) -> dict[str, Any]:
        """Per-request, per-turn and session totals, and each cut's estimated saving and cost (``session``: the
        whole projection). Without ``rows`` its ``requests`` are ``RowDicts``, each request's object made only
        as it is read (a printer writing them one at a time holds none of them)."""
        costs = self.rows
        billed = (r for r in costs if r.kind == AGENT and _tokens_known(r))
        ratio = bytes_per_token((r.prompt_bytes, (r.hit or 0) + r.miss) for r in billed)
        turns: dict[int, list[RequestCost]] = {}
        for row in costs:
            turns.setdefault(row.turn, []).append(row)
        unpriced = sorted({r.model for r in costs if r.model and self._price(r.model) is None})
        return {
            "bytesPerToken": round(ratio, 3),
            "unpriced": unpriced,
            "requests": [_row_dict(r) for r in self.rows] if rows else RowDicts(self.rows),
            "turns": [{"turn": t, **_sum(rs)} for t, rs in sorted(turns.items())],
            "total": _sum(costs),
            "cuts": self._cuts(session, ratio),
        }

    def _cuts(self, session: Session, ratio: float) -> list[dict[str, Any]]:
        if not session.cuts:  # a surface never cut (most DSH logs): no walk of the rows
            return []
        agent = [i for i, r in enumerate(self.rows) if r.kind == AGENT]
        rows = [self.rows[i] for i in agent]
        breaks = [self.breaks[i] for i in agent]
        seqs = [r.seq for r in rows]
        calls = [r for r in self.rows if r.kind == COMPACTION]
        out = []
        for cut in session.cuts:
            first = bisect.bisect_left(seqs, cut.seq)  # requests go out in seq order
            if first == len(rows):
                continue
            later = len(rows) - first
            price = self._price(rows[first].model)
            # negative when the cut grew the requests after it: each of them sends the added tokens, a cost
            removed_tokens = cut.chars_removed / ratio
            brk = breaks[first]
            lost_bytes = 0
            if brk.broke and brk.cause_seq == cut.seq:
                lost_bytes = max(0, rows[first - 1].prompt_bytes - brk.prefix_bytes)
            lost_tokens, cost = rebilled(lost_bytes, ratio, price)
            call_usd = self._call_usd(session, cut.seq, calls) if cut.kind == COMPACTION else None
            if cost is not None and call_usd is not None:
                cost += call_usd
            saved = removed_tokens * later * price.hit / 1_000_000 if price else None
            out.append(
                {
                    "seq": cut.seq,
                    "kind": CAUSE_NAMES.get(cut.kind, cut.kind),
                    "turn": cut.turn,
                    "charsRemoved": cut.chars_removed,
                    "laterRequests": later,
                    "brokeCache": lost_bytes > 0,
                    "rebilledTokens": round(lost_tokens),
                    "callUsd": call_usd,
                    "savedUsd": saved,
                    "costUsd": cost,
                    "netUsd": None if saved is None or cost is None else saved - cost,
                }
            )
        return out

    @staticmethod
    def _call_usd(session: Session, seq: int, calls: list[RequestCost]) -> float | None:
        """The priced summary calls of the compaction whose replacement is ``seq`` (it cites their
        ``compaction/start``), or None when none was priced."""
        cited = set(session.sources_of(seq))
        priced = [r.usd for r in calls if r.seq in cited and r.usd is not None]
        return sum(priced) if priced else None


_SEQ = attrgetter("seq")


def _lean(request: Request) -> bool:
    """Whether ``request`` is lean (its ``Digest`` holds no message)."""
    return request.digest is not None and not request.digest.done


class RowDicts:
    """The ``requests`` of a cost report as a sized iterable of their ``cost --json`` objects, each made as it is
    iterated."""

    def __init__(self, rows: list[RequestCost]) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return map(_row_dict, self.rows)


def bytes_per_token(requests: Iterable[tuple[int, int]]) -> float:
    """Prompt bytes per billed input token over ``(prompt bytes, billed input tokens)`` of the requests that
    report usage (``BYTES_PER_TOKEN`` when none does)."""
    size = tokens = seen = 0
    for prompt, billed in requests:
        size, tokens, seen = size + prompt, tokens + billed, 1
    return size / max(1, tokens) if seen else BYTES_PER_TOKEN


def rebilled(lost_bytes: int, ratio: float, price: Prices | None) -> tuple[float, float | None]:
    """What a cache break costs: the tokens once cached and now billed again as misses (``lost_bytes`` of the
    previous prompt after the break, at ``ratio`` bytes per token) and their extra price (None: unpriced)."""
    tokens = lost_bytes / ratio
    return tokens, tokens * (price.miss - price.hit) / 1_000_000 if price else None


def usage_usd(usage: Mapping[str, Any] | None, price: Prices | None) -> float | None:
    """The price of one logged usage sample (None: no usage, or no price)."""
    tokens = usage_tokens(usage)
    return price.cost(tokens[0] or 0, tokens[1], tokens[2]) if tokens and price else None


def cost_report(
    requests: Iterable[Request], session: Session, config: ModelConfig | None = None
) -> dict[str, Any]:
    """``CostTally`` over ``requests`` read with ``session`` (see ``core.rebuild.request.iter_requests``), which is read
    again once the requests are exhausted."""
    tally = CostTally(config)
    for request in requests:
        tally.add(request, session)
    return tally.report(session)


def _tokens_known(row: RequestCost) -> bool:
    return row.hit is not None or row.miss > 0


def _row_dict(r: RequestCost) -> dict[str, Any]:
    cached = r.cached
    return {
        "turn": r.turn,
        "step": r.step,
        "attempt": r.attempt,
        "seq": r.seq,
        "kind": r.kind,
        "model": r.model,
        "hit": r.hit,
        "miss": r.miss,
        "output": r.output,
        "usd": r.usd,
        "cached": None if cached is None else round(cached, 4),
        "promptBytes": r.prompt_bytes,
        "cacheBreak": r.cause,
        "unfinished": r.unfinished,
    }


def _header_model(session: Session) -> str | None:
    header = session.request_header() or {}
    model = (header.get("config") or {}).get("model") if isinstance(header.get("config"), dict) else None
    return model if isinstance(model, str) else None


def session_cost(session: Session, config: ModelConfig | None = None) -> tuple[float | None, float | None]:
    """USD and cached input share over every step's logged usage, cheap enough for a live header.

    Each step counts its last usage sample (its final attempt), priced for the latest request header's model.
    """
    price = _price(_header_model(session), config)
    tally = session.usage_tally
    hit, miss, output = tally.hit, tally.miss, tally.output
    usd = price.cost(hit, miss, output) if price and (hit or miss or output) else None
    return usd, cached_share(hit if tally.reporting else None, miss)


def unpriced_model(session: Session, config: ModelConfig | None = None) -> str | None:
    """The model whose logged usage no price table covers (None when priced, unnamed or nothing was used)."""
    model = _header_model(session)
    if model is None or _price(model, config) is not None:
        return None
    return model if session.usage_tally.used else None


def cost_summary(session: Session, config: ModelConfig | None = None) -> str:
    """``$0.42 · 81% cached`` (either part only when known), or ``no price for MODEL · …`` for an unpriced model."""
    usd, cached = session_cost(session, config)
    unpriced = unpriced_model(session, config) if usd is None else None
    parts = [f"${usd:.2f}"] if usd is not None else [f"no price for {unpriced}"] if unpriced else []
    return " · ".join(parts + ([f"{cached:.0%} cached"] if cached is not None else []))
