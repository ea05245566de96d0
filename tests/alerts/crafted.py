"""Crafted sessions for the alert rules: a small builder of DSH events with seqs and times."""

from __future__ import annotations

from typing import Any

from core.control.config import PolicyConfig, validate_config

HEADER = {"type": "session", "version": 0, "id": "crafted-1", "createdAt": 1_000, "cwd": "/w"}
PRICES = {"crafted-model": {"hit": 1.0, "miss": 10.0, "output": 20.0}}  # USD per million tokens


def config(alerts: dict[str, Any] | None = None, window: int | None = 100_000) -> PolicyConfig:
    """A config with the crafted model priced, its window known, and ``alerts`` as given."""
    model: dict[str, Any] = {"prices": PRICES}
    if window is not None:
        model["limits"] = {"crafted-model": {"contextWindow": window}}
    return validate_config({"alerts": alerts or {}, "model": model})


class Log:
    """Events appended with running seqs; ``time`` moves on by ``step_ms`` per event unless given."""

    def __init__(self, start_ms: int = 1_800_000_000_000, step_ms: int = 1_000) -> None:
        self.events: list[dict[str, Any]] = []
        self.time = start_ms
        self.step_ms = step_ms

    def add(self, etype: str, data: dict[str, Any] | None = None, *, at: int | None = None, **extra: Any) -> int:
        """Append one event; returns its seq."""
        self.time = self.time + self.step_ms if at is None else at
        seq = len(self.events)
        self.events.append({"type": etype, "seq": seq, "time": self.time, "data": data or {}, **extra})
        return seq

    def header(self, model: str = "crafted-model") -> int:
        """A request header naming the model."""
        return self.add("request/header", {"header": {"system": "s", "tools": [], "config": {"model": model}}})

    def turn(self, n: int) -> int:
        """Open turn ``n``."""
        return self.add("turn/start", {"turn": n})

    def end(self, n: int, kind: str = "completed") -> int:
        """End turn ``n``."""
        return self.add("turn/end", {"turn": n, "reason": {"kind": kind}})

    def call(self, name: str, arguments: str, turn: int = 1, step: int = 1) -> int:
        """A tool call."""
        return self.add("tool/call", {"turn": turn, "step": step, "callId": f"c{len(self.events)}", "name": name,
                                      "arguments": arguments})  # fmt: skip

    def result(self, error: bool, turn: int = 1, step: int = 1) -> int:
        """A tool result, failed or not."""
        block = {"type": "tool-result", "toolCallId": "c", "content": [{"type": "text", "text": "x"}],
                 "isError": error}  # fmt: skip
        message = {"role": "tool", "content": [block]}
        return self.add("tool/result", {"turn": turn, "step": step, "message": message}, surfaceOp="append")

    def usage(self, turn: int, step: int, miss: int, output: int = 0, hit: int = 0) -> int:
        """An assistant message with its usage."""
        message = {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}
        usage = {"inputTokens": miss, "cacheReadTokens": hit, "outputTokens": output}
        return self.add("assistant/message", {"turn": turn, "step": step, "message": message, "usage": usage},
                        surfaceOp="append")  # fmt: skip
