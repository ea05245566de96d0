"""The rewind planner, the tool surface, the turn guard and the config (seed 001 §2.f cases 9-16)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest
from test_rewind_support import FakeModel, Log, reply, text, tool_call

from core.policies.checkpoint import REWIND_EVENT, active_mark, latest_mark, plan_checkpoint
from core.policies.report import ExtractiveReportWriter, ModelReportWriter, ReportError, ReportRequest
from core.policies.rewind import (
    CHANGED,
    EMPTY_REGION,
    FOLD_IN_PROGRESS,
    GUARD_SOURCE,
    MSG_IN_PROGRESS,
    MSG_NO_CHECKPOINT,
    MSG_NOTHING_AFTER,
    NO_CHECKPOINT,
    REWIND_OUTPUT_SCHEMA,
    SHRINK,
    RewindAborted,
    RewindError,
    fold_lock,
    plan_rewind,
    plan_turn_guard,
    preview_rewind,
    rewind_prompt_section,
    rewind_tool_schema,
)
from core.policies.rewind_config import RewindConfig, validate
from core.read.session import cut_kind
from core.read.summary import summarize
from core.shared.errors import ConfigError

HEADER = {
    "config": {"provider": "deepseek", "model": "deepseek-chat"},
    "system": "You are a coding agent.",
    "tools": [{"name": "bash"}],
}
OUTPUT_23 = "ENOENT: src/missing.ts!"  # 23 chars


@dataclass
class Scripted:
    """A ReportWriter returning fixed text and recording what it was given."""

    report: str
    kind: str = "model"
    requests: list[ReportRequest] = field(default_factory=list)

    def write(self, request: ReportRequest) -> str:
        self.requests.append(request)
        return self.report


def explored(session_id: str = "sess-rewind") -> Log:
    """user "Find the cause", an operator mark, one bash exploration, then the model's rewind call."""
    log = Log(session_id, request_header=HEADER)
    log.user("Find the cause")
    log.extend(plan_checkpoint(log.session, by="operator"))
    log.tool("c1", "bash", "{}", OUTPUT_23)
    log.rewind_call("c2")
    return log


def _code(exc: pytest.ExceptionInfo[RewindError]) -> tuple[str, str]:
    return exc.value.code, str(exc.value)


def test_happy_path_returns_the_seed_result_and_plans_the_replacement() -> None:
    log = explored()
    bash, result_seq = 4, 6
    assert log.session.surface[1:3] == [bash, result_seq]
    plan = plan_rewind(log.session, RewindConfig(), Scripted("## Findings\n- X"))
    assert plan.result == {
        "markId": 1,
        "foldedNodes": 2,
        "start": bash,
        "end": result_seq,
        "foldedChars": 25,
        "reportChars": 15,
    }
    report, fold = plan.events
    assert report["type"] == "user/message"
    assert report["surfaceOp"] == {"op": "replace", "start": bash, "end": result_seq}
    assert report["sourceEventSeqs"] == [bash, result_seq]
    assert report["data"]["source"] == {"kind": "plugin", "plugin": "rewind"}
    assert report["data"]["content"] == [{"type": "text", "text": "## Findings\n- X"}]
    assert fold == {
        "type": REWIND_EVENT,
        "data": {**plan.result, "writer": "model", "by": "model"},
        "ignorable": True,
    }
    log.extend(plan.events)
    messages = log.session.messages()
    assert [m["content"][0].get("text") or m["content"][0]["name"] for m in messages] == [
        "Find the cause",
        "## Findings\n- X",
        "rewind",
    ]
    assert cut_kind(log.session.events[log.session.surface[1]]) == "rewind"
    assert not any(e["type"].startswith("checkpoint/") for e in log.session.events)
    assert active_mark(log.session) is None
    assert latest_mark(log.session).folded_by == log.session.next_seq - 1
    assert summarize(fold) == "rewind mark #1 · 2 nodes · 25 → 15 chars"


def test_folding_the_same_mark_twice_is_rejected_as_empty() -> None:
    log = explored()
    log.extend(plan_rewind(log.session, RewindConfig(), Scripted("## Findings\n- X")).events)
    log.result("c2", "Folded ...")
    log.rewind_call("c3")
    with pytest.raises(RewindError) as info:
        plan_rewind(log.session, RewindConfig(), Scripted("again"))
    assert _code(info) == (EMPTY_REGION, MSG_NOTHING_AFTER)


