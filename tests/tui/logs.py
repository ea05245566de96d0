"""Small DSH logs for the TUI tests: a tapedeck-host session with a fold, a tape entry, a route and an error."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from core.log import owner
from tests.log.helpers import HEADER, assistant, tool_call, tool_result, user

ORDER = ("type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp", "ignorable")
HOST = {
    "pid": 1,
    "version": "0.1.0",
    "provider": "scripted",
    "model": "demo",
    "inbox": "control.jsonl",
    "workspace": "/w",
    "tasks": ["fix it"],
    "resumed": False,
}


_HELD: list[int] = []


def hold_host(path: Path) -> None:
    """Hold the owner lock of ``path`` until the test ends, as the live host of that session would."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    assert owner.acquire(fd)
    _HELD.append(fd)


def release_hosts() -> None:
    """The simulated hosts of the test that ended exit."""
    while _HELD:
        os.close(_HELD.pop())


class Log:
    """Events with contiguous seqs and fixed times, written as raw JSONL."""

    def __init__(self, header: dict[str, Any] = HEADER) -> None:
        self.header = header
        self.events: list[dict[str, Any]] = []

    def add(self, body: dict[str, Any]) -> int:
        """Append one event body; return its seq."""
        seq = len(self.events)
        event = {**body, "seq": seq, "time": 1000 + seq}
        self.events.append({k: event[k] for k in ORDER if k in event})
        return seq

    def turn(
        self, n: int, prompt: str, result: str, *, error: bool = False, tool: str = "bash"
    ) -> dict[str, int]:
        """A complete turn: prompt, a tool call and its result, a final answer; the seqs of its parts."""
        seqs = {"start": self.add({"type": "turn/start", "data": {"turn": n}})}
        seqs["step1"] = self.add({"type": "step/start", "data": {"turn": n, "step": 1}})
        seqs["prompt"] = self.add(user(prompt))
        seqs["ask"] = self.add(assistant(n, 1, "", [(f"c{n}", tool)]))
        seqs["call"] = self.add(tool_call(n, 1, f"c{n}", tool, '{"command":"ls"}'))
        seqs["result"] = self.add(tool_result(n, 1, f"c{n}", result, seqs["call"], error))
        self.add({"type": "step/end", "data": {"turn": n, "step": 1}})
        seqs["step2"] = self.add({"type": "step/start", "data": {"turn": n, "step": 2}})
        seqs["answer"] = self.add(assistant(n, 2, f"answer {n}"))
        self.add({"type": "step/end", "data": {"turn": n, "step": 2}})
        seqs["end"] = self.add({"type": "turn/end", "data": {"turn": n, "reason": {"kind": "completed"}}})
        return seqs

    def fold(self, result_seq: int, digest: str) -> int:
        """A fold of a tool result: a tool/result replacement whose meta names the policy."""
        original = self.events[result_seq]
        data = orjson.loads(orjson.dumps(original["data"]))
        block = data["message"]["content"][0]
        before = len(block["content"][0]["text"])
        block["content"] = [{"type": "text", "text": digest}]
        data["meta"] = {"policy": "fold", "digest": "text", "charsBefore": before, "charsAfter": len(digest)}
        return self.add(
            {
                "type": "tool/result",
                "data": data,
                "sourceEventSeqs": [result_seq],
                "surfaceOp": {"op": "replace", "start": result_seq, "end": result_seq},
            }
        )

    def tape(self, first: int, last: int, nodes: list[int], text: str) -> int:
        """A slice tape entry replacing ``nodes`` (a contiguous run of the surface)."""
        body = user(
            f"[slice tape v1 · turns {first}-{last} · 1 turn(s) sealed]\n{text}", "plugin:slice:history"
        )
        body["data"]["id"] = f"tape-{first}-{last}"
        body["sourceEventSeqs"] = nodes
        body["surfaceOp"] = {"op": "replace", "start": nodes[0], "end": nodes[-1]}
        return self.add(body)

    def route(self, turn: int, task_class: str, phase: str) -> int:
        """A router decision."""
        return self.add(
            {
                "type": "tapedeck/route",
                "data": {"turn": turn, "step": 1, "taskClass": task_class, "phase": phase, "risk": {}},
                "ignorable": True,
            }
        )

    def host(self) -> int:
        """The event that marks a log a tapedeck host owns."""
        return self.add({"type": "tapedeck/host", "data": HOST, "ignorable": True})

    def lines(self, events: list[dict[str, Any]] | None = None) -> bytes:
        """JSONL bytes of ``events`` (all events and the header when None)."""
        if events is None:
            return b"".join(orjson.dumps(x) + b"\n" for x in [self.header, *self.events])
        return b"".join(orjson.dumps(x) + b"\n" for x in events)

    def write(self, path: Path) -> Path:
        """Write the whole log to ``path``; a log with a ``tapedeck/host`` event gets a live (simulated) host."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.lines())
        if any(e.get("type") == "tapedeck/host" for e in self.events):
            hold_host(path)
        return path


def policy_log(host: bool = True) -> Log:
    """Three turns: turn 1's result folded, turn 1 sealed into a tape entry, a route, an error in turn 3."""
    log = Log()
    if host:
        log.host()
    t1 = log.turn(1, "list the files", "a.txt\nb.txt\n" * 40)
    folded = log.fold(t1["result"], "[folded: 2 names x 40]")
    log.turn(2, "run the tests", "3 passed")
    log.tape(1, 1, [t1["prompt"], t1["ask"], folded, t1["answer"]], "turn 1: listed files")
    log.route(3, "small", "explore")
    log.turn(3, "fix the failure", "Traceback: boom", error=True)
    return log


def append(path: Path, log: Log, start: int) -> None:
    """Append the events of ``log`` from ``start`` to ``path`` in one write."""
    with open(path, "ab") as f:
        f.write(log.lines(log.events[start:]))


def streaming_log() -> Log:
    """``policy_log`` with a fourth turn whose model stream is still coming in (reasoning, then the answer)."""
    log = policy_log()
    log.add({"type": "turn/start", "data": {"turn": 4}})
    log.add(user("summarise the fix"))
    log.add({"type": "step/start", "data": {"turn": 4, "step": 1}})
    pieces = [("reasoning-delta", 1, w) for w in ("The ", "traceback ", "came ", "from ", "boom; ", "say ", "so. ")]
    pieces += [("text-delta", 0, w) for w in ("The ", "failure ", "was ", "a ", "raised ", "`boom` ")]
    for kind, index, text in pieces:
        chunk = {"type": kind, "index": index, "text": text}
        log.add({"type": "assistant/chunk", "data": {"turn": 4, "step": 1, "chunk": chunk}})
    return log
