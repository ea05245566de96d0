"""Report writers: the model-written request and retries (seed 001 §2.c), and the extractive writer's budget."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_rewind_support import FakeFactory, FakeModel, reply, text, tool_call

from core.policies.report import (
    NO_ROUTE,
    ExtractiveReportWriter,
    ModelReportWriter,
    ReportError,
    ReportRequest,
    default_writer,
    fit_report,
    header_route,
    instruction_text,
    render_report,
    skeleton,
)
from core.policies.rewind import folded_chars
from core.policies.rewind_config import RewindConfig
from core.shared.chat import Completion, ModelRequest
from core.shared.text import clip, utf16_len

REGION = [
    {
        "id": "a",
        "role": "assistant",
        "content": [tool_call("c1", "bash", '{"command":"ls src"}')],
        "source": {"kind": "model"},
    },
    {
        "id": "r",
        "role": "user",
        "content": [
            {
                "type": "tool-result",
                "toolCallId": "c1",
                "content": [text("main.py\nutil.py\n")],
                "isError": False,
            }
        ],
        "source": {"kind": "tool", "callId": "c1"},
    },
]
TOOLS = [{"name": "bash", "description": "run", "parameters": {"type": "object"}}]


def request(
    language: str = "en", route: tuple[str, str] | None = ("deepseek", "deepseek-chat")
) -> ReportRequest:
    return ReportRequest(REGION, folded_chars(REGION), language, None, "SYSTEM PROMPT", TOOLS, route)


def agent(
    *replies: Completion,
    efforts: tuple[str, ...] = (),
    provider: str = "deepseek",
    model: str = "deepseek-chat",
) -> FakeModel:
    """The agent's own model (the route of ``request()``'s session header)."""
    return FakeModel(provider, model, list(replies), list(efforts))


def test_request_reuses_the_session_prefix_and_ends_with_the_instruction() -> None:
    model = agent(reply("## Findings\n- two files"))
    report = ModelReportWriter(model).write(request())
    assert report == "## Findings\n- two files"
    (sent,) = model.requests
    assert (sent.system, sent.tools, sent.max_tokens, sent.reasoning_effort) == (
        "SYSTEM PROMPT",
        TOOLS,
        1024,
        None,
    )
    assert len(sent.messages) == 3
    assert sent.messages[:2] == REGION
    last = sent.messages[-1]
    assert last["role"] == "user" and last["source"] == {"kind": "plugin", "plugin": "rewind"}
    assert last["content"][0]["text"] == instruction_text("en")
    assert "stand in for those messages" in last["content"][0]["text"]
    for heading in (
        "## Findings",
        "## Files and artifacts",
        "## Decisions",
        "## Open questions",
        "## Next step",
    ):
        assert heading in last["content"][0]["text"]


def test_configured_route_language_and_budget_win() -> None:
    factory = FakeFactory([reply("## 结论\n- 两个文件")])
    config = RewindConfig(
        max_tokens=256,
        summarization_provider="other",
        summarization_model="other-model",
        report_language="zh",
    )
    own = agent()
    ModelReportWriter(own, config, factory).write(request("zh"))
    assert factory.routes == [("other", "other-model")] and own.requests == []
    (sent,) = factory.requests
    assert sent.max_tokens == 256
    assert "代替那些消息" in sent.messages[-1]["content"][0]["text"]
    assert "## 涉及的文件与产物" in sent.messages[-1]["content"][0]["text"]


def test_another_route_without_a_factory_is_refused() -> None:
    config = RewindConfig(summarization_provider="other", summarization_model="other-model")
    with pytest.raises(ReportError) as info:
        ModelReportWriter(agent(reply("r")), config).write(request())
    assert str(info.value) == (
        "rewind summarization route other/other-model is not available: only deepseek/deepseek-chat is "
        "configured and no model factory was given"
    )


def test_the_objective_is_passed_to_the_model() -> None:
    model = agent(reply("r"), provider="p", model="m")
    ModelReportWriter(model).write(
        ReportRequest(REGION, 10, "en", "find the slow query", None, (), ("p", "m"))
    )
    assert model.requests[0].messages[-1]["content"][0]["text"].endswith("find the slow query")


def test_reasoning_is_turned_off_when_the_route_offers_it() -> None:
    model = agent(reply("r"), efforts=("off", "high"))
    ModelReportWriter(model).write(request())
    assert model.requests[0].reasoning_effort == "off"


def test_a_failing_effort_probe_keeps_the_default_reasoning() -> None:
    class Probeless(FakeModel):
        def reasoning_efforts(self) -> list[str]:
            raise RuntimeError("route catalogue unavailable")

    model = Probeless("deepseek", "deepseek-chat", [reply("r")])
    assert ModelReportWriter(model).write(request()) == "r"
    assert model.requests[0].reasoning_effort is None


def test_empty_completion_without_retries_fails() -> None:
    with pytest.raises(ReportError) as info:
        ModelReportWriter(agent(reply("", "stop")), RewindConfig(max_summarization_retries=0)).write(
            request()
        )
    assert (
        str(info.value)
        == "rewind summarization produced no text report content after 0 retries (finish: stop)"
    )


def test_an_empty_then_a_text_completion_succeeds_on_the_second_request() -> None:
    model = agent(reply("  \n"), reply("## Findings\n- ok"))
    assert ModelReportWriter(model).write(request()) == "## Findings\n- ok"
    assert len(model.requests) == 2


def test_exhausted_retries_report_finish_and_usage() -> None:
    usage = {"inputTokens": 900, "outputTokens": 1024, "reasoningTokens": 1024}
    model = agent(*[reply("", "max-tokens", usage) for _ in range(3)])
    with pytest.raises(ReportError) as info:
        ModelReportWriter(model).write(request())
    assert str(info.value) == (
        "rewind summarization produced no text report content after 2 retries "
        "(finish: max-tokens, outputTokens: 1024, reasoningTokens: 1024)"
    )
    assert len(model.requests) == 3

    model = agent(*[reply("", "max-tokens", {"outputTokens": 1024}) for _ in range(3)])
    with pytest.raises(ReportError) as info:
        ModelReportWriter(model).write(request())
    assert str(info.value).endswith("after 2 retries (finish: max-tokens, outputTokens: 1024)")


@pytest.mark.parametrize("finish", ["error", "aborted"])
def test_a_failed_stream_is_not_retried(finish: str) -> None:
    model = agent(Completion([], finish, None, {"message": "boom", "code": "AUTH"}), reply("never"))
    with pytest.raises(ReportError) as info:
        ModelReportWriter(model).write(request())
    assert str(info.value) == f"rewind summarization stream ended with {finish}"
    assert len(model.requests) == 1


def test_a_provider_exception_becomes_a_report_error() -> None:
    class Broken(FakeModel):
        def complete(self, request: ModelRequest, on_chunk: Any = None) -> Completion:
            raise ConnectionError("connection reset")

    with pytest.raises(ReportError, match="request failed: ConnectionError: connection reset"):
        ModelReportWriter(Broken("deepseek", "deepseek-chat", [])).write(request())


def test_a_provider_exception_is_quoted_cut_in_the_report_error() -> None:
    """A provider's exception text went whole into the rewind error the model sees: a failure quoting a 100,000
    character value (or an escape sequence a server sent) put it all there. It is worded as a tool's unexpected
    failure is: its type, and its text quoted at 200 characters."""

    class Broken(FakeModel):
        def complete(self, request: ModelRequest, on_chunk: Any = None) -> Completion:
            raise ValueError("k\x1b[2J\n" + "k" * 100_000)

    with pytest.raises(ReportError) as info:
        ModelReportWriter(Broken("deepseek", "deepseek-chat", [])).write(request())
    said = str(info.value)
    assert said.startswith("rewind summarization request failed: ValueError: k\\u001b[2J\\nkkk"), said[:200]
    assert said.endswith("k…") and len(said) < 300 and "\x1b" not in said, said[:300]


def test_without_a_header_the_agents_own_model_is_used() -> None:
    model = agent(reply("r"), provider="local", model="tiny")
    assert ModelReportWriter(model).write(request(route=None)) == "r"
    assert len(model.requests) == 1


@pytest.mark.parametrize(("provider", "model"), [("", ""), ("x", ""), ("", "m")])
def test_without_any_route_the_writer_refuses_loudly(provider: str, model: str) -> None:
    with pytest.raises(ReportError) as info:
        ModelReportWriter(agent(provider=provider, model=model)).write(request(route=None))
    assert str(info.value) == NO_ROUTE


def test_header_route_needs_both_fields() -> None:
    assert header_route({"config": {"provider": "p", "model": "m"}}) == ("p", "m")
    assert header_route({"config": {"provider": "p"}}) is None
    assert header_route({"config": "{{config}}"}) is None
    assert header_route(None) is None


def test_default_writer_is_extractive_without_a_model() -> None:
    assert default_writer(RewindConfig()).kind == "extractive"
    assert default_writer(RewindConfig(), agent()).kind == "model"


# extractive ----------------------------------------------------------------------------------------------


def _region(calls: list[tuple[str, str, str, bool]], conclusion: str) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = []
    for i, (name, args, output, failed) in enumerate(calls):
        messages.append({"role": "assistant", "content": [tool_call(f"c{i}", name, args)]})
        block = {"type": "tool-result", "toolCallId": f"c{i}", "content": [text(output)], "isError": failed}
        messages.append({"role": "user", "content": [block]})
    messages.append({"role": "assistant", "content": [text(conclusion)]})
    return messages


def test_extractive_report_collects_the_regions_facts() -> None:
    region = _region(
        [
            (
                "bash",
                '{"command":"pytest -x tests/test_io.py"}',
                "FAILED tests/test_io.py::test_read - KeyError: 'size'\nexit code 1",
                True,
            ),
            ("edit_file", '{"path":"core/io.py","old":"a","new":"b"}', "edited", False),
            ("read", '{"file_path":"core/io.py"}', "def read(): ...\n" * 40, False),
            ("bash", '{"command":"pytest -x tests/test_io.py"}', "1 passed in 0.31s", False),
        ],
        "The `KeyError` came from `read_header` ignoring the size field. Fixed it by defaulting to 0. Next, run the full suite.",
    )
    req = ReportRequest(region, folded_chars(region))
    report = ExtractiveReportWriter().write(req)
    assert utf16_len(report) < req.folded_chars
    assert report.startswith("## Findings\n")
    for expected in (
        "`pytest -x tests/test_io.py` → exit 1",
        "`pytest -x tests/test_io.py` → ok",
        "bash: FAILED tests/test_io.py::test_read - KeyError: 'size'",
        "`core/io.py` (edit_file)",
        "`core/io.py` (read)",
        "The `KeyError` came from `read_header` ignoring the size field.",
        "## Next step\n- Next, run the full suite.",
    ):
        assert expected in report
    assert "## Open questions\n(none)" in report


def test_extractive_report_in_chinese_uses_the_chinese_skeleton() -> None:
    region = _region([("bash", '{"command":"ls"}', "a.txt", False)], "只有一个文件。")
    report = ExtractiveReportWriter().write(ReportRequest(region, 10_000, "zh"))
    assert report.startswith("## 结论\n- 只有一个文件。")
    assert "## 下一步\n(none)" in report


def test_a_tiny_region_gets_a_one_line_report_below_its_size() -> None:
    region = _region([("bash", '{"command":"true"}', "", False)], "done")
    req = ReportRequest(region, folded_chars(region))
    report = ExtractiveReportWriter().write(req)
    assert utf16_len(report) < req.folded_chars
    assert not report.startswith("##")


def test_a_zero_char_region_gets_the_bare_skeleton() -> None:
    report = ExtractiveReportWriter().write(ReportRequest([], 0))
    assert report == render_report("en", {})
    assert report.splitlines()[0] == skeleton("en").splitlines()[0]


def test_fit_report_drops_items_that_do_not_fit_and_keeps_later_small_ones() -> None:
    bare = render_report("en", {})
    candidates = [("findings", "x" * 500), ("files", "`a.py` (read)")]
    report = fit_report("en", candidates, utf16_len(bare) + 40)
    assert "x" * 500 not in report and "`a.py` (read)" in report


def test_clip_never_splits_a_surrogate_pair() -> None:
    assert clip("🙂🙂🙂", 4) == "🙂…"
    assert utf16_len(clip("🙂🙂🙂", 4)) == 3
    assert clip("abc", 3) == "abc"
    assert clip("abc", 0) == ""


texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300)


@settings(max_examples=60, deadline=None)
@given(
    calls=st.lists(
        st.tuples(st.sampled_from(["bash", "read", "write_file"]), texts, texts, texts, st.booleans()),
        min_size=1,
        max_size=6,
    ),
    conclusion=texts,
    language=st.sampled_from(["en", "zh"]),
)
def test_the_extractive_report_is_always_shorter_than_a_nonempty_region(
    calls: list[tuple[str, str, str, str, bool]], conclusion: str, language: str
) -> None:
    encoded = [
        (name, json.dumps({"command": cmd, "path": path}), out, bad) for name, cmd, path, out, bad in calls
    ]
    region = _region(encoded, conclusion)
    req = ReportRequest(region, folded_chars(region), language)
    report = ExtractiveReportWriter().write(req)
    assert utf16_len(report) < req.folded_chars
