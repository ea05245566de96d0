"""A small builder of DSH-shaped session logs for the request-fidelity tests (events as DSH rc.8 appends them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PROVIDER, MODEL = "deepseek-official", "deepseek-v4-flash"
HEADER = {"type": "session", "version": 0, "id": "s-1", "createdAt": 0, "cwd": "/w", "delegationDepth": 0}


class DshLog:
    """Appends events with their seqs and writes them as a raw JSONL log."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.turn = self.step = 0
        self.ids = 0

    def add(self, etype: str, data: dict[str, Any], **envelope: Any) -> int:
        """Append one event; returns its seq."""
        seq = len(self.events)
        self.events.append({"type": etype, "data": data, "seq": seq, "time": seq, **envelope})
        return seq

    def _id(self) -> str:
        self.ids += 1
        return f"m{self.ids}"

    def start_turn(self) -> None:
        self.turn += 1
        self.step = 0
        self.add("turn/start", {"turn": self.turn})

    def start_step(self) -> None:
        self.step += 1
        self.add("step/start", {"turn": self.turn, "step": self.step})

    def end_step(self) -> None:
        self.add("step/end", {"turn": self.turn, "step": self.step})

    def end_turn(self) -> None:
        self.add("turn/end", {"turn": self.turn, "reason": {"kind": "completed"}})

    def user(self, *texts: str, source: dict[str, Any] | None = None, op: Any = "append",
             sources: list[int] | None = None) -> int:  # fmt: skip
        """A ``user/message`` of one text block per text."""
        data = {"content": [{"type": "text", "text": t} for t in texts], "source": source or {"kind": "user"},
                "role": "user", "id": self._id()}  # fmt: skip
        extra: dict[str, Any] = {"surfaceOp": op}
        if sources is not None:
            extra["sourceEventSeqs"] = sources
        return self.add("user/message", data, **extra)

    def header(self, config: dict[str, Any] | None = None, system: str = "You help.",
               tools: list[dict[str, Any]] | None = None, **extra: Any) -> int:  # fmt: skip
        """A ``request/header`` (provider and model always set)."""
        header: dict[str, Any] = {"config": {"provider": PROVIDER, "model": MODEL, **(config or {})}, **extra}
        if system:
            header["system"] = system
        if tools:
            header["tools"] = tools
        return self.add("request/header", {"header": header, "reason": "initial"})

    def usage(self, prompt: int, hit: int = 0, output: int = 5) -> int:
        """The usage chunk of the step's model call (its first output: the request went out before it)."""
        usage = {"inputTokens": prompt - hit, "outputTokens": output, "cacheReadTokens": hit}
        return self.add("assistant/chunk", {"turn": self.turn, "step": self.step,
                                            "chunk": {"type": "usage", "usage": usage}})  # fmt: skip

    def answer(self, *blocks: dict[str, Any]) -> int:
        """An ``assistant/message`` of these content blocks."""
        message = {"role": "assistant", "content": list(blocks),
                   "source": {"kind": "model", "provider": PROVIDER, "model": MODEL}, "id": self._id()}  # fmt: skip
        return self.add("assistant/message", {"turn": self.turn, "step": self.step, "message": message},
                        surfaceOp="append", sourceEventSeqs=[])  # fmt: skip

    def call_and_result(self, call_id: str, text: str, name: str = "bash", arguments: str = "{}") -> int:
        """A ``tool/call`` and its ``tool/result``; returns the result's seq."""
        call = self.add("tool/call", {"turn": self.turn, "step": self.step, "callId": call_id, "name": name,
                                      "arguments": arguments})  # fmt: skip
        block = {"type": "tool-result", "toolCallId": call_id, "content": [{"type": "text", "text": text}],
                 "isError": False}  # fmt: skip
        message = {"source": {"kind": "tool", "callId": call_id}, "content": [block], "role": "user",
                   "id": self._id()}  # fmt: skip
        return self.add("tool/result", {"turn": self.turn, "step": self.step, "message": message},
                        sourceEventSeqs=[call], surfaceOp="append")  # fmt: skip

    def write(self, path: Path) -> Path:
        """The log as DSH writes it: header line, then one event a line."""
        lines = [json.dumps(HEADER), *(json.dumps(e, ensure_ascii=False) for e in self.events)]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path


def reasoning(text: str) -> dict[str, Any]:
    return {"type": "reasoning", "text": text}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_call(call_id: str, name: str = "bash", arguments: str = "{}") -> dict[str, Any]:
    return {"type": "tool-call", "id": call_id, "name": name, "arguments": arguments}


def cut_in_flight(fixture: Path, log: Path) -> Path:
    """Write to ``log`` the real DSH log ``fixture`` (``multi-turn``) cut right after its last step's prompt: that
    step's request went out and never came back, as a host killed mid-request leaves it."""
    lines = fixture.read_bytes().splitlines(keepends=True)
    types = [json.loads(line)["type"] for line in lines]
    start = max(i for i, t in enumerate(types) if t == "step/start")
    assert types[start + 1] == "user/message" and types[start + 2] == "assistant/chunk"
    log.write_bytes(b"".join(lines[: start + 2]))
    return log
