"""The user messages tapedeck writes into a log: one text block, and where it came from (``source``)."""

from __future__ import annotations

import uuid
from typing import Any


def user_text(text: str, source: dict[str, Any], message_id: str | None = None) -> dict[str, Any]:
    """A user message of one text block (a fresh id unless ``message_id`` is given)."""
    return {
        "id": message_id or str(uuid.uuid4()),
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "source": source,
    }


def user_message(text: str, source: dict[str, Any]) -> dict[str, Any]:
    """A ``user/message`` surface event (append) with one text block."""
    return {"type": "user/message", "data": user_text(text, source), "surfaceOp": "append"}
