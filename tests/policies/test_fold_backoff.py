"""Per-resource backoff: the fold stops for a resource once the model keeps expanding its folds in full."""

from __future__ import annotations

from test_fold_support import BIG, BackoffRun, Log

from core.policies.fold import BACKED_OFF, FOLD, backoff_scope, plan_fold, preview_fold
from core.policies.slice_config import SliceConfig, validate

DEFAULT = SliceConfig()


Run = BackoffRun


def test_two_full_expansions_back_off_that_path_only() -> None:
    run = Run()
    run.read("a.md")
    run.read("a.md", offset=200)
    assert run.folds  # the second read of a.md folded too
    run.expand(turn=1, step=1, call=1)
    run.expand(turn=1, step=2, call=1)
    third = run.read("a.md", offset=400)
    assert run.folds == []
    assert run.status_of(third) == BACKED_OFF
    other = run.read("b.md")
    assert [e["sourceEventSeqs"] for e in run.folds] == [[other]]


def test_one_expansion_is_not_enough_with_the_default_threshold() -> None:
    run = Run()
    run.read("a.md")
    run.expand(turn=1, step=1, call=1)
    run.read("a.md")
    assert len(run.folds) == 1


def test_partial_expansions_do_not_count() -> None:
    run = Run()
    run.read("a.md")
    run.read("a.md")
    run.expand(turn=1, step=1, call=1, grep="row 5")
    run.expand(turn=1, step=2, call=1, lines="1-20")
    run.read("a.md")
    assert len(run.folds) == 1


def test_blank_grep_and_malformed_lines_are_full_expansions() -> None:
    run = Run()
    run.read("a.md")
    run.read("a.md")
    run.expand(turn=1, step=1, call=1, grep="   ")
    run.expand(turn=1, step=2, call=1, lines="first ten")
    run.read("a.md")
    assert run.folds == []


def test_repeated_expansions_of_the_same_result_count_once() -> None:
    run = Run()
    run.read("a.md")
    run.read("a.md")
    run.expand(turn=1, step=1, call=1)
    run.expand(turn=1, step=1, call=1)
    run.expand(turn="1", step=1.0, call=1)  # the same address spelled the way JavaScript would coerce it
    run.read("a.md")
    assert len(run.folds) == 1


def test_an_address_counts_as_the_tool_reads_it() -> None:
    """expand_result reads its turn, step and call as JavaScript's Number does ('2.0', ' 1 ', '1e0' are 2, 1 and 1),
    but the fold counted an expansion only where each was an integer or a string of digits: two full expansions so
    spelled (or with a null call, which the tool reads as call 1) were served and never counted, so the fold went on
    folding the file the model kept expanding. Both read an address by one rule (core.shared.values.js_integer)."""
    run = Run()
    run.read("a.md")
    run.read("a.md")
    run.expand(turn="1.0", step=" 1 ", call="1e0")
    run.expand(turn=1, step="2.0", call=None)  # a null call is the first, to the tool
    run.read("a.md")
    assert run.folds == []


def test_expansions_must_cover_half_of_the_folds() -> None:
    run = Run(validate({"fold": {"backoffAfterExpansions": 2}}))
    for _ in range(5):
        run.read("a.md")
    run.expand(turn=1, step=1, call=1)
    run.expand(turn=1, step=2, call=1)  # 2 of 5 folds expanded: under half
    run.read("a.md")
    assert len(run.folds) == 1
    run.expand(turn=1, step=3, call=1)  # 3 of 6
    sixth = run.read("a.md")
    assert run.folds == [] and run.status_of(sixth) == BACKED_OFF


def test_seq_addressed_expansions_need_format_version_4() -> None:
    run = Run()
    first = run.read("a.md")
    second = run.read("a.md")
    fold_of_second = run.log.session().replaced_by[second]
    run.expand(seq=first, formatVersion=3)
    run.expand(seq=first, formatVersion=4)
    run.read("a.md")
    assert len(run.folds) == 1  # one counted expansion so far
    run.expand(seq=fold_of_second, formatVersion=4)  # a fold's own seq resolves to its original
    run.read("a.md")
    assert run.folds == []


