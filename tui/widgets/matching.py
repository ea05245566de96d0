"""Event filters and text search (``core.read.event_filter``), evaluated in workers over the events of a live session."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from core.read.event_filter import Predicate
from tui.live import LiveSession
from tui.widgets.rows import SortedSeqs


def scan(
    live: LiveSession,
    predicate: Predicate,
    start: int = 0,
    stop: int | None = None,
    *,
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] = lambda: False,
) -> SortedSeqs:
    """Seqs in ``start``..``stop`` whose events pass ``predicate`` (worker side; may stream the file)."""
    end = live.session.next_seq if stop is None else stop
    out = SortedSeqs()
    span = max(1, end - start)
    events: Iterable[dict[str, Any]] = live.iter_events(start, end)
    for k, event in enumerate(events):
        if predicate(event):
            out.append(int(event["seq"]))
        if k % 4096 == 0:
            if cancelled():
                break
            if progress is not None:
                progress(k / span)
    return out
