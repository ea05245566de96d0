"""Where the adaptive phase text goes in a request: pinned in the conversation where its phase began.

The spec puts the phase text (``<task_policy>``, ``<task_checkpoint>``, ``<task_finalization>``) in a
system-prompt section that is replaced whenever the phase changes. Every change then rewrites the request
head, and providers lose their whole prefix cache two or three times a turn. Sending it as a trailing message
instead still moves it every step, so the model's previous output is never part of the cached prefix.

tapedeck pins each phase text in the open conversation: a note is placed right after the last node that
existed when the route event that started the phase was logged, and stays there. Requests therefore only
grow between phase changes, and a change costs the bytes of its note. Notes are never written to the log as
messages (the spec's rule); they are re-derived from the logged ``tapedeck/route`` events, so a restarted host
builds byte-identical requests. A note disappears with its turn once sealing or a rewind replaces the nodes
around it, which is a rewrite at that point already.

Notes go out as ``user`` messages: some chat templates (DeepSeek's among them) hoist every ``system`` message
into the system prompt, which would put the phase text back at the head.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from core.policies.adaptive import ROUTE_EVENT, phase_text
from core.policies.risk import RiskDecision
from core.session import Session, derive_message

# Surface node types whose raw presence means their turn's notes may still be in place.
_TURN_CONTENT = frozenset({"assistant/message", "tool/result"})


@lru_cache(maxsize=256)
def note_message(text: str) -> dict[str, Any]:
    """The message that carries one phase note (one shared object per text; treat it as read-only)."""
    return {"role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "phase-note"}}


def route_text(data: dict[str, Any]) -> str | None:
    """The phase text a logged route decision stood for, or None when the event is malformed."""
    task_class, phase = data.get("taskClass"), data.get("phase")
    if not isinstance(task_class, str) or not isinstance(phase, str):
        return None
    risk = data.get("risk")
    decision = RiskDecision.from_dict(risk) if isinstance(risk, dict) else None
    try:
        return phase_text(task_class, phase, decision)
    except KeyError:  # a class this build does not know: no note rather than a guess
        return None


def _span(session: Session, seq: int) -> tuple[int, int]:
    """The original seqs a surface node stands for, as ``(first, last)``."""
    if not session.is_replacement(seq):
        return seq, seq
    originals = [session.original_of(s) for s in session.sources_of(seq)] or [seq]
    return min(originals), max(originals)


def _spans(session: Session) -> list[tuple[int, int, int]]:
    """``(seq, first, last)`` of every surface node, in model order."""
    return [(seq, *_span(session, seq)) for seq in session.surface]


def _note_turns(session: Session, spans: Iterable[tuple[int, int, int]]) -> list[int]:
    """Turns that may still show notes: the open turn and every turn with raw model or tool output."""
    turns = {session.turn_of(lo) for seq, lo, _ in spans if session.events[seq].get("type") in _TURN_CONTENT}
    if session.open_turn is not None:
        turns.add(session.open_turn)
    return sorted(t for t in turns if t in session.turns)


def phase_notes(session: Session, spans: list[tuple[int, int, int]] | None = None) -> list[tuple[int, str]]:
    """``(anchor seq, text)`` of every phase note in a turn that can still show one, oldest first.

    A turn's first route event starts a note, and so does every later one whose text differs from the
    note before it in the same turn.
    """
    notes = []
    for number in _note_turns(session, _spans(session) if spans is None else spans):
        turn = session.turns[number]
        end = session.next_seq if turn.end_seq is None else turn.end_seq
        previous = None
        for seq in range(turn.start_seq, end):
            event = session.events[seq]
            data = event.get("data")
            if event.get("type") != ROUTE_EVENT or not isinstance(data, dict) or data.get("turn") != number:
                continue
            text = route_text(data)
            if text is not None and text != previous:
                notes.append((seq, text))
                previous = text
    return notes


def request_messages(session: Session) -> list[dict[str, Any]]:
    """The messages of the next request: the surface's messages with each live phase note in place."""
    return [message for _, message in keyed_request_messages(session)]


def keyed_request_messages(session: Session) -> list[tuple[int | str, dict[str, Any]]]:
    """``request_messages`` with where each message comes from: its surface node's seq, or ``note:<anchor>``.

    A note sits before the first surface node that stands for events logged after its anchor; a note whose
    anchor lies inside a replacement (a tape entry or a rewind report) is gone with the nodes it sat among.
    """
    spans = _spans(session)
    notes = phase_notes(session, spans)
    covered = [(lo, hi) for seq, lo, hi in spans if session.is_replacement(seq)]
    pending = [(a, t) for a, t in notes if not any(lo <= a <= hi for lo, hi in covered)]
    out: list[tuple[int | str, dict[str, Any]]] = []
    i = 0
    for seq, lo, _ in spans:
        while i < len(pending) and pending[i][0] < lo:
            out.append((f"note:{pending[i][0]}", note_message(pending[i][1])))
            i += 1
        message = derive_message(session.events[seq])
        if message is not None:
            out.append((seq, message))
    out.extend((f"note:{anchor}", note_message(text)) for anchor, text in pending[i:])
    return out
