"""Where the adaptive phase text goes in a request: a standing section in the head, and a note only when a
phase that changes what the model should do begins.

The seed puts the phase text (``<task_policy>``, ``<task_checkpoint>``, ``<task_finalization>``) in one
system-prompt section that is replaced whenever the phase changes. Every change then rewrites the request
head, and providers lose their whole prefix cache two or three times a turn. Sending it as a trailing message
instead still moves it every step, so the model's previous output is never part of the cached prefix.

tapedeck splits it by what changes:

- The normal phase's instruction (how to size each kind of request) is the same for every turn, so it is a
  standing system-prompt section (``adaptive.prompt_section``) in the cached head; the normal phase pins no
  note.
- A checkpoint or finalization note is pinned in the open conversation right after the last node that existed
  when the route event that started its phase was logged, and stays there while its turn runs. Requests
  therefore only grow between phase changes, and a change costs the bytes of its note.

The rules that keep this equivalent to the seed's single section:

- A note belongs to its turn. Only the open turn shows notes; when the turn ends they are gone from every later
  request (with ``keepRecentTurns`` >= 1 the turn's messages stay raw, its notes do not).
- Only the current phase's instruction is in force. The standing section says, once, that a note governs the
  rest of its turn and a newer one replaces it; earlier notes stay where they were pinned, so no cached byte
  changes.
- Notes are never written to the log as messages (the seed's rule); they are re-derived from the logged
  ``tapedeck/route`` events, so a restarted host builds byte-identical requests. A note whose anchor lies
  inside a replaced region (a rewind report) goes with the region, except the note of the phase still in force
  (the turn's newest): it is pinned again right after the node that replaced its anchor, so the rest of the
  phase keeps its instruction.

Notes go out as ``user`` messages: some chat templates (DeepSeek's among them) hoist every ``system`` message
into the system prompt, which would put the phase text back at the head.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from core.log.vocabulary import ROUTE_EVENT
from core.policies.adaptive import NORMAL, phase_text
from core.policies.risk import RiskDecision
from core.read.session import Session, derive_message


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


def phase_notes(session: Session) -> list[tuple[int, str]]:
    """``(anchor seq, text)`` of every phase note of the open turn, oldest first (none between turns).

    The first checkpoint or finalization route event of a turn starts a note, and so does every later one
    whose phase text differs from the note before it; normal-phase routes pin none.
    """
    number = session.open_turn
    if number is None or number not in session.turns:
        return []
    notes: list[tuple[int, str]] = []
    previous = None
    for seq in session.seqs_of((ROUTE_EVENT,), session.turns[number].start_seq):
        data = session.events[seq].get("data")
        if not isinstance(data, dict) or data.get("turn") != number:
            continue
        text = None if data.get("phase") == NORMAL else route_text(data)
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
    anchor lies inside a replacement (a tape entry or a rewind report) is gone with the nodes it sat among,
    unless it is the turn's newest note: that one follows the replacement node.
    """
    spans = _spans(session)
    notes = phase_notes(session)
    covered = [(seq, lo, hi) for seq, lo, hi in spans if session.is_replacement(seq)]
    pending: list[tuple[int, str]] = []
    repinned: dict[int, tuple[int, str]] = {}  # replacement seq -> the note in force whose anchor it holds
    for index, (anchor, text) in enumerate(notes):
        holder = next((seq for seq, lo, hi in covered if lo <= anchor <= hi), None)
        if holder is None:
            pending.append((anchor, text))
        elif index == len(notes) - 1:
            repinned[holder] = (anchor, text)
    out: list[tuple[int | str, dict[str, Any]]] = []
    i = 0
    for seq, lo, _ in spans:
        while i < len(pending) and pending[i][0] < lo:
            out.append((f"note:{pending[i][0]}", note_message(pending[i][1])))
            i += 1
        message = derive_message(session.events[seq])
        if message is not None:
            out.append((seq, message))
        if seq in repinned:
            anchor, text = repinned[seq]
            out.append((f"note:{anchor}", note_message(text)))
    out.extend((f"note:{anchor}", note_message(text)) for anchor, text in pending[i:])
    return out