def test_no_mark_is_no_checkpoint() -> None:
    log = Log(request_header=HEADER)
    log.user("hi")
    log.rewind_call()
    with pytest.raises(RewindError) as info:
        plan_rewind(log.session, RewindConfig(), Scripted("r"))
    assert _code(info) == (NO_CHECKPOINT, MSG_NO_CHECKPOINT)


def test_no_mark_gives_the_seeds_code_and_text_word_for_word() -> None:
    # Seed 001 §2.b: the literal code and text, not the module's own constants (a changed constant must fail).
    log = Log(request_header=HEADER)
    log.user("hi")
    log.rewind_call()
    before = log.session.next_seq
    with pytest.raises(RewindError) as info:
        plan_rewind(log.session, RewindConfig(), Scripted("r"))
    assert _code(info) == (
        "NO_CHECKPOINT",
        "rewind: no checkpoint mark found for this session; call `checkpoint` before exploring",
    )
    assert log.session.next_seq == before  # nothing was written


def test_a_held_lock_rejects_the_fold_and_writes_nothing() -> None:
    log = explored()
    writer = Scripted("r")
    with fold_lock(log.session.id), pytest.raises(RewindError) as info:
        plan_rewind(log.session, RewindConfig(), writer)
    assert _code(info) == (FOLD_IN_PROGRESS, MSG_IN_PROGRESS)
    assert writer.requests == []
    assert plan_rewind(log.session, RewindConfig(), writer).result["markId"] == 1  # lock released


def test_a_concurrent_fold_on_another_thread_is_rejected() -> None:
    log = explored("sess-concurrent")
    entered, release = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    class Blocking:
        kind = "model"

        def write(self, request: ReportRequest) -> str:
            entered.set()
            release.wait()
            return "short"

    def first() -> None:
        outcome["plan"] = plan_rewind(log.session, RewindConfig(), Blocking())

    worker = threading.Thread(target=first)
    worker.start()
    assert entered.wait(60)
    with pytest.raises(RewindError) as info:
        plan_rewind(log.session, RewindConfig(), Scripted("r"))
    release.set()
    worker.join(60)
    assert info.value.code == FOLD_IN_PROGRESS
    assert outcome["plan"].result["reportChars"] == 5


def test_commit_runs_while_the_fold_lock_is_held() -> None:
    log = explored()
    seen: list[str] = []

    def commit(events: list[dict[str, object]]) -> None:
        with pytest.raises(RewindError) as info:
            plan_rewind(log.session, RewindConfig(), Scripted("r"))
        seen.append(info.value.code)
        log.extend(events)

    plan = plan_rewind(log.session, RewindConfig(), Scripted("r"), commit=commit)
    assert seen == [FOLD_IN_PROGRESS]
    assert log.session.events[-1]["type"] == REWIND_EVENT and log.session.events[-1]["data"]["markId"] == 1
    assert plan.result["reportChars"] == 1 and active_mark(log.session) is None


def test_other_sessions_fold_independently() -> None:
    a, b = explored("sess-a"), explored("sess-b")
    with fold_lock(a.session.id):
        assert plan_rewind(b.session, RewindConfig(), Scripted("r")).result["markId"] == 1


def test_a_report_that_does_not_shrink_fails_and_the_mark_stays_retryable() -> None:
    log = Log(request_header=HEADER)
    log.user("Find the cause")
    log.extend(plan_checkpoint(log.session))
    log.tool("c1", "bash", "{}", "twelve chars")  # 2 + 12 = 14 chars
    log.rewind_call()
    events_before = log.session.next_seq
    with pytest.raises(RewindError) as info:
        plan_rewind(log.session, RewindConfig(), Scripted("x" * 200))
    assert _code(info) == (
        SHRINK,
        "rewind summary (200 chars) is not smaller than the folded region (14 chars over 2 nodes)",
    )
    assert log.session.next_seq == events_before
    assert active_mark(log.session) is not None
    assert plan_rewind(log.session, RewindConfig(), Scripted("ok")).result["reportChars"] == 2


def test_an_empty_assistant_message_counts_as_a_node_but_sends_nothing() -> None:
    log = Log(request_header=HEADER)
    log.user("hi")
    log.extend(plan_checkpoint(log.session))
    log.assistant()  # max-tokens usage holder: empty content
    log.rewind_call()
    writer = Scripted("a report longer than nothing")
    plan = plan_rewind(log.session, RewindConfig(), writer)
    assert plan.result["foldedNodes"] == 1
    assert plan.result["foldedChars"] == 0  # shrink check skipped
    assert writer.requests[0].messages == []


