"""Context economics: replay generated sessions through the policies and measure the requests they would send.

A generated DSH log (``bench/gen_session.py``) is replayed event by event into a fresh ``core.read.session.Session``
(every event renumbered to ``next_seq``). The generator's own surface replacements (DSH compactions and prunes,
with their ``compaction/*`` log records) are left out, so every policy starts from the same append-only stream.
At each step boundary (before the first streamed chunk or ``assistant/message`` of a step: where the model
is called) the policy
under test plans and its events are appended the way ``core/host/hooks.py`` ``pre_step`` does: seal at step 1
(``plan_seal``), then ``plan_fold``, then the adaptive route (``plan_route``) whose events carry the prunes.
Planned events shift the numbering, so a remap (log seq -> replayed seq) rewrites ``sourceEventSeqs`` and the
``surfaceOp`` span of every later replayed event.

The request of a step is ``orjson.dumps({"system": S, "tools": T, "messages": M})``: S and T come from the
latest ``request/header`` (tapedeck adds the slice prompt section and the recall tool schemas, and a variant
that routes the adaptive policy's standing ``<task_sizing>`` section; in the finalization phase the host keeps
the schemas and sends ``tool_choice: none``, which is not part of the prompt bytes); M is
``session.messages()``, and for tapedeck ``phase_notes.request_messages`` (the surface with the route's
checkpoint and finalization notes pinned where each phase began, as the host sends them). The
baselines are pure transforms of the raw append-only message list:

- ``raw``: the list as it is;
- ``mask-10``: every tool result but the last 10 has its output replaced by a short placeholder, recomputed
  at every step; ``mask-10/10``: the same cut, moved only every 10th step;
- ``clear-old``: whenever a request would exceed 100,000 bytes, every tool result but the last 3 is cleared
  (cleared results stay cleared).

Metrics per policy (sizes are bytes of the UTF-8 JSON request):

- ``total``: sum of request sizes over all steps; ``ratio`` = total / raw total;
- ``peak``: the largest request;
- ``prefix_reuse`` = sum over n >= 2 of LCP(req_n, cont_{n-1}) / sum over n >= 2 of len(req_n), where
  LCP is the longest common byte prefix and cont_{n-1} is request n-1 serialized with the assistant message
  that step produced appended to its messages (what a provider's prefix cache holds after step n-1). New
  tool output is never cached, so the smaller a policy keeps its requests the lower this share's ceiling;
- ``prefix_kept`` = the same LCP sum / sum over n >= 2 of len(cont_{n-1}): how much of what was cached the
  next request keeps, which isolates a policy's rewriting from the fresh output it must send anyway;
- ``cost``: what the session's input would be billed, relative to raw: every byte a step served from the
  cached prefix at ``CACHE_HIT_PRICE`` of a miss (a tenth: DeepSeek's published cache-hit input price), the rest
  at full price. It weighs size against reuse the way the bill does;
- ``rewrite_lost``: the part of ``1 - prefix_reuse`` that steps which rewrote cached bytes cost (a seal,
  fold, prune or mask changed something request n-1 had sent); the rest is fresh output, which no policy
  can serve from a cache (raw append-only loses only that);
- ``head_breaks``: steps whose request left the cached prefix inside the system prompt or tools, and ``head_lost_share`` the share of the uncached bytes they cost;
- ``recall``: share of the planted facts inside the replayed steps (the generator's ``FACT-`` sidecar:
  tokens in tool outputs and answers) that are verbatim in the final request (the messages after the last
  event, with the policy's state as it stands) or, for tapedeck, returned by a recall tool:
  ``expand_result`` on the fact's tool result (its replayed seq, with the locators' ``formatVersion``),
  ``recall_turn`` for answer facts, else the hits of ``recall_search`` for the token. Baselines that drop
  text only count what the final request shows.

``diagnostics`` counts what the projection flagged in each replayed session (0 when every renumbered and
planned event fits).

``python bench/context.py [--profile P ...] [--variant V ...] [--steps 300] [--seed 1] [--size-scale X] [--json]``
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import counts, emit, human_bytes, markdown_table, positive
from bench.gen_session import PROFILES, generate
from core.control.config import PolicyConfig, load_config, validate_config
from core.log.reader import read_log
from core.policies import adaptive as adaptive_policy
from core.policies import fold as fold_policy
from core.policies import phase_notes
from core.policies import recall as recall_policy
from core.policies import slice as slice_policy
from core.policies.adaptive_config import CACHE_AWARE, STEP_SCHEDULE
from core.read.session import Session, derive_message, op_span
from core.shared.model_specs import Prices, price_for

OUT_DIR = Path(__file__).resolve().parent / "out"
# Bytes of generated log that hold at least 300 steps (replays stop there); huge-output spends ~1 MB a
# step, so its log holds far fewer.
PROFILE_SIZES = {
    "mixed": 25_000_000,
    "read-heavy": 25_000_000,
    "test-fix": 14_000_000,
    "huge-output": 30_000_000,
    "short-turns": 8_000_000,
}
MASK_KEEP = 10
MASK_EVERY = 10
CLEAR_TRIGGER = 100_000
CLEAR_KEEP = 3
CACHE_HIT_PRICE = 0.1  # input price of a cache-hit byte relative to a miss
CONTEXT_WINDOW = 1_000_000  # tokens of the routed model, for the adaptive pressure trigger
PLACEHOLDER = "[older tool output removed from the context]"
DEFAULT_VARIANTS = (
    "tapedeck",
    "tapedeck-seed-prune",
    "tapedeck-phase-in-system",
    "tapedeck-no-route",
    "tapedeck-seal",
)
# (seal, fold, adaptive route with its prunes, the route's prune schedule, phase text in the system prompt
# instead of pinned notes)
TAPEDECK_VARIANTS = {
    "tapedeck": (True, True, True, CACHE_AWARE, False),
    "tapedeck-seed-prune": (True, True, True, STEP_SCHEDULE, False),
    "tapedeck-phase-in-system": (True, True, True, CACHE_AWARE, True),
    "tapedeck-no-route": (True, True, False, None, False),
    "tapedeck-seal": (True, False, False, None, False),
    "tapedeck-fold": (False, True, False, None, False),
}
PRICE_MODEL = "deepseek-chat"  # whose prices the cost column uses unless --model says otherwise
BYTES_PER_TOKEN = 4
BASELINES = ("raw", "mask-10", "mask-10/10", "clear-old")
_CHUNK = 1 << 14
MODEL_OUTPUT_TYPES = frozenset({"assistant/chunk", "assistant/message"})


# ------------------------------------------------------------------------------------------------ bytes
def lcp_bytes(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of two byte strings."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i : i + _CHUNK] == b[i : i + _CHUNK]:
        i += _CHUNK
    if i >= n:
        return n
    for j, (x, y) in enumerate(zip(a[i : i + _CHUNK], b[i : i + _CHUNK], strict=False)):
        if x != y:
            return i + j
    return min(n, i + _CHUNK)


def stream_lcp(a: Iterable[bytes], b: Iterable[bytes]) -> int:
    """LCP of the concatenations of two piece sequences, without joining them (equal pieces skip by length)."""
    ia, ib = iter(a), iter(b)
    pa = pb = b""
    total = 0
    while True:
        if not pa:
            pa = next(ia, None)
        if not pb:
            pb = next(ib, None)
        if pa is None or pb is None:
            return total
        if pa is pb or pa == pb:
            total += len(pa)
            pa = pb = b""
            continue
        n = min(len(pa), len(pb))
        k = lcp_bytes(pa, pb)
        if k < n:
            return total + k
        total += n
        pa, pb = pa[n:], pb[n:]


def request_head(system: Any, tools: Any) -> bytes:
    """The request bytes before the first message."""
    return b'{"system":' + orjson.dumps(system) + b',"tools":' + orjson.dumps(tools) + b',"messages":['


def request_pieces(head: bytes, messages: Sequence[bytes]) -> Iterator[bytes]:
    """The serialized request as pieces; ``b"".join`` gives ``orjson.dumps({system, tools, messages})``."""
    yield head
    for i, message in enumerate(messages):
        if i:
            yield b","
        yield message
    yield b"]}"


def request_size(head: bytes, messages: Sequence[bytes]) -> int:
    """Bytes of the serialized request."""
    return len(head) + sum(map(len, messages)) + max(0, len(messages) - 1) + 2


@dataclass
class Meter:
    """Per-policy request statistics (see the module docstring for the definitions)."""

    steps: int = 0
    total: int = 0
    peak: int = 0
    reused: int = 0
    compared: int = 0
    cached: int = 0
    head_breaks: int = 0
    head_lost: int = 0
    rewrites: int = 0
    rewrite_lost: int = 0
    output_bytes: int = 0
    _cont: tuple[bytes, list[bytes]] | None = None

    def request(self, head: bytes, messages: list[bytes]) -> None:
        """Count the request of one step."""
        size = request_size(head, messages)
        self.steps += 1
        self.total += size
        self.peak = max(self.peak, size)
        if self._cont is not None:
            common = stream_lcp(request_pieces(*self._cont), request_pieces(head, messages))
            self.reused += common
            self.compared += size
            cached = request_size(*self._cont)
            self.cached += cached
            if common < cached - 2:  # it stopped before the end of what was cached (its closing ``]}``)
                self.rewrites += 1
                self.rewrite_lost += size - common
            if common < len(head):
                self.head_breaks += 1
                self.head_lost += size - common
        self._cont = (head, messages)

    def output(self, message: bytes | None) -> None:
        """The model's output of the step just counted extends what the prefix cache holds."""
        if message is not None:
            self.output_bytes += len(message)
        if self._cont is not None and message is not None:
            self._cont = (self._cont[0], [*self._cont[1], message])

    @property
    def prefix_reuse(self) -> float:
        """Byte-weighted prefix reuse over steps 2..n (1.0 with fewer than two steps)."""
        return self.reused / self.compared if self.compared else 1.0

    @property
    def billed(self) -> float:
        """Input bytes at full price, with the bytes served from the cached prefix at ``CACHE_HIT_PRICE``."""
        return self.total - self.reused * (1 - CACHE_HIT_PRICE)

    def usd(self, prices: Prices) -> float:
        """The session's bill: cache-hit input, cache-miss input and output at ``prices`` (4 bytes a token)."""
        hit, miss = self.reused, self.total - self.reused
        return prices.cost(hit // BYTES_PER_TOKEN, miss // BYTES_PER_TOKEN, self.output_bytes // BYTES_PER_TOKEN)

    @property
    def prefix_kept(self) -> float:
        """Byte-weighted share of the cached prefix (request plus output) that the next request keeps."""
        return self.reused / self.cached if self.cached else 1.0


class MessageBytes:
    """Serialized messages, each message object serialized once (keyed by identity, kept alive)."""

    def __init__(self) -> None:
        self._cache: dict[Any, tuple[Any, bytes]] = {}

    def of(self, message: Any) -> bytes:
        """The bytes of ``message``."""
        hit = self._cache.get(id(message))
        if hit is None:
            hit = (message, orjson.dumps(message))
            self._cache[id(message)] = hit
        return hit[1]

    def derived(self, key: tuple[str, int], make: Callable[[], Any]) -> bytes:
        """The bytes of a derived message named ``key``, built by ``make`` on first use."""
        hit = self._cache.get(key)
        if hit is None:
            message = make()
            hit = (message, orjson.dumps(message))
            self._cache[key] = hit
        return hit[1]


def masked(message: Mapping[str, Any]) -> dict[str, Any]:
    """A tool-result message whose outputs are replaced by the placeholder."""
    blocks = []
    for block in message.get("content") or ():
        if isinstance(block, dict) and block.get("type") == "tool-result":
            block = {**block, "content": [{"type": "text", "text": PLACEHOLDER}]}
        blocks.append(block)
    return {**message, "content": blocks}


# ------------------------------------------------------------------------------------------------ replay
def replayable(events: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The log's events without DSH's own surface replacements and compaction records."""
    for event in events:
        if op_span(event.get("surfaceOp")) is not None or str(event.get("type")).startswith("compaction/"):
            continue
        yield event


class Replay:
    """Feeds log events into a fresh session, renumbered, and appends planned events between them."""

    def __init__(self, header: dict[str, Any]) -> None:
        self.session = Session(header)
        self.remap: dict[int, int] = {}
        self._time = 0

    def _map(self, seq: Any) -> Any:
        return self.remap.get(seq, seq) if isinstance(seq, int) else seq

    def feed(self, event: dict[str, Any]) -> None:
        """Append one log event under its new seq, rewriting the seqs it cites."""
        new = {**event, "seq": self.session.next_seq}
        if "sourceEventSeqs" in event and isinstance(event["sourceEventSeqs"], list):
            new["sourceEventSeqs"] = [self._map(s) for s in event["sourceEventSeqs"]]
        op = event.get("surfaceOp")
        if isinstance(op, dict):
            new["surfaceOp"] = {
                k: self._map(v) if k in ("start", "end", "startSeq", "endSeq") else v for k, v in op.items()
            }
        if isinstance(event.get("seq"), int):
            self.remap[event["seq"]] = new["seq"]
        if isinstance(event.get("time"), int):
            self._time = event["time"]
        self.session.apply(new)

    def append(self, planned: Iterable[dict[str, Any]]) -> None:
        """Append planner output as the host does (seq = next_seq)."""
        for event in planned:
            self.session.apply({**event, "seq": self.session.next_seq, "time": self._time})


@dataclass
class TapedeckState:
    """One tapedeck variant: its replay, its meter and the request header it last built."""

    name: str
    seal: bool
    fold: bool
    route: bool
    schedule: str | None
    phase_in_system: bool
    replay: Replay
    meter: Meter = field(default_factory=Meter)
    warned: set[str] = field(default_factory=set)
    phase_text: str = ""
    _heads: dict[tuple[int, str], tuple[Any, bytes]] = field(default_factory=dict)

    def pre_step(self, config: PolicyConfig, step: int) -> None:
        """Plan and apply this variant's policies, in the host's order."""
        session = self.replay.session
        if self.seal and step == 1:
            plan = slice_policy.plan_seal(session, config.slice, warned=self.warned)
            self.warned.update(w.key for w in plan.warnings)
            self.replay.append(plan.events)
        if self.fold:
            self.replay.append(fold_policy.plan_fold(session, config.slice))
        if self.route:
            adaptive = replace(config.adaptive, prune_schedule=self.schedule or CACHE_AWARE)
            route = adaptive_policy.plan_route(
                session,
                adaptive,
                context_window=CONTEXT_WINDOW,
                context_tokens=session.surface_chars // 4,
            )
            self.replay.append(route.events)
            self.phase_text = route.phase_text if self.phase_in_system else ""

    def messages(self) -> list[Any]:
        """The request's messages as the host builds them (phase notes only where routing pins them)."""
        session = self.replay.session
        notes = self.route and not self.phase_in_system
        return phase_notes.request_messages(session) if notes else session.messages()

    def head(self) -> bytes:
        """The request head: the logged system prompt and tools plus what tapedeck adds (and, for the seed's
        placement, the phase text as the system prompt's last section)."""
        header = self.replay.session.request_header() or {}
        key = (id(header), self.phase_text)
        hit = self._heads.get(key)
        if hit is None:
            standing = adaptive_policy.prompt_section() if self.route and not self.phase_in_system else ""
            parts = (header.get("system") or "", slice_policy.prompt_section(), standing, self.phase_text)
            system = "\n\n".join(s for s in parts if s)
            tools = [*(header.get("tools") or []), *recall_policy.recall_tool_schemas()]
            hit = (header, request_head(system, tools))
            self._heads[key] = hit
        return hit[1]


@dataclass
class BaselineState:
    """The raw-list baselines: how many of the oldest tool results each one hides."""

    meters: dict[str, Meter] = field(default_factory=lambda: {name: Meter() for name in BASELINES})
    hidden: dict[str, int] = field(default_factory=lambda: dict.fromkeys(BASELINES, 0))

    def render(
        self, name: str, head: bytes, listing: list[tuple[int, Any, bool]], cache: MessageBytes, step: int
    ) -> list[bytes]:
        """The messages of baseline ``name`` at step index ``step`` (0-based); updates its hidden count."""
        results = sum(1 for _, _, is_result in listing if is_result)
        if name == "mask-10" or (name == "mask-10/10" and step % MASK_EVERY == 0):
            self.hidden[name] = max(0, results - MASK_KEEP)
        out = hide(listing, self.hidden[name], cache)
        if (
            name == "clear-old"
            and request_size(head, out) > CLEAR_TRIGGER
            and self.hidden[name] < results - CLEAR_KEEP
        ):
            self.hidden[name] = results - CLEAR_KEEP
            out = hide(listing, self.hidden[name], cache)
        return out


def hide(listing: list[tuple[int, Any, bool]], count: int, cache: MessageBytes) -> list[bytes]:
    """Message bytes with the outputs of the first ``count`` tool results replaced by the placeholder."""
    out = []
    seen = 0
    for seq, message, is_result in listing:
        if is_result and seen < count:
            out.append(cache.derived(("masked", seq), lambda m=message: masked(m)))
        else:
            out.append(cache.of(message))
        seen += is_result
    return out


def surface_listing(session: Session) -> list[tuple[int, Any, bool]]:
    """``(seq, message, is_tool_result)`` for every model-visible surface node, in model order."""
    out = []
    for seq in session.surface:
        event = session.events[seq]
        message = derive_message(event)
        if message is not None:
            out.append((seq, message, event.get("type") == "tool/result"))
    return out


def step_key(event: Mapping[str, Any]) -> tuple[Any, Any] | None:
    """``(turn, step)`` of a model-output event (a streamed chunk or ``assistant/message``), else None.

    The first such event of a step marks where the model was called.
    """
    if event.get("type") not in MODEL_OUTPUT_TYPES:
        return None
    data = event.get("data") or {}
    return data.get("turn"), data.get("step")


def truncate(events: Sequence[dict[str, Any]], max_steps: int | None) -> list[dict[str, Any]]:
    """The events up to the end of the turn in which the ``max_steps``-th step starts (all without a limit)."""
    if max_steps is None:
        return list(events)
    steps: set[tuple[Any, Any]] = set()
    for i, event in enumerate(events):
        key = step_key(event)
        if key is not None:
            steps.add(key)
        if len(steps) >= max_steps and event.get("type") == "turn/end":
            return list(events[: i + 1])
    return list(events)


def recall_fact(session: Session, fact: Mapping[str, Any], remap: Mapping[int, int]) -> str | None:
    """The recall tool that returns ``fact``'s token, trying its locator first; None if none does."""
    token = str(fact.get("fact"))
    tries: list[tuple[str, dict[str, Any]]] = []
    seq = remap.get(fact.get("seq")) if isinstance(fact.get("seq"), int) else None
    if fact.get("type") == "tool/result" and seq is not None:
        tries.append(
            (fold_policy.EXPAND_TOOL, {"seq": seq, "formatVersion": fold_policy.LOCATOR_FORMAT_VERSION})
        )
    if fact.get("type") == "assistant/message" and isinstance(fact.get("turn"), int):
        tries.append((recall_policy.RECALL_TURN_TOOL, {"turn": fact["turn"]}))
    tries.append((recall_policy.RECALL_SEARCH_TOOL, {"query": token}))
    for name, arguments in tries:
        result = recall_policy.run_recall_tool(session, name, arguments)
        # A search page's first line echoes the query; only its hits count.
        text = result.text.partition("\n")[2] if name == recall_policy.RECALL_SEARCH_TOOL else result.text
        if not result.is_error and token in text:
            return name
    return None


def _summary(
    meter: Meter,
    raw: Meter,
    final: bytes,
    facts: Sequence[Mapping[str, Any]],
    recall: Callable[[Mapping[str, Any]], str | None] | None,
    prices: Prices,
) -> dict[str, Any]:
    visible = [f for f in facts if str(f.get("fact")).encode() in final]
    by_tool: dict[str, int] = {}
    if recall is not None:
        for fact in facts:
            if fact in visible:
                continue
            tool = recall(fact)
            if tool is not None:
                by_tool[tool] = by_tool.get(tool, 0) + 1
    found = len(visible) + sum(by_tool.values())
    return {
        "steps": meter.steps,
        "total_bytes": meter.total,
        "ratio": meter.total / raw.total if raw.total else 1.0,
        "cost": meter.billed / raw.billed if raw.billed else 1.0,
        "usd": meter.usd(prices),
        "peak_bytes": meter.peak,
        "prefix_reuse": meter.prefix_reuse,
        "prefix_kept": meter.prefix_kept,
        "rewrites": meter.rewrites,
        "rewrite_lost": meter.rewrite_lost / meter.compared if meter.compared else 0.0,
        "head_breaks": meter.head_breaks,
        "head_lost_share": meter.head_lost / (meter.compared - meter.reused)
        if meter.compared > meter.reused
        else 0.0,
        "facts_visible": len(visible),
        "facts_recalled": by_tool,
        "recall": found / len(facts) if facts else 1.0,
    }


def measure(
    path: str | Path,
    facts: Sequence[Mapping[str, Any]] = (),
    *,
    max_steps: int | None = None,
    variants: Sequence[str] = DEFAULT_VARIANTS,
    config: PolicyConfig | None = None,
    price_model: str = PRICE_MODEL,
) -> dict[str, Any]:
    """Replay the log at ``path`` through every baseline and tapedeck variant; per-policy metrics.

    The ``usd`` metric prices the bytes with ``price_model``'s entry in ``config``'s ``model.prices`` (DeepSeek's
    table by default).
    """
    config = config or validate_config({})
    prices = price_for(price_model, config.model)
    if prices is None:
        raise ValueError(f"no prices for model {price_model!r}: add model.prices.{price_model} to the config")
    data = read_log(path)
    events = truncate(list(replayable(data.events)), max_steps)
    raw = Replay(data.header)
    tapes = [TapedeckState(name, *TAPEDECK_VARIANTS[name], Replay(data.header)) for name in variants]
    base = BaselineState()
    cache = MessageBytes()
    raw_heads: dict[int, tuple[Any, bytes]] = {}

    def raw_head() -> bytes:
        header = raw.session.request_header() or {}
        hit = raw_heads.get(id(header))
        if hit is None:
            hit = raw_heads[id(header)] = (
                header,
                request_head(header.get("system") or "", header.get("tools") or []),
            )
        return hit[1]

    def render_baselines(step: int) -> dict[str, tuple[bytes, list[bytes]]]:
        head, listing = raw_head(), surface_listing(raw.session)
        return {name: (head, base.render(name, head, listing, cache, step)) for name in BASELINES}

    steps = 0
    last: tuple[Any, Any] | None = None
    for event in events:
        key = step_key(event)
        if key is not None and key != last:
            last = key
            for name, (head, messages) in render_baselines(steps).items():
                base.meters[name].request(head, messages)
            for tape in tapes:
                tape.pre_step(config, key[1] if isinstance(key[1], int) else 0)
                tape.meter.request(tape.head(), [cache.of(m) for m in tape.messages()])
            steps += 1
        raw.feed(event)
        for tape in tapes:
            tape.replay.feed(event)
        if event.get("type") == "assistant/message":
            message = derive_message(event)
            output = cache.of(message) if message is not None else None
            for meter in [*base.meters.values(), *(t.meter for t in tapes)]:
                meter.output(output)

    replayed = [f for f in facts if f.get("seq") in raw.remap]
    policies: dict[str, Any] = {}
    for name, (head, messages) in render_baselines(steps).items():
        final = b"".join(request_pieces(head, messages))
        policies[name] = _summary(base.meters[name], base.meters["raw"], final, replayed, None, prices)
    for tape in tapes:
        session, remap = tape.replay.session, tape.replay.remap
        final = b"".join(request_pieces(tape.head(), [cache.of(m) for m in tape.messages()]))
        policies[tape.name] = _summary(
            tape.meter,
            base.meters["raw"],
            final,
            replayed,
            lambda f, s=session, r=remap: recall_fact(s, f, r),
            prices,
        )
    return {
        "log": str(path),
        "diagnostics": {
            "raw": len(raw.session.diagnostics),
            **{tape.name: len(tape.replay.session.diagnostics) for tape in tapes},
        },
        "events": len(events),
        "steps": steps,
        "turns": len(raw.session.turns),
        "facts": len(replayed),
        "policies": policies,
    }


def ensure_log(profile: str, size: int, seed: int) -> tuple[Path, list[dict[str, Any]]]:
    """``bench/out/context-f2-<profile>-<size>-s<seed>.jsonl`` and its facts, generated on first use.

    ``f2``: the generator's second fact planting (a stream of its own, at least 50 facts per profile in 300 steps).
    """
    log = OUT_DIR / f"context-f2-{profile}-{size}-s{seed}.jsonl"
    sidecar = Path(f"{log}.facts.json")
    if not (log.exists() and sidecar.exists()):
        generate(log, size, seed=seed, profile=profile, facts=True)
    return log, orjson.loads(sidecar.read_bytes())["facts"]


def table(results: Sequence[Mapping[str, Any]]) -> str:
    """One markdown table row per profile and policy."""
    rows = []
    for r in results:
        for name, p in r["policies"].items():
            rows.append(
                [
                    r["profile"],
                    name,
                    p["steps"],
                    f"{p['ratio']:.3f}",
                    f"{p['cost']:.4f}",
                    f"{p['usd']:.4f}",
                    human_bytes(p["total_bytes"]),
                    human_bytes(p["peak_bytes"]),
                    f"{p['prefix_reuse']:.1%}",
                    f"{p['prefix_kept']:.1%}",
                    f"{p['rewrite_lost']:.1%} ({p['rewrites']})",
                    f"{p['head_breaks']} ({p['head_lost_share']:.0%} of misses)",
                    f"{p['recall']:.0%} ({r['facts']})",
                ]
            )
    headers = [
        "profile",
        "policy",
        "steps",
        "total/raw",
        "cost/raw",
        "cost (USD)",
        "total",
        "peak request",
        "prefix reuse",
        "prefix kept",
        "lost to rewrites (steps)",
        "head breaks",
        "fact recall (n)",
    ]
    return markdown_table(headers, rows)


def main(argv: list[str] | None = None) -> int:
    """CLI: replay one generated session per profile and print the context metrics."""
    parser = argparse.ArgumentParser(
        description="Request size, prefix reuse and fact recall per context policy."
    )
    parser.add_argument(
        "--profile", action="append", choices=list(PROFILES), help="profile(s) to run (default: all)"
    )
    parser.add_argument(
        "--steps", type=counts(1), default=300, help="replay up to the turn that reaches this many steps"
    )
    parser.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    parser.add_argument("--size-scale", type=positive, default=1.0, help="scale the per-profile log sizes")
    parser.add_argument(
        "--variant",
        action="append",
        choices=list(TAPEDECK_VARIANTS),
        help=f"tapedeck variant(s) to replay (default: {', '.join(DEFAULT_VARIANTS)}; tapedeck-fold is slow)",
    )
    parser.add_argument("--config", help="policy config (TOML/JSON); its model.prices table prices the cost column")
    parser.add_argument("--model", default=PRICE_MODEL, help=f"whose prices to use (default {PRICE_MODEL})")
    parser.add_argument("--json", action="store_true", help="print the JSON result only")
    args = parser.parse_args(argv)
    config = load_config(args.config)
    if price_for(args.model, config.model) is None:
        parser.error(f"no prices for model {args.model!r}: add model.prices.{args.model} to the config")
    results = []
    for profile in args.profile or list(PROFILE_SIZES):
        log, facts = ensure_log(profile, int(PROFILE_SIZES[profile] * args.size_scale), args.seed)
        results.append(
            {
                "profile": profile,
                **measure(
                    log,
                    facts,
                    max_steps=args.steps,
                    variants=args.variant or DEFAULT_VARIANTS,
                    config=config,
                    price_model=args.model,
                ),
            }
        )
    targets = {
        "cost": "tapedeck <= every other policy, every profile",
        "rewrite_lost": "<= 0.01 (tapedeck, every profile but huge-output)",
        "recall": "1.0 (tapedeck), >= 50 facts per profile",
    }
    emit({"targets": targets, "results": results}, table(results), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
