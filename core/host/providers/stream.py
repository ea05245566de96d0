"""Assembling one model attempt from streamed pieces while reporting each piece as a DSH ``StreamChunk``.

Both providers feed a ``BlockStream``: prose deltas (text, reasoning) extend the newest block of their kind
or open a new one, tool-call deltas extend the block their provider-side key opened. The chunks it emits are
the ones DSH writes: ``block-start``, ``text-delta`` / ``reasoning-delta`` / ``tool-call-delta`` (with the call's
``id`` and ``name`` on every delta), then at the end one ``block-end`` per block, ``usage`` when known, and
exactly one ``finish``.
"""

from __future__ import annotations

import uuid
from collections.abc import Hashable
from typing import Any

from core.shared.chat import ChunkSink, Completion


class BlockStream:
    """One attempt's content blocks, built from deltas and mirrored to a chunk sink."""

    def __init__(self, sink: ChunkSink | None) -> None:
        self._sink = sink
        self._kinds: list[str] = []
        self._parts: list[list[str]] = []
        self._calls: dict[int, dict[str, str]] = {}
        self._call_index: dict[Hashable, int] = {}
        self.usage: dict[str, int] | None = None

    def _emit(self, chunk: dict[str, Any]) -> None:
        if self._sink is not None:
            self._sink(chunk)

    def _open(self, kind: str) -> int:
        index = len(self._kinds)
        self._kinds.append(kind)
        self._parts.append([])
        self._emit({"type": "block-start", "index": index, "blockType": kind})
        return index

    def _prose(self, kind: str, delta: str | None) -> None:
        if not delta:
            return
        index = len(self._kinds) - 1 if self._kinds and self._kinds[-1] == kind else self._open(kind)
        self._parts[index].append(delta)
        self._emit({"type": f"{kind}-delta", "index": index, "text": delta})

    def text(self, delta: str | None) -> None:
        """Append visible answer text."""
        self._prose("text", delta)

    def reasoning(self, delta: str | None) -> None:
        """Append reasoning ("thinking") text."""
        self._prose("reasoning", delta)

    def tool_call(
        self, key: Hashable, *, call_id: str | None, name: str | None, arguments: str | None
    ) -> None:
        """Extend the tool call that ``key`` (the provider's own call index) identifies, opening it if new."""
        index = self._call_index.get(key)
        if index is None:
            index = self._call_index[key] = self._open("tool-call")
            self._calls[index] = {"id": call_id or f"call_{uuid.uuid4().hex[:24]}", "name": name or ""}
        call = self._calls[index]
        if name and not call["name"]:
            call["name"] = name
        delta = arguments or ""
        self._parts[index].append(delta)
        chunk: dict[str, Any] = {"type": "tool-call-delta", "index": index, "id": call["id"]}
        if call["name"]:
            chunk["name"] = call["name"]
        chunk["argumentsDelta"] = delta
        self._emit(chunk)

    @property
    def has_tool_calls(self) -> bool:
        """Whether any tool call was opened."""
        return bool(self._calls)

    @property
    def blocks(self) -> list[dict[str, Any]]:
        """The DSH content blocks so far, in stream order."""
        out: list[dict[str, Any]] = []
        for index, kind in enumerate(self._kinds):
            body = "".join(self._parts[index])
            if kind == "tool-call":
                out.append({"type": kind, **self._calls[index], "arguments": body})
            else:
                out.append({"type": kind, "text": body})
        return out

    def close(self, finish: str, error: dict[str, Any] | None = None) -> Completion:
        """End the attempt: emit block ends, usage and the finish chunk; return the Completion."""
        blocks = self.blocks
        for index, block in enumerate(blocks):
            self._emit({"type": "block-end", "index": index, "block": block})
        if self.usage is not None:
            self._emit({"type": "usage", "usage": self.usage})
        reason: dict[str, Any] = {"kind": finish}
        if error is not None:
            reason["failure"] = {"message": error["message"], "code": error["code"]}
        self._emit({"type": "finish", "reason": reason})
        return Completion(content=blocks, finish=finish, usage=self.usage, error=error)
