"""``request`` rebuilds every sampling field a DSH ``request/header`` logs, and says where each came from.

DSH's header: ``config: {provider, model, reasoningEffort?, temperature?, maxTokens?, stop?}`` and
``adapterDefaults?: {reasoningEffort?: true, maxTokens?: true}`` (the adapter filled those values in).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.log.reader import read_log
from core.read.session import Session
from core.rebuild.request import iter_requests

FIXTURE = "tool-call-turn.session.jsonl"
LOGGED = '"config":{"provider":"deepseek-official","model":"deepseek-v4-flash"}'


def _with_config(fixtures_dir: Path, tmp_path: Path, config: str, defaults: str = "") -> Path:
    text = (fixtures_dir / FIXTURE).read_text(encoding="utf-8")
    assert LOGGED in text
    replacement = '"config":{"provider":"deepseek-official","model":"deepseek-v4-flash",' + config + "}"
    if defaults:
        replacement += ',"adapterDefaults":{' + defaults + "}"
    log = tmp_path / "s.jsonl"
    log.write_text(text.replace(LOGGED, replacement), encoding="utf-8")
    return log


def _requests(path: Path) -> list:
    data = read_log(path)
    return list(iter_requests(data.header, data.events, Session(data.header)))


def test_every_logged_sampling_field_is_in_the_rebuilt_body(fixtures_dir: Path, tmp_path: Path) -> None:
    log = _with_config(
        fixtures_dir, tmp_path, '"temperature":0.2,"stop":["END"],"maxTokens":4096,"reasoningEffort":"max"',
        '"maxTokens":true',
    )  # fmt: skip
    for request in _requests(log):
        body = request.body
        assert (body["temperature"], body["stop"], body["max_tokens"]) == (0.2, ["END"], 4096)
        assert body["reasoning_effort"] == "max"
        assert request.to_dict()["fieldSources"] == {
            "maxTokens": "log (adapter default)",
            "temperature": "log",
            "stop": "log",
            "reasoningEffort": "log",
            "toolChoice": "not logged",
        }


def test_an_effort_of_off_turns_thinking_off(fixtures_dir: Path, tmp_path: Path) -> None:
    # DSH's DeepSeek adapter takes off | high | max; DeepSeek's chat-completions API switches thinking with
    # ``thinking: {type}`` and sets its effort with ``reasoning_effort``.
    [first, *_] = _requests(_with_config(fixtures_dir, tmp_path, '"reasoningEffort":"off"'))
    assert first.body["thinking"] == {"type": "disabled"} and "reasoning_effort" not in first.body


def test_fields_the_header_does_not_log_are_not_invented(
    capsys: pytest.CaptureFixture[str], fixtures_dir: Path
) -> None:
    assert main(["request", str(fixtures_dir / FIXTURE), "--turn", "1", "--step", "1", "--json"]) == 0
    [request] = json.loads(capsys.readouterr().out)
    assert (request["maxTokens"], request["temperature"], request["stop"], request["reasoningEffort"]) == (
        None, None, None, None,
    )  # fmt: skip
    assert set(request["fieldSources"].values()) == {"not logged"}


def test_the_text_view_shows_the_logged_sampling(
    capsys: pytest.CaptureFixture[str], fixtures_dir: Path, tmp_path: Path
) -> None:
    log = _with_config(fixtures_dir, tmp_path, '"temperature":0,"stop":"###"')
    assert main(["request", str(log), "--turn", "1", "--step", "1"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.endswith('· temperature 0 · stop "###"')


def test_a_host_request_names_the_route_for_what_it_decided(demo_log: Path) -> None:
    requests = _requests(demo_log)
    sources = {tuple(sorted(r.sources.items())) for r in requests}
    assert sources == {
        (("maxTokens", "route"), ("reasoningEffort", "not logged"), ("stop", "not sent"),
         ("temperature", "not sent"), ("toolChoice", "route")),
    }  # fmt: skip
    assert all("temperature" not in r.body and "stop" not in r.body for r in requests)
