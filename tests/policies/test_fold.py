"""The fold planner: what folds, what the replacement looks like, and what is never folded."""

from __future__ import annotations

import pytest
from test_fold_support import BIG, CODE, HEADER, Log, expand_text, view_text

from core.policies.fold import (
    FOLD,
    FOLDED,
    KEPT,
    PINNED,
    RECALL,
    REPLACED,
    SHOWN,
    plan_fold,
    preview_fold,
    shown_through,
)
from core.policies.slice_config import SliceConfig, validate
from core.read.session import Session
from core.shared.text import utf16_len

DEFAULT = SliceConfig()


def big_read(path: str = "notes.md") -> tuple[Log, int]:
    log = Log()
    log.turn(1, "summarize notes.md")
    (seq,) = log.step(1, 1, [("read", {"file_path": path}, BIG)])
    return log, seq


# ---------------------------------------------------------------------------------------------- seed case 13
def test_big_data_read_folds_before_the_next_step() -> None:
    log, seq = big_read()
    original = dict(log.events[seq])
    planned = log.fold()
    assert len(planned) == 1
    event = planned[0]
    assert set(event) == {"type", "data", "sourceEventSeqs", "surfaceOp"}
    assert event["type"] == "tool/result"
    assert event["surfaceOp"] == {"op": "replace", "start": seq, "end": seq}
    assert event["sourceEventSeqs"] == [seq]
    text = view_text(event)
    header, _, body = text.partition("\n")
    assert header == (
        "[read notes.md · data · 120 lines, 25 kept · "
        f'expand_result({{"turn": 1, "step": 1, "call": 1}}) or expand_result({{"seq": {seq}, "formatVersion": 4}}) '
        "returns the full text]"
    )
    assert "section_0: header" in body and "row 55 payload" not in body and "…[+9 lines / " in body
    meta = event["data"]["meta"]
    assert meta == {"policy": "fold", "digest": "data", "charsBefore": len(BIG), "charsAfter": len(text)}
    assert meta["charsAfter"] < 0.55 * meta["charsBefore"]
    # Only the inner content differs from the original (plus meta).
    data = {k: v for k, v in event["data"].items() if k != "meta"}
    orig = original["data"]
    assert {k: v for k, v in data.items() if k != "message"} == {
        k: v for k, v in orig.items() if k != "message"
    }
    msg, orig_msg = data["message"], orig["message"]
    assert {k: v for k, v in msg.items() if k != "content"} == {
        k: v for k, v in orig_msg.items() if k != "content"
    }
    assert {k: v for k, v in msg["content"][0].items() if k != "content"} == {
        k: v for k, v in orig_msg["content"][0].items() if k != "content"
    }
    # The original stays in the log untouched; the view takes its place on the surface.
    assert log.events[seq] == original and "row 55 payload" in view_text(log.events[seq])
    session = log.session()
    fold_seq = session.next_seq - 1
    assert session.replaced_by[seq] == fold_seq and session.on_surface(fold_seq)
    assert session.original_of(fold_seq) == seq
    assert not [d for d in session.diagnostics if d.code.startswith(("replace", "tool-result"))]


def test_a_path_that_breaks_the_line_is_escaped_in_the_one_line_header() -> None:
    """The model's path went into the fold header as it is, so a path holding a newline (or another character a
    reader breaks a line at) cut the header in two: its first line, the one readers parse, ended inside the path.
    The line breaks in it are escaped as JSON writes them; every other character stays."""
    log, seq = big_read("no\ntes\r\u2028\x85 · é.md")
    header, _, body = view_text(log.fold()[0]).partition("\n")
    assert header == (
        "[read no\\ntes\\r\\u2028\\u0085 · é.md · data · 120 lines, 25 kept · "
        f'expand_result({{"turn": 1, "step": 1, "call": 1}}) or expand_result({{"seq": {seq}, "formatVersion": 4}}) '
        "returns the full text]"
    )
    assert body.startswith("section_0: header"), body[:80]



def test_expand_result_output_is_never_folded() -> None:
    log, seq = big_read()
    log.fold()
    (expanded,) = log.step(
        1,
        2,
        [
            (
                "expand_result",
                {"turn": 1, "step": 1, "call": 1},
                expand_text("read", "turn 1 step 1 call 1", BIG),
            )
        ],
    )
    assert log.fold() == []
    rows = {row.seq: row for row in preview_fold(log.session(), DEFAULT)}
    assert rows[expanded].status == RECALL
    assert rows[log.session().replaced_by[seq]].status == FOLDED


def test_source_code_and_errors_are_never_folded() -> None:
    log = Log()
    log.turn(1)
    code, error = log.step(
        1,
        1,
        [("read", {"file_path": "core.py"}, CODE), ("bash", {"file_path": "x"}, "Error: boom " + BIG, True)],
    )
    assert log.fold() == []
    rows = {row.seq: row for row in preview_fold(log.session(), DEFAULT)}
    assert (rows[code].status, rows[code].kind) == (KEPT, "code")
    assert rows[error].status == "error"


