"""Progressive pruning: the tier in force re-prunes (seed 004 §4.d), and when the prunes are written.

Seed 004's tier table: moderate keeps head/tail 12,288 / 2,048 of a result over 16,384 chars, tight 4,096 / 1,024
over 8,192, critical 2,048 / 1,024 over 4,096; "步骤或压力条件任一满足即可进入该等级" (a step or a pressure
condition enters the tier). The seed prunes at every step a tier is in force; the cache-aware schedule keeps
those decisions and writes them only where the request already differs from what the provider cached.
"""

from __future__ import annotations

from test_adaptive_support import add, extend, new_session, start_turn, tool_step

from core.policies.adaptive import plan_route
from core.policies.adaptive_config import AdaptiveConfig
from core.policies.pruner import PRUNE_MARKER
from core.read.session import Session

SEED = AdaptiveConfig(prune_schedule="step")
CACHE_AWARE = AdaptiveConfig()
NO_PRESSURE = {"context_window": None, "context_tokens": None}
CALM = {"context_window": 10_000_000, "context_tokens": 1_000}  # a known window, far from any pressure tier
MARK = len(PRUNE_MARKER)


def _steps(session: Session, steps: range, size: int = 20_000) -> list[int]:
    return [seq for step in steps for seq in tool_step(session, 1, step, ["y" * size])]


def _route(session: Session, config: AdaptiveConfig, **pressure: int | None) -> object:
    decision = plan_route(session, config, **(pressure or NO_PRESSURE))
    extend(session, decision.events)
    return decision


def _size(session: Session, original: int) -> int:
    seq = original
    while seq in session.replaced_by:
        seq = session.replaced_by[seq]
    return session.node_chars(seq)


def test_a_harsher_tier_re_prunes_to_its_own_budget() -> None:
    session = new_session()
    start_turn(session, 1, "Implement the retry policy")
    first = _steps(session, range(1, 6))[0]
    assert _route(session, SEED).prune_level == "moderate"  # step 6
    assert _size(session, first) == 12_288 + MARK + 2_048  # 14,375
    _steps(session, range(6, 10))
    assert _route(session, SEED).prune_level == "tight"  # step 10
    assert _size(session, first) == 4_096 + MARK + 1_024
    _steps(session, range(10, 14))
    assert _route(session, SEED).prune_level == "critical"  # step 14
    assert _size(session, first) == 2_048 + MARK + 1_024 <= 3_111
    assert session.diagnostics == []


def test_cache_aware_step_tiers_leave_the_turn_append_only() -> None:
    session = new_session()
    start_turn(session, 1, "Implement the retry policy")
    for step in range(1, 15):
        decision = _route(session, CACHE_AWARE, **CALM)
        assert decision.prune.pruned == ()
        _steps(session, range(step, step + 1))
    assert decision.prune_level == "critical"  # the tier is in force (and logged), its prunes wait
    assert not any(e["type"] == "compaction/prune" for e in session.events)


def test_cache_aware_prunes_after_a_replacement_that_already_broke_the_cache() -> None:
    session = new_session()
    start_turn(session, 1, "Implement the retry policy")
    results = []
    for step in range(1, 9):
        _route(session, CACHE_AWARE, **CALM)
        results += _steps(session, range(step, step + 1))
    # A rewind report replaces the results of steps 1-2 (and their calls) before step 9's request.
    first, last = session.surface.index(results[0]) - 1, session.surface.index(results[1])
    span = session.surface[first : last + 1]
    add(session, "user/message", {"id": "rep", "role": "user", "content": [{"type": "text", "text": "report"}],
                                  "source": {"kind": "plugin", "plugin": "rewind"}},
        surfaceOp={"op": "replace", "start": span[0], "end": span[-1]}, sourceEventSeqs=span)  # fmt: skip
    decision = _route(session, CACHE_AWARE, **CALM)  # step 9: moderate, protects steps 7-8
    assert [p.shadowed_seq for p in decision.prune.pruned] == results[2:6]


def test_cache_aware_prunes_when_pressure_crosses_into_a_harsher_tier() -> None:
    session = new_session()
    start_turn(session, 1, "Implement the retry policy")
    results = _steps(session, range(1, 4))
    window = 100_000
    calm = _route(session, CACHE_AWARE, context_window=window, context_tokens=30_000)  # step 4, no tier
    assert calm.prune_level is None
    _steps(session, range(4, 5))
    crossing = _route(session, CACHE_AWARE, context_window=window, context_tokens=50_000)  # 0.5: moderate
    assert crossing.prune_level == "moderate"
    assert [p.shadowed_seq for p in crossing.prune.pruned] == results[:2]  # steps 3-4 protected
    _steps(session, range(5, 6))
    steady = _route(session, CACHE_AWARE, context_window=window, context_tokens=50_000)  # still moderate
    assert steady.prune.pruned == ()
    _steps(session, range(6, 7))
    harsher = _route(session, CACHE_AWARE, context_window=window, context_tokens=70_000)  # 0.7: tight
    assert harsher.prune_level == "tight"
    assert harsher.prune.pruned  # the crossing re-prunes what moderate left at 14,375 chars
    assert _size(session, results[0]) == 4_096 + MARK + 1_024


def test_cache_aware_prunes_at_the_next_step_when_the_crossing_could_prune_nothing() -> None:
    # Pressure jumps straight into critical at the step after a huge result landed; critical protects the newest
    # step, so the crossing prunes nothing. The tier's prune is still owed: the next step writes it.
    session = new_session()
    start_turn(session, 1, "Implement the retry policy")
    window = 100_000
    calm = _route(session, CACHE_AWARE, context_window=window, context_tokens=20_000)  # step 1
    assert calm.prune_level is None
    [huge] = _steps(session, range(1, 2), size=300_000)
    crossing = _route(session, CACHE_AWARE, context_window=window, context_tokens=80_000)  # step 2: 0.8
    assert crossing.prune_level == "critical" and crossing.prune.pruned == ()
    _steps(session, range(2, 3), size=100)
    owed = _route(session, CACHE_AWARE, context_window=window, context_tokens=80_000)  # step 3, still critical
    assert [p.shadowed_seq for p in owed.prune.pruned] == [huge]
    _steps(session, range(3, 4), size=20_000)
    steady = _route(session, CACHE_AWARE, context_window=window, context_tokens=80_000)  # paid: append-only again
    assert steady.prune.pruned == ()


def test_without_a_known_window_cache_aware_falls_back_to_the_step_schedule() -> None:
    # No window (a model missing from the table, the scripted model): no pressure can ever force a prune, so
    # the cache-aware schedule would let a turn grow without bound. It prunes as the seed does instead.
    seed, cache_aware = new_session(), new_session()
    for session, config in ((seed, SEED), (cache_aware, CACHE_AWARE)):
        start_turn(session, 1, "Implement the retry policy")
        for step in range(1, 15):
            _route(session, config)
            _steps(session, range(step, step + 1))
        _route(session, config)
    assert cache_aware.surface_chars == seed.surface_chars < 15 * 20_000 // 4
    assert [e["data"] for e in cache_aware.events if e["type"] == "compaction/prune"] == [
        e["data"] for e in seed.events if e["type"] == "compaction/prune"
    ]
