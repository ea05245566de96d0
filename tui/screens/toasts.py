"""Where a screen's toasts sit: in a band of rows that hides the least (the rows beside a dialog's box, the main
screen's chart, the top of a policy screen's body), stacked from one edge of the band, the newest that fit shown and
the older ones waiting. Textual would stack every toast at the bottom right, over what the operator reads for the
toasts' whole timeout."""

from __future__ import annotations

from typing import Any

from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable

TOAST_RACK = "#textual-toastrack"  # the container Textual gives every screen for its toasts
INFO_SECONDS = 5  # news the operator needs no action on (a request applied, a quiet alert): read, then gone
WARNING_SECONDS = 8  # what went otherwise than asked, or needs a look


def toast_seconds(severity: str) -> float:
    """How long a toast of ``severity`` stays up."""
    return INFO_SECONDS if severity == "information" else WARNING_SECONDS


def sentence(text: str) -> str:
    """``text`` as a toast says it: a sentence, its first letter a capital and a stop at its end (one it ends with,
    a question mark or the mark of a cut kept)."""
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "?", "!", "…")) else ".")


def toast_rack(screen: Screen[object]) -> Widget | None:
    """The container of ``screen``'s toasts (None when notifications are off)."""
    try:
        return screen.query_one(TOAST_RACK)
    except NoMatches:
        return None


def holder_heights(rack: Widget) -> list[int]:
    """The rows each of ``rack``'s toasts takes, the oldest first (0 for a cleared one, or a new one before its
    layout)."""
    return [sum(toast.outer_size.height + toast.styles.margin.top for toast in h.children) for h in rack.children]


def toast_room(screen: Screen[object]) -> int:
    """The rows ``screen``'s toasts take, half of it at most: what a box that gives them room leaves free."""
    rack = toast_rack(screen)
    return min(sum(holder_heights(rack)), screen.size.height // 2) if rack is not None else 0


def stack_toasts(screen: Screen[object], *, top: bool, edge: int, room: int, keep_newest: bool = False) -> None:
    """Stack ``screen``'s toasts in ``room`` rows starting ``edge`` rows from its top (``top``) or its bottom; the
    newest that fit are shown, the older ones wait (``keep_newest``: the newest is shown even when it is taller)."""
    rack = toast_rack(screen)
    if rack is None or not rack.children:
        return
    holders = list(rack.children)
    heights = holder_heights(rack)
    if keep_newest:
        room = max(room, newest_height(rack))
    # no max-height on the rack: a toast is measured whole, and the ones that do not fit are hidden instead
    rack.styles.dock = "top" if top else "bottom"
    rack.styles.align_vertical = "top" if top else "bottom"
    rack.styles.margin = (edge, 0, 0, 0) if top else (0, 0, edge, 0)
    for holder, height in zip(reversed(holders), reversed(heights), strict=True):  # the newest first
        if not holder.children:  # what Textual leaves of a cleared toast: nothing to show, no room taken
            holder.display = False
            continue
        holder.display = height <= room  # a new one (height 0) is measured at its layout
        room -= height if holder.display else room  # once one waits, the older ones wait too


def newest_height(rack: Widget) -> int:
    """The rows the newest toast in ``rack`` takes (0 when it holds none): an empty holder, what Textual leaves of a
    cleared toast, is no toast."""
    return next((h for holder, h in zip(reversed(rack.children), reversed(holder_heights(rack)), strict=True)
                 if holder.children), 0)  # fmt: skip


def stack_under_labels(screen: Screen[object], table: DataTable[Any], *, share: float = 1) -> None:
    """Stack ``screen``'s toasts under ``table``'s column labels: in the blank rows under its last row when the
    newest toast fits there (a short list's rows all stay in sight), else over its first rows, the top ``share`` of
    them (the rows under are kept in sight); the newest toast is shown even when it is taller."""
    edge = table.region.y + table.header_height
    rack = toast_rack(screen)
    blank = table.region.y + max(table.header_height, table.virtual_size.height - round(table.scroll_y))
    if rack is not None and rack.children and newest_height(rack) <= table.region.bottom - blank:
        stack_toasts(screen, top=True, edge=blank, room=table.region.bottom - blank)
        return
    stack_toasts(screen, top=True, edge=edge, room=int((table.region.bottom - edge) * share), keep_newest=True)
