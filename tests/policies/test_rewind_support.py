"""Builders shared by the checkpoint, rewind and report tests: a session grown event by event, and a fake model.

The fake ChatModel stands in for an external provider (it implements the ``core.shared.chat.ChatModel`` protocol);
the code under test is never faked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from core.policies.checkpoint import plan_checkpoint
from core.read.session import Session
from core.shared.chat import Completion, ModelRequest
from tests.messages import tool_result_message

HEADER = {
    "type": "session",
    "version": 0,
    "id": "sess-rewind",
    "createdAt": 0,
    "cwd": "/work/demo",
    "delegationDepth": 0,
}


class Log:
    """A session under construction; every helper appends one event and returns its seq."""

    def __init__(self, session_id: str = "sess-rewind", request_header: dict[str, Any] | None = None) -> None:
        self.session = Session({**HEADER, "id": session_id})
        self.turn = 0
        self.step = 0
        self._ids = 0
        if request_header is not None:
            self.turn_start()
            self.add("request/header", {"header": request_header, "reason": "initial"})

    def add(self, etype: str, data: Any, **envelope: Any) -> int:
        seq = self.session.next_seq
        self.session.apply({"type": etype, "seq": seq, "time": 0, "data": data, **envelope})
        return seq

    def extend(self, planned: list[dict[str, Any]]) -> list[int]:
        return [
            self.add(e["type"], e["data"], **{k: v for k, v in e.items() if k not in ("type", "data")})
            for e in planned
        ]

    def _id(self) -> str:
        self._ids += 1
        return f"m{self._ids}"

    def turn_start(self) -> int:
        self.turn += 1
        self.step = 1
        return self.add("turn/start", {"turn": self.turn})

    def turn_end(self) -> int:
        return self.add("turn/end", {"turn": self.turn, "reason": {"kind": "completed"}})

    def user(self, text: str) -> int:
        message = {
            "id": self._id(),
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": {"kind": "user"},
        }
        return self.add("user/message", message, surfaceOp="append")

    def assistant(self, *blocks: dict[str, Any]) -> int:
        message = {
            "id": self._id(),
            "role": "assistant",
            "content": list(blocks),
            "source": {"kind": "model", "provider": "p", "model": "m"},
        }
        return self.add(
            "assistant/message",
            {"turn": self.turn, "step": self.step, "message": message},
            surfaceOp="append",
        )

    def call(self, call_id: str, name: str, arguments: str = "{}") -> int:
        data = {"turn": self.turn, "step": self.step, "callId": call_id, "name": name, "arguments": arguments}
        return self.add("tool/call", data)

    def result(
        self, call_id: str, text: str, is_error: bool = False, error: dict[str, str] | None = None
    ) -> int:
        message = tool_result_message(call_id, text, is_error, message_id=self._id())
        data: dict[str, Any] = {"turn": self.turn, "step": self.step, "message": message}
        if error is not None:
            data["error"] = error
        return self.add("tool/result", data, surfaceOp="append")

    def tool(
        self, call_id: str, name: str, arguments: str, output: str, is_error: bool = False
    ) -> tuple[int, int]:
        """An assistant message with one call, its tool/call and its result: returns (assistant seq, result seq)."""
        seq = self.assistant(tool_call(call_id, name, arguments))
        self.call(call_id, name, arguments)
        return seq, self.result(call_id, output, is_error)

    def checkpoint_call(self, call_id: str = "ck", objective: str | None = None) -> tuple[int, int]:
        """The model calls ``checkpoint``: the mark lands between the call and its result. Returns (anchor, result)."""
        self.assistant(
            tool_call(call_id, "checkpoint", json.dumps({"objective": objective} if objective else {}))
        )
        self.call(call_id, "checkpoint")
        (anchor,) = self.extend(plan_checkpoint(self.session, objective))
        return anchor, self.result(call_id, "checkpoint set")

    def rewind_call(self, call_id: str = "rw") -> int:
        seq = self.assistant(tool_call(call_id, "rewind", "{}"))
        self.call(call_id, "rewind")
        return seq


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_call(call_id: str, name: str, arguments: str = "{}") -> dict[str, Any]:
    return {"type": "tool-call", "id": call_id, "name": name, "arguments": arguments}


@dataclass
class FakeModel:
    """Scripted completions for the report writer; records every request it receives."""

    provider: str
    model: str
    replies: list[Completion]
    efforts: list[str] = field(default_factory=list)
    requests: list[ModelRequest] = field(default_factory=list)

    def complete(self, request: ModelRequest, on_chunk: Any = None) -> Completion:
        self.requests.append(request)
        return self.replies.pop(0)

    def reasoning_efforts(self) -> list[str]:
        return self.efforts


@dataclass
class FakeFactory:
    """Builds FakeModels on demand and remembers the routes asked for."""

    replies: list[Completion]
    efforts: list[str] = field(default_factory=list)
    routes: list[tuple[str, str]] = field(default_factory=list)
    models: list[FakeModel] = field(default_factory=list)

    def __call__(self, provider: str, model: str) -> FakeModel:
        self.routes.append((provider, model))
        fake = FakeModel(provider, model, self.replies, self.efforts)
        self.models.append(fake)
        return fake

    @property
    def requests(self) -> list[ModelRequest]:
        return [r for m in self.models for r in m.requests]


def reply(value: str, finish: str = "stop", usage: dict[str, int] | None = None) -> Completion:
    return Completion([text(value)] if value else [], finish, usage)
