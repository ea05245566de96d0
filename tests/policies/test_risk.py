"""The checkpoint risk router (§4.c): the §4.g routing table, restraint, coverage, controls and bounds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_adaptive_support import add, new_session, start_turn, tool_step

from core.policies.adaptive_config import RiskRouterConfig
from core.policies.risk import (
    PROFILES,
    RISKS,
    RiskDecision,
    bound_text,
    build_evidence,
    evidence_fragments,
    has_failure,
    js_units,
    risk_checkpoint,
    route_risk,
)
from core.read.load import load_session
from core.shared.text import utf16_len


@pytest.mark.parametrize(
    ("task_class", "request_text", "expected"),
    [
        ("small", "修复 parser 对空输入的校验逻辑", "boundary"),
        ("small", "Handle invalid input in the request parser", "boundary"),
        ("small", "修复重试逻辑，失败后不能重复发送请求", "retry"),
        ("large", "Implement retry policy with idempotent side effects", "retry"),
        ("large", "修复队列并发时的乱序竞态", "concurrency"),
        ("large", "Prevent the worker deadlock and lock ordering issue", "concurrency"),
        ("large", "数据库迁移后需要支持重启恢复状态", "persistence"),
        ("frontend", "Keep the theme persisted in localStorage after reload", "persistence"),
        ("small", "阻止下载接口中的路径穿越", "security"),
        ("large", "Validate the token permission boundary to prevent auth bypass", "security"),
        ("large", "配置 schema 升级必须保持向后兼容", "compatibility"),
        ("small", "Avoid a breaking change in the public API wire format", "compatibility"),
        ("frontend", "实现表单的键盘导航和无障碍焦点管理", "frontend"),
        ("frontend", "Fix responsive layout horizontal overflow", "frontend"),
        ("large", "中止任务时必须清理监听器，避免资源泄漏", "resource"),
        ("small", "Terminate the orphan process and dispose handles after abort", "resource"),
        ("batch", "批量迁移所有文件并校验汇总计数，不能遗漏", "batch-integrity"),
        (
            "batch",
            "Codemod all files while preserving the aggregate after partial failure",
            "batch-integrity",
        ),
    ],
)
def test_routing_table(task_class: str, request_text: str, expected: str) -> None:
    decision = route_risk(task_class, request_text)
    assert (decision.risk, decision.reason) == (expected, "selected")
    assert decision.score >= 4


def test_one_winner_among_several_risks() -> None:
    text = "Fix retry idempotency and also prevent path traversal token leaks at the permission boundary"
    decision = route_risk("small", text)
    assert (decision.risk, decision.reason) == ("security", "selected")


def test_covered_top_risk_falls_through_to_the_next() -> None:
    text = "Fix retry idempotency and prevent path traversal token leaks at the permission boundary"
    decision = route_risk("small", text, "✓ path traversal security permission test passed")
    assert (decision.risk, decision.reason) == ("retry", "selected")


def test_a_failed_tool_result_can_name_the_risk() -> None:
    evidence = "[tool error]\nFAIL: race condition detected while ordering two workers"
    decision = route_risk("large", "Refactor worker scheduling", evidence)
    assert (decision.risk, decision.reason) == ("concurrency", "selected")
    assert route_risk("large", "Refactor worker scheduling").reason == "low-confidence"


@pytest.mark.parametrize(
    ("task_class", "request_text"),
    [
        ("small", "修复 README 中 retry 的拼写错误"),
        ("small", "Rename timeoutLabel in src/view.ts"),
        ("frontend", "Build a static hero page with warm colors"),
        ("large", "Refactor the internal architecture without behavior changes"),
        ("small", "Change the button color to blue"),
        ("small", "Process the text and close the issue"),
        ("frontend", "Write documentation for the authentication UI"),
        ("small", "Update a comment mentioning an empty input"),
    ],
)
def test_restraint(task_class: str, request_text: str) -> None:
    decision = route_risk(task_class, request_text)
    assert decision.risk is None and decision.reason == "low-confidence"


def test_documentation_only_needs_no_runtime_target() -> None:
    assert route_risk("small", "修复 README 中 retry 的拼写错误").score == 0
    assert route_risk("small", "Fix the retry logic in README and src/retry.ts").risk == "retry"


def test_read_tasks_never_get_a_check() -> None:
    decision = route_risk("read", "审查认证绕过与路径穿越风险，不要修改")
    assert (decision.risk, decision.score, decision.reason) == (None, 0, "read-only")


def test_unrelated_failures_stay_low_confidence() -> None:
    one = route_risk("small", "Update the title text", "[tool error]\nSnapshot test failed: expected title A")
    two = route_risk(
        "small",
        "Update the title text",
        "[tool result]\nREADME mentions retry\n[tool error]\nSnapshot failed: title mismatch",
    )
    assert (one.risk, one.reason) == (None, "low-confidence")
    assert (two.risk, two.reason) == (None, "low-confidence")


@pytest.mark.parametrize(
    "evidence",
    [
        "✓ retry timeout idempotency test passed",
        "retry policy spec: 12 passed, 0 failed",
        "重试与幂等测试通过",
    ],
)
def test_recent_passing_check_covers_the_risk(evidence: str) -> None:
    decision = route_risk("small", "修复重试逻辑并保证幂等", evidence)
    assert (decision.risk, decision.reason) == (None, "already-covered")
    assert decision.score >= 4


def test_a_failing_named_check_is_not_coverage() -> None:
    decision = route_risk("small", "修复重试逻辑并保证幂等", "retry timeout idempotency spec FAILED")
    assert (decision.risk, decision.reason) == ("retry", "selected")


def test_controls() -> None:
    request = "Prevent path traversal in the file API"
    assert route_risk("small", request, config=RiskRouterConfig(enabled=False)).reason == "disabled"
    high = route_risk("small", request, config=RiskRouterConfig(minimum_score=20))
    assert (high.risk, high.reason) == (None, "low-confidence")
    evidence = "✓ path traversal security test passed"
    assert route_risk("small", request, evidence).reason == "already-covered"
    assert route_risk("small", request, evidence, RiskRouterConfig(skip_covered=False)).risk == "security"


def test_inputs_are_bounded_before_matching() -> None:
    decision = route_risk(
        "small",
        "request " * 20_000 + "prevent path traversal",
        "result " * 30_000 + "security test failed with path traversal",
        RiskRouterConfig(max_request_chars=512, max_evidence_chars=768),
    )
    assert decision.risk == "security"
    assert decision.request_chars_inspected <= 512 and decision.evidence_chars_inspected <= 768


def test_checkpoint_sentences_ask_for_one_bounded_check() -> None:
    assert tuple(p.risk for p in PROFILES) == RISKS and len(RISKS) == 9
    for risk in RISKS:
        text = risk_checkpoint(risk)
        assert re.search(r"(?:at most one|Use one)", text), risk
        assert utf16_len(text) < 260
    with pytest.raises(ValueError, match="unknown risk 'speed'"):
        risk_checkpoint("speed")


# ------------------------------------------------------------------------------------- JavaScript semantics
def test_wildcard_spans_utf16_units() -> None:
    # `token.{0,36}leak`: 18 astral characters are 36 units (a match), 19 are 38 (none).
    assert route_risk("small", "token" + "😀" * 18 + "leak").risk == "security"
    assert route_risk("small", "token" + "😀" * 19 + "leak").reason == "low-confidence"


def test_wildcard_does_not_cross_line_terminators() -> None:
    assert route_risk("large", "retry the job logic").risk == "retry"
    for separator in ("\r", "\n", "\u2028"):
        assert route_risk("large", f"retry{separator}logic").reason == "low-confidence", repr(separator)


def test_word_boundaries_are_ascii() -> None:
    # `\bcomments?\b` next to CJK text: a boundary in JavaScript, none under Unicode rules.
    assert route_risk("small", "更新comment里的 retry 拼写").score == 0


def test_bound_text_keeps_head_and_tail() -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(100))
    bounded = bound_text(text, 20)
    assert bounded == text[:12] + "\n…\n" + text[-5:] and len(bounded) == 20
    assert bound_text(text, 3) == "abc" and bound_text(text, 100) == text
    # A cut splits a surrogate pair exactly as JavaScript's slice does.
    assert bound_text("😀" * 10, 5) == "\ud83d\n…\n\ude00"
    assert js_units("a😀") == "a\ud83d\ude00"


def test_failure_cues_ignore_zero_counts() -> None:
    assert not has_failure("retry spec: 12 passed, 0 failed")
    assert not has_failure("zero errors, all good")
    assert not has_failure("测试没有失败")
    assert has_failure("1 failed") and has_failure("Error: boom") and has_failure("执行超时")
    assert not has_failure("errorless")


def test_fragments_split_per_result() -> None:
    evidence = "[tool result]\nalpha\n\nbeta\n[TOOL ERROR]\ngamma"
    fragments = evidence_fragments(evidence)
    assert fragments == [
        "[tool result]",
        "alpha",
        "beta",
        "[tool result] alpha beta ",
        "[TOOL ERROR]",
        "gamma",
        "[TOOL ERROR] gamma",
    ]
    windows = [f for f in evidence_fragments("x" * 800) if len(f) > 1]
    assert [len(w) for w in windows] == [800, 360, 360, 320, 80]


def test_decision_round_trips_through_the_log() -> None:
    decision = route_risk("small", "修复重试逻辑")
    assert RiskDecision.from_dict(decision.to_dict()) == decision
    assert RiskDecision.from_dict({"risk": "speed", "score": 1, "reason": "selected"}) is None


# ------------------------------------------------------------------------------------------- evidence
def test_evidence_is_the_newest_eight_results_bounded() -> None:
    session = new_session()
    start_turn(session, 1, "fix it")
    for step in range(1, 6):
        tool_step(session, 1, step, [f"old-{step}-a", (f"err-{step}-b", True)])
    evidence = build_evidence(session, 8192)
    pieces = evidence.split("\n")
    assert pieces[:4] == ["[tool error]", "err-5-b", "[tool result]", "old-5-a"]
    assert "old-2-a" in evidence and "err-1-b" not in evidence and "old-1-a" not in evidence
    assert evidence.count("[tool ") == 8


def test_evidence_budget_and_piece_bounds() -> None:
    session = new_session()
    start_turn(session, 1, "go")
    tool_step(session, 1, 1, ["A" * 500])
    tool_step(session, 1, 2, ["B" * 5000])
    evidence = build_evidence(session, 300)
    assert utf16_len(evidence) <= 300
    newest, _, rest = evidence.partition("\n…\n")
    assert newest == "[tool result]\n" + "B" * (300 - 14 - 71 - 3)
    assert rest == "B" * 71
    assert build_evidence(session, 15) == "[tool result]\nB"
    assert build_evidence(session, 14) == ""


def test_evidence_reads_originals_not_replacements() -> None:
    session = new_session()
    start_turn(session, 1, "go")
    [seq] = tool_step(session, 1, 1, ["RAW " * 10])
    original = session.events[seq]
    block = original["data"]["message"]["content"][0]
    message = {
        **original["data"]["message"],
        "content": [{**block, "content": [{"type": "text", "text": "PRUNED"}]}],
    }
    add(
        session,
        "tool/result",
        {**original["data"], "message": message},
        surfaceOp={"op": "replace", "start": seq, "end": seq},
        sourceEventSeqs=[seq],
    )
    assert build_evidence(session, 1000) == "[tool result]\n" + "RAW " * 10


def test_evidence_from_real_dsh_logs(fixtures_dir: Path) -> None:
    cancel = load_session(fixtures_dir / "cancel-tool-calls.session.jsonl")
    assert build_evidence(cancel, 8192).startswith("[tool error]\nError: tool call aborted")
    spill = build_evidence(load_session(fixtures_dir / "bash-spill.session.jsonl"), 200)
    assert spill.startswith("[tool result]\nSPILL_START") and utf16_len(spill) <= 200
    assert build_evidence(load_session(fixtures_dir / "multi-turn.session.jsonl"), 8192) == ""
