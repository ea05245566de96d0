"""Operator expand: putting a folded result back on the surface, and never folding it again."""

from __future__ import annotations

import pytest
from test_fold_support import BIG, Log, folded, sealed, view_text

from core.policies.fold import UNFOLDED, FoldError, plan_fold, plan_unfold, preview_fold
from core.policies.slice_config import SliceConfig
from core.shared.errors import TapedeckError


@pytest.mark.parametrize("by", ["original", "fold"])
def test_unfold_restores_the_original_content(by: str) -> None:
    log, original, fold = folded()
    (event,) = plan_unfold(log.session(), original if by == "original" else fold)
    assert event["type"] == "tool/result"
    assert event["surfaceOp"] == {"op": "replace", "start": fold, "end": fold}
    assert event["sourceEventSeqs"] == [fold]
    assert event["data"]["meta"] == {"policy": "expand", "by": "operator"}
    assert event["data"]["message"] == log.events[original]["data"]["message"]
    assert view_text(event) == BIG
    (seq,) = log.extend([event])
    session = log.session()
    assert (
        session.surface[-1] == seq and not session.on_surface(fold) and session.original_of(seq) == original
    )
    assert not [d for d in session.diagnostics if d.severity == "error"]


def test_an_unfolded_result_is_never_folded_again() -> None:
    log, original, fold = folded()
    log.extend(plan_unfold(log.session(), fold))
    assert plan_fold(log.session(), SliceConfig()) == []
    (row,) = preview_fold(log.session(), SliceConfig())
    assert row.status == UNFOLDED and row.original == original and "operator" in row.reason
    with pytest.raises(
        FoldError, match=rf"already unfolded \(seq {log.session().next_seq - 1} restored it\)"
    ):
        plan_unfold(log.session(), original)


def test_unfold_errors() -> None:
    log, original, fold = folded()
    session = log.session()
    with pytest.raises(FoldError, match=r"^no session event at seq 999$"):
        plan_unfold(session, 999)
    with pytest.raises(FoldError, match=r"^no session event at seq -1$"):
        plan_unfold(session, -1)
    with pytest.raises(FoldError, match=r"^seq 0 is a turn/start event, not a tool result$"):
        plan_unfold(session, 0)
    assert session.events[4]["type"] == "assistant/message"
    with pytest.raises(FoldError, match=r"^seq 4 is an assistant/message event, not a tool result$"):  # 'a assistant'
        plan_unfold(session, 4)
    plain = Log()
    plain.turn(1)
    (seq,) = plain.step(1, 1, [("bash", {"command": "ls"}, "a")])
    with pytest.raises(FoldError, match=rf"^the tool result at seq {seq} is not folded$"):
        plan_unfold(plain.session(), seq)
    assert issubclass(FoldError, TapedeckError)


def test_unfold_refuses_a_result_that_left_the_surface() -> None:
    log, original, fold = folded()
    first = log.session().surface[0]
    tape = sealed(log, fold)
    with pytest.raises(
        FoldError,
        match=rf"^the tool result at seq {original} is not on the surface \(seq {fold} was replaced by seq {tape}\)$",
    ):
        plan_unfold(log.session(), original)
    assert log.session().surface == [first, tape]


def test_unfold_refuses_another_policys_replacement() -> None:
    log = Log()
    log.turn(1)
    (seq,) = log.step(1, 1, [("bash", {"command": "ls"}, "a")])
    data = {**log.events[seq]["data"], "meta": {"policy": "prune"}}
    prune = log.add(
        "tool/result", data, sourceEventSeqs=[seq], surfaceOp={"op": "replace", "start": seq, "end": seq}
    )
    with pytest.raises(
        FoldError, match=rf"is not folded \(its surface copy at seq {prune} comes from prune\)"
    ):
        plan_unfold(log.session(), seq)


def test_an_event_type_from_the_log_is_quoted_in_the_unfold_refusal() -> None:
    """The refusal to unfold a non-result named its type as the log holds it, escape sequence and all, whole; it is
    quoted (cut, escaped) as the other names a message takes from a log."""
    log, _, _ = folded()
    log.extend([{"type": "x\x1b[2J" + "k" * 300, "data": {}}])
    session = log.session()
    with pytest.raises(FoldError) as info:
        plan_unfold(session, session.next_seq - 1)
    said = str(info.value)
    assert said.startswith("seq ") and said.endswith("k… event, not a tool result") and "\x1b" not in said, said
    assert "is a x\\u001b[2Jkkk" in said and len(said) < 150, said
