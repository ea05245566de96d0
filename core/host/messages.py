"""The DSH shape of the tool results the host writes (its user messages: ``core.log.messages``)."""

from __future__ import annotations

import uuid
from typing import Any, Protocol


class ResultLike(Protocol):
    """What a tool result event is built from."""

    text: str
    is_error: bool
    error: dict[str, str] | None
    meta: Any


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
