"""The rewind report's route (seed 001 §2.c): "配置覆盖，其次会话最近路由的 request/header 配置，最后 agent 的
options" (the config override first, then the session's latest routed request header, then the agent's options).
A configured route other than the agent's own gets its own client, on the agent's endpoint."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.control.config import validate_config
from core.host.loop import AgentHost, HostOptions
from core.host.providers import OpenAIProvider, RetryPolicy
from core.policies.report import ReportError, ReportRequest
from core.shared.errors import ConfigError
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
    host.close()


def test_without_an_override_the_report_uses_the_sessions_route(tmp_path: Path, server: ChatServer) -> None:
    host = _host(tmp_path, server, {})
    server.push(text_reply("## Findings\n- x"))
    host.hooks.report_writer().write(ReportRequest(messages=[USER], folded_chars=500, route=("deepseek", "deepseek-chat")))
    assert server.received[0].body["model"] == "deepseek-chat"
    host.close()


def test_a_report_endpoint_of_its_own_gets_the_report_with_its_own_key(
    tmp_path: Path, server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAPEDECK_TEST_REPORT_KEY", "sk-report")
    with ChatServer() as reports:
        host = _host(tmp_path, server, {
            "summarizationProvider": "local", "summarizationModel": "qwen-small",
            "summarizationBaseUrl": reports.base_url, "summarizationApiKeyEnv": "TAPEDECK_TEST_REPORT_KEY",
        })  # fmt: skip
        reports.push(text_reply("## Findings\n- from the second endpoint"))
        request = ReportRequest(messages=[USER], folded_chars=500, route=("deepseek", "deepseek-chat"))
        report = host.hooks.report_writer().write(request)
        assert report == "## Findings\n- from the second endpoint"
        assert server.received == []
        [received] = reports.received
        assert received.body["model"] == "qwen-small"
        assert received.headers["authorization"] == "Bearer sk-report"
        host.close()


def test_a_report_endpoint_whose_key_variable_is_unset_fails_the_report_naming_it(
    tmp_path: Path, server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TAPEDECK_TEST_REPORT_KEY", raising=False)
    host = _host(tmp_path, server, {
        "summarizationProvider": "local", "summarizationModel": "qwen-small",
        "summarizationBaseUrl": "http://127.0.0.1:9/v1", "summarizationApiKeyEnv": "TAPEDECK_TEST_REPORT_KEY",
    })  # fmt: skip
    request = ReportRequest(messages=[USER], folded_chars=500, route=("deepseek", "deepseek-chat"))
    with pytest.raises(ReportError, match="TAPEDECK_TEST_REPORT_KEY is not set"):
        host.hooks.report_writer().write(request)
    assert server.received == []
    host.close()


@pytest.mark.parametrize(
    ("rewind", "message"),
    [
        ({"summarizationBaseUrl": "http://127.0.0.1:1/v1", "summarizationApiKeyEnv": "K"},
         "summarizationBaseUrl needs rewind.summarizationProvider and rewind.summarizationModel"),
        ({"summarizationProvider": "p", "summarizationModel": "m", "summarizationBaseUrl": "http://127.0.0.1:1/v1"},
         "summarizationBaseUrl needs rewind.summarizationApiKeyEnv"),
        ({"summarizationProvider": "p", "summarizationModel": "m", "summarizationApiKeyEnv": "K"},
         "summarizationApiKeyEnv is only for rewind.summarizationBaseUrl"),
        ({"summarizationProvider": "p", "summarizationModel": "m", "summarizationBaseUrl": "ftp://h/v1",
          "summarizationApiKeyEnv": "K"}, "summarizationBaseUrl must be an http:// or https:// URL"),
        ({"summarizationProvider": "p", "summarizationModel": "m", "summarizationBaseUrl": "https:///v1",
          "summarizationApiKeyEnv": "K"}, "summarizationBaseUrl must be an http:// or https:// URL"),
        ({"summarizationProvider": "p", "summarizationModel": "m", "summarizationBaseUrl": "https://h/v1",
          "summarizationApiKeyEnv": "MY-KEY"}, "summarizationApiKeyEnv must be an environment variable name"),
    ],
)  # fmt: skip
def test_report_endpoint_keys_are_refused_with_a_clear_message(rewind: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        validate_config({"rewind": rewind})
