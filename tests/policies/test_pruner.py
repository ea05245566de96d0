"""The progressive tool-result pruner (§4.e): code points, head/tail, protected steps, saving floor, replay."""

from __future__ import annotations

from typing import Any

import pytest
from test_adaptive_support import HEADER, add, end_turn, extend, new_session, replayed, start_turn, tool_step

from core.policies.adaptive_config import PruneBudget, PruneLevel, validate_prune_budget
from core.policies.pruner import PRUNE_MARKER, is_prunable, measure, plan_prune, prune_content
from core.read.session import Session
from core.shared.errors import ConfigError

SMALL = PruneBudget(50, 4, 3)


def make_level(
    budget: PruneBudget = SMALL, protect: int = 0, minimum: int = 0, name: str = "test"
) -> PruneLevel:
    return PruneLevel(name, 1, 0.5, budget, protect, minimum)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def test_code_points_and_budget_checks() -> None:
    assert measure([text("a😀b")]) == 3
    assert measure([text("ab"), {"type": "image", "data": "x" * 99}, text("c")]) == 3
    assert len(PRUNE_MARKER) == 39
    with pytest.raises(
        ConfigError, match=r"headChars \+ marker \+ tailChars \(59\) must be at most thresholdChars \(20\)"
    ):
        validate_prune_budget({"thresholdChars": 20, "headChars": 10, "tailChars": 10})


def test_head_and_tail_never_split_a_surrogate_pair() -> None:
    pruned = prune_content([text("😀" * 60)], SMALL)
    assert pruned == [text("😀" * 4 + PRUNE_MARKER + "😀" * 3)]
    assert measure(pruned) <= 50


def test_within_threshold_is_left_alone() -> None:
    assert prune_content([text("x" * 50)], SMALL) is None


def test_non_text_blocks_stay_in_place_and_emptied_text_blocks_go() -> None:
    image = {"type": "image", "mediaType": "image/png", "data": "..."}
    blocks = [text("A" * 30), image, text("M" * 30), text("B" * 30)]
    pruned = prune_content(blocks, PruneBudget(45, 3, 3))
    assert pruned == [text("AAA" + PRUNE_MARKER), image, text("BBB")]


def build_two_turns(old: str = "A" * 100, recent: str = "B" * 100) -> tuple[Session, int, int]:
    session = new_session()
    start_turn(session, 1, "one")
    [first] = tool_step(session, 1, 1, [old])
    end_turn(session, 1)
    start_turn(session, 2, "two")
    [second] = tool_step(session, 2, 1, [recent])
    end_turn(session, 2)
    add(session, "turn/start", {"turn": 3})
    return session, first, second


def test_protects_recent_steps_and_replays_identically() -> None:
    session, old, recent = build_two_turns()
    plan = plan_prune(session, make_level(PruneBudget(60, 10, 5), protect=1, minimum=1, name="tight"))
    assert [p.call_id for p in plan.pruned] == ["c1-1-0"]
    assert plan.chars_removed == 100 - (10 + 39 + 5) > 0
    prune_event, replacement = plan.events
    assert prune_event["type"] == "compaction/prune" and "ignorable" not in prune_event
    assert prune_event["data"] == {
        "shadowedRange": {"start": old, "end": old},
        "shadowedSeqs": [old],
        "shadowedTokenCount": 25,
    }
    assert replacement["surfaceOp"] == {"op": "replace", "start": old, "end": old}
    assert replacement["sourceEventSeqs"] == [old] and "ignorable" not in replacement
    assert replacement["data"]["meta"] == {
        "policy": "prune",
        "level": "tight",
        "charsBefore": 100,
        "charsAfter": 54,
    }
    first_seq = session.next_seq
    extend(session, plan.events)
    assert plan.pruned[0].replacement_seq == first_seq + 1 and session.on_surface(first_seq + 1)
    assert session.on_surface(recent) and not session.on_surface(old)
    assert session.diagnostics == []
    again = replayed(session)
    assert again.messages() == session.messages()
    pruned_text = again.messages()[2]["content"][0]["content"][0]["text"]
    assert pruned_text == "A" * 10 + PRUNE_MARKER + "A" * 5
    # Only the model-visible content changed; ids, source, turn and step are the original's.
    original = session.events[old]["data"]
    new = session.events[first_seq + 1]["data"]
    assert {k: v for k, v in new.items() if k not in ("message", "meta")} == {"turn": 1, "step": 1}
    assert {k: v for k, v in new["message"].items() if k != "content"} == {
        k: v for k, v in original["message"].items() if k != "content"
    }


