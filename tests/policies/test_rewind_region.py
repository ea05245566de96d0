"""Fold-region selection (seed 001 §2.b) and its acceptance cases (§2.f, cases 1-8)."""

from __future__ import annotations

import pytest
from test_rewind_support import Log, text, tool_call

from core.policies.checkpoint import plan_checkpoint
from core.policies.rewind import (
    CHANGED,
    EMPTY_REGION,
    MSG_CHANGED,
    MSG_NOTHING_AFTER,
    MSG_NOTHING_BETWEEN,
    MSG_UNBALANCED,
    UNBALANCED,
    Region,
    RewindError,
    assert_region_unchanged,
    select_fold_region,
)
from core.read.load import load_session
from core.read.session import Session
from tests.conftest import FIXTURES as FIXTURE_DIR

FIXTURES = str(FIXTURE_DIR)


def _operator_mark(log: Log) -> int:
    (anchor,) = log.extend(plan_checkpoint(log.session, by="operator"))
    return anchor


def _fails(session: Session, anchor: int, code: str, message: str) -> None:
    with pytest.raises(RewindError) as info:
        select_fold_region(session, anchor)
    assert (info.value.code, str(info.value)) == (code, message)


def test_region_spans_the_exploration_and_stops_before_the_rewind_call() -> None:
    log = Log()
    log.turn_start()
    log.user("Find the cause")
    anchor = _operator_mark(log)
    bash, result = log.tool("c1", "bash", "{}", "no such file or directory")
    log.rewind_call("c2")
    assert select_fold_region(log.session, anchor) == Region(bash, result, (bash, result))


def test_empty_session_and_anchor_at_log_end_have_nothing_after_the_mark() -> None:
    _fails(Log().session, 0, EMPTY_REGION, MSG_NOTHING_AFTER)
    log = Log()
    log.turn_start()
    log.user("hello")
    log.tool("c1", "bash", "{}", "ok")
    _fails(log.session, log.session.next_seq, EMPTY_REGION, MSG_NOTHING_AFTER)


def test_anchor_right_before_the_rewind_call_has_nothing_between() -> None:
    log = Log()
    log.turn_start()
    log.user("hello")
    anchor = _operator_mark(log)
    log.rewind_call()
    _fails(log.session, anchor, EMPTY_REGION, MSG_NOTHING_BETWEEN)


def test_an_open_call_that_never_resolved_cannot_be_cut() -> None:
    log = Log()
    log.turn_start()
    log.user("hello")
    anchor = _operator_mark(log)
    log.assistant(tool_call("c1", "bash"))
    log.rewind_call("c2")
    _fails(log.session, anchor, UNBALANCED, MSG_UNBALANCED)


def test_mid_call_mark_skips_the_checkpoint_calls_own_result() -> None:
    log = Log()
    log.turn_start()
    log.user("hello")
    anchor, checkpoint_result = log.checkpoint_call()
    assert anchor == checkpoint_result - 1
    bash, result = log.tool("c1", "bash", '{"command":"ls"}', "a.txt")
    log.rewind_call()
    region = select_fold_region(log.session, anchor)
    assert region == Region(bash, result, (bash, result))
    assert checkpoint_result not in region.shadowed_seqs


def test_two_calls_with_the_mark_after_the_first_result_leave_nothing() -> None:
    log = Log()
    log.turn_start()
    log.user("hello")
    log.assistant(tool_call("c1", "bash"), tool_call("c2", "bash"))
    log.call("c1", "bash")
    log.result("c1", "one")
    anchor = _operator_mark(log)
    log.call("c2", "bash")
    log.result("c2", "two")
    log.rewind_call("c3")
    _fails(log.session, anchor, EMPTY_REGION, MSG_NOTHING_BETWEEN)


def test_parallel_exploration_next_to_the_checkpoint_call_is_folded() -> None:
    log = Log()
    log.turn_start()
    log.user("hello")
    log.assistant(tool_call("ck", "checkpoint"), tool_call("c2", "bash", '{"command":"grep -r retry"}'))
    log.call("ck", "checkpoint")
    (anchor,) = log.extend(plan_checkpoint(log.session))
    checkpoint_result = log.result("ck", "checkpoint set")
    log.call("c2", "bash")
    bash_result = log.result("c2", "src/retry.ts:12")
    log.rewind_call("c3")
    region = select_fold_region(log.session, anchor)
    assert region == Region(bash_result, bash_result, (bash_result,))
    assert log.session.on_surface(checkpoint_result)


def test_an_orphan_result_alone_after_the_mark_is_empty() -> None:
    log = Log()
    log.turn_start()
    log.user("hello")
    anchor, _ = log.checkpoint_call()
    log.rewind_call()
    _fails(log.session, anchor, EMPTY_REGION, MSG_NOTHING_BETWEEN)


def test_without_any_assistant_message_the_region_runs_to_the_surface_tail() -> None:
    log = Log()
    first = log.user("just a note")
    assert select_fold_region(log.session, 0) == Region(first, first, (first,))


def test_the_unchanged_check_rejects_a_different_region() -> None:
    log = Log()
    log.turn_start()
    log.user("hello")
    anchor = _operator_mark(log)
    log.tool("c1", "bash", "{}", "ok")
    log.rewind_call()
    region = select_fold_region(log.session, anchor)
    assert_region_unchanged(log.session, anchor, region)
    moved = Region(region.start, region.end + 1, region.shadowed_seqs)
    with pytest.raises(RewindError) as info:
        assert_region_unchanged(log.session, anchor, moved)
    assert (info.value.code, str(info.value)) == (CHANGED, MSG_CHANGED)


def test_the_region_uses_surface_order_after_earlier_replacements() -> None:
    log = Log()
    log.turn_start()
    old = log.user("old context")
    anchor = _operator_mark(log)
    bash, result = log.tool("c1", "bash", "{}", "ok")
    summary = {
        "id": "r",
        "role": "user",
        "content": [text("summary")],
        "source": {"kind": "plugin", "plugin": "compact"},
    }
    replacement = log.add(
        "user/message", summary, surfaceOp={"op": "replace", "start": old, "end": old}, sourceEventSeqs=[old]
    )
    log.rewind_call()
    # the replacement has a high seq but sits first on the surface, in the place of what it replaced, which came
    # before the mark: it is not part of the exploration (README D10; the seed folded it)
    assert log.session.surface[0] == replacement
    assert select_fold_region(log.session, anchor) == Region(bash, result, (bash, result))


def test_real_dsh_fixture_region() -> None:
    session = load_session(f"{FIXTURES}/tool-call-turn.session.jsonl")
    assert session.surface == [4, 5, 63, 65, 101]
    # a mark placed after the runtime-context snapshot: the bash call and its result fold, the final reply stays
    assert select_fold_region(session, 6) == Region(63, 65, (63, 65))
