"""``off_surface``: whether a tool result an operator would expand is still on the surface, asked of the newest
projection before an expand is offered or sent."""

from __future__ import annotations

import pytest
from test_fold_support import folded, sealed

from core.policies.fold import FoldError, off_surface, plan_unfold


@pytest.mark.parametrize("by", ["original", "fold"])
def test_a_result_on_the_surface_folded_raw_or_expanded_is_on_it(by: str) -> None:
    log, original, fold = folded()
    seq = original if by == "original" else fold
    assert off_surface(log.session(), seq) is None
    (expand,) = plan_unfold(log.session(), seq)
    log.add(
        expand["type"],
        expand["data"],
        sourceEventSeqs=expand["sourceEventSeqs"],
        surfaceOp=expand["surfaceOp"],
    )
    assert off_surface(log.session(), seq) is None


@pytest.mark.parametrize("by", ["original", "fold"])
def test_a_result_a_tape_entry_replaced_has_left_the_surface(by: str) -> None:
    log, original, fold = folded()
    tape = sealed(log, fold)
    said = off_surface(log.session(), original if by == "original" else fold)
    assert said == f"the tool result at seq {original} is no longer on the surface (seq {tape} replaced it)"


def test_a_seq_past_the_log_is_said() -> None:
    log, _, _ = folded()
    seq = log.session().next_seq
    assert off_surface(log.session(), seq) == f"the log holds no event at seq {seq}"


def test_a_seq_that_is_no_tool_result_is_said_to_be_none() -> None:
    """It answered 'the tool result at seq 1 is no longer on the surface (seq None replaced it)' for a seq that was
    never a tool result (the reviewer's finding on 85c8b02d): now the words ``plan_unfold`` would refuse it with."""
    log, _, _ = folded()
    session = log.session()
    seq = next(s for s in range(session.next_seq) if session.events[s].get("type") != "tool/result")
    etype = session.events[seq]["type"]
    said = off_surface(session, seq)
    assert said is not None and "None" not in said, said
    with pytest.raises(FoldError) as refused:
        plan_unfold(session, seq)
    assert said == str(refused.value), etype