def test_folding_is_idempotent_and_only_touches_surface_originals() -> None:
    log, _ = big_read()
    assert len(log.fold()) == 1
    assert log.fold() == []


def test_the_call_ordinal_counts_results_within_the_step() -> None:
    log = Log()
    log.turn(1)
    first, second = log.step(
        1, 1, [("bash", {"command": "cat a"}, "ok"), ("read", {"file_path": "b.md"}, BIG)]
    )
    (event,) = log.fold()
    assert event["sourceEventSeqs"] == [second]
    assert '"call": 2}' in view_text(event) and f'"seq": {second},' in view_text(event)


def test_results_without_a_path_name_the_tool_only() -> None:
    log = Log()
    log.turn(1)
    log.step(1, 1, [("bash", {"command": "cat big.txt"}, BIG)])
    (event,) = log.fold()
    assert view_text(event).startswith("[bash · data · 120 lines")


def test_each_text_part_is_digested_and_other_parts_are_kept() -> None:
    log = Log()
    log.turn(1)
    log.add("step/start", {"turn": 1, "step": 1})
    log.assistant(1, 1, calls=[("c1", "read", {"file_path": "n.md"})])
    call = log.add(
        "tool/call",
        {"turn": 1, "step": 1, "callId": "c1", "name": "read", "arguments": '{"file_path":"n.md"}'},
    )
    image = {
        "type": "image",
        "attachment": {"attachmentId": "sha256:ab", "mediaType": "image/png", "bytes": 3},
    }
    parts = [{"type": "text", "text": BIG}, image, {"type": "text", "text": "short"}]
    log.result(1, 1, "c1", call, parts)
    (event,) = log.fold()
    inner = event["data"]["message"]["content"][0]["content"]
    assert (
        inner[0]["text"].startswith("[read n.md · data")
        and inner[1] == image
        and inner[2] == {"type": "text", "text": "short"}
    )
    assert event["data"]["meta"]["charsAfter"] == len(inner[0]["text"]) + len("short")


def test_fold_disabled_plans_nothing() -> None:
    log, seq = big_read()
    config = validate({"fold": {"enabled": False}})
    assert plan_fold(log.session(), config) == []
    (row,) = preview_fold(log.session(), config)
    assert (row.status, row.reason) == (KEPT, "fold.enabled is false")


def test_a_digest_that_would_not_pay_leaves_the_result_alone() -> None:
    log = Log()
    log.turn(1)
    (seq,) = log.step(1, 1, [("read", {"file_path": "c.yaml"}, "\n".join(f"k{i}: v{i}" for i in range(400)))])
    assert log.fold() == []
    (row,) = preview_fold(log.session(), DEFAULT)
    assert row.status == KEPT and "0.55" in row.reason


# ---------------------------------------------------------------------------------------------- resume safety
def test_results_before_the_last_model_message_are_never_folded() -> None:
    log, seq = big_read()
    log.step(1, 2, text="done")  # a previous host sent the raw result; the model answered
    assert shown_through(log.session()) > seq
    assert log.fold() == []
    (row,) = preview_fold(log.session(), DEFAULT)
    assert row.status == SHOWN and row.kind == "data" and row.chars_after < row.chars_before
    assert "rewrite the sent prefix" in row.reason


@pytest.mark.parametrize("kind", ["error", "aborted", "interrupted"])
def test_a_failed_turn_end_freezes_earlier_results(kind: str) -> None:
    log, seq = big_read()
    log.end_turn(1, kind)
    assert log.fold() == []


def test_a_completed_turn_end_does_not_count_as_shown() -> None:
    log, seq = big_read()
    log.end_turn(1, "completed")
    assert shown_through(log.session()) < seq
    assert len(log.fold()) == 1


def test_a_streamed_chunk_proves_a_request_went_out() -> None:
    log, seq = big_read()
    log.add("step/start", {"turn": 1, "step": 2})
    log.add(
        "assistant/chunk", {"turn": 1, "step": 2, "chunk": {"type": "finish", "reason": {"kind": "error"}}}
    )
    assert log.fold() == []


def test_results_logged_after_the_last_request_fold_on_resume() -> None:
    log, seq = big_read()  # the host crashed before the next request: nothing was sent
    resumed = Session.from_events(HEADER, list(log.events))
    assert len(plan_fold(resumed, DEFAULT)) == 1


# ---------------------------------------------------------------------------------------------- pins
def test_pinned_steps_keep_small_results() -> None:
    config = validate({"fold": {"pinSteps": 1, "pinMaxChars": len(BIG) + 1}})
    log = Log()
    log.turn(1)
    (small,) = log.step(1, 1, [("read", {"file_path": "a.md"}, BIG)])
    assert log.fold(config) == []
    (row,) = preview_fold(log.session(), config)
    assert (row.seq, row.status) == (small, PINNED)
    (later,) = log.step(1, 2, [("read", {"file_path": "b.md"}, BIG)])
    assert [e["sourceEventSeqs"] for e in log.fold(config)] == [[later]]