def test_failed_or_unfolded_expansions_do_not_count() -> None:
    run = Run()
    run.read("a.md")
    run.read("a.md")
    run.expand(ok=False, turn=1, step=1, call=1)
    run.expand(turn=1, step=2, call=1)
    run.expand(turn=1, step=2, call=1, block=2)
    run.step(("bash", {"command": "true"}, "ok"))
    run.expand(turn=1, step=run.n, call=1)  # that result was never folded
    run.read("a.md")
    assert len(run.folds) == 1


def test_scope_is_the_path_or_the_sorted_arguments() -> None:
    assert backoff_scope("read", {"file_path": "a.md", "offset": 5}) == '["read","path","a.md"]'
    assert backoff_scope("read", {"path": "a.md"}) == '["read","path","a.md"]'
    same = backoff_scope("bash", {"command": "cat x", "cwd": "/"})
    assert (
        same
        == backoff_scope("bash", {"cwd": "/", "command": "cat x"})
        == '["bash","arguments",{"command":"cat x","cwd":"/"}]'
    )
    assert backoff_scope("bash", None) == '["bash","arguments",null]'


def test_argument_scoped_backoff() -> None:
    run = Run()
    bash = ("bash", {"command": "cat big.txt"}, BIG)
    run.step(bash)
    run.step(bash)
    run.expand(turn=1, step=1, call=1)
    run.expand(turn=1, step=2, call=1)
    run.step(bash)
    assert run.folds == []
    run.step(("bash", {"command": "cat other.txt"}, BIG))
    assert len(run.folds) == 1


def test_nested_expansions_in_code_mode_count() -> None:
    run = Run()
    run.read("a.md")
    run.read("a.md")
    log = run.log
    for n in (1, 2):
        run.n += 1
        log.add("step/start", {"turn": 1, "step": run.n})
        log.assistant(1, run.n, calls=[(f"root{n}", "run_code", {"code": "..."})])
        call = log.add(
            "tool/call",
            {"turn": 1, "step": run.n, "callId": f"root{n}", "name": "run_code", "arguments": "{}"},
        )
        log.add(
            "tool/code-dispatch",
            {"rootCallId": f"root{n}", "parentCallId": f"root{n}", "subCallId": f"root{n}:code:1", "name": "expand_result",
             "arguments": {"turn": 1, "step": n, "call": 1}, "isError": False, "content": [{"type": "text", "text": "…"}]},
        )  # fmt: skip
        log.result(1, run.n, f"root{n}", call, [{"type": "text", "text": "printed 1 line"}])
        log.add("step/end", {"turn": 1, "step": run.n})
    run.read("a.md")
    assert run.folds == []


def test_backoff_survives_a_restart() -> None:
    run = Run()
    run.read("a.md")
    run.read("a.md")
    run.expand(turn=1, step=1, call=1)
    run.expand(turn=1, step=2, call=1)
    run.n += 1
    (seq,) = run.log.step(1, run.n, [("read", {"file_path": "a.md"}, BIG)])
    fresh = Log()
    fresh.events = list(run.log.events)
    assert plan_fold(fresh.session(), DEFAULT) == []
    assert run.status_of(seq) == BACKED_OFF
    assert all(r.status != FOLD for r in preview_fold(fresh.session(), DEFAULT))


def test_an_address_int_refuses_is_no_address() -> None:
    """An expansion's seq, turn or step is the model's text: '²' (a digit to isdigit, not to int), a number of more
    digits than Python converts and '٣' (no number to JavaScript's Number) address nothing, and the fold goes on."""
    for bad in ("²", "9" * 5000, "٣"):
        run = Run()
        run.read("a.md")
        run.read("a.md")
        run.expand(seq=bad, formatVersion=4)
        run.expand(turn=bad, step=1, call=1)
        run.expand(turn=1, step=bad, call=1)
        run.read("a.md")
        assert len(run.folds) == 1, bad  # no expansion counted: the path is still folded
