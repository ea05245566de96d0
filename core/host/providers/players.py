"""How a script picks the response to a request: in one fixed order, or by the situation the request shows.

``SequencePlayer`` plays a script's ``responses`` one per call, whatever happens. ``PlanPlayer`` plays a
script's ``plans``: one list of responses per task prompt, chosen by reading each request, so an operator who
acts at any point (a checkpoint, a rewind, a message, a pause, a config change) cannot derail it:

- a known task prompt that arrived since the model's last answer starts its plan; a message that is no known
  prompt, arriving when no plan is under way (an operator's message that started a turn), gets a short reply
  quoting it; anything else continues the plan under way;
- under ``tool_choice`` ``none`` (the finalization phase) it gives the plan's final answer at once;
- a notice asking for a tool before the turn ends (the rewind guard) gets a call to that tool;
- an operator's message since its last answer, or a rewind report it has not seen and did not cause (an
  operator's rewind), is acknowledged in front of the next planned response;
- otherwise it plays the plan's next response, and the final answer again once the plan is through.

The plan's last response is its final answer: text and no tool calls. Nothing here ever runs out.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from core.host.providers.situation import Situation, latest_results
from core.shared.chat import ModelRequest

QUOTE_CHARS = 80
REWIND_TOOL = "rewind"  # the tool the plans fold their own explorations with


def take_alternative(
    response: dict[str, Any], results: Sequence[Mapping[str, Any]], queue: deque[dict[str, Any]]
) -> dict[str, Any]:
    """``response``, or its first ``onError`` alternative when one of ``results`` is an error (the others are
    queued for the calls after it)."""
    if "onError" in response and any(b.get("isError") is True for b in results):
        first, *rest = response["onError"]
        queue.extendleft(reversed(rest))
        return first
    return response


class SequencePlayer:
    """One response per call, in the script's order; None once the script is through."""

    def __init__(self, responses: list[dict[str, Any]]) -> None:
        self.responses = responses
        self.cursor = 0
        self.spliced: deque[dict[str, Any]] = deque()

    @property
    def remaining(self) -> int:
        """Responses not played yet (alternatives spliced in by ``onError`` included)."""
        return len(self.spliced) + len(self.responses) - self.cursor

    def state(self) -> dict[str, Any]:
        """Where the script stands, as JSON."""
        return {"cursor": self.cursor, "spliced": list(self.spliced)}

    def restore(self, state: Mapping[str, Any]) -> bool:
        """Continue from a ``state``; False when it does not fit this script."""
        cursor, spliced = state.get("cursor"), state.get("spliced", [])
        if not isinstance(cursor, int) or not 0 <= cursor <= len(self.responses) or not isinstance(spliced, list):
            return False
        self.cursor, self.spliced = cursor, deque(spliced)
        return True

    def next(self, request: ModelRequest) -> dict[str, Any] | None:
        """The response to ``request``, or None when none is left."""
        if not self.remaining:
            return None
        if self.spliced:
            response = self.spliced.popleft()
        else:
            response = self.responses[self.cursor]
            self.cursor += 1
        return take_alternative(response, latest_results(request.messages), self.spliced)


class _Plan:
    def __init__(self, prompt: str, responses: list[dict[str, Any]]) -> None:
        self.prompt = prompt
        self.responses = responses
        self.cursor = 0
        self.spliced: deque[dict[str, Any]] = deque()
        self.finished = False

    @property
    def final(self) -> dict[str, Any]:
        return self.responses[-1]


