"""The model's limits in ``tapedeck run``: output caps clamped to them, and the adaptive pressure trigger live.

Seed 004: "最大输出仅在 Agent 没有明确 maxTokens 时生效；更严格的调用方或提供方上限始终优先" (the class cap applies only
without an explicit maxTokens; a stricter caller or provider limit always wins) and "没有模型上下文窗口元数据时，压力
路由关闭，步骤路由继续" (without context-window metadata pressure routing is off): so with the metadata it is on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.control.config import validate_config
from core.host.loop import AgentHost, HostOptions
from core.host.providers import OpenAIProvider, RetryPolicy
from core.host.providers.scripted import ScriptedModel
from core.shared.model_specs import limits_for
from tests.host.sse_server import ChatServer, text_reply

LARGE_TASK = "Complete the cross-module end-to-end architecture migration"  # class large: cap 65,536


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as srv:
        yield srv


def _routes(host: AgentHost) -> list[dict[str, Any]]:
    return [e["data"] for e in host.session.events if e["type"] == "tapedeck/route"]


def _host(tmp_path: Path, model: Any, config: dict[str, Any], said: list[str]) -> AgentHost:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    options = HostOptions(workspace=ws, progress=said.append)
    return AgentHost.create(tmp_path / "root", model, validate_config(config), options, tasks=[LARGE_TASK])


def test_deepseek_chat_gets_its_own_output_limit_not_the_class_cap(tmp_path: Path, server: ChatServer) -> None:
    server.push(text_reply("done"))
    model = OpenAIProvider(api_key="sk-test", model="deepseek-chat", base_url=server.base_url,
                           retry=RetryPolicy(max_retries=0))  # fmt: skip
    said: list[str] = []
    host = _host(tmp_path, model, {}, said)
    host.run()
    host.close()
    limit = limits_for("deepseek-chat").max_output_tokens
    assert server.received[0].body["max_tokens"] == limit < 65_536
    (route,) = _routes(host)
    assert route["caps"] == {"maxTokens": limit, "classMaxTokens": 65_536}
    assert route["pressure"] is not None  # the provider knows its window: pressure routing is on
    assert sum("65536" in line for line in said) == 1


def _scripted(tmp_path: Path, steps: int, **settings: Any) -> ScriptedModel:
    script = tmp_path / "script.json"
    calls = [{"toolCalls": [{"name": "list_files", "arguments": {"path": "."}}]} for _ in range(steps - 1)]
    script.write_text(json.dumps({"model": "local-model", **settings, "responses": [*calls, {"text": "ok"}]}))
    return ScriptedModel(script)


def test_the_clamp_is_reported_once_however_many_steps_it_applies_to(tmp_path: Path) -> None:
    said: list[str] = []
    host = _host(tmp_path, _scripted(tmp_path, 3, maxOutputTokens=4096), {}, said)
    host.run()
    host.close()
    assert {r["caps"]["maxTokens"] for r in _routes(host)} == {4096}
    assert sum("65536" in line for line in said) == 1


def test_model_config_overrides_the_limit_of_any_openai_compatible_model(tmp_path: Path) -> None:
    said: list[str] = []
    config = {"model": {"maxOutputTokens": 2000, "contextWindow": 50_000}}
    host = _host(tmp_path, _scripted(tmp_path, 1), config, said)
    host.run()
    host.close()
    (route,) = _routes(host)
    assert route["caps"]["maxTokens"] == 2000 and route["pressure"] is not None


def test_pressure_selects_a_prune_tier_before_its_step(tmp_path: Path) -> None:
    # A window of 1,000 tokens: the task and tool schemas alone are past 75% of it at step 1.
    said: list[str] = []
    host = _host(tmp_path, _scripted(tmp_path, 1, contextWindow=1000), {}, said)
    host.run()
    host.close()
    (route,) = _routes(host)
    assert route["step"] == 1 and route["pressure"] >= 0.75 and route["pruneLevel"] == "critical"


def test_without_a_known_window_pressure_stays_off(tmp_path: Path) -> None:
    said: list[str] = []
    host = _host(tmp_path, _scripted(tmp_path, 1), {}, said)
    host.run()
    host.close()
    (route,) = _routes(host)
    assert route["pressure"] is None and route["pruneLevel"] is None
    assert route["caps"] == {"maxTokens": 65_536}