def test_large_results_in_pinned_steps_still_fold() -> None:
    log, seq = big_read()
    config = validate({"fold": {"pinSteps": 1, "pinMaxChars": len(BIG)}})  # not strictly under the budget
    assert len(plan_fold(log.session(), config)) == 1


def test_pin_budget_counts_utf16_units() -> None:
    text = BIG.replace("x" * 30, "😀" * 15)
    log = Log()
    log.turn(1)
    log.step(1, 1, [("read", {"file_path": "e.md"}, text)])
    between = validate({"fold": {"pinSteps": 1, "pinMaxChars": len(text) + 10}})
    assert len(text) + 10 < utf16_len(text)
    assert len(plan_fold(log.session(), between)) == 1  # under in code points, over in UTF-16 units
    above = validate({"fold": {"pinSteps": 1, "pinMaxChars": utf16_len(text) + 1}})
    assert plan_fold(log.session(), above) == []


# ---------------------------------------------------------------------------------------------- forwarding
def test_text_forwarding_a_nested_retrieval_is_never_folded() -> None:
    log = Log()
    log.turn(1)
    log.add("step/start", {"turn": 1, "step": 1})
    log.assistant(1, 1, calls=[("root", "run_code", {"code": "..."})])
    call = log.add(
        "tool/call", {"turn": 1, "step": 1, "callId": "root", "name": "run_code", "arguments": "{}"}
    )
    recalled = expand_text("read", "turn 1 step 1 call 1", BIG)
    log.add(
        "tool/code-dispatch",
        {"rootCallId": "root", "parentCallId": "root", "subCallId": "root:code:1", "name": "expand_result",
         "arguments": {"seq": 3, "formatVersion": 4}, "isError": False, "content": [{"type": "text", "text": recalled}]},
    )  # fmt: skip
    seq = log.result(1, 1, "root", call, [{"type": "text", "text": "returned:\n" + recalled}])
    assert log.fold() == []
    (row,) = preview_fold(log.session(), DEFAULT)
    assert (row.seq, row.status, row.reason) == (seq, RECALL, "forwards a recorded retrieval")


def test_json_quoted_retrievals_count_as_forwarded_and_unrelated_dispatches_do_not() -> None:
    import json

    log = Log()
    log.turn(1)
    log.add("step/start", {"turn": 1, "step": 1})
    log.assistant(1, 1, calls=[("root", "run_code", {"code": "..."})])
    call = log.add(
        "tool/call", {"turn": 1, "step": 1, "callId": "root", "name": "run_code", "arguments": "{}"}
    )
    recalled = "line one\nline two"
    for n, name in enumerate(["recall_turn", "bash"], 1):
        log.add(
            "tool/code-dispatch",
            {"rootCallId": "root", "parentCallId": "root", "subCallId": f"root:code:{n}", "name": name,
             "arguments": {}, "isError": False, "content": [{"type": "text", "text": recalled if n == 1 else BIG}]},
        )  # fmt: skip
    log.result(1, 1, "root", call, [{"type": "text", "text": json.dumps({"page": recalled}) + "\n" + BIG}])
    assert log.fold() == []
    log2 = Log()
    log2.turn(1)
    log2.add("step/start", {"turn": 1, "step": 1})
    log2.assistant(1, 1, calls=[("root", "run_code", {"code": "..."})])
    call = log2.add(
        "tool/call", {"turn": 1, "step": 1, "callId": "root", "name": "run_code", "arguments": "{}"}
    )
    log2.add(
        "tool/code-dispatch",
        {"rootCallId": "root", "parentCallId": "root", "subCallId": "root:code:1", "name": "bash",
         "arguments": {}, "isError": False, "content": [{"type": "text", "text": BIG}]},
    )  # fmt: skip
    log2.result(1, 1, "root", call, [{"type": "text", "text": BIG}])
    assert len(log2.fold()) == 1


# ---------------------------------------------------------------------------------------------- other rows
def test_other_policies_replacements_show_as_replaced() -> None:
    log, seq = big_read()
    prune = dict(log.events[seq]["data"])
    log.add(
        "tool/result",
        {**prune, "meta": {"policy": "prune"}},
        sourceEventSeqs=[seq],
        surfaceOp={"op": "replace", "start": seq, "end": seq},
    )
    assert log.fold() == []
    (row,) = preview_fold(log.session(), DEFAULT)
    assert row.status == REPLACED and row.original == seq and "prune" in row.reason


def test_rows_follow_surface_order_and_serialize() -> None:
    log = Log()
    log.turn(1)
    a, b = log.step(1, 1, [("bash", {"command": "ls"}, "a\nb"), ("read", {"file_path": "n.md"}, BIG)])
    rows = preview_fold(log.session(), DEFAULT)
    assert [r.seq for r in rows] == [a, b]
    assert rows[1].to_dict() == {
        "seq": b, "original": b, "turn": 1, "step": 1, "call": 2, "tool": "read", "path": "n.md",
        "status": FOLD, "digest": "data", "charsBefore": len(BIG), "charsAfter": rows[1].chars_after, "reason": "",
    }  # fmt: skip
    assert rows[1].event is not None and rows[0].event is None
