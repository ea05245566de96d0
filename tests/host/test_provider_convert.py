"""DSH → chat-completions conversion: tool pairing (and its repair), reasoning, usage; real fixture surfaces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.read.load import load_session
from core.shared.wire import (
    UNANSWERED_CALL,
    to_openai_messages,
    to_openai_tools,
    usage_from_openai,
)
from tests.messages import tool_result_message


def user(text: str) -> dict[str, Any]:
    return {
        "id": text,
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "source": {"kind": "user"},
    }


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"id": "a", "role": "assistant", "content": list(blocks), "source": {"kind": "model"}}


def call(call_id: str, name: str = "bash", arguments: str = "{}") -> dict[str, Any]:
    return {"type": "tool-call", "id": call_id, "name": name, "arguments": arguments}


def _check_pairing(messages: list[dict[str, Any]]) -> None:
    """The chat-completions rule: tool messages answer exactly the calls of the assistant message before them."""
    pending: list[str] = []
    for m in messages:
        if m["role"] == "tool":
            assert m["tool_call_id"] in pending, m
            pending.remove(m["tool_call_id"])
            continue
        assert not pending, f"{m['role']} message while calls {pending} are unanswered"
        if m["role"] == "assistant":
            pending = [c["id"] for c in m.get("tool_calls", [])]
    assert not pending


def test_plain_dialogue() -> None:
    out = to_openai_messages("sys", [user("hi"), assistant({"type": "text", "text": "hello"}), user("bye")])
    assert out == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "bye"},
    ]


def test_reasoning_only_kept_with_tool_calls() -> None:
    out = to_openai_messages(
        None,
        [
            user("go"),
            assistant({"type": "reasoning", "text": "plan"}, call("c1")),
            tool_result_message("c1", "ok"),
            assistant({"type": "reasoning", "text": "wrap up"}, {"type": "text", "text": "done"}),
        ],
    )
    assert out[1]["reasoning_content"] == "plan"
    assert out[3] == {"role": "assistant", "content": "done"}


def test_parallel_calls_and_results_in_any_order() -> None:
    out = to_openai_messages(
        None,
        [
            user("go"),
            assistant(call("c1"), call("c2")),
            tool_result_message("c2", "two"),
            tool_result_message("c1", "one"),
        ],
    )
    assert [(m["role"], m.get("tool_call_id")) for m in out] == [
        ("user", None),
        ("assistant", None),
        ("tool", "c2"),
        ("tool", "c1"),
    ]
    _check_pairing(out)


def test_user_message_between_call_and_result_waits() -> None:
    out = to_openai_messages(
        None, [user("go"), assistant(call("c1")), user("runtime context"), tool_result_message("c1", "ok")]
    )
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "user"]
    assert out[3]["content"] == "runtime context"
    _check_pairing(out)


def test_unanswered_call_gets_an_error_result() -> None:
    out = to_openai_messages(
        None, [user("go"), assistant(call("c1")), user("next"), assistant({"type": "text", "text": "x"})]
    )
    assert out[2] == {"role": "tool", "tool_call_id": "c1", "content": UNANSWERED_CALL}
    assert out[3] == {"role": "user", "content": "next"}
    _check_pairing(out)


def test_orphan_result_becomes_user_text() -> None:
    out = to_openai_messages(
        None, [user("report of the rewound work"), tool_result_message("gone", "old output")]
    )
    assert out[-1] == {"role": "user", "content": "[result of earlier tool call gone]\nold output"}
    _check_pairing(out)


def test_empty_assistant_and_images() -> None:
    image = {"type": "image", "attachment": {"attachmentId": "sha256:00", "name": "shot.png"}}
    msg = {
        "id": "u",
        "role": "user",
        "content": [{"type": "text", "text": "see"}, image],
        "source": {"kind": "user"},
    }
    out = to_openai_messages(None, [msg, assistant({"type": "reasoning", "text": "hm"})])
    assert out == [{"role": "user", "content": "see\n[shot.png omitted: images are not sent to this model]"}]


@pytest.mark.parametrize(
    "name",
    [
        "tool-call-turn",
        "multi-turn",
        "cancel-tool-calls",
        "code-mode-turn",
        "bash-spill",
        "compaction-recovery",
    ],
)
def test_fixture_surfaces_convert_to_valid_pairing(fixtures_dir: Path, name: str) -> None:
    session = load_session(fixtures_dir / f"{name}.session.jsonl")
    messages = session.messages()
    out = to_openai_messages("system", messages)
    _check_pairing(out)
    calls = sum(1 for m in messages for b in m.get("content", []) if b.get("type") == "tool-call")
    assert sum(len(m.get("tool_calls", [])) for m in out) == calls


def test_tools_and_usage() -> None:
    assert to_openai_tools([{"name": "t", "description": "d"}]) == [
        {
            "type": "function",
            "function": {"name": "t", "description": "d", "parameters": {"type": "object", "properties": {}}},
        }
    ]
    assert usage_from_openai({"prompt_tokens": 9, "completion_tokens": 2}) == {
        "inputTokens": 9,
        "outputTokens": 2,
    }
    assert usage_from_openai({"prompt_tokens": 9, "completion_tokens": 2, "prompt_cache_hit_tokens": 0}) == {
        "inputTokens": 9,
        "outputTokens": 2,
        "cacheReadTokens": 0,
    }


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**80), 2**80) | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
_USAGE_KEYS = st.sampled_from(
    [
        "prompt_tokens",
        "completion_tokens",
        "prompt_cache_hit_tokens",
        "prompt_tokens_details",
        "completion_tokens_details",
        "cached_tokens",
        "reasoning_tokens",
        "total_tokens",
    ]
)


@settings(max_examples=300, derandomize=True)
@given(raw=st.dictionaries(_USAGE_KEYS, _JSON | st.dictionaries(_USAGE_KEYS, _JSON, max_size=3), max_size=6))
def test_any_usage_a_server_sends_becomes_counts_the_log_can_hold(raw: dict[str, Any]) -> None:
    """A server's usage is bytes tapedeck did not write: a count past 64 bits went into the step's usage and the
    host's next event failed to write (TypeError out of 'tapedeck run'); a negative one came out negative."""
    usage = usage_from_openai(raw)
    assert all(type(v) is int and 0 <= v < 2**63 for v in usage.values()), usage
    orjson.dumps(usage)