def test_empty_arguments_and_empty_output_fold_zero_chars() -> None:
    log = Log(request_header=HEADER)
    log.user("hi")
    log.extend(plan_checkpoint(log.session))
    log.tool("c1", "noop", "", "")
    log.rewind_call()
    plan = plan_rewind(log.session, RewindConfig(), Scripted("much longer than the region"))
    assert (plan.result["foldedNodes"], plan.result["foldedChars"]) == (2, 0)


def test_folded_chars_count_utf16_units_of_text_reasoning_arguments_and_results() -> None:
    log = Log(request_header=HEADER)
    log.user("hi")
    log.extend(plan_checkpoint(log.session))
    log.assistant({"type": "reasoning", "text": "🙂ab"}, text("héllo"), tool_call("c1", "read", '{"p":"x"}'))
    log.call("c1", "read")
    log.result("c1", "𝄞")
    log.rewind_call()
    # reasoning 4 (surrogate pair) + text 5 + arguments 9 + result 2 (surrogate pair)
    assert preview_rewind(log.session).folded_chars == 20


def test_region_change_during_the_report_is_detected() -> None:
    log = explored()

    class Moving:
        kind = "model"

        def write(self, request: ReportRequest) -> str:
            log.result("c2", "interrupted")
            log.assistant(text("I changed my mind"))
            return "r"

    before = log.session.surface[:]
    with pytest.raises(RewindError) as info:
        plan_rewind(log.session, RewindConfig(), Moving())
    assert info.value.code == CHANGED
    assert [s for s in log.session.surface if s in before] == before


def test_abort_before_or_during_the_report_plans_nothing() -> None:
    log = explored()
    abort = threading.Event()
    abort.set()
    writer = Scripted("r")
    with pytest.raises(RewindAborted):
        plan_rewind(log.session, RewindConfig(), writer, abort=abort)
    assert writer.requests == []

    late = threading.Event()

    class Aborting:
        kind = "model"

        def write(self, request: ReportRequest) -> str:
            late.set()
            return "r"

    with pytest.raises(RewindAborted):
        plan_rewind(log.session, RewindConfig(), Aborting(), abort=late)
    assert active_mark(log.session) is not None


def test_report_failures_propagate_and_leave_the_mark_active() -> None:
    log = explored()
    model = FakeModel("deepseek", "deepseek-chat", [reply("")])
    writer = ModelReportWriter(model, RewindConfig(max_summarization_retries=0))
    with pytest.raises(ReportError, match="no text report"):
        plan_rewind(log.session, writer.config, writer)
    assert active_mark(log.session) is not None


def test_model_written_fold_end_to_end_uses_the_session_route() -> None:
    log = explored()
    model = FakeModel("deepseek", "deepseek-chat", [reply(""), reply("## Findings\n- no file")])
    config = RewindConfig()
    plan = plan_rewind(log.session, config, ModelReportWriter(model, config), by="operator")
    assert len(model.requests) == 2
    assert model.requests[0].system == HEADER["system"] and model.requests[0].tools == HEADER["tools"]
    assert plan.events[1]["data"]["by"] == "operator"
    assert plan.writer == "model"


def test_extractive_fold_end_to_end_is_shorter_than_the_region() -> None:
    log = Log(request_header=HEADER)
    log.user("Why does the build fail?")
    log.extend(plan_checkpoint(log.session, "find why the build fails"))
    log.tool(
        "c1",
        "bash",
        '{"command":"make build"}',
        "src/parser.c:41: error: expected ';'\nmake: *** Error 2\nexit code 2",
        True,
    )
    log.tool("c2", "read", '{"path":"src/parser.c"}', "int main() {\n  return 0\n}\n" * 20)
    log.assistant(
        text("The build fails because `parse_header` in src/parser.c is missing a semicolon at line 41.")
    )
    log.rewind_call()
    plan = plan_rewind(log.session, RewindConfig(), ExtractiveReportWriter())
    assert plan.writer == "extractive"
    assert plan.result["reportChars"] < plan.result["foldedChars"]
    assert "`make build` → exit 2" in plan.report
    assert "`src/parser.c` (read)" in plan.report
    assert "missing a semicolon" in plan.report


