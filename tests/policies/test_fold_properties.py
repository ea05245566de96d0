"""Properties of the fold over random sessions: plans are valid surface rewrites and the host converges."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st
from test_fold_support import BIG, CODE, Log

from core.policies.fold import FOLD, plan_fold, plan_unfold, preview_fold, shown_through
from core.policies.slice_config import FoldConfig, SliceConfig

TEXTS = {"big": BIG, "code": CODE, "small": "ok\n", "one-long-line": "x" * 4000}


@dataclass(frozen=True)
class Tools:
    calls: list[tuple[str, str, str, bool]]
    fold: bool  # False: this host skipped its fold, so the results will be shown raw


@dataclass(frozen=True)
class Expand:
    pick: int
    mode: str | None


@dataclass(frozen=True)
class Unfold:
    pick: int


@dataclass(frozen=True)
class Answer:
    pass


CALL = st.tuples(
    st.sampled_from(["read", "bash", "grep"]),
    st.sampled_from(["a.md", "b.md"]),
    st.sampled_from(sorted(TEXTS)),
    st.booleans(),
)
OPS = st.lists(
    st.one_of(
        st.builds(Tools, st.lists(CALL, min_size=1, max_size=3), st.booleans()),
        st.builds(Expand, st.integers(0, 30), st.sampled_from([None, "grep", "lines"])),
        st.builds(Unfold, st.integers(0, 30)),
        st.just(Answer()),
    ),
    max_size=12,
)
CONFIGS = st.sampled_from(
    [SliceConfig(), SliceConfig(fold=FoldConfig(pinSteps=2, pinMaxChars=6000, backoffAfterExpansions=1))]
)


def expand_args(log: Log, op: Expand, step: int) -> dict[str, object]:
    results = [s for seqs in log.session().results_by_step.values() for s in seqs]
    if results and op.pick % 2:
        return {"seq": results[op.pick % len(results)], "formatVersion": 4}
    args: dict[str, object] = {"turn": 1, "step": 1 + op.pick % step, "call": 1}
    if op.mode == "grep":
        args["grep"] = "row"
    elif op.mode == "lines":
        args["lines"] = "1-5"
    return args


@settings(max_examples=120, deadline=None)
@given(ops=OPS, config=CONFIGS)
def test_host_loop_invariants(ops: list[Tools | Expand | Unfold | Answer], config: SliceConfig) -> None:
    log = Log()
    log.turn(1)
    step = 0
    unfolded: set[int] = set()
    for op in ops:
        if isinstance(op, Unfold):
            folds = [
                s
                for s in log.session().surface
                if log.events[s]["data"].get("meta", {}).get("policy") == "fold"
            ]
            if folds:
                target = folds[op.pick % len(folds)]
                log.extend(plan_unfold(log.session(), target))
                unfolded.add(log.session().original_of(target))
            continue
        step += 1
        if isinstance(op, Tools):
            log.step(
                1, step, [(name, {"file_path": path}, TEXTS[kind], err) for name, path, kind, err in op.calls]
            )
            if not op.fold:
                continue
        elif isinstance(op, Expand):
            log.step(1, step, [("expand_result", expand_args(log, op, step), "[full result]\n" + BIG)])
        else:
            log.step(1, step, text="thinking")
        session = log.session()
        shown = shown_through(session)
        planned = plan_fold(session, config)
        sources = [e["sourceEventSeqs"][0] for e in planned]
        assert sources == [r.seq for r in preview_fold(session, config) if r.status == FOLD]
        for event, seq in zip(planned, sources, strict=True):
            assert session.on_surface(seq) and session.is_original(seq) and seq > shown
            assert seq not in unfolded
            assert event["surfaceOp"] == {"op": "replace", "start": seq, "end": seq}
            assert event["data"]["meta"]["charsAfter"] < event["data"]["meta"]["charsBefore"]
        log.extend(planned)
        after = log.session()
        assert plan_fold(after, config) == []
        bad = [d for d in after.diagnostics if d.code.startswith(("replace", "tool-result", "bad-"))]
        assert not bad, bad
