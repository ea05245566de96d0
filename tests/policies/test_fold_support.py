"""Builders for the fold tests: a session log grown step by step, as the host would write it."""

from __future__ import annotations

import json
from typing import Any

from core.policies.fold import plan_fold, preview_fold
from core.policies.slice_config import SliceConfig
from core.read.session import Session

HEADER = {
    "type": "session",
    "version": 0,
    "id": "sess-fold",
    "createdAt": 1,
    "cwd": "/w",
    "delegationDepth": 0,
}

BIG = "\n".join(
    f"section_{i // 10}: header" if i % 10 == 0 else f"row {i} payload {'x' * 30} {i * 7}" for i in range(120)
)
CODE = "\n".join(f"def f{i}(x):\n    return x + {i}" for i in range(80))

Tool = tuple[str, dict[str, Any], str] | tuple[str, dict[str, Any], str, bool]


class Log:
    """An in-memory session log; ``step`` writes one model call with its tool calls and results."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._ids = 0

    def add(self, etype: str, data: dict[str, Any], **envelope: Any) -> int:
        seq = len(self.events)
        self.events.append({"type": etype, "seq": seq, "time": 1000 + seq, "data": data, **envelope})
        return seq

    def extend(self, planned: list[dict[str, Any]]) -> list[int]:
        """Append planned events the way the host does (seq/time assigned in order)."""
        return [
            self.add(e["type"], e["data"], **{k: v for k, v in e.items() if k not in ("type", "data")})
            for e in planned
        ]

    def session(self) -> Session:
        return Session.from_events(HEADER, self.events)

    def user(self, text: str) -> int:
        data = {
            "id": f"u{len(self.events)}",
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": {"kind": "user"},
        }
        return self.add("user/message", data, surfaceOp="append")

    def turn(self, turn: int, prompt: str = "go") -> None:
        self.add("turn/start", {"turn": turn})
        self.user(prompt)

    def end_turn(self, turn: int, kind: str = "completed") -> int:
        return self.add("turn/end", {"turn": turn, "reason": {"kind": kind}})

    def assistant(
        self, turn: int, step: int, text: str = "", calls: list[tuple[str, str, dict[str, Any]]] = ()
    ) -> int:  # type: ignore[assignment]
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [
            {"type": "tool-call", "id": cid, "name": name, "arguments": json.dumps(args)}
            for cid, name, args in calls
        ]
        message = {
            "id": f"a{len(self.events)}",
            "role": "assistant",
            "content": content,
            "source": {"kind": "model", "provider": "p", "model": "m"},
        }
        return self.add(
            "assistant/message", {"turn": turn, "step": step, "message": message}, surfaceOp="append"
        )

    def result(
        self,
        turn: int,
        step: int,
        cid: str,
        call_seq: int,
        parts: list[dict[str, Any]],
        is_error: bool = False,
    ) -> int:
        block = {"type": "tool-result", "toolCallId": cid, "content": parts, "isError": is_error}
        message = {
            "id": f"r{len(self.events)}",
            "role": "user",
            "content": [block],
            "source": {"kind": "tool", "callId": cid},
        }
        return self.add(
            "tool/result",
            {"turn": turn, "step": step, "message": message},
            sourceEventSeqs=[call_seq],
            surfaceOp="append",
        )

    def step(self, turn: int, step: int, tools: list[Tool] = (), text: str = "") -> list[int]:  # type: ignore[assignment]
        """One model call: step/start, (request header), assistant message, each call and its result, step/end."""
        self.add("step/start", {"turn": turn, "step": step})
        if not any(e["type"] == "request/header" for e in self.events):
            self.add(
                "request/header", {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"}
            )
        calls = []
        for tool in tools:
            self._ids += 1
            calls.append((f"call_{self._ids}", tool[0], tool[1]))
        self.assistant(turn, step, text, calls)
        results = []
        for (cid, name, args), tool in zip(calls, tools, strict=True):
            call_seq = self.add(
                "tool/call",
                {"turn": turn, "step": step, "callId": cid, "name": name, "arguments": json.dumps(args)},
            )
            results.append(
                self.result(
                    turn,
                    step,
                    cid,
                    call_seq,
                    [{"type": "text", "text": tool[2]}],
                    is_error=len(tool) > 3 and bool(tool[3]),
                )
            )
        self.add("step/end", {"turn": turn, "step": step})
        return results

    def fold(self, config: SliceConfig | None = None) -> list[dict[str, Any]]:
        """Pre-step: plan the fold and append it; returns the planned events."""
        planned = plan_fold(self.session(), config or SliceConfig())
        self.extend(planned)
        return planned


def folded() -> tuple[Log, int, int]:
    """A log of one turn whose one big read result was folded: the log, the result's seq and the fold's."""
    log = Log()
    log.turn(1)
    (original,) = log.step(1, 1, [("read", {"file_path": "n.md"}, BIG)])
    log.fold()
    return log, original, log.session().next_seq - 1


def sealed(log: Log, fold: int) -> int:
    """Seal turn 1 of ``folded``'s log into a tape entry that replaces the surface after its first node up to
    ``fold``; returns the entry's seq."""
    entry = {
        "id": "tape",
        "role": "user",
        "content": [{"type": "text", "text": "[slice tape v1 · turns 1-1]"}],
        "source": {"kind": "plugin:slice:history"},
    }
    return log.add(
        "user/message",
        entry,
        sourceEventSeqs=log.session().surface[1:],
        surfaceOp={"op": "replace", "start": log.session().surface[1], "end": fold},
    )


def view_text(event: dict[str, Any]) -> str:
    """The first text part of a tool result event's inner content."""
    return event["data"]["message"]["content"][0]["content"][0]["text"]


def expand_text(name: str, address: str, text: str) -> str:
    """What ``expand_result`` returns in full."""
    return f"[full result of {name} · {address}]\n{text}"


class BackoffRun:
    """One turn of a live session: each ``step`` is followed by the host's pre-step fold."""

    def __init__(self, config: SliceConfig | None = None) -> None:
        self.log = Log()
        self.config = config or SliceConfig()
        self.n = 0
        self.log.turn(1)

    def step(self, *tools: tuple[Any, ...]) -> list[int]:
        self.n += 1
        seqs = self.log.step(1, self.n, list(tools))  # type: ignore[arg-type]
        self.folds = self.log.fold(self.config)
        return seqs

    def read(self, path: str, **args: Any) -> int:
        (seq,) = self.step(("read", {"file_path": path, **args}, BIG))
        return seq

    def expand(self, ok: bool = True, **args: Any) -> None:
        self.step(("expand_result", args, "[full result of read]\n" + BIG, not ok))

    def status_of(self, seq: int) -> str:
        return next(r.status for r in preview_fold(self.log.session(), self.config) if r.original == seq)
