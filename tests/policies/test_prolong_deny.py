"""The deny counter: pairing by callId with a FIFO fallback, and the ``isError && !data.error`` rule."""

from __future__ import annotations

from typing import Any

from test_rewind_support import Log, tool_call

from core.policies.prolong import DenyCounter

GREP_LOG = '{"command":"grep -n KeyError log.txt"}'
DENIED = "Error: blocked by the tools/pre-execute policy"


def counted(log: Log, keep: int = 20, log_file: str = "log.txt") -> DenyCounter:
    counter = DenyCounter(log_file, keep)
    for seq, event in enumerate(log.session.events):
        counter.observe(seq, event)
    return counter


def two_calls(log: Log, first: str, second: str) -> None:
    log.assistant(tool_call("c1", "bash", first), tool_call("c2", "bash", second))
    log.call("c1", "bash", first)
    log.call("c2", "bash", second)


def anonymous_result(log: Log, output: str, is_error: bool) -> int:
    """A result with neither source.callId nor toolCallId: only FIFO pairing can place it."""
    block = {"type": "tool-result", "content": [{"type": "text", "text": output}], "isError": is_error}
    message = {"id": "x", "role": "user", "content": [block], "source": {"kind": "tool"}}
    return log.add(
        "tool/result", {"turn": log.turn, "step": log.step, "message": message}, surfaceOp="append"
    )


def test_results_pair_with_their_calls_by_call_id() -> None:
    log = Log()
    log.turn_start()
    two_calls(log, GREP_LOG, '{"command":"ls"}')
    log.result("c2", DENIED, is_error=True)  # denied, but does not touch the log
    seq = log.result("c1", DENIED, is_error=True)
    counter = counted(log)
    assert counter.denied == 1
    (denied,) = counter.recent
    assert (denied.seq, denied.call_id, denied.tool, denied.turn, denied.step) == (seq, "c1", "bash", 1, 1)
    assert denied.arguments == GREP_LOG and denied.reason == DENIED


def test_results_without_a_call_id_pair_first_in_first_out_within_the_step() -> None:
    log = Log()
    log.turn_start()
    two_calls(log, GREP_LOG, '{"command":"ls"}')
    anonymous_result(log, DENIED, True)  # pairs with c1, the oldest unpaired call
    anonymous_result(log, "a.txt", False)
    counter = counted(log)
    assert counter.denied == 1 and counter.recent[0].call_id == "c1"

    log = Log()
    log.turn_start()
    two_calls(log, '{"command":"ls"}', GREP_LOG)
    anonymous_result(log, "a.txt", False)
    anonymous_result(log, DENIED, True)  # pairs with c2
    assert counted(log).recent[0].call_id == "c2"


def test_an_unknown_call_id_falls_back_to_fifo() -> None:
    log = Log()
    log.turn_start()
    log.assistant(tool_call("c1", "read", '{"path":"log.txt"}'))
    log.call("c1", "read", '{"path":"log.txt"}')
    log.result("renamed-id", DENIED, is_error=True)
    assert counted(log).recent[0].call_id == "c1"


def test_errors_with_data_error_are_not_policy_denials() -> None:
    log = Log()
    log.turn_start()
    log.assistant(tool_call("c1", "bash", GREP_LOG))
    log.call("c1", "bash", GREP_LOG)
    log.result(
        "c1", "Error: tool call aborted", is_error=True, error={"name": "AbortError", "code": "ABORTED"}
    )
    log.assistant(tool_call("c2", "bash", GREP_LOG))
    log.call("c2", "bash", GREP_LOG)
    log.result("c2", "3: KeyError: 'size'", is_error=False)
    assert counted(log).denied == 0


def test_only_whole_word_references_to_the_log_file_count() -> None:
    log = Log()
    log.turn_start()
    for i, args in enumerate(
        ['{"command":"cat catalog.txt"}', '{"command":"cat log.txt.bak"}', '{"path":"/work/demo/log.txt"}']
    ):
        log.assistant(tool_call(f"c{i}", "bash", args))
        log.call(f"c{i}", "bash", args)
        log.result(f"c{i}", DENIED, is_error=True)
    counter = counted(log)
    assert counter.denied == 1 and counter.recent[0].call_id == "c2"
    assert counted(log, log_file="notes/run.txt").denied == 0


def test_only_the_last_deny_keep_calls_are_kept() -> None:
    log = Log()
    log.turn_start()
    for i in range(5):
        log.assistant(tool_call(f"c{i}", "bash", GREP_LOG))
        log.call(f"c{i}", "bash", GREP_LOG)
        log.result(f"c{i}", DENIED, is_error=True)
    counter = counted(log, keep=2)
    assert counter.denied == 5
    assert [d.call_id for d in counter.recent] == ["c3", "c4"]
    assert list(counted(log, keep=0).recent) == []


def test_replacement_results_are_not_counted_again() -> None:
    log = Log()
    log.turn_start()
    log.assistant(tool_call("c1", "bash", GREP_LOG))
    log.call("c1", "bash", GREP_LOG)
    original = log.result("c1", DENIED, is_error=True)
    copy: dict[str, Any] = dict(log.session.events[original]["data"])
    log.add(
        "tool/result",
        copy,
        surfaceOp={"op": "replace", "start": original, "end": original},
        sourceEventSeqs=[original],
    )
    assert counted(log).denied == 1


def test_step_end_forgets_unanswered_calls() -> None:
    log = Log()
    log.turn_start()
    log.assistant(tool_call("c1", "bash", GREP_LOG))
    log.call("c1", "bash", GREP_LOG)
    log.add("step/end", {"turn": 1, "step": 1})
    anonymous_result(log, DENIED, True)
    assert counted(log).denied == 0


def test_a_known_call_id_pairs_even_when_the_result_names_no_step() -> None:
    log = Log()
    log.turn_start()
    log.assistant(tool_call("c1", "bash", GREP_LOG))
    log.call("c1", "bash", GREP_LOG)
    block = {
        "type": "tool-result",
        "toolCallId": "c1",
        "content": [{"type": "text", "text": DENIED}],
        "isError": True,
    }
    message = {"id": "x", "role": "user", "content": [block], "source": {"kind": "tool", "callId": "c1"}}
    log.add("tool/result", {"message": message}, surfaceOp="append")
    counter = counted(log)
    assert counter.denied == 1 and (counter.recent[0].turn, counter.recent[0].step) == (1, 1)
