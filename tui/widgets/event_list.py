"""The event list: a Line API widget that renders only the rows on screen.

Rows are computed from decoded events in a thread worker and cached by seq; a row not computed yet is drawn
as a placeholder and filled in when the worker reports back, so scrolling never waits for the disk.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Self

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from core.read.rows import Row, block_row, build_row
from core.read.session import Session
from core.read.streams import Block, StreamBlocks
from core.read.summary import human_chars
from tui.failures import READ_ERRORS, report_log_failure
from tui.live import LiveSession
from tui.widgets.finished_lines import FinishedLines
from tui.widgets.rows import RowCache, RowView, ago, badges, clock, huge_row, originals, unreadable_row
from tui.widgets.scrolling import held_scrollbar, set_virtual_size, steady_scrollbar

TIME_MIN_WIDTH = 70  # narrower lists leave the time column out (the detail pane still shows the time)
SUMMARY_MIN_WIDTH = 16  # a row's summary keeps this many cells; tags that would take them are left out
PREFETCH = 2  # screens of rows computed around the visible ones
STRIP_CACHE = 2000  # drawn lines kept: in follow mode every append shifts all rows by one
# rows of longer lines read back from the file are drawn from their head, not decoded
HUGE_LINE_BYTES = 2 << 20
ROWS_PER_BATCH = 200  # rows of an appended batch computed right away (the rest on demand)
# what waits for a frame runs this long after it is rendered (the frame is written first)
FRAME_OUT_SECONDS = 0.004
FRAME_WAIT_SECONDS = 1.0  # the longest what waits for the list's next frame waits when none comes


OUTSIDE_TURN = "–"  # the turn column of an event between turns


def _holds(ascending: Sequence[int], seq: int) -> bool:
    """True when the ascending ``seq`` list holds ``seq``."""
    i = bisect.bisect_left(ascending, seq)
    return i < len(ascending) and ascending[i] == seq


class _Frame(NamedTuple):
    """What every line of one frame of the list shares (computed once a frame, not once a line)."""

    width: int
    top: int  # the row index at the top of the list
    styles: dict[str, Style]
    shown: Any  # the session whose surface the badges describe (the moment, while time travelling)
    session: Session  # the live projection (turn attribution)
    marks: dict[int, tuple[str, ...]]  # alert marks by seq
    now_ms: float | None  # the time the ``ago`` column counts from (None: the clock column)
    # lines drawn while nothing they show changed
    drawn: dict[tuple[int, int, bool], tuple[Row, Strip]] | None


def turn_label(session: Session, row: Row) -> str:
    """The turn.step column: DSH attribution once projected (the step an event names, else the one open when it
    was written: ``Session.step_of``), ``–`` for an event outside every turn."""
    if row.seq >= session.next_seq:
        turn, step = row.turn, row.step
    elif session.in_turn(row.seq):
        turn, step = session.turn_of(row.seq), session.step_of(row.seq)
    else:
        return OUTSIDE_TURN
    return str(turn) if step is None else f"{turn}.{step}"


def highlighted(text: str, needle: str, style: Style, match_style: Style) -> list[Segment]:
    """``text`` as segments with each case-insensitive occurrence of ``needle`` in ``match_style``."""
    if not needle:
        return [Segment(text, style)]
    folded, key = text.casefold(), needle.casefold()
    if len(folded) != len(text):  # casefolding changed lengths: offsets would not line up
        return [Segment(text, style)]
    out, at = [], 0
    while (hit := folded.find(key, at)) >= 0:
        out += [Segment(text[at:hit], style), Segment(text[hit : hit + len(key)], match_style)]
        at = hit + len(key)
    out.append(Segment(text[at:], style))
    return [segment for segment in out if segment.text]


class EventList(ScrollView, can_focus=True, inherit_bindings=False):
    """Typed rows (seq, turn.step, glyph, summary, size, badges) over a ``RowView`` of seqs."""

    _repaints = 0  # full repaints asked for (``refresh`` with no region), the drawn lines' stamp

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False, id="list.up"),
        Binding("down,j", "cursor(1)", "Down", show=False, id="list.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="list.page_up"),
        Binding("pagedown,space", "page(1)", "Page down", show=False, id="list.page_down"),
        Binding("enter", "toggle_expand", "Expand/collapse", id="list.expand"),
    ]
    COMPONENT_CLASSES = {
        "event-list--cursor",
        "event-list--dim",
        "event-list--gutter",
        "event-list--error",
        "event-list--badge",
        "event-list--replacement",
        "event-list--pending",
        "event-list--match",
    }

    class Highlighted(Message):
        """The cursor moved to another row (``seq`` is None on an empty view; ``block`` is set on a stream's row)."""

        def __init__(self, seq: int | None, block: Block | None = None) -> None:
            super().__init__()
            self.seq = seq
            self.block = block

    class FollowChanged(Message):
        """Follow mode was paused or resumed; ``new`` counts rows that arrived while paused."""

        def __init__(self, following: bool, new: int) -> None:
            super().__init__()
            self.following = following
            self.new = new

    def __init__(self, live: LiveSession, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.live = live
        self.view = RowView(range(0))
        self.cursor = 0
        self.following = True
        self.new_rows = 0
        self.cache = RowCache()
        self.cut_kinds: dict[int, str] = {}
        self._cuts_seen = 0
        self._epoch = -1  # the live session's file epoch the cached rows belong to
        self._failed_epochs: set[int] = set()  # epochs whose file failed a read (told once)
        self._fetching = False
        self._missing = False
        self._last_row: tuple[int | None, int] = (None, 0)  # (seq, depth) of the row last highlighted
        # (seq the cursor was on, seq it was put on instead): a view a filter's scan is still building has no row at
        # or after the first yet, and the cursor waits on the second for it until it is moved
        self._held: tuple[int, int | None] | None = None
        self._style_key: tuple[object, ...] | None = None
        self._style_cache: dict[str, Style] = {}
        self._strips: dict[tuple[object, ...], Strip] = {}
        # Time travel: the session as it stood at an earlier moment (``core.read.timetravel.SessionAt``); the rows'
        # badges and dimming then say what was on the surface then.
        self.moment: Any = None
        self._search = ""
        self._matches: Sequence[int] = ()
        self.relative_time = False  # the time column: time of day (UTC), or how long ago
        # the operator's notes by seq (the sidecar beside the log): a ✎ tag each
        self.notes: dict[int, str] = {}
        # Streamed blocks shown as one row each (None: every delta is its own row, as a chunk filter asks)
        self.blocks: StreamBlocks | None = None
        # stream rows by (first delta's row, end, chars, live)
        self._block_rows: dict[tuple[object, ...], Row] = {}
        self._after_frame: list[Callable[[], None]] = []  # run once the list's next frame is out …
        self._frame_wait: Timer | None = None  # … or when none came in FRAME_WAIT_SECONDS
        self._frame: _Frame | None = None  # what every line of the frame being rendered shares
        # finished lines by drawn row: a shifted list finds them
        self._finished = FinishedLines(self, STRIP_CACHE)
        self._blank: tuple[tuple[int, Style], Strip] | None = None  # the line below the last row
        self._drawn: dict[tuple[int, int, bool], tuple[Row, Strip]] = {}  # see ``_drawn_lines``
        self._drawn_stamp: tuple[object, ...] | None = None

    # the view ---------------------------------------------------------------------------------------------
    @property
    def current_seq(self) -> int | None:
        """The seq under the cursor."""
        return self.view.row(self.cursor)[0] if len(self.view) else None

    def set_view(
        self, view: RowView, *, reset: bool = False, appended: bool = False, grew: bool = False
    ) -> None:
        """Show ``view``; the cursor stays on its event or follows the end.

        ``reset`` means a rebuilt projection: cut kinds are re-read, and cached rows are dropped when the file
        itself changed (a new epoch); ``appended`` counts rows that arrived while follow mode is paused; ``grew``
        says ``view`` is the last one with rows added at its end (the full log after an append).
        """
        old = len(self.view)
        keep = self.current_seq
        parent = self.view.parent_of(self.cursor) if keep is not None else None  # a delta or original listed
        held, self._held = self._held, None
        # not moved since it was held: the row it was on is still the one wanted
        if held is not None and held[1] == keep and parent is None:
            keep = held[0]
        if reset:
            self.cut_kinds.clear()
            self._cuts_seen = 0
            if self.live.epoch != self._epoch:
                self._epoch = self.live.epoch
                self.cache.clear()
                self._strips.clear()
                self._block_rows.clear()
        self._sync_cuts()
        grown = len(view) - old
        self.view = view
        # the bar is compared with its drawn look once it has its new extent and position
        with held_scrollbar(self):
            self._set_rows(len(view))
            if self.following:
                self._move(len(view) - 1, follow=True)
            else:
                if grown > 0 and appended:
                    self.new_rows += grown
                    self.post_message(self.FollowChanged(False, self.new_rows))
                row = view.row_of_child(parent, keep) if parent is not None and keep is not None else None
                if row is None and keep is not None:
                    row = view.row_of_seq(keep, at_or_after=True)
                self._move(row if row is not None else min(self.cursor, len(view) - 1), follow=False)
                if row is None and keep is not None:
                    self._held = (keep, self.current_seq)
        self.refresh_rows()
        # rows appended at the end are the only ones that can lack a computed row (``grew``): only they are looked at
        if not self._fetching and self._visible_missing(old if grew else 0):
            self._fetching = True
            self._start_fetch()  # now, not after the next frame: appended rows show one frame sooner

    def refresh_rows(self) -> None:
        """Repaint the rows alone. The border and the scrollbar beside them are repainted by what changes them (a
        focus or theme change, the bar's own extent and position), so a frame that moves the rows writes only
        the rows: a follow-mode append's frame is a quarter smaller."""
        self.refresh(self.scrollable_content_region.reset_offset)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Scrolled: the bar follows and the rows are repainted (ScrollView's watcher, without repainting the bar's
        columns, which the bar repaints itself when it looks different)."""
        if self.show_vertical_scrollbar:
            self.vertical_scrollbar.position = new_value
        if round(old_value) != round(new_value):
            self.refresh_rows()

    def toggle_time(self) -> None:
        """Switch the time column between time of day and time ago."""
        self.relative_time = not self.relative_time
        self.refresh_rows()

    def set_search(self, query: str, matches: Sequence[int] | None) -> None:
        """Highlight ``query`` in the rows of ``matches`` (ascending seqs; None or an empty query clears it)."""
        query = query if matches is not None else ""
        if (query, len(matches or ())) != (self._search, len(self._matches)):
            self._search, self._matches = query, matches or ()
            self.refresh_rows()

    def _is_match(self, seq: int) -> bool:
        return _holds(self._matches, seq)

    def _sync_cuts(self) -> None:
        cuts = self.live.session.cuts
        for cut in cuts[self._cuts_seen :]:
            self.cut_kinds[cut.seq] = cut.kind
        self._cuts_seen = len(cuts)

    # cursor and follow ------------------------------------------------------------------------------------
    def _move(self, row: int, *, follow: bool | None = None) -> None:
        total = len(self.view)
        row = max(0, min(row, total - 1)) if total else 0
        self.cursor = row
        self._reveal()
        self.call_after_refresh(self._reveal)  # again once a new virtual size has been laid out
        if follow is not None and follow != self.following:
            self.following = follow
            if follow:
                self.new_rows = 0
            self.post_message(self.FollowChanged(follow, self.new_rows))
        seq, depth = self.view.row(self.cursor) if len(self.view) else (None, 0)
        if (seq, depth) != self._last_row:
            self._last_row = (seq, depth)
            self.post_message(self.Highlighted(seq, self.current_block))
        self.refresh_rows()

    def _reveal(self) -> None:
        """Scroll just enough to show the cursor row."""
        height = self.scrollable_content_region.height
        if height <= 0:
            return
        if self.cursor < self.scroll_y:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= self.scroll_y + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False)

    def _set_rows(self, rows: int) -> None:
        """Give the list a virtual height of ``rows`` and no virtual width: every row is cut to the width shown, so
        there is nothing beside it to scroll to (a width of the whole content region, the vertical scrollbar's
        cells included, let the list scroll two cells sideways once rows came after the layout settled)."""
        set_virtual_size(self, Size(0, rows))

    def on_resize(self) -> None:
        """Keep the cursor in view at the new size."""
        self._reveal()

    def go(self, row: int) -> None:
        """Put the cursor on ``row``; being on the last row resumes follow mode, elsewhere pauses it."""
        self._move(row, follow=row >= len(self.view) - 1)

    def go_seq(self, seq: int) -> bool:
        """Put the cursor on the row of ``seq`` (or the next one shown); False when there is none.

        A delta inside a collapsed stream opens the stream's row (as ⏎ would) to show it.
        """
        i = self.blocks.index_of(seq) if self.blocks is not None else None
        if i is not None and self.blocks is not None:
            start = self.blocks.starts[i]
            pos = self.view.position_of(start)
            if pos is not None and seq != start:
                if pos not in self.view.expanded_positions():
                    self.view.toggle(pos, self.children_of(start))
                    self._set_rows(len(self.view))
                self.go(self.view.row_of_position(pos) + 1 + seq - start)
                return True
        row = self.view.row_of_seq(seq, at_or_after=True)
        if row is None:
            return False
        self.go(row)
        return True

    def go_match(self, matches: Sequence[int], forward: bool) -> bool:
        """Put the cursor on the next (or previous) row from the cursor that shows one of the ascending seqs
        ``matches``, wrapping around (back to the cursor's own row last): a match's row, or a collapsed stream's
        row holding it, opened as ``go_seq`` opens it. False, the cursor left where it is, when no row shows any.

        Rows in seq order (the full log, a filter's rows) take the matches in order and skip the ones the view
        hides, unless the rows are fewer; the surface, in the model's order, is walked row by row. Either way the
        walk is over the shorter of the two."""
        view, cursor = self.view, self.cursor
        total = len(view)
        if not total or not matches:
            return False
        if not view.in_seq_order or total < len(matches):  # each row looked up in the matches
            order = (
                range(cursor + 1, cursor + 1 + total)
                if forward
                else range(cursor - 1, cursor - 1 - total, -1)
            )
            for r in order:
                row = r % total
                seq = self._match_in_row(row, matches)
                if seq is not None:
                    if seq == view.row(row)[0]:
                        self.go(row)
                        return True
                    return self.go_seq(seq)  # a delta of the stream's row: opened to show it
            return False
        current = self.current_seq
        assert current is not None
        k = bisect.bisect_right(matches, current) if forward else bisect.bisect_left(matches, current) - 1
        count = len(matches)
        for j in range(count):
            seq = matches[(k + j) % count if forward else (k - j) % count]
            if self._shows(seq):
                return self.go_seq(seq)
        return False

    def _match_in_row(self, row: int, matches: Sequence[int]) -> int | None:
        """The match row ``row`` shows: its own seq, or a collapsed stream's first delta among ``matches``."""
        seq, depth = self.view.row(row)
        if _holds(matches, seq):
            return seq
        block = self.block_at(seq) if not depth else None
        if block is None:
            return None
        i = bisect.bisect_left(matches, block.start)
        return matches[i] if i < len(matches) and matches[i] < block.end else None

    def _shows(self, seq: int) -> bool:
        """True when a row of the view stands for ``seq``: its own, or its collapsed stream's."""
        if self.view.position_of(seq) is not None:
            return True
        i = self.blocks.index_of(seq) if self.blocks is not None else None
        return (
            i is not None
            and self.blocks is not None
            and self.view.position_of(self.blocks.starts[i]) is not None
        )

    def resume_follow(self) -> None:
        """Jump to the last row and follow new events again."""
        self._move(len(self.view) - 1, follow=True)

    def action_cursor(self, delta: int) -> None:
        """Move the cursor by ``delta`` rows."""
        self.go(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        """Move the cursor by one screen."""
        self.go(self.cursor + direction * max(1, self.scrollable_content_region.height - 1))

    @property
    def current_block(self) -> Block | None:
        """The stream whose row the cursor is on (None on any other row)."""
        seq, depth = self.view.row(self.cursor) if len(self.view) else (None, 1)
        return self.block_at(seq) if seq is not None and not depth else None

    def block_at(self, seq: int) -> Block | None:
        """The streamed block whose row ``seq`` is, when blocks are shown collapsed."""
        blocks = self.blocks
        i = blocks.head_index(seq) if blocks is not None else None
        return None if blocks is None or i is None else blocks.block(i)

    def children_of(self, seq: int) -> Sequence[int]:
        """The rows an expanded row lists beneath it: a block's deltas, or the originals of a replacement."""
        block = self.block_at(seq)
        if block is not None:
            return range(block.start, block.end)
        return originals(self.live.session, seq)

    def action_toggle_expand(self) -> None:
        """Show (or hide) the deltas of a streamed block, or the originals a replacement row stands for; on a row
        listed beneath an expanded one, close that list."""
        seq, depth = self.view.row(self.cursor) if len(self.view) else (None, 0)
        if depth:
            seq = self.view.parent_of(self.cursor)
        if seq is None:
            return
        if self.block_at(seq) is None and not self.live.session.is_replacement(seq):
            self.notify(
                "Only streamed blocks and replacement rows (tape entries, folds, prunes, rewinds) expand.",
                timeout=3,
            )
            return
        row = self.view.row_of_seq(seq)
        pos = self.view.position_of(seq)
        if pos is None or row is None:
            return
        children = self.children_of(seq)
        self.view.toggle(pos, children)
        self._set_rows(len(self.view))
        self._move(row, follow=False)
        height = self.scrollable_content_region.height
        if self.view.expanded_positions().get(pos) and height > 0:  # show what opened, the row itself kept
            last = row + len(children)
            if last >= self.scroll_y + height:
                self.call_after_refresh(self.scroll_to, y=min(row, last - height + 1), animate=False)

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        super()._on_mouse_scroll_up(event)
        if self.following:
            self.following = False
            self.post_message(self.FollowChanged(False, self.new_rows))

    def on_click(self, event: events.Click) -> None:
        """Select the clicked row (clicks on the border are ignored)."""
        offset = event.get_content_offset(self)
        if offset is not None and int(self.scroll_y) + offset.y < len(self.view):
            self.go(int(self.scroll_y) + offset.y)

    # rendering --------------------------------------------------------------------------------------------
    def after_frame(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the screen's next frame has been rendered (the one that carries the list's repaint,
        when one is due; at once when the list is not on the top screen, where no frame of it would come).

        What the operator waits for after an append is the new row: the status line and the header follow in
        the next frame, so the list's frame covers the list alone (a frame's crop is the box around every
        repainted region: with the header and the status line in it, it would span the whole screen). They run
        ``FRAME_OUT_SECONDS`` after the frame is rendered: Textual hands the frame to its output thread, which
        needs the GIL to write it, and the UI thread, busy with them, would hold the GIL until it is done. When
        no frame comes in ``FRAME_WAIT_SECONDS`` (the append repainted nothing of the list), they run then.
        """
        if not self.is_mounted or self.screen is not self.app.screen or not self.display or not self.region:
            callback()
            return
        if not self._after_frame:
            self._frame_wait = self.set_timer(FRAME_WAIT_SECONDS, self.run_after_frame)
        self._after_frame.append(callback)

    def run_after_frame(self) -> None:
        """Run the callbacks waiting for the list's next frame now (its screen is covered, or no frame came)."""
        self._stop_frame_wait()
        waiting, self._after_frame = self._after_frame, []
        for callback in waiting:
            callback()

    def _stop_frame_wait(self) -> None:
        if self._frame_wait is not None:
            self._frame_wait.stop()
            self._frame_wait = None

    def render_lines(self, crop: Region) -> list[Strip]:
        """The lines of ``crop``, drawn with what they share computed once and finished (border, filters) only
        when their row was not finished before."""
        self._frame = self._frame_facts()
        try:
            return self._finished.render(crop, self._content_line, super().render_lines)
        finally:
            self._frame = None

    def frame_rendered(self) -> None:
        """The screen rendered a frame (its compositor says so): what waits for the list's next frame runs
        ``FRAME_OUT_SECONDS`` from now, once the frame is out."""
        if self._after_frame:
            self._stop_frame_wait()
            waiting, self._after_frame = self._after_frame, []
            self.set_timer(FRAME_OUT_SECONDS, lambda: [callback() for callback in waiting])

    def _frame_facts(self) -> _Frame:
        """What the lines drawn now share."""
        session = self.live.session
        width, marks = self.scrollable_content_region.width, getattr(self.app, "alert_marks", {})
        return _Frame(width, int(self.scroll_y), self._styles(), session if self.moment is None else self.moment,
                      session, marks, time.time() * 1000 if self.relative_time else None,
                      self._drawn_lines(session, width, marks))  # fmt: skip

    def _drawn_lines(
        self, session: Session, width: int, marks: dict[int, tuple[str, ...]]
    ) -> dict[tuple[int, int, bool], tuple[Row, Strip]] | None:
        """The lines drawn by (seq, depth, cursor) since nothing that a projected row's line shows last changed:
        the width and styles, the session, its cuts (the only way a row leaves the surface or is replaced, so
        the only change to its tags and dimming), the alert marks and the search; anything else that changes a
        line (notes, a mark added in place) comes with a full ``refresh``. None while time travelling or showing
        the time ago (every line changes with the moment or the clock)."""
        if self.moment is not None or self.relative_time:
            return None
        stamp = (width, self._style_key, id(session), len(session.cuts), id(marks), len(marks), self._search,
                 id(self._matches), len(self._matches), self._epoch, self._repaints)  # fmt: skip
        if stamp != self._drawn_stamp or len(self._drawn) > STRIP_CACHE:
            self._drawn_stamp = stamp
            self._drawn = {}
        return self._drawn

    def refresh(
        self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False
    ) -> Self:
        """Repaint; a full repaint also forgets the lines drawn so far (what changed may be anything)."""
        if not regions:
            self._repaints += 1
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def render_line(self, y: int) -> Strip:
        """One screen line: the row at ``scroll_y + y``."""
        return self._content_line(y)[0]

    def _content_line(self, y: int) -> tuple[Strip, bool]:
        """Content line ``y`` and whether it is a kept object (a drawn row or the blank line, found again by
        identity in a later frame) rather than a placeholder drawn for this frame alone."""
        frame = self._frame or self._frame_facts()  # a line drawn outside ``render_lines`` computes its own
        index = frame.top + y
        width = frame.width
        if index >= len(self.view):
            key = (width, frame.styles[""])
            if self._blank is None or self._blank[0] != key:
                self._blank = (key, Strip.blank(width, frame.styles[""]))
            return self._blank[1], True
        seq, depth = self.view.row(index)
        row = self.cache.get(seq)
        if row is None:
            self._want_rows()
            style = frame.styles["pending"]
            return Strip([Segment(set_cell_size(f"{seq:>7}  …", width), style)]), False
        blocks = self.blocks
        i = blocks.head_index(seq) if blocks is not None and not depth else None
        if i is not None and blocks is not None:  # a stream's row changes as it streams: never kept here
            return self._strip(self._block_row(row, blocks, i), depth, index == self.cursor, frame), True
        drawn, key = frame.drawn, (seq, depth, index == self.cursor)
        if drawn is None or seq >= frame.session.next_seq:  # a row not projected yet: its turn may change
            return self._strip(row, depth, key[2], frame), True
        found = drawn.get(key)
        if found is None or found[0] is not row:
            found = drawn[key] = (row, self._strip(row, depth, key[2], frame))
        return found[1], True

    def _block_row(self, head: Row, blocks: StreamBlocks, i: int) -> Row:
        """The collapsed row of block ``i``: still streaming while it ends the log of a followed, open turn.

        Rows are kept by what they show, so an unchanged stream costs a lookup per frame, not a new row.
        """
        live = self.live
        session = live.session
        end = blocks.ends[i]
        streaming = live.follow and end >= session.next_seq and session.open_turn is not None
        key = (head, end, blocks.chars[i], streaming)
        row = self._block_rows.get(key)
        if row is None:
            block = blocks.block(i)
            errors, cut = live.facts.errors, session.aborted_finishes
            k, c = bisect.bisect_left(errors, block.start), bisect.bisect_left(cut, block.start)
            row = block_row(head, block, streaming, k < len(errors) and errors[k] < block.end,
                            c < len(cut) and cut[c] < block.end)  # fmt: skip
            if len(self._block_rows) > STRIP_CACHE:
                self._block_rows.clear()
            self._block_rows[key] = row
        return row

    def _styles(self) -> dict[str, Style]:
        """Component styles, computed once per theme and focus state (they are asked for on every row)."""
        key = (self.app.theme, self.has_focus)
        if self._style_key != key:
            self._style_key = key
            self._style_cache = {"": self.rich_style} | {
                name: self.get_component_rich_style(f"event-list--{name}")
                for name in ("cursor", "dim", "gutter", "error", "badge", "replacement", "pending", "match")
            }
        return self._style_cache

    def _noted(self, seq: int, depth: int) -> bool:
        """Whether the row of ``seq`` carries a note: its event's, or, on a collapsed stream's row, a delta's."""
        notes = self.notes
        if seq in notes:
            return True
        block = self.block_at(seq) if notes and not depth else None
        return block is not None and any(block.start <= noted < block.end for noted in notes)

    def _strip(self, row: Row, depth: int, is_cursor: bool, frame: _Frame) -> Strip:
        session = frame.shown
        seq = row.seq
        dim = seq in session.replaced_by
        states = badges(row, session, self.cut_kinds)
        tags = (*states, *frame.marks.get(seq, ()), *(("✎ note",) if self._noted(seq, depth) else ()))
        turn = turn_label(frame.session, row)  # turn.step: attribution never changes with the moment
        match = self._search if self._search and self._is_match(seq) else ""
        ago_now = frame.now_ms
        when = None if ago_now is None else ago(row.time, ago_now)  # a clock time depends on the row alone
        width = frame.width
        key = (row, turn, when, depth, is_cursor, width, dim, tags, match, self._style_key)
        strip = self._strips.get(key)
        if strip is None:
            when = clock(row.time) if when is None else when
            strip = self._draw(row, turn, when, depth, is_cursor, width, dim, tags, len(states), frame.styles, match)
            if len(self._strips) > STRIP_CACHE:
                self._strips.clear()
            self._strips[key] = strip
        return strip

    def _draw(
        self,
        row: Row,
        turn: str,
        when: str,
        depth: int,
        is_cursor: bool,
        width: int,
        dim: bool,
        tags: tuple[str, ...],
        states: int,
        styles: dict[str, Style],
        match: str = "",
    ) -> Strip:
        """One row's line; ``tags`` starts with ``states`` state badges, which a narrow list leaves out first (from
        the last), then the size, then its alert marks and note, so that the summary keeps ``SUMMARY_MIN_WIDTH``
        cells."""
        base = styles[""]
        text_style = base + styles["dim"] if dim else base
        if row.error:
            text_style += styles["error"]
        if row.replacement is not None:
            text_style += styles["replacement"]
        gutter = styles["gutter"]
        badge_style = styles["badge"]
        left = f"{row.seq:>7} {turn:>6} {when:>8} " if width >= TIME_MIN_WIDTH else f"{row.seq:>7} {turn:>6} "
        size = f" {human_chars(row.size):>5} {row.unit:<2}"
        kept = list(tags)
        while True:
            right = size + "".join(f" [{tag}]" for tag in kept)
            room = max(0, width - cell_len(left) - cell_len(right) - 2)
            if room >= SUMMARY_MIN_WIDTH or not kept:
                break
            if states > 0:
                kept.pop(states - 1)
                states -= 1
            elif size:  # the detail pane shows the size; the mark alone says why the row is flagged
                size = ""
            else:
                kept.pop()
        indent = "    ↳ " if depth else ""
        summary = set_cell_size(f"{indent}{row.summary}", room)
        segments = [
            Segment(left, styles["match"] if match else gutter),
            Segment(f"{row.glyph} ", text_style),
            *highlighted(summary, match, text_style, text_style + styles["match"]),
            Segment(right, badge_style + (Style(dim=True) if dim else Style())),
        ]
        strip = Strip(segments).adjust_cell_length(width, base)
        if is_cursor:
            strip = strip.apply_style(styles["cursor"])
        return strip

    # row fetching ------------------------------------------------------------------------------------------
    def _want_rows(self) -> None:
        self._missing = True
        if not self._fetching:
            self._fetching = True
            self.call_after_refresh(self._start_fetch)

    def _visible_missing(self, first: int = 0) -> list[int]:
        """Seqs of the rows on screen and ``PREFETCH`` screens around it (from row ``first`` on) without a row."""
        height = max(1, self.size.height)
        start = max(first, int(self.scroll_y) - PREFETCH * height)
        stop = min(len(self.view), int(self.scroll_y) + (PREFETCH + 1) * height)
        return [seq for seq, _ in map(self.view.row, range(start, stop)) if self.cache.get(seq) is None]

    def _start_fetch(self) -> None:
        self._missing = False
        wanted = self._visible_missing()
        if not wanted:
            self._fetching = False
            return
        self.run_worker(
            lambda: self._fetch(wanted),
            thread=True,
            group="rows",
            exit_on_error=False,
        )

    def on_mount(self) -> None:
        """Compute rows for appended events in the follower thread, as they arrive; the scrollbar is drawn again
        only when it looks different."""
        self.live.append_observers.append(self._observe)
        steady_scrollbar(self)

    def on_unmount(self) -> None:
        """Stop observing the live session."""
        if self._observe in self.live.append_observers:
            self.live.append_observers.remove(self._observe)

    def _observe(self, events: list[dict[str, Any]]) -> None:
        """Follower thread: the appended events are decoded already, so their rows cost no file read."""
        self.cache.put([build_row(event) for event in events[-ROWS_PER_BATCH:]])

    def _fetch(self, seqs: list[int]) -> None:
        epoch = self.live.epoch
        lines = self.live.lines
        rows = []
        failure: Exception | None = None
        for seq in seqs:
            try:
                if lines is not None and seq < len(lines) and lines.size_of(seq) > HUGE_LINE_BYTES:
                    facts = lines.line_facts(seq)
                    rows.append(huge_row(seq, facts.type, facts.turn or 0, facts.step or 0, facts.nbytes))
                    continue
                event = self.live.event(seq)
            except READ_ERRORS as exc:  # the file no longer holds what was projected: say so in the row
                rows.append(unreadable_row(seq, str(exc)))
                failure = failure or exc
                continue
            if event is not None:
                rows.append(build_row(event))
        if failure is not None and epoch not in self._failed_epochs:  # one notification per file
            self._failed_epochs.add(epoch)
            self.app.call_from_thread(report_log_failure, self, failure)
        if self.live.epoch == epoch:  # else the file changed under us and these rows may describe old events
            self.app.call_from_thread(self._fetched, rows, epoch)
        else:
            self.app.call_from_thread(self._fetched, [], epoch)

    def _fetched(self, rows: list[Row], epoch: int) -> None:
        if epoch == self._epoch:
            self.cache.put(rows)
        self._fetching = False
        self.refresh_rows()
        if self._missing:
            self._want_rows()

    @property
    def busy(self) -> bool:
        """True while rows for the screen are being computed (tests wait for this to clear)."""
        return self._fetching or self._missing