def test_tool_schema_output_schema_and_render_strings() -> None:
    schema = rewind_tool_schema(RewindConfig(tool_name="fold_now"))
    assert schema["name"] == "fold_now"
    assert schema["parameters"]["type"] == "object"
    assert schema["parameters"]["properties"]["markId"]["type"] == "integer"
    assert "required" not in schema["parameters"]  # a call without arguments is the seed's call
    assert REWIND_OUTPUT_SCHEMA["required"] == [
        "markId",
        "foldedNodes",
        "start",
        "end",
        "foldedChars",
        "reportChars",
    ]
    assert REWIND_OUTPUT_SCHEMA["additionalProperties"] is False
    one = {"markId": 1, "foldedNodes": 1, "start": 4, "end": 4, "foldedChars": 10, "reportChars": 3}
    assert summarize({"type": REWIND_EVENT, "data": one}) == "rewind mark #1 · 1 node · 10 → 3 chars"  # was 1 nodes
    section = rewind_prompt_section(RewindConfig(tool_name="fold_now"))
    assert "`checkpoint`" in section and "`fold_now`" in section


def test_turn_guard_reminds_once_per_turn_while_a_mark_is_active() -> None:
    log = Log(request_header=HEADER)
    log.user("explore")
    assert plan_turn_guard(log.session, 1, RewindConfig()) == []
    log.extend(plan_checkpoint(log.session))
    (reminder,) = plan_turn_guard(log.session, 1, RewindConfig(tool_name="fold_now"))
    assert reminder["type"] == "user/message" and reminder["surfaceOp"] == "append"
    assert reminder["data"]["source"] == GUARD_SOURCE
    assert "`fold_now`" in reminder["data"]["content"][0]["text"]
    log.extend([reminder])
    assert not log.session.cuts  # appended: no rewind report took anything's place
    assert plan_turn_guard(log.session, 1, RewindConfig()) == []

    log.turn_end()
    log.turn_start()
    assert len(plan_turn_guard(log.session, 2, RewindConfig())) == 1  # still active in the next turn

    log.add(REWIND_EVENT, {"markId": 0}, ignorable=True)  # names an older mark: changes nothing
    assert len(plan_turn_guard(log.session, 2, RewindConfig())) == 1
    log.add(REWIND_EVENT, {"markId": 1}, ignorable=True)
    assert plan_turn_guard(log.session, 2, RewindConfig()) == []


def test_config_defaults_and_overrides() -> None:
    config = validate({})
    assert (config.max_tokens, config.max_summarization_retries, config.report_language) == (1024, 2, "en")
    assert config.summarization_route() is None
    custom = validate(
        {
            "maxTokens": 256,
            "reportLanguage": "zh",
            "summarizationProvider": "other",
            "summarizationModel": "other-model",
            "toolName": "fold",
        }
    )
    assert (custom.max_tokens, custom.report_language, custom.tool_name) == (256, "zh", "fold")
    assert custom.summarization_route() == ("other", "other-model")
    with pytest.raises(ConfigError, match="needs both keys"):
        validate({"summarizationProvider": "only-one"})
    assert validate({"maxTokens": 512.0}).max_tokens == 512
    assert custom.to_dict()["maxTokens"] == 256


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"maxTokens": 0}, "rewind.maxTokens must be an integer from 1 to 9007199254740991 (got 0)"),
        ({"maxTokens": True}, "rewind.maxTokens must be an integer"),
        ({"maxTokens": 1.5}, "rewind.maxTokens must be an integer"),
        (
            {"maxSummarizationRetries": 9},
            "rewind.maxSummarizationRetries must be an integer from 0 to 8 (got 9)",
        ),
        ({"reportLanguage": "fr"}, 'rewind.reportLanguage must be one of en, zh (got "fr")'),
        ({"summarizationModel": 3}, "rewind.summarizationModel must be a string (got 3)"),
        ({"toolName": ""}, "rewind.toolName must be a non-empty name"),
        ({"toolName": "fold back"}, "rewind.toolName must be 1 to 64 letters, digits, '_' or '-'"),
        ({"toolName": "x" * 65}, "rewind.toolName must be 1 to 64 letters, digits, '_' or '-'"),
        ({"maxToken": 5}, "Unknown rewind configuration key maxToken. Did you mean maxTokens?"),
    ],
)
def test_config_errors_name_the_key(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        validate(raw)
    assert str(info.value).startswith(message)
