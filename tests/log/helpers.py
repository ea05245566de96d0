"""Builders for small, valid DSH logs used across the engine tests."""

from __future__ import annotations

from typing import Any

import orjson
import zstandard
from hypothesis import strategies as st


def fresh(value: Any) -> st.SearchStrategy[Any]:
    """``value`` (plain JSON data), a new copy at each draw: ``st.just`` and ``st.sampled_from`` hand out one object,
    so a mutation of one event's copy, or a copy nested in itself, would reach every other (orjson cannot write a
    dict that holds itself)."""
    return st.builds(lambda: orjson.loads(orjson.dumps(value)))


HEADER = {"type": "session", "version": 0, "id": "t-1", "createdAt": 1, "cwd": "/w", "delegationDepth": 0}


def user(text: str, kind: str = "user") -> dict[str, Any]:
    """A user/message event body (append)."""
    return {
        "type": "user/message",
        "data": {
            "id": f"u-{text[:8]}",
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": {"kind": kind},
        },
        "surfaceOp": "append",
    }


def assistant(turn: int, step: int, text: str = "", calls: list[tuple[str, str]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    """An assistant/message event body with optional tool-call blocks ``(id, name)``."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool-call", "id": cid, "name": name, "arguments": "{}"} for cid, name in calls]
    return {
        "type": "assistant/message",
        "data": {
            "turn": turn,
            "step": step,
            "message": {"id": f"a-{turn}-{step}", "role": "assistant", "content": content,
                        "source": {"kind": "model", "provider": "p", "model": "m"}},
        },
        "surfaceOp": "append",
    }  # fmt: skip


def tool_call(turn: int, step: int, cid: str, name: str = "bash", args: str = "{}") -> dict[str, Any]:
    """A tool/call event body."""
    return {
        "type": "tool/call",
        "data": {"turn": turn, "step": step, "callId": cid, "name": name, "arguments": args},
    }


def tool_result(
    turn: int, step: int, cid: str, text: str, call_seq: int, is_error: bool = False
) -> dict[str, Any]:
    """A tool/result event body (append) citing its call."""
    return {
        "type": "tool/result",
        "data": {
            "turn": turn,
            "step": step,
            "message": {
                "id": f"r-{cid}",
                "role": "user",
                "content": [{"type": "tool-result", "toolCallId": cid, "content": [{"type": "text", "text": text}],
                             "isError": is_error}],
                "source": {"kind": "tool", "callId": cid},
            },
        },
        "sourceEventSeqs": [call_seq],
        "surfaceOp": "append",
    }  # fmt: skip


def number(events: list[dict[str, Any]], start_time: int = 1000) -> list[dict[str, Any]]:
    """Give events contiguous seq and increasing time, in DSH key order."""
    out = []
    for i, e in enumerate(events):
        ordered = {"type": e["type"], "seq": i, "time": start_time + i, "data": e.get("data", {})}
        for k in ("sourceEventSeqs", "surfaceOp", "ignorable"):
            if k in e:
                ordered[k] = e[k]
        out.append(ordered)
    return out


def one_turn_with_tool(text: str = "hello output") -> list[dict[str, Any]]:
    """A complete turn: prompt, a tool call and its result, a final answer."""
    return number(
        [
            {"type": "turn/start", "data": {"turn": 1}},
            {"type": "step/start", "data": {"turn": 1, "step": 1}},
            user("run it"),
            assistant(1, 1, "", [("c1", "bash")]),
            tool_call(1, 1, "c1"),
            tool_result(1, 1, "c1", text, 4),
            {"type": "step/end", "data": {"turn": 1, "step": 1}},
            {"type": "step/start", "data": {"turn": 1, "step": 2}},
            assistant(1, 2, "done"),
            {"type": "step/end", "data": {"turn": 1, "step": 2}},
            {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}},
        ]
    )


def raw_log(events: list[dict[str, Any]], header: dict[str, Any] = HEADER) -> bytes:
    """The raw JSONL bytes of a log."""
    return b"".join(orjson.dumps(x) + b"\n" for x in [header, *events])


def zstd_log(events: list[dict[str, Any]], batch: int = 3, header: dict[str, Any] = HEADER) -> bytes:
    """A zstd log: the header in frame 1, then one checksummed frame per ``batch`` events."""
    c = zstandard.ZstdCompressor(write_checksum=True)
    out = c.compress(orjson.dumps(header) + b"\n")
    for i in range(0, len(events), batch):
        out += c.compress(b"".join(orjson.dumps(e) + b"\n" for e in events[i : i + batch]))
    return out
