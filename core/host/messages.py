"""The DSH shapes of the surface events the host writes: user messages and tool results."""

from __future__ import annotations

import uuid
from typing import Any, Protocol


class ResultLike(Protocol):
    """What a tool result event is built from."""

    text: str
    is_error: bool
    error: dict[str, str] | None
    meta: Any


def user_message(text: str, source: dict[str, Any]) -> dict[str, Any]:
    """A ``user/message`` surface event (append) with one text block."""
    return {
        "type": "user/message",
        "data": {
            "id": str(uuid.uuid4()),
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": source,
        },
        "surfaceOp": "append",
    }


def tool_result(turn: int, step: int, call_id: str, call_seq: int, outcome: ResultLike) -> dict[str, Any]:
    """A ``tool/result`` surface event (append) citing its ``tool/call``; ``data.error``/``meta`` are log-only."""
    block = {
        "type": "tool-result",
        "toolCallId": call_id,
        "content": [{"type": "text", "text": outcome.text}],
        "isError": bool(outcome.is_error),
    }
    data: dict[str, Any] = {
        "turn": turn,
        "step": step,
        "message": {
            "id": str(uuid.uuid4()),
            "role": "user",
            "content": [block],
            "source": {"kind": "tool", "callId": call_id},
        },
    }
    if outcome.error:
        data["error"] = outcome.error
    if outcome.meta is not None:
        data["meta"] = outcome.meta
    return {"type": "tool/result", "data": data, "sourceEventSeqs": [call_seq], "surfaceOp": "append"}
