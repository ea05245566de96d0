"""The openai provider through the real ``openai`` client against a loopback streaming server."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from core.host.providers import OpenAIProvider, RetryNotice, RetryPolicy, make_provider
from core.host.providers.errors import ProviderError
from core.shared.chat import ModelRequest
from core.shared.model_specs import price_for
from tests.host.sse_server import ChatServer, Reply, chunk, error_reply, text_reply, tool_delta

KEY = "sk-test-not-a-real-key"
USER = {"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as srv:
        yield srv


class Recorder:
    """Collects chunks, retry notices and sleeps."""

    def __init__(self) -> None:
        self.chunks: list[dict[str, Any]] = []
        self.notices: list[RetryNotice] = []
        self.sleeps: list[float] = []


def _provider(server: ChatServer, rec: Recorder, **kw: Any) -> OpenAIProvider:
    kw.setdefault("retry", RetryPolicy(max_retries=3, jitter=0.0))
    return OpenAIProvider(
        api_key=KEY,
        model="deepseek-chat",
        base_url=server.base_url,
        on_retry=rec.notices.append,
        sleep=rec.sleeps.append,
        **kw,
    )


def _call(provider: OpenAIProvider, rec: Recorder, request: ModelRequest | None = None) -> Any:
    return provider.complete(request or ModelRequest(messages=[USER]), rec.chunks.append)


def test_streams_reasoning_text_and_usage(server: ChatServer) -> None:
    server.push(
        Reply(
            [
                chunk({"role": "assistant", "content": None, "reasoning_content": "Let me "}),
                chunk({"reasoning_content": "think."}),
                chunk({"content": "Hello"}),
                chunk({"content": " there"}),
                chunk(finish="stop"),
                chunk(
                    usage={
                        "prompt_tokens": 100,
                        "completion_tokens": 20,
                        "total_tokens": 120,
                        "prompt_cache_hit_tokens": 64,
                        "prompt_cache_miss_tokens": 36,
                        "completion_tokens_details": {"reasoning_tokens": 7},
                    }
                ),
            ]
        )
    )
    rec = Recorder()
    completion = _call(_provider(server, rec), rec)
    usage = {"inputTokens": 36, "outputTokens": 20, "cacheReadTokens": 64, "reasoningTokens": 7}
    assert rec.chunks == [
        {"type": "block-start", "index": 0, "blockType": "reasoning"},
        {"type": "reasoning-delta", "index": 0, "text": "Let me "},
        {"type": "reasoning-delta", "index": 0, "text": "think."},
        {"type": "block-start", "index": 1, "blockType": "text"},
        {"type": "text-delta", "index": 1, "text": "Hello"},
        {"type": "text-delta", "index": 1, "text": " there"},
        {"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": "Let me think."}},
        {"type": "block-end", "index": 1, "block": {"type": "text", "text": "Hello there"}},
        {"type": "usage", "usage": usage},
        {"type": "finish", "reason": {"kind": "stop"}},
    ]
    assert completion.finish == "stop"
    assert completion.text == "Hello there"
    assert completion.content == [
        {"type": "reasoning", "text": "Let me think."},
        {"type": "text", "text": "Hello there"},
    ]
    assert completion.usage == usage
    assert completion.error is None


def test_openai_style_cached_tokens(server: ChatServer) -> None:
    server.push(
        text_reply(
            "ok",
            usage={
                "prompt_tokens": 50,
                "completion_tokens": 3,
                "prompt_tokens_details": {"cached_tokens": 40},
            },
        )
    )
    rec = Recorder()
    assert _call(_provider(server, rec), rec).usage == {
        "inputTokens": 10,
        "outputTokens": 3,
        "cacheReadTokens": 40,
    }


def test_tool_call_deltas_are_assembled_per_call(server: ChatServer) -> None:
    server.push(
        Reply(
            [
                chunk({"role": "assistant", "content": "Checking."}),
                chunk(tool_delta(0, "", call_id="call_a", name="read_file")),
                chunk(tool_delta(0, '{"path": ')),
                chunk(tool_delta(1, "", call_id="call_b", name="bash")),
                chunk(tool_delta(0, '"README.md"}')),
                chunk(tool_delta(1, '{"command": "ls"}')),
                chunk(finish="tool_calls"),
                chunk(usage={"prompt_tokens": 5, "completion_tokens": 9}),
            ]
        )
    )
    rec = Recorder()
    completion = _call(_provider(server, rec), rec)
    assert completion.finish == "tool-calls"
    assert completion.tool_calls == [
        {"type": "tool-call", "id": "call_a", "name": "read_file", "arguments": '{"path": "README.md"}'},
        {"type": "tool-call", "id": "call_b", "name": "bash", "arguments": '{"command": "ls"}'},
    ]
    deltas = [c for c in rec.chunks if c["type"] == "tool-call-delta"]
    assert [(d["index"], d["id"], d["name"], d["argumentsDelta"]) for d in deltas] == [
        (1, "call_a", "read_file", ""),
        (1, "call_a", "read_file", '{"path": '),
        (2, "call_b", "bash", ""),
        (1, "call_a", "read_file", '"README.md"}'),
        (2, "call_b", "bash", '{"command": "ls"}'),
    ]
    starts = [c for c in rec.chunks if c["type"] == "block-start"]
    assert [s["blockType"] for s in starts] == ["text", "tool-call", "tool-call"]
    assert rec.chunks[-1] == {"type": "finish", "reason": {"kind": "tool-calls"}}


def test_length_finish_is_max_tokens(server: ChatServer) -> None:
    server.push(text_reply("cut", finish="length"))
    rec = Recorder()
    assert _call(_provider(server, rec), rec).finish == "max-tokens"


def test_request_body_in_chat_completions_shape(server: ChatServer) -> None:
    server.push(text_reply("ok"))
    rec = Recorder()
    provider = _provider(server, rec, efforts={"high": {"reasoning_effort": "high"}})
    assistant = {
        "id": "a1",
        "role": "assistant",
        "content": [
            {"type": "reasoning", "text": "need a file"},
            {"type": "tool-call", "id": "c1", "name": "read_file", "arguments": '{"path":"x"}'},
        ],
        "source": {"kind": "model"},
    }
    result = {
        "id": "r1",
        "role": "user",
        "content": [{"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": "X!"}]}],
        "source": {"kind": "tool", "callId": "c1"},
    }
    tool = {"name": "read_file", "description": "read", "parameters": {"type": "object", "properties": {}}}
    request = ModelRequest(
        messages=[USER, assistant, result],
        system="Be brief.",
        tools=[tool],
        max_tokens=256,
        reasoning_effort="high",
    )
    _call(provider, rec, request)
    [got] = server.received
    assert got.path == "/v1/chat/completions"
    assert got.headers["authorization"] == f"Bearer {KEY}"
    body = got.body
    assert body["model"] == "deepseek-chat"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 256
    assert body["reasoning_effort"] == "high"
    assert body["tools"] == [{"type": "function", "function": tool}]
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path":"x"}'},
                }
            ],
            "reasoning_content": "need a file",
        },
        {"role": "tool", "tool_call_id": "c1", "content": "X!"},
    ]
    assert provider.reasoning_efforts() == ["high"]


def test_undeclared_effort_sends_nothing_extra(server: ChatServer) -> None:
    server.push(text_reply("ok"))
    rec = Recorder()
    _call(_provider(server, rec), rec, ModelRequest(messages=[USER], reasoning_effort="max"))
    assert "reasoning_effort" not in server.received[0].body
    assert "tools" not in server.received[0].body
    assert "tool_choice" not in server.received[0].body


def test_finalization_keeps_the_schemas_and_forbids_calls(server: ChatServer) -> None:
    """``tool_choice: none`` goes out beside the unchanged tool list, so the request head stays cacheable."""
    server.push(text_reply("final answer"))
    rec = Recorder()
    tool = {"name": "bash", "description": "run", "parameters": {"type": "object", "properties": {}}}
    _call(_provider(server, rec), rec, ModelRequest(messages=[USER], tools=[tool], tool_choice="none"))
    body = server.received[0].body
    assert body["tool_choice"] == "none"
    assert body["tools"] == [{"type": "function", "function": tool}]


def test_rate_limit_then_success_honours_retry_after(server: ChatServer) -> None:
    server.push(error_reply(429, "slow down", {"retry-after": "2"}), text_reply("done"))
    rec = Recorder()
    completion = _call(_provider(server, rec), rec)
    assert completion.finish == "stop" and completion.text == "done"
    assert len(server.received) == 2
    assert rec.sleeps == [2.0]
    failed = {"message": "rate limited (HTTP 429): slow down", "code": "RATE_LIMIT"}
    assert rec.chunks[0] == {"type": "finish", "reason": {"kind": "error", "failure": failed}}
    assert rec.chunks[-1] == {"type": "finish", "reason": {"kind": "stop"}}
    scheduled, started = rec.notices
    assert (scheduled.started, started.started) == (False, True)
    assert scheduled.retry_id == started.retry_id
    assert scheduled.event(3, 2) == {
        "type": "llm/retry",
        "data": {
            "retryId": scheduled.retry_id,
            "turn": 3,
            "step": 2,
            "provider": "openai-compatible",
            "mode": "normal",
            "policyKey": "openai-compatible",
            "retry": 1,
            "maxRetries": 3,
            "delayMs": 2000,
            "failure": failed,
        },
    }
    assert started.event(3, 2) == {
        "type": "llm/retry-started",
        "data": {"retryId": scheduled.retry_id, "turn": 3, "step": 2, "retry": 1},
    }


def test_server_errors_back_off_exponentially(server: ChatServer) -> None:
    server.push(error_reply(500, "boom"), error_reply(503, "busy"), text_reply("ok"))
    rec = Recorder()
    completion = _call(
        _provider(server, rec, retry=RetryPolicy(max_retries=3, base_delay=0.5, jitter=0.0)), rec
    )
    assert completion.finish == "stop"
    assert rec.sleeps == [0.5, 1.0]
    assert [n.retry for n in rec.notices] == [1, 1, 2, 2]
    assert [n.failure["code"] for n in rec.notices] == ["SERVER"] * 4


def test_retries_run_out(server: ChatServer) -> None:
    server.push(*[error_reply(429, "no")] * 3)
    rec = Recorder()
    completion = _call(_provider(server, rec, retry=RetryPolicy(max_retries=2, jitter=0.0)), rec)
    assert len(server.received) == 3
    assert completion.finish == "error"
    assert completion.error == {"message": "rate limited (HTTP 429): no", "code": "RATE_LIMIT", "status": 429}
    assert [c["type"] for c in rec.chunks] == ["finish"] * 3


@pytest.mark.parametrize("status", [401, 403])
def test_auth_failure_is_never_retried(server: ChatServer, status: int) -> None:
    server.push(error_reply(status, "invalid api key"), text_reply("never"))
    rec = Recorder()
    completion = _call(_provider(server, rec), rec)
    assert len(server.received) == 1
    assert rec.notices == [] and rec.sleeps == []
    assert completion.finish == "error"
    assert completion.error == {
        "message": f"authentication failed (HTTP {status}): invalid api key",
        "code": "AUTH",
        "status": status,
    }
    assert KEY not in completion.error["message"]
    assert rec.chunks == [
        {
            "type": "finish",
            "reason": {"kind": "error", "failure": {"message": completion.error["message"], "code": "AUTH"}},
        }
    ]


def test_context_overflow_is_not_retried(server: ChatServer) -> None:
    server.push(error_reply(400, "This model's maximum context length is 65536 tokens"))
    rec = Recorder()
    completion = _call(_provider(server, rec), rec)
    assert completion.error and completion.error["code"] == "CONTEXT_WINDOW_EXCEEDED"
    assert len(server.received) == 1


def test_stream_cut_before_finish_is_retried(server: ChatServer) -> None:
    server.push(Reply([chunk({"content": "partial"})], done=False), text_reply("whole"))
    rec = Recorder()
    completion = _call(_provider(server, rec), rec)
    assert completion.text == "whole"
    first_finish = next(c for c in rec.chunks if c["type"] == "finish")
    assert first_finish["reason"]["failure"]["code"] == "TRANSPORT"
    assert {"type": "block-end", "index": 0, "block": {"type": "text", "text": "partial"}} in rec.chunks


def test_unreachable_endpoint_is_a_transport_failure() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rec = Recorder()
    provider = OpenAIProvider(
        api_key=KEY,
        base_url=f"http://127.0.0.1:{port}/v1",
        retry=RetryPolicy(max_retries=1, jitter=0.0),
        sleep=rec.sleeps.append,
    )
    completion = provider.complete(ModelRequest(messages=[USER]))
    assert completion.finish == "error"
    assert completion.error and completion.error["code"] == "TRANSPORT"
    assert rec.sleeps == [0.5]


def test_backoff_policy() -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=4.0, jitter=0.1, max_retry_after=30)
    assert [policy.delay(n, None, lambda: 0.5) for n in range(1, 6)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert policy.delay(1, None, lambda: 1.0) == pytest.approx(0.55)
    assert policy.delay(1, None, lambda: 0.0) == pytest.approx(0.45)
    assert policy.delay(3, 90.0) == 30
    assert policy.delay(3, 1.5) == 1.5


def test_make_provider_openai_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-env")
    model = make_provider("openai")
    # deepseek-chat and deepseek-reasoner stopped being served on 2026-07-24; DSH's sessions use the V4 name
    assert (model.provider, model.model) == ("deepseek", "deepseek-v4-flash")
    assert model.limits is not None and price_for(model.model) is not None  # tapedeck's tables know it
    assert isinstance(model, OpenAIProvider) and model.base_url == "https://api.deepseek.com"
    custom = make_provider("openai", model="gpt-x", base_url="http://127.0.0.1:9/v1", api_key="k")
    assert (custom.provider, custom.model) == ("openai-compatible", "gpt-x")


def test_make_provider_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="set DEEPSEEK_API_KEY or OPENAI_API_KEY"):
        make_provider("openai")
    with pytest.raises(
        ProviderError, match=r"unknown provider 'anthropic'; use one of: openai, scripted:FILE"
    ):
        make_provider("anthropic")
    with pytest.raises(ProviderError, match="needs a file"):
        make_provider("scripted:")


def test_retry_after_spellings(server: ChatServer) -> None:
    server.push(
        error_reply(429, "a", {"retry-after-ms": "1500"}),
        error_reply(503, "b", {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}),
        error_reply(503, "c", {"retry-after": "soon"}),
        text_reply("ok"),
    )
    rec = Recorder()
    completion = _call(
        _provider(server, rec, retry=RetryPolicy(max_retries=3, base_delay=0.25, jitter=0.0)), rec
    )
    assert completion.text == "ok"
    assert rec.sleeps == [1.5, 0.0, 1.0]
    assert [n.delay_ms for n in rec.notices if not n.started] == [1500, 0, 1000]


def _raw_chunk(**fields: Any) -> dict[str, Any]:
    return {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0, "model": "m", **fields}


@pytest.mark.parametrize(
    "chunks",
    [
        [chunk({"content": 5}, finish="stop")],
        [chunk({"reasoning_content": 5, "content": "a"}, finish="stop")],
        [chunk({"content": "a"}, finish=[])],  # type: ignore[arg-type]
        [chunk({"tool_calls": [{"index": [], "id": "c", "function": {"name": "x", "arguments": "{}"}}]}, "tool_calls")],
        [chunk({"tool_calls": [{"index": 0, "id": "c", "function": {"name": 5, "arguments": 7}}]}, "tool_calls")],
        [chunk({"tool_calls": [{"index": 0, "id": ["c"], "function": {"name": "x", "arguments": "{}"}}]}, "tool_calls")],
        [_raw_chunk(choices=[{"index": 0, "delta": "x", "finish_reason": "stop"}])],
        [_raw_chunk(choices={"a": 1}), chunk({"content": "a"}, finish="stop")],
        [_raw_chunk(choices=[{"index": 0, "delta": {"content": "a"}, "finish_reason": "stop"}], usage=[1])],
    ],
    ids=["content", "reasoning", "finish", "index", "name", "id", "delta", "choices", "usage"],
)
def test_a_chunk_of_the_wrong_types_is_a_server_failure(server: ChatServer, chunks: list[dict[str, Any]]) -> None:
    """The client does not check a chunk's types: text that was a number ended in TypeError at the stream's end, a
    list where an index or a finish reason belongs, a string where an object does, in TypeError or AttributeError,
    each out of 'tapedeck run'; an id that was a list was taken as the call's id."""
    server.push(Reply(chunks))
    rec = Recorder()
    completion = _call(_provider(server, rec, retry=RetryPolicy(max_retries=0, jitter=0.0)), rec)
    assert completion.finish == "error" and completion.error is not None
    assert completion.error["code"] == "SERVER" and "malformed chunk" in completion.error["message"]
    said = completion.error["message"]  # the value as the JSON the server sent, not as Python names or writes it
    assert not re.search(r"\b(int|list|str|dict|None|NoneType) |' object|has no attribute|\['", said), said
