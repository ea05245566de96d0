"""What a scripted model reads from the request it is sent: the situation it has to answer.

A request's messages are DSH messages, each with its ``source``. The scripted model looks only at what a real
model would have in front of it: the tools it may call (``tool_choice`` ``none`` in the finalization phase
forbids them), the task prompt the conversation is about, and what arrived since its own last answer: tool
results, a message from the operator, a notice asking it to do something before it ends the turn, a rewind
report. Phase notes (``source.kind`` ``phase-note``) are instructions about pacing and say nothing new here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.policies.report import REPORT_SOURCE
from core.shared.chat import ModelRequest

PHASE_NOTE = "phase-note"
_NAMED_TOOL = re.compile(r"`([^`\s]+)`")


def message_text(message: Mapping[str, Any]) -> str:
    """The text blocks of a message, joined by newlines."""
    return "\n".join(
        str(b.get("text", ""))
        for b in message.get("content") or ()
        if isinstance(b, Mapping) and b.get("type") == "text"
    )


def _source(message: Mapping[str, Any]) -> Mapping[str, Any]:
    source = message.get("source")
    return source if isinstance(source, Mapping) else {}


def _blocks(message: Mapping[str, Any], kind: str) -> list[Mapping[str, Any]]:
    return [b for b in message.get("content") or () if isinstance(b, Mapping) and b.get("type") == kind]


def latest_results(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The tool-result blocks that arrived after the last assistant message."""
    results: list[Mapping[str, Any]] = []
    for message in reversed(messages):
        if message.get("role") == "assistant":
            break
        results[:0] = _blocks(message, "tool-result")
    return results


def result_text(block: Mapping[str, Any]) -> str:
    """The text of one tool-result block."""
    return message_text(block)


def tool_names(request: ModelRequest) -> list[str]:
    """The tools the request lets the model call: none under ``tool_choice`` ``none``."""
    if request.tool_choice == "none":
        return []
    names = (t.get("name") or (t.get("function") or {}).get("name") for t in request.tools)
    return [n for n in names if isinstance(n, str)]


@dataclass
class Situation:
    """What arrived since the model's last answer, read from one request.

    ``prompt`` is the index of the newest user message whose whole text is one of the prompts the model knows
    (a new task; nothing before it counts), or None. ``operator`` holds the texts of the other user messages (an operator's steering
    message, or a prompt nobody planned for). ``notice`` is the text of a notice asking for something before
    the turn ends (the rewind guard's reminder), and ``asked_tool`` the tool it names that the model may call.
    ``results`` are the tool results. ``reports`` are the texts of every rewind report in the request (wherever
    a rewind put them), and ``called`` the tools the model's last answer called.
    """

    tools: list[str]
    prompt: int | None = None
    operator: list[str] = field(default_factory=list)
    notice: str | None = None
    asked_tool: str | None = None
    results: list[Mapping[str, Any]] = field(default_factory=list)
    reports: list[str] = field(default_factory=list)
    called: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, request: ModelRequest, prompts: Sequence[str]) -> Situation:
        """Read the situation of ``request`` for a model that knows ``prompts``."""
        known = {text: n for n, text in enumerate(prompts)}
        messages = [m for m in request.messages if _source(m).get("kind") != PHASE_NOTE]
        situation = cls(tools=tool_names(request), results=latest_results(messages))
        situation.reports = [message_text(m) for m in messages if _source(m) == REPORT_SOURCE]
        for message in reversed(messages):
            role, source = message.get("role"), _source(message)
            if role == "assistant":
                situation.called = [str(b.get("name")) for b in _blocks(message, "tool-call")]
                break
            if role != "user" or _blocks(message, "tool-result") or source == REPORT_SOURCE:
                continue
            text = message_text(message)
            if source.get("form") == "notice":
                if situation.notice is None:
                    situation.notice = text
                    named = [n for n in _NAMED_TOOL.findall(text) if n in situation.tools]
                    situation.asked_tool = named[0] if named else None
            elif source.get("kind") == "user":
                if text in known:  # the task starts here: what lies before it is earlier turns' context
                    situation.prompt = known[text]
                    break
                situation.operator.insert(0, text)
        return situation
