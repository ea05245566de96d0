"""``core.rebuild.request`` rebuilds exactly the bodies our host sent to a real chat-completions endpoint."""

from __future__ import annotations

import json
from pathlib import Path

from core.control.config import load_config
from core.host.loop import AgentHost, HostOptions
from core.host.providers import OpenAIProvider, RetryPolicy
from core.log.reader import read_log
from core.rebuild.request import iter_requests
from tests.host.sse_server import ChatServer, chunk, error_reply, text_reply, tool_delta

TASK = "Rename timeoutLabel in src/view.ts"  # a "small" task: checkpoint from step 5, finalization from step 9


def _call_reply(call_id: str, name: str, arguments: dict) -> object:
    reply = text_reply(usage={"prompt_tokens": 900, "completion_tokens": 20, "prompt_cache_hit_tokens": 640})
    reply.chunks = [
        chunk({"role": "assistant", "reasoning_content": "look first"}),
        chunk(tool_delta(0, json.dumps(arguments), call_id=call_id, name=name)),
        chunk(finish="tool_calls"),
        reply.chunks[-1],
    ]
    return reply


def test_rebuilt_requests_equal_the_bodies_the_server_received(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "big.txt").write_text("".join(f"line {i}: some text worth folding\n" for i in range(400)))
    with ChatServer() as server:
        server.push(_call_reply("c1", "read_file", {"path": "big.txt"}))
        server.push(error_reply(500, "overloaded"))  # step 2 is retried once
        for step in range(2, 9):
            server.push(_call_reply(f"c{step}", "list_dir", {"path": "."}))
        server.push(text_reply("renamed", usage={"prompt_tokens": 1000, "completion_tokens": 3}))
        server.push(text_reply("second turn done"))
        model = OpenAIProvider(api_key="k", model="deepseek-chat", base_url=server.base_url,
                               retry=RetryPolicy(max_retries=2, jitter=0.0), sleep=lambda _: None)  # fmt: skip
        host = AgentHost.create(tmp_path / "sessions", model, load_config(None), HostOptions(workspace=workspace),
                                tasks=[TASK, "Now say you are done."])  # fmt: skip
        host.run()
        host.close()
        received = [r.body for r in server.received]
    data = read_log(host.writer.path)
    rebuilt = list(iter_requests(data.header, data.events))
    assert [(r.turn, r.step, r.attempt) for r in rebuilt] == [
        (1, 1, 1), (1, 2, 1), (1, 2, 2), *[(1, s, 1) for s in range(3, 10)], (2, 1, 1)
    ]  # fmt: skip
    assert len(received) == len(rebuilt)
    for got, request in zip(received, rebuilt, strict=True):
        assert len(got["messages"]) == len(request.body["messages"])
        for sent, built in zip(got["messages"], request.body["messages"], strict=True):
            assert built == sent
        assert request.body == got
    # The run covered what makes requests differ: a fold, phase notes, finalization and a seal.
    kinds = {k.split(":")[0] for r in rebuilt for k in r.keys if isinstance(k, str)}
    assert kinds == {"note"}
    assert rebuilt[-2].body["tool_choice"] == "none"
    assert any(e["type"] == "tool/result" and e.get("surfaceOp") != "append" for e in data.events)
    assert any((e["data"].get("source") or {}).get("kind") == "plugin:slice:history" for e in data.events
               if e["type"] == "user/message")  # fmt: skip
    assert rebuilt[0].usage == {"inputTokens": 260, "outputTokens": 20, "cacheReadTokens": 640}
    assert rebuilt[1].usage is None  # the failed attempt reported nothing
