"""Where a screen's toasts sit: in a band that hides the least (the rows beside a dialog's box, the main screen's
chart, a policy screen's table in its own columns), stacked from one edge of the band, the newest that fit shown and
the older ones waiting. Textual would stack every toast at the bottom right, over what the operator reads for the
toasts' whole timeout."""

from __future__ import annotations

import re
from typing import Any

from textual.css.query import NoMatches
from textual.geometry import Region
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
    a question mark or the mark of a cut kept). A first word that is a name, written as it must be typed (a config
    key such as ``slice.fold.pinSteps`` or ``reasoningEffort``, an op such as ``config.set``, a path), keeps its
    letters as they are."""
    text = text.strip()
    first = re.split(r"[\s:;,]", text, maxsplit=1)[0]
    head = text[:1].upper() if first.isalpha() and first.islower() else text[:1]
    return head + text[1:] + ("" if text.endswith((".", "?", "!", "…")) else ".")


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


def stack_toasts(
    screen: Screen[object],
    *,
    top: bool,
    edge: int,
    room: int,
    keep_newest: bool = False,
    columns: tuple[int, int] | None = None,
) -> None:
    """Stack ``screen``'s toasts in ``room`` rows starting ``edge`` rows from its top (``top``) or its bottom, in the
    ``columns`` (first, end) given, else across the screen; the newest that fit are shown, the older ones wait
    (``keep_newest``: the newest is shown even when it is taller)."""
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
    first, end = (0, screen.size.width) if columns is None else columns
    rack.styles.width = end - first  # a docked rack keeps its width whatever its margins
    rack.styles.margin = (edge, 0, 0, first) if top else (0, 0, edge, first)
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


def labels_height(table: DataTable[Any]) -> int:
    """The lines ``table``'s column labels take (none when it hides them)."""
    return table.header_height if table.show_header else 0


def rows_of(table: DataTable[Any]) -> Region:
    """Where ``table``'s rows are drawn: its region under its column labels."""
    edge = table.region.y + labels_height(table)
    return Region(table.region.x, edge, table.region.width, max(table.region.bottom - edge, 0))


def stack_in(screen: Screen[object], band: Region, *, top: bool, keep_newest: bool = False) -> None:
    """Stack ``screen``'s toasts in ``band``, from its top edge (``top``) or its bottom one (``stack_toasts``)."""
    edge = band.y if top else screen.size.height - band.bottom
    stack_toasts(screen, top=top, edge=edge, room=band.height, keep_newest=keep_newest,
                 columns=(band.x, band.right))  # fmt: skip


def newest_fits(screen: Screen[object], rows: int) -> bool:
    """Whether ``screen``'s newest toast takes no more than ``rows`` rows (there is one)."""
    rack = toast_rack(screen)
    return rack is not None and bool(rack.children) and newest_height(rack) <= rows


def blank_rows(table: DataTable[Any]) -> Region:
    """The rows of ``table`` under its last row that it leaves blank (none when its rows fill it)."""
    rows = rows_of(table)
    last = table.region.y + max(labels_height(table), table.virtual_size.height - round(table.scroll_y))
    edge = min(last, rows.bottom)
    return Region(rows.x, edge, rows.width, rows.bottom - edge)


def stack_under_labels(screen: Screen[object], table: DataTable[Any], *, share: float = 1) -> None:
    """Stack ``screen``'s toasts under ``table``'s column labels, in its columns: in the blank rows under its last row
    when the newest toast fits there (a short list's rows all stay in sight), else over its first rows, the top
    ``share`` of them (the rows under are kept in sight); the newest toast is shown even when it is taller. The
    cursor row stays in sight (``stack_clear_of``)."""
    rows = rows_of(table)
    share_of = rows._replace(height=int(rows.height * share))
    stack_clear_of(screen, cursor_row(table), [(blank_rows(table), True), (share_of, True)])


def stack_over_rows(screen: Screen[object], tables: list[DataTable[Any]]) -> None:
    """Stack ``screen``'s toasts over the rows of the first of ``tables`` (a screen's main one), in its columns: in
    the blank rows under its last row when the newest toast fits there, else from its bottom edge up over its last
    rows (its column labels, and whatever is beside or under it, stay in sight), else in the blank rows under the last
    row of another of ``tables`` where it fits; failing all, from under the first one's labels down, the newest shown
    whole. The first table's cursor row stays in sight (``stack_clear_of``)."""
    first, others = rows_of(tables[0]), [(blank_rows(table), True) for table in tables[1:]]
    bands = [(blank_rows(tables[0]), True), (first, False), *others, (first, True)]
    stack_clear_of(screen, cursor_row(tables[0]), bands)


def cursor_row(table: DataTable[Any]) -> Region:
    """Where ``table``'s cursor row is drawn, the part of it in sight (empty: no row cursor, or its row is out of
    sight)."""
    if table.cursor_type != "row" or not table.is_valid_row_index(table.cursor_row):
        return Region()
    rows = table.ordered_rows  # in the content: the labels (when shown), then each row above the cursor's
    above = labels_height(table) + sum(row.height for row in rows[: table.cursor_row])
    drawn = Region(table.region.x, table.region.y + above - round(table.scroll_y), table.region.width,
                   rows[table.cursor_row].height)  # fmt: skip
    return drawn.intersection(rows_of(table))


def stack_clear_of(screen: Screen[object], row: Region, bands: list[tuple[Region, bool]]) -> None:
    """Stack ``screen``'s toasts in the first of ``bands`` (each stacked from its top edge, or its bottom one) where
    the newest fits, each band cut short of ``row`` (the cursor row: the one the operator acts on) where it reaches
    it; failing all, the newest is shown whole from the last band's edge, or, when it would hide ``row`` there, beside
    ``row`` on the side with more of the screen."""
    for band, top in bands:
        if newest_fits(screen, short_of(band, row, top).height):
            stack_in(screen, short_of(band, row, top), top=top)
            return
    band, top = bands[-1]
    rack = toast_rack(screen)
    newest = newest_height(rack) if rack is not None else 0
    taken = band._replace(height=newest) if top else band._replace(y=band.bottom - newest, height=newest)
    if row.area and taken.overlaps(row):
        top = screen.size.height - row.bottom >= row.y  # below the row, else above it
        band = Region(band.x, row.bottom if top else row.y, band.width, 0)
    stack_in(screen, band, top=top, keep_newest=True)


def short_of(band: Region, row: Region, top: bool) -> Region:
    """``band`` cut short of ``row`` where it reaches it: its rows above ``row`` (``top``: stacked from its top edge),
    else those below."""
    if not (row.area and band.overlaps(row)):
        return band
    if top:
        return Region.from_corners(band.x, band.y, band.right, max(row.y, band.y))
    return Region.from_corners(band.x, min(row.bottom, band.bottom), band.right, band.bottom)
