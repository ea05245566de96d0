"""The on-arrival check of ``config.set`` against the requests waiting ahead of it, under any order of sends,
withdrawals, inbox reads and steps: each answer is the one a fresh computation gives."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from core.control import inbox as control
from core.control.config import PolicyConfig, set_value, validate_config
from core.host.loop import AgentHost, HostOptions
from core.host.providers.scripted import ScriptedModel
from core.shared.errors import ConfigError

SOFT, HARD = "adaptive.taskProfiles.read.softStepBudget", "adaptive.taskProfiles.read.hardStepBudget"
# soft must stay below hard (4 and 8 by default): whether one is refused depends on those waiting ahead of it
# each line is read at once or left for a later read with those after it
SEND = st.tuples(st.just("send"), st.booleans(), st.sampled_from([SOFT, HARD]), st.integers(2, 10))
WITHDRAW = st.tuples(st.just("withdraw"), st.booleans(), st.integers(0, 7))  # the n-th request sent, if any
ACTIONS = st.lists(st.one_of(SEND, SEND, WITHDRAW, st.just(("boundary",))), max_size=30)
DEFAULTS = validate_config({})  # a config is never changed in place: set_value makes a new one


def _applied(config: PolicyConfig, key: str, value: int) -> PolicyConfig | None:
    """``config`` with ``key`` set to ``value``; None when the config refuses it."""
    with contextlib.suppress(ConfigError):
        return set_value(config, key, value)[0]
    return None


class Model:
    """What the host must answer, computed afresh each time from the config in force and the waiting requests."""

    def __init__(self, config: PolicyConfig) -> None:
        self.config = config
        self.unread: list[tuple[str, str, Any]] = []  # the inbox lines not read yet: (kind, id, (key, value))
        self.waiting: dict[str, tuple[str, int]] = {}  # the pending requests, in order of arrival
        self.answers: dict[str, str] = {}  # every request's last outcome: pending, rejected, cancelled, applied

    def read(self) -> None:
        withdrawn = {rid for kind, rid, _ in self.unread if kind == "withdraw"}
        for kind, rid, args in self.unread:
            if kind == "withdraw":
                if self.waiting.pop(rid, None) is not None:
                    self.answers[rid] = control.CANCELLED
            elif rid in withdrawn:
                self.answers[rid] = control.CANCELLED
            else:
                self.answers[rid] = control.REJECTED if _applied(self._ahead(), *args) is None else control.PENDING
                if self.answers[rid] == control.PENDING:
                    self.waiting[rid] = args
        self.unread = []

    def _ahead(self) -> PolicyConfig:
        config = self.config
        for args in self.waiting.values():
            config = _applied(config, *args) or config
        return config

    def boundary(self) -> None:
        self.read()
        for rid, args in self.waiting.items():
            new = _applied(self.config, *args)
            self.answers[rid] = control.REJECTED if new is None else control.APPLIED
            self.config = new or self.config
        self.waiting = {}


def _answers(host: AgentHost) -> dict[str, str]:
    """Each request's last outcome, as the host logged them."""
    return {
        e["data"]["requestId"]: e["data"]["outcome"] for e in host.session.events if e["type"] == control.CONTROL_EVENT
    }


@settings(max_examples=300)
@given(ACTIONS)
def test_each_config_set_is_answered_as_a_fresh_check_of_those_waiting_ahead_would(actions: list[tuple[Any, ...]]) -> None:
    # a host per example, its log and inbox on disk as the operator reads them; whether they reach the disk is not
    # what is checked here, so the host's fsyncs (about half of each example's time) are not made
    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(os, "fsync"):
        root = Path(tmp)
        (root / "ws").mkdir()
        script = root / "script.json"
        script.write_text(json.dumps({"model": "m", "responses": [{"text": "ok"}]}))
        config = DEFAULTS
        host = AgentHost.create(root / "sessions", ScriptedModel(script), config,
                                HostOptions(workspace=root / "ws", progress=lambda _: None), tasks=["t"])  # fmt: skip
        model, sent = Model(config), []
        try:
            for action in actions:
                if action[0] == "send":
                    rid = control.append_request(host.inbox_path, "config.set", {"key": action[2], "value": action[3]})["id"]
                    sent.append(rid)
                    model.unread.append(("send", rid, action[2:]))
                elif action[0] == "withdraw" and action[2] < len(sent):
                    control.withdraw_request(host.inbox_path, sent[action[2]])
                    model.unread.append(("withdraw", sent[action[2]], None))
                if action[0] != "boundary" and action[1]:
                    host.operator.poll()
                    model.read()
                elif action[0] == "boundary":
                    host.operator.boundary(idle=True)
                    model.boundary()
                    assert host.hooks.config.to_dict() == model.config.to_dict()
                assert _answers(host) == model.answers, actions
        finally:
            host.close()
