"""Builders for the adaptive-policy tests: a session log grown step by step, as the host writes it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.policies.adaptive_config import AdaptiveConfig, validate
from core.read.session import Session
from tests.messages import tool_result_message

HEADER = {
    "type": "session",
    "version": 0,
    "id": "sess-adaptive",
    "createdAt": 1,
    "cwd": "/w",
    "delegationDepth": 0,
}


def extend(session: Session, planned: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> list[int]:
    """Append planned events the way the host does (seq and time assigned in order); their seqs."""
    seqs = []
    for event in planned:
        seq = session.next_seq
        session.apply({**event, "seq": seq, "time": 1000 + seq})
        seqs.append(seq)
    return seqs


def add(session: Session, etype: str, data: dict[str, Any], **envelope: Any) -> int:
    """Append one event built here; its seq."""
    return extend(session, [{"type": etype, "data": data, **envelope}])[0]


def user(session: Session, text: str, kind: str = "user") -> int:
    """A ``user/message`` with one text block."""
    data = {
        "id": f"u{session.next_seq}",
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "source": {"kind": kind},
    }
    return add(session, "user/message", data, surfaceOp="append")


def start_turn(session: Session, turn: int, prompt: str | None = None) -> None:
    """``turn/start``, then the prompt (when given) as the user's message."""
    add(session, "turn/start", {"turn": turn})
    if prompt is not None:
        user(session, prompt)


def end_turn(session: Session, turn: int) -> None:
    """A completed ``turn/end``."""
    add(session, "turn/end", {"turn": turn, "reason": {"kind": "completed"}})


def tool_step(
    session: Session,
    turn: int,
    step: int,
    results: Sequence[str | tuple[str, bool]] = (),
    *,
    start: bool = True,
    close: bool = True,
) -> list[int]:
    """One step: ``step/start``, an assistant message calling bash once per result, the calls and results.

    A result is its text, or ``(text, is_error)``. ``start=False`` continues a step already started. Returns
    the result seqs.
    """
    if start:
        add(session, "step/start", {"turn": turn, "step": step})
    ids = [f"c{turn}-{step}-{i}" for i in range(len(results))]
    content = [{"type": "tool-call", "id": cid, "name": "bash", "arguments": "{}"} for cid in ids]
    content = content or [{"type": "text", "text": f"thinking at {turn}.{step}"}]
    message = {"id": f"a{turn}-{step}", "role": "assistant", "content": content,
               "source": {"kind": "model", "provider": "p", "model": "m"}}  # fmt: skip
    add(session, "assistant/message", {"turn": turn, "step": step, "message": message}, surfaceOp="append")
    seqs = []
    for cid, result in zip(ids, results, strict=True):
        text, is_error = (result, False) if isinstance(result, str) else result
        call = add(
            session,
            "tool/call",
            {"turn": turn, "step": step, "callId": cid, "name": "bash", "arguments": "{}"},
        )
        msg = tool_result_message(cid, text, is_error)
        seqs.append(
            add(
                session,
                "tool/result",
                {"turn": turn, "step": step, "message": msg},
                sourceEventSeqs=[call],
                surfaceOp="append",
            )
        )
    if close:
        add(session, "step/end", {"turn": turn, "step": step})
    return seqs


def new_session() -> Session:
    """An empty in-memory session."""
    return Session(HEADER)


def replayed(session: Session) -> Session:
    """The same events projected from scratch."""
    return Session.from_events(HEADER, list(session.events))


def small_levels(**router: Any) -> AdaptiveConfig:
    """Default profiles with three small prune levels (handy sizes for tests) and optional router settings."""
    levels = [
        {"name": "moderate", "atStep": 3, "atPressureRatio": 0.45, "thresholdChars": 800, "headChars": 500,
         "tailChars": 100, "protectRecentSteps": 1, "minimumCharsRemoved": 100},
        {"name": "tight", "atStep": 5, "atPressureRatio": 0.65, "thresholdChars": 400, "headChars": 200,
         "tailChars": 100, "protectRecentSteps": 1, "minimumCharsRemoved": 50},
        {"name": "critical", "atStep": 7, "atPressureRatio": 0.75, "thresholdChars": 200, "headChars": 80,
         "tailChars": 50, "protectRecentSteps": 0, "minimumCharsRemoved": 10},
    ]  # fmt: skip
    return validate({"pruneLevels": levels, "riskRouter": router})
