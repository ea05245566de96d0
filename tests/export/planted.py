"""Logs with planted secrets: a real DSH fixture whose user message, tool result and final answer carry text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from tests.conftest import FIXTURES

BASE = FIXTURES / "tool-call-turn.session.jsonl"


def plant(target: Path, user: str, result: str, answer: str, structure: str | None = None) -> Path:
    """Write ``BASE`` to ``target`` with ``user`` appended to its user message, ``result`` as its tool result's
    text and ``answer`` appended to its final answer; with ``structure``, it is also where a damaged or hostile
    log may put anything: the user message's role and source kind, the tool result's surface op, and the type,
    role and kind of an event of a type no reader knows."""
    items: list[dict[str, Any]] = [orjson.loads(line) for line in BASE.read_bytes().splitlines()]
    if structure is not None:
        items.append({"type": f"x/{structure}", "data": {"role": structure, "kind": structure}, "ignorable": True})
    answers = [i for i in items if i.get("type") == "assistant/message"
               and any(b.get("type") == "text" for b in i["data"]["message"]["content"])]  # fmt: skip
    for item in items:
        data = item.get("data") or {}
        if item.get("type") == "user/message" and data.get("source", {}).get("kind") == "user":
            data["content"][0]["text"] += " " + user
            if structure is not None:
                data["role"] = data["source"]["kind"] = structure
        elif item.get("type") == "tool/result":
            data["message"]["content"][0]["content"][0]["text"] = result
            if structure is not None:
                item["surfaceOp"] = structure
    blocks = answers[-1]["data"]["message"]["content"]
    next(b for b in blocks if b.get("type") == "text")["text"] += " " + answer
    target.write_bytes(b"\n".join(orjson.dumps(i) for i in items) + b"\n")
    return target


def with_arguments(log: Path, arguments: str | dict[str, Any]) -> Path:
    """``log`` with its tool call's arguments (in the call and in the message that made it) set to ``arguments``:
    JSON text, or an object (as DSH's code dispatch writes them)."""
    items = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    for item in items:
        data = item.get("data") or {}
        if item.get("type") == "tool/call":
            data["arguments"] = arguments
        for block in (data.get("message") or {}).get("content") or ():
            if isinstance(block, dict) and block.get("type") == "tool-call":
                block["arguments"] = arguments
    log.write_bytes(b"\n".join(orjson.dumps(i) for i in items) + b"\n")
    return log
