"""A scripted host for the slice and recall tests: DSH-shaped events, sealing at step 1 as the real host does."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.policies.fold import plan_fold
from core.policies.slice import TAPE_PREFIX, SealPlan, plan_seal
from core.policies.slice_config import SliceConfig, validate
from core.read.session import RUNTIME_CONTEXT_PLUGIN, Session
from core.shared.text import js_json, sha256_hex, text_of_blocks

HEADER = {
    "type": "session",
    "version": 0,
    "id": "sess-slice",
    "createdAt": 1,
    "cwd": "/w",
    "delegationDepth": 0,
}

# (call id, tool name, arguments, result text[, is_error])
Call = tuple[str, str, dict[str, Any], str] | tuple[str, str, dict[str, Any], str, bool]


def config(**history: Any) -> SliceConfig:
    """A validated slice config with the given ``history.*`` keys."""
    return validate({"history": history})


def user_message(
    text: str, source: dict[str, Any] | None = None, content: list[Any] | None = None
) -> dict[str, Any]:
    """A DSH user message (``data`` of a ``user/message`` event)."""
    return {
        "id": "u-" + sha256_hex(text + json.dumps(source))[:12],
        "role": "user",
        "content": content if content is not None else [{"type": "text", "text": text}],
        "source": source or {"kind": "user"},
    }


def runtime_message(text: str) -> dict[str, Any]:
    """A DSH 0.1 runtime-context snapshot message."""
    return user_message(text, {"kind": "plugin", "plugin": RUNTIME_CONTEXT_PLUGIN, "form": "snapshot"})


class Host:
    """An in-memory session log grown the way the reference host grows it, sealing at each turn's step 1."""

    def __init__(
        self, seal: SliceConfig | None = None, header: dict[str, Any] | None = None, *, fold: bool = False
    ) -> None:
        self.header = header or HEADER
        self.config = seal
        self.fold = fold
        self.session = Session(self.header)
        self.requests: list[list[dict[str, Any]]] = []
        self.plans: list[SealPlan] = []
        self.warned: set[str] = set()
        self.warnings: list[str] = []
        self.turn = 0
        self.step = 0

    @classmethod
    def resume(cls, session: Session, seal: SliceConfig | None = None) -> Host:
        """Continue an existing session (a fixture, or a log reopened after a restart)."""
        host = cls(seal, session.header)
        host.session = session
        host.turn = max(session.turns, default=0)
        return host

    @property
    def events(self) -> Sequence[dict[str, Any]]:
        return self.session.events

    # writing ---------------------------------------------------------------------------------------------
    def add(self, etype: str, data: dict[str, Any], **envelope: Any) -> int:
        seq = self.session.next_seq
        self.session.apply({"type": etype, "seq": seq, "time": 1000 + seq, "data": data, **envelope})
        return seq

    def extend(self, planned: Sequence[dict[str, Any]]) -> list[int]:
        """Append planned events as the host does (seq/time assigned in order)."""
        return [
            self.add(e["type"], e["data"], **{k: v for k, v in e.items() if k not in ("type", "data")})
            for e in planned
        ]

    def user(self, message: dict[str, Any]) -> int:
        return self.add("user/message", message, surfaceOp="append")

    def seal(self, pending: Sequence[dict[str, Any]] = ()) -> SealPlan:
        """Plan and apply the seal (only when the host was built with a config)."""
        assert self.config is not None
        plan = plan_seal(self.session, self.config, pending=pending, warned=self.warned)
        for warning in plan.warnings:
            self.warned.add(warning.key)
            self.warnings.append(warning.message)
        self.extend(plan.events)
        self.plans.append(plan)
        return plan

    def request(self) -> list[dict[str, Any]]:
        """Fold what landed (when enabled), then record the request the model would receive now."""
        if self.fold and self.config is not None:
            self.extend(plan_fold(self.session, self.config))
        messages = json.loads(js_json(self.session.messages()))
        self.requests.append(messages)
        return messages

    # a turn ----------------------------------------------------------------------------------------------
    def begin(
        self,
        prompt: str | dict[str, Any],
        *,
        runtime: str | None = None,
        runtime_pending: bool = False,
        inject: Sequence[dict[str, Any]] = (),
    ) -> None:
        """Start a turn: prompt (and runtime snapshot), seal at step 1, then the first request."""
        self.turn += 1
        self.step = 1
        self.add("turn/start", {"turn": self.turn})
        self.add("step/start", {"turn": self.turn, "step": 1})
        self.user(prompt if isinstance(prompt, dict) else user_message(prompt))
        for message in inject:
            self.user(message)
        snapshot = runtime_message(runtime) if runtime is not None else None
        if snapshot is not None and not runtime_pending:
            self.user(snapshot)
        if self.config is not None:
            self.seal([snapshot] if snapshot is not None and runtime_pending else [])
        if snapshot is not None and runtime_pending:
            self.user(snapshot)
        self.request()

    def reply(self, text: str = "", calls: Sequence[Call] = (), *, results: bool = True) -> int:
        """The model's message for this step, then each call and (unless ``results`` is off) its result."""
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [
            {"type": "tool-call", "id": c[0], "name": c[1], "arguments": json.dumps(c[2])} for c in calls
        ]
        message = {
            "id": f"a{self.session.next_seq}",
            "role": "assistant",
            "content": content,
            "source": {"kind": "model", "provider": "p", "model": "m"},
        }
        seq = self.add(
            "assistant/message",
            {"turn": self.turn, "step": self.step, "message": message},
            surfaceOp="append",
        )
        for call in calls:
            self.call(call)
            if results:
                self.result(call)
        return seq

    def call(self, call: Call) -> int:
        data = {
            "turn": self.turn,
            "step": self.step,
            "callId": call[0],
            "name": call[1],
            "arguments": json.dumps(call[2]),
        }
        return self.add("tool/call", data)

    def result(self, call: Call, content: list[dict[str, Any]] | None = None) -> int:
        call_seq = max(
            s for s in range(self.session.next_seq)
            if self.events[s]["type"] == "tool/call" and self.events[s]["data"]["callId"] == call[0]
        )  # fmt: skip
        block = {
            "type": "tool-result",
            "toolCallId": call[0],
            "content": content if content is not None else [{"type": "text", "text": call[3]}],
            "isError": bool(call[4]) if len(call) > 4 else False,  # type: ignore[misc]
        }
        message = {"id": f"r{self.session.next_seq}", "role": "user", "content": [block],
                   "source": {"kind": "tool", "callId": call[0]}}  # fmt: skip
        data = {"turn": self.turn, "step": self.step, "message": message}
        return self.add("tool/result", data, sourceEventSeqs=[call_seq], surfaceOp="append")

    def next_step(self) -> None:
        self.add("step/end", {"turn": self.turn, "step": self.step})
        self.step += 1
        self.add("step/start", {"turn": self.turn, "step": self.step})
        self.request()

    def end(self, kind: str = "completed") -> int:
        self.add("step/end", {"turn": self.turn, "step": self.step})
        return self.add("turn/end", {"turn": self.turn, "reason": {"kind": kind}})

    def simple_turn(self, prompt: str, answer: str, **begin: Any) -> None:
        self.begin(prompt, **begin)
        self.reply(answer)
        self.end()

    # reading ---------------------------------------------------------------------------------------------
    def write(self, path: Path) -> Path:
        """The log as a raw ``session.jsonl`` file."""
        path.write_text("\n".join(js_json(x) for x in [self.header, *self.events]) + "\n", encoding="utf-8")
        return path


def message_text(message: dict[str, Any]) -> str:
    return text_of_blocks(message.get("content"))


def entries_in(messages: Sequence[dict[str, Any]]) -> list[str]:
    """Tape entry texts of a request, in order."""
    return [t for t in (message_text(m) for m in messages) if t.startswith(TAPE_PREFIX)]


def span_of(entry: str) -> str:
    """``"1-1"`` for an entry covering turn 1."""
    return entry[len(TAPE_PREFIX) :].split(" ")[0]


def stable_prefix_violations(requests: Sequence[Sequence[dict[str, Any]]]) -> list[int]:
    """Indices n where request n+1's bytes differ from request n's before the end of n's last entry."""
    bad = []
    for n in range(len(requests) - 1):
        earlier, later = requests[n], requests[n + 1]
        last = max((i for i, m in enumerate(earlier) if message_text(m).startswith(TAPE_PREFIX)), default=-1)
        if last < 0:
            continue
        prefix = "[" + ",".join(js_json(m) for m in earlier[: last + 1])
        if not js_json(list(later)).startswith(prefix):
            bad.append(n)
    return bad