class PlanPlayer:
    """Plans chosen and advanced by the situation each request shows (see the module docstring)."""

    def __init__(self, plans: list[dict[str, Any]]) -> None:
        self.plans = [_Plan(p["prompt"], p["responses"]) for p in plans]
        self.current: int | None = None
        self.reports: list[str] = []  # digests of the rewind reports seen so far

    @property
    def remaining(self) -> int:
        """Planned responses not played yet."""
        return sum(len(p.spliced) + len(p.responses) - p.cursor for p in self.plans if not p.finished)

    def state(self) -> dict[str, Any]:
        """Where every plan stands, as JSON."""
        return {
            "current": self.current,
            "reports": list(self.reports),
            "plans": [
                {"cursor": p.cursor, "spliced": list(p.spliced), "finished": p.finished} for p in self.plans
            ],
        }

    def restore(self, state: Mapping[str, Any]) -> bool:
        """Continue from a ``state``; False when it does not fit these plans."""
        current, plans, reports = state.get("current"), state.get("plans"), state.get("reports", [])
        if not isinstance(plans, list) or len(plans) != len(self.plans):
            return False
        if not isinstance(reports, list) or not all(isinstance(r, str) for r in reports):
            return False
        if current is not None and (not isinstance(current, int) or not 0 <= current < len(self.plans)):
            return False
        for plan, saved in zip(self.plans, plans, strict=True):
            cursor = saved.get("cursor") if isinstance(saved, Mapping) else None
            if not isinstance(cursor, int) or not 0 <= cursor <= len(plan.responses):
                return False
            if not isinstance(saved.get("spliced", []), list):
                return False
        for plan, saved in zip(self.plans, plans, strict=True):
            plan.cursor, plan.spliced = saved["cursor"], deque(saved.get("spliced", []))
            plan.finished = saved.get("finished") is True
        self.current, self.reports = current, list(reports)
        return True

    def next(self, request: ModelRequest) -> dict[str, Any]:
        """The response to ``request``: always one."""
        situation = Situation.read(request, [p.prompt for p in self.plans])
        fresh = [d for d in (_digest(text) for text in situation.reports) if d not in self.reports]
        self.reports.extend(fresh)
        folded = bool(fresh) and REWIND_TOOL not in situation.called  # someone else's rewind
        if situation.prompt is not None:
            self.current = situation.prompt
        elif situation.operator and (self.current is None or self.plans[self.current].finished):
            self.current = None  # a message that is no planned task: the turn is about it
        if situation.notice is not None and situation.asked_tool is not None:
            return {
                "text": "Doing what the notice asks before I finish.",
                "toolCalls": [{"name": situation.asked_tool, "arguments": {}}],
            }
        if self.current is None:
            return _reply(situation.operator)
        response = self._advance(self.plans[self.current], situation)
        return _acknowledged(response, situation.operator, folded)

    @staticmethod
    def _advance(plan: _Plan, situation: Situation) -> dict[str, Any]:
        if plan.finished or not situation.tools:
            plan.finished = True
            return plan.final
        if plan.spliced:
            response = plan.spliced.popleft()
        else:
            response = plan.responses[plan.cursor]
            plan.cursor += 1
        response = take_alternative(response, situation.results, plan.spliced)
        if not plan.spliced and plan.cursor == len(plan.responses):
            plan.finished = True
        return response


def _quote(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= QUOTE_CHARS else line[: QUOTE_CHARS - 1] + "…"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:12]


def _acknowledged(response: dict[str, Any], messages: list[str], folded: bool) -> dict[str, Any]:
    """``response`` with a first paragraph on what arrived meanwhile: operator messages, someone's rewind."""
    said = []
    if folded:
        said.append("The recent work is folded into a rewind report now; I'll carry on from it.")
    if messages:
        quoted = " ".join(f"“{_quote(m)}”" for m in messages)
        said.append(f"Noted your message {quoted}; carrying on with the task.")
    if not said:
        return response
    text = response.get("text")
    return {**response, "text": "\n\n".join([" ".join(said), *([text] if text else [])])}


def _reply(messages: list[str]) -> dict[str, Any]:
    if not messages:
        return {"text": "Done; nothing else was asked of me."}
    said = " ".join(f"“{_quote(m)}”" for m in messages)
    return {"text": f"Message received: {said}. It asks for no change to the work, so I have nothing to run."}