def test_below_the_saving_floor_nothing_is_planned() -> None:
    session, _, _ = build_two_turns()
    plan = plan_prune(session, make_level(minimum=10_000))
    assert (plan.events, plan.pruned, plan.chars_removed) == ((), (), 0)


def test_saving_floor_counts_the_whole_pass() -> None:
    session, _, _ = build_two_turns()
    one = 100 - (4 + 39 + 3)
    assert len(plan_prune(session, make_level(minimum=2 * one)).pruned) == 2
    assert plan_prune(session, make_level(minimum=2 * one + 1)).pruned == ()


def test_first_seq_offsets_the_replacement_seqs() -> None:
    session, _, _ = build_two_turns()
    plan = plan_prune(session, make_level(), first_seq=session.next_seq + 3)
    assert [p.replacement_seq for p in plan.pruned] == [session.next_seq + 4, session.next_seq + 6]


def _replace(session: Session, seq: int, new_text: str, meta: dict[str, Any] | None) -> int:
    data = session.events[seq]["data"]
    block = data["message"]["content"][0]
    message = {**data["message"], "content": [{**block, "content": [text(new_text)]}]}
    new = {**data, "message": message}
    if meta is not None:
        new["meta"] = meta
    return add(
        session,
        "tool/result",
        new,
        surfaceOp={"op": "replace", "start": seq, "end": seq},
        sourceEventSeqs=[seq],
    )


def test_only_raw_or_folded_results_are_candidates() -> None:
    session = new_session()
    start_turn(session, 1, "go")
    raw, folded, pruned, expanded, dsh = tool_step(session, 1, 1, ["r" * 100] * 5)
    folded = _replace(session, folded, "[bash · digest]\n" + "f" * 90, {"policy": "fold"})
    pruned = _replace(session, pruned, "p" * 100, {"policy": "prune", "level": "moderate"})
    expanded = _replace(session, expanded, "e" * 100, {"policy": "expand", "by": "operator"})
    dsh = _replace(session, dsh, "d" * 100, None)
    assert [is_prunable(session, s) for s in (raw, folded, pruned, expanded, dsh)] == [
        True,
        True,
        False,
        False,
        False,
    ]
    plan = plan_prune(session, make_level())
    assert [p.shadowed_seq for p in plan.pruned] == [raw, folded]
    extend(session, plan.events)
    assert session.messages()[-4]["content"][0]["content"][0]["text"].startswith("[bas" + PRUNE_MARKER)
    # A second pass finds nothing left to prune: pruned results are never pruned again.
    assert plan_prune(session, make_level(PruneBudget(45, 2, 2))).pruned == ()


def test_error_results_and_parallel_results_in_one_step() -> None:
    session = new_session()
    start_turn(session, 1, "go")
    seqs = tool_step(session, 1, 1, ["a" * 80, ("b" * 80, True)])
    tool_step(session, 1, 2, ["c" * 80])
    plan = plan_prune(session, make_level(protect=1))
    assert [p.shadowed_seq for p in plan.pruned] == seqs
    extend(session, plan.events)
    assert replayed(session).messages() == session.messages()
    assert session.messages()[-3]["content"][0]["isError"] is True


def test_replay_from_a_fresh_projection_matches_after_several_passes() -> None:
    events: list[dict[str, Any]] = []
    session = new_session()
    start_turn(session, 1, "go")
    for step in range(1, 4):
        tool_step(session, 1, step, ["x" * (100 * step)])
        extend(session, plan_prune(session, make_level(protect=1)).events)
    events = list(session.events)
    assert Session.from_events(HEADER, events).messages() == session.messages()
    assert sum(1 for e in events if e["type"] == "compaction/prune") == 2
