"""The rewind report's route (seed 001 §2.c): "配置覆盖，其次会话最近路由的 request/header 配置，最后 agent 的
options" (the config override first, then the session's latest routed request header, then the agent's options).
A configured route other than the agent's own gets its own client, on the agent's endpoint."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.config import validate_config
from core.host.loop import AgentHost, HostOptions
from core.host.providers import OpenAIProvider, RetryPolicy
from core.policies.report import ReportRequest
from tests.host.sse_server import ChatServer, text_reply

USER = {"id": "u", "role": "user", "content": [{"type": "text", "text": "find the cause " * 20}],
        "source": {"kind": "user"}}  # fmt: skip


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as srv:
        yield srv


def _host(tmp_path: Path, server: ChatServer, rewind: dict[str, str]) -> AgentHost:
    model = OpenAIProvider(api_key="sk-test", model="deepseek-chat", base_url=server.base_url,
                           retry=RetryPolicy(max_retries=0))  # fmt: skip
    (tmp_path / "ws").mkdir()
    config = validate_config({"rewind": rewind})
    return AgentHost.create(tmp_path / "root", model, config, HostOptions(workspace=tmp_path / "ws"), tasks=[])


def test_a_configured_route_other_than_the_agents_own_is_served_on_the_same_endpoint(
    tmp_path: Path, server: ChatServer
) -> None:
    host = _host(tmp_path, server, {"summarizationProvider": "deepseek", "summarizationModel": "deepseek-reasoner"})
    server.push(text_reply("## Findings\n- the cause"))
    request = ReportRequest(messages=[USER], folded_chars=500, route=("deepseek", "deepseek-chat"))
    report = host.hooks.report_writer().write(request)
    assert report == "## Findings\n- the cause"
    [received] = server.received
    assert received.body["model"] == "deepseek-reasoner"
    assert received.headers["authorization"] == "Bearer sk-test"


def test_without_an_override_the_report_uses_the_sessions_route(tmp_path: Path, server: ChatServer) -> None:
    host = _host(tmp_path, server, {})
    server.push(text_reply("## Findings\n- x"))
    host.hooks.report_writer().write(ReportRequest(messages=[USER], folded_chars=500, route=("deepseek", "deepseek-chat")))
    assert server.received[0].body["model"] == "deepseek-chat"
