"""Messages as the host logs them, built once for every test log builder."""

from __future__ import annotations

from typing import Any


def tool_result_message(
    call_id: str, text: str, is_error: bool = False, message_id: str | None = None
) -> dict[str, Any]:
    """The user message a ``tool/result`` event carries: one text block answering ``call_id``, its id
    ``message_id`` (default ``r-<call_id>``)."""
    block = {
        "type": "tool-result",
        "toolCallId": call_id,
        "content": [{"type": "text", "text": text}],
        "isError": is_error,
    }
    return {
        "id": f"r-{call_id}" if message_id is None else message_id,
        "role": "user",
        "content": [block],
        "source": {"kind": "tool", "callId": call_id},
    }
