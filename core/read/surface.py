"""The surface as rows: each model-visible message with its seq, role, source, size and summary."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from core.read.session import Session, derive_message
from core.read.summary import source_label, summarize


def surface_rows(
    session: Session, event_at: Callable[[int], dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """The model-visible messages in order, each with seq, role, source kind, size and text.

    ``event_at`` looks up a surface event by seq (default: ``session.events``).
    """
    return list(iter_surface_rows(session, event_at))


def iter_surface_rows(
    session: Session,
    event_at: Callable[[int], dict[str, Any]] | None = None,
    seqs: Iterable[int] | None = None,
) -> Iterator[dict[str, Any]]:
    """``surface_rows`` one row at a time; of the nodes ``seqs`` (a surface the session had earlier) when given."""
    get = event_at or session.events.__getitem__
    for seq in session.surface if seqs is None else seqs:
        row = surface_row(session, seq, get(seq))
        if row is not None:
            yield row


SURFACE_SUMMARY = 200  # code points of a surface row's summary


def surface_row(session: Session, seq: int, event: dict[str, Any], summary: str | None = None) -> dict[str, Any] | None:
    """The row of the surface node ``seq`` (its ``event``), or None for a node that projects no message. A row
    depends only on the event and on what the session noted of it when it was applied, so it may be built as
    soon as the event is. ``summary``: ``summarize(event, SURFACE_SUMMARY)``, when the caller has it."""
    message = derive_message(event)
    if message is None:
        return None
    return {
        "seq": seq,
        "type": event["type"],
        "role": message.get("role"),
        "source": source_label(message.get("source")),
        "replacement": session.is_replacement(seq),
        "chars": session.node_chars(seq),
        "summary": summarize(event, SURFACE_SUMMARY) if summary is None else summary,
        "message": message,
    }
