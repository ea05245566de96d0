"""The main screen: header, context chart, the event list with its detail pane, search and filter."""

from __future__ import annotations

import bisect
import time
from collections.abc import Sequence
from typing import Any

import orjson
from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.screen import UPDATE_PERIOD, Screen
from textual.timer import Timer
from textual.widgets import Static

from core.read.event_filter import EventFilter, search_predicate
from core.read.rows import BLOCK_GLYPH, REPLACEMENT_GLYPHS
from core.read.streams import Block, Collapsed, StreamBlocks, collapse_seqs, stream_text
from core.read.summary import GLYPHS
from core.rebuild.cost import CACHED_MEANS
from core.rebuild.request import UNFINISHED
from core.shared.diagnostics import Diagnostic
from core.shared.jsonout import dumps
from tui.keymap import key_of
from tui.live import LiveSession, LoadProgress, SessionUpdated, neighbour
from tui.screens.filter import FilterScreen
from tui.screens.main_lineage import SubagentLinks
from tui.screens.main_scan import Scanner
from tui.screens.main_share import ShareActions
from tui.screens.main_travel import TimeTravelActions
from tui.screens.toasts import stack_toasts
from tui.travel import Stop, TimeTravel
from tui.widgets.chart import LEGEND, ContextChart
from tui.widgets.compositing import CroppedCompositor
from tui.widgets.detail import DetailPane, payload_sections
from tui.widgets.event_list import EventList
from tui.widgets.footer import PriorityFooter
from tui.widgets.header import KEEP, Field, SessionHeader, fit, join
from tui.widgets.rows import RowView, SortedPrefix, SortedSeqs, SurfaceRows
from tui.widgets.search_bar import SearchBar

REFRESH_SECONDS = 0.1  # header and chart redraw at most this often while events stream in
HIDE_CHUNKS = "!assistant/chunk"  # the filter item the hide-chunks key toggles
DETAIL_MIN_WIDTH = 110  # narrower screens give the list the whole width (d shows the detail pane)


def main_legend(app: App[Any]) -> tuple[tuple[str, str], ...]:
    """What the main screen's glyphs, tags, number columns and chart mean (for ``?``), naming the keys ``app``'s
    keymap binds."""
    expand, hide, note, export, clock = (
        key_of(app, binding_id)
        for binding_id in ("list.expand", "main.hide_chunks", "main.note", "main.export", "main.time")
    )
    glyphs = "  ".join(f"{glyph} {etype}" for etype, glyph in GLYPHS.items())
    cuts = "  ".join(f"{glyph} {kind}" for kind, glyph in REPLACEMENT_GLYPHS.items())
    return (
        (
            "columns",
            "seq (the event's number in the log) · turn.step (– between turns) · glyph · summary · "
            "size · tags",
        ),
        ("glyphs", f"{glyphs}  ✉ message from a plugin or the host  ◇ tapedeck event  ? other"),
        ("cut glyphs", f"{cuts}  (a row that replaced others on the surface; {expand} lists the originals)"),
        (
            "streams",
            f"{BLOCK_GLYPH} streaming… / streamed N chars: one row per model stream (its deltas; {expand} lists "
            f"them); the filter assistant/chunk lists every delta, {hide} hides the streams",
        ),
        ("size", "ch = chars the model sees (messages and tool results); B = bytes of the event's JSON data"),
        (
            "tags",
            "on / off: on the model-visible surface now or not · sealed, folded, pruned, rewound, "
            "compacted, replaced: what took it off · tape, fold, prune …: the kind of cut this row made · "
            "error · interrupted: an answer cut off before it finished · ✎ note: your note on the row "
            f"({note} adds or edits it; {export} exports the view as HTML)",
        ),
        ("time", f"when the event was written; {clock} switches between time of day (UTC) and time ago"),
        (
            "chart",
            "ctx now/peak: chars of the latest and the largest request (system prompt + messages), counted "
            "as each request goes out · one bar per request · letters under a bar mark cuts made before it: "
            f"{LEGEND} + expand; two cuts in one step stack, … means more",
        ),
        (
            "cached",
            f"in the header and the chart: {CACHED_MEANS}; the chart's bars beside it: each request's "
            "own share (green at half or more)",
        ),
    )


class MainScreen(TimeTravelActions, SubagentLinks, ShareActions):
    """Everything about one session log (time travel and subagent lineage in their own modules)."""

    HEADING = "Main view"

    BINDINGS = [
        Binding("s", "toggle_surface", "Surface/full", id="main.surface"),
        Binding("slash", "search", "Search", id="main.search"),
        Binding("n", "match(1)", "Next match", id="main.next_match"),
        Binding("N", "match(-1)", "Prev match", show=False, id="main.prev_match"),
        Binding("f", "filter", "Filter", id="main.filter"),
        Binding("x", "clear_filter", "Clear filter", show=False, id="main.clear_filter"),
        Binding("h", "hide_chunks", "Hide streams", id="main.hide_chunks"),
        Binding("g,home", "top", "Top", show=False, id="main.top"),
        Binding("G", "bottom", "Bottom", show=False, id="main.bottom"),
        Binding("F,end", "follow", "Follow", id="main.follow"),
        Binding("left_square_bracket", "turn(-1)", "Prev turn", show=False, id="main.prev_turn"),
        Binding("right_square_bracket", "turn(1)", "Next turn", show=False, id="main.next_turn"),
        Binding("left_curly_bracket", "step(-1)", "Prev step", show=False, id="main.prev_step"),
        Binding("right_curly_bracket", "step(1)", "Next step", show=False, id="main.next_step"),
        Binding("e", "error(1)", "Next error", show=False, id="main.next_error"),
        Binding("E", "error(-1)", "Prev error", show=False, id="main.prev_error"),
        Binding("y", "copy('json')", "Copy JSON", show=False, id="main.copy_json"),
        Binding("Y", "copy('text')", "Copy text", show=False, id="main.copy_text"),
        Binding("plus", "more", "More detail", show=False, id="main.more"),
        Binding("d", "toggle_detail", "Detail pane", show=False, id="main.detail"),
        Binding("T", "time_travel", "Time travel", show=False, id="main.time_travel"),
        Binding("comma", "travel(-1)", "Prev request", show=False, id="main.prev_request"),
        Binding("full_stop", "travel(1)", "Next request", show=False, id="main.next_request"),
        Binding("L", "live", "Back to live", show=False, id="main.live"),
        Binding("R", "request", "Request view", show=False, id="main.request"),
        Binding("w", "toggle_time", "Time of day/ago", show=False, id="main.time"),
        Binding("J", "open_child", "Open subagent child", show=False, id="main.open_child"),
        Binding("u", "open_parent", "Back to parent session", show=False, id="main.open_parent"),
        Binding("a", "note", "Note", show=False, id="main.note"),
        Binding("X", "export", "Export HTML", show=False, id="main.export"),
    ]

    def __init__(self, live: LiveSession) -> None:
        super().__init__()
        # an append's frame renders the list, not the panels beside it; what waits for the list's frame runs after
        self._compositor = CroppedCompositor(self._frame_rendered)
        self.live = live
        self.mode = "full"
        self.travel = TimeTravel(live)
        self.stop: Stop | None = None  # time travel: the moment shown instead of now
        self.filter = EventFilter()
        self.filter_scan: Scanner | None = None
        self.search_scan: Scanner | None = None
        self.search_query = ""
        self._refresh_due = False
        self._status_due = False
        # the live session's last published state this screen took (``settle`` waits on it)
        self.taken_generation = -1
        self._framed = 0.0  # when the last frame was rendered (monotonic seconds)
        self._notice = ""
        self._diag_list: list[Diagnostic] | None = None  # the list _problems counted in …
        self._diag_seen = 0  # … how far …
        self._diag_problems = 0  # … and how many of them are errors or warnings
        self._shown_count = 0
        self._jump_to_match = False  # a new search moves the cursor to its first match once one is found
        self._ago_timer: Timer | None = None
        self._detail_choice: bool | None = None  # d pressed: shown or hidden whatever the width
        # The filtered list's rows, grown as the filter's scanner finds more (only new matches are collapsed)
        self._filter_rows = SortedSeqs()
        self._filter_used = 0  # scanner matches already in _filter_rows
        self._filter_src: tuple[SortedSeqs, StreamBlocks | None] | None = None  # (matches, blocks) built from
        self._surface_rows = SurfaceRows()  # the surface view's rows, grown with the surface
        self._events: EventList | None = None
        self._detail: DetailPane | None = None
        self._status_shown: Text | None = None  # what the status line shows now

    # layout -----------------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        """Header, chart, list + detail, status line, search bar, footer."""
        yield SessionHeader(self.live, id="header")
        yield ContextChart(self.live, id="chart")
        with Horizontal(id="body"):
            yield EventList(self.live, id="events")
            yield DetailPane(self.live, id="detail")
        yield Static(id="status")
        bar = SearchBar(id="search")
        bar.display = False
        yield bar
        yield PriorityFooter()

    def columns_legend(self) -> tuple[tuple[str, str], ...]:
        """What ``?`` explains below the keys (``main_legend``)."""
        return main_legend(self.app)

    @property
    def events(self) -> EventList:
        """The event list (looked up once: every append asks for it several times)."""
        if self._events is None:
            self._events = self.query_one(EventList)
        return self._events

    @property
    def detail(self) -> DetailPane:
        """The detail pane (looked up once: every append shows the new event in it)."""
        if self._detail is None:
            self._detail = self.query_one(DetailPane)
        return self._detail

    def on_mount(self) -> None:
        """Show what is loaded so far, focus the list, read the log's notes and keep the toasts over the chart."""
        self.screen_layout_refresh_signal.subscribe(self, self._place_toasts)
        self.events.focus()
        self.taken_generation = self.live.generation
        self._rebuild(reset=True)
        self.load_notes()

    def _place_toasts(self, screen: Screen[object]) -> None:
        """The toasts take the chart's rows, below the header, and leave the rows, the detail pane and the status
        line in sight; the newest is shown whole even when it is taller than the chart."""
        chart = self.query_one(ContextChart).region
        stack_toasts(self, top=True, edge=chart.y, room=chart.height, keep_newest=True)

    # updates from the live session ------------------------------------------------------------------------
    def on_session_updated(self, message: SessionUpdated) -> None:
        """New events or a rebuilt projection."""
        self.taken_generation = message.generation
        if message.reset:
            self.stop = self.events.moment = self.query_one(ContextChart).moment_seq = None  # a reloaded log
            self._rebuild(reset=True)
            for scanner in (self.filter_scan, self.search_scan):
                if scanner is not None:
                    scanner.restart()
            self.load_notes()  # a log replaced by another session's has none of the old one's notes
            self.note_log_changed()
        else:
            self._rebuild(reset=False, appended=True)
            for scanner in (self.filter_scan, self.search_scan):
                if scanner is not None:
                    scanner.advance()
            self._frame_now()
        self.detail.session_changed()
        self._schedule_refresh()
        dialog = self.app.screen
        if isinstance(dialog, FilterScreen) and dialog.is_mounted:
            dialog.show_types(sorted(self.live.session.counts))

    def _frame_now(self) -> None:
        """Render the frame of the appended rows now. Textual would render it a few loop turns later, behind
        whatever else waits: the list, once idle, posts its repaint to the screen, which marks it dirty and, once
        idle too, lets its update timer tick. Only a plain repaint of the list is taken this way (no layout or
        scroll pending anywhere), and only when no frame went out for Textual's frame period: a burst of appends
        still gets at most its frame rate."""
        events = self.events
        if (
            self.is_current
            and not self.app._batch_count
            and events._repaint_required
            and not (events._layout_required or events._scroll_required)
            and not (self._layout_required or self._scroll_required or self._recompose_required)
            and self in self._compositor
            and time.monotonic() - self._framed >= UPDATE_PERIOD
        ):
            events._repaint_required = False
            self._dirty_widgets.add(events)
            self._on_timer_update()

    def on_load_progress(self, message: LoadProgress) -> None:
        """Loading phases: progress in the header, a visible notice when the file was truncated or replaced."""
        if message.phase == "reset" and self.live.notices:
            self._notice = f"re-synced: {self.live.notices[-1].message}"
            self.notify(self._notice, title="Log reset", severity="warning", timeout=10)
        if message.phase == "error" and self.live.error:
            self.notify(self.live.error, title="Cannot read the log", severity="error", timeout=30)
        self._schedule_refresh()

    def _schedule_refresh(self) -> None:
        if not self._refresh_due:
            self._refresh_due = True
            self.set_timer(REFRESH_SECONDS, self._refresh_panels)

    def _refresh_panels(self) -> None:
        self._refresh_due = False
        self.query_one(SessionHeader).refresh_header(self._shown_count)
        self.query_one(ContextChart).refresh_chart()
        self._update_status()

    # the view ---------------------------------------------------------------------------------------------
    def _base(self) -> tuple[Sequence[int], StreamBlocks | None]:
        """The seqs the list shows (a streamed block as its first seq, unless the filter asks for chunks), and the
        streams its rows stand for (None when no row is a stream)."""
        live = self.live
        if not live.ready:  # the tail preview, or every indexed event while the projection is built
            return range(int(live.preview[0]["seq"]) if live.preview else 0, live.count), None
        if self.mode == "surface":  # never a chunk
            scan = self.filter_scan
            if self.stop is None:  # the live surface: its rows are kept and grow with it
                matches, upto = (scan.seqs, scan.upto) if scan is not None else (None, 0)
                return self._surface_rows.view(live.session, live.lock, matches, upto), None
            if scan is not None:
                keep = set(scan.seqs)
                return [s for s in self.stop.surface if s in keep], None
            return self.stop.surface, None
        blocks = None if self.filter.raw_chunks else live.session.streams
        stop = live.session.next_seq if self.stop is None else self.stop.moment.seq + 1
        if self.filter_scan is not None:
            rows = self._filtered(self.filter_scan.seqs, blocks)
            if self.stop is not None:  # the matches up to the moment
                rows = SortedPrefix(self._filter_rows, bisect.bisect_left(self._filter_rows, stop))
            return rows, blocks
        return (range(stop) if blocks is None else Collapsed(blocks, stop)), blocks

    def _filtered(self, seqs: SortedSeqs, blocks: StreamBlocks | None) -> SortedPrefix:
        """The filter's matches as rows (a block's matches as its one row); only matches new since the last
        call are collapsed, and the view returned stays as it is while the rows grow (no copy)."""
        src = self._filter_src
        if src is None or src[0] is not seqs or src[1] is not blocks:
            self._filter_src, self._filter_rows, self._filter_used = (seqs, blocks), SortedSeqs(), 0
        new = seqs[self._filter_used :]
        self._filter_used += len(new)
        rows = self._filter_rows
        if blocks is not None:
            new = collapse_seqs(new, blocks)
            if rows and new and new[0] == rows[-1]:  # more matches in the block the last row stands for
                new = new[1:]
        rows.extend(new)
        return SortedPrefix(rows, len(rows))

    def _rebuild(self, *, reset: bool, appended: bool = False) -> None:
        old = self.events.view
        expanded = [] if reset else [old.base[pos] for pos in old.expanded_positions()]
        base, self.events.blocks = self._base()
        view = RowView(base)
        for seq in expanded:
            pos = view.position_of(seq)
            if pos is not None:
                view.toggle(pos, self.events.children_of(seq))
        self.events.set_view(view, reset=reset, appended=appended, grew=appended and self.mode == "full")
        self._shown_count = self.live.count  # the header counts what the list was built from, never less
        block = self.events.current_block if appended else None
        if block is not None and block != self.detail.block:  # the stream under the cursor grew
            self.detail.show(block.start, keep_limit=True, block=block)
        if appended:
            self._status_after_frame()
        else:
            self._update_status()
            self.query_one(SessionHeader).refresh_header(self._shown_count)

    def _status_after_frame(self) -> None:
        """Update the status line and the header once the list's frame is out (``EventList.after_frame``).

        They span the screen's width, so repainting them in the same frame as the list would make the frame's
        crop cover the whole screen; a follow-mode append's row goes out alone, and they follow a frame later.
        """
        if not self._status_due:
            self._status_due = True
            self.events.after_frame(self._deferred_status)

    def _frame_rendered(self) -> None:
        self._framed = time.monotonic()
        if self.is_mounted:
            self.events.frame_rendered()

    def on_screen_suspend(self) -> None:
        """Another screen covers this one: what waits for the list's next frame runs now."""
        self.events.run_after_frame()

    def _deferred_status(self) -> None:
        self._status_due = False
        try:
            self._update_status()
            self.query_one(SessionHeader).refresh_header(self._shown_count)
        except NoMatches:  # the app is exiting: Textual took the panels down before the list's timer fired
            pass

    def _update_status(self) -> None:
        """The status line, fitted to the width: the lesser parts give way (the follow state, the problem count),
        the filter and a reset's notice shrink to a few words; the mode, the moment, the search and the row stay
        whole."""
        ev = self.events

        def part(label: str, style: str, rank: int) -> Field:
            return Text.assemble("  ", (label, style)), rank

        parts = [part("SURFACE" if self.mode == "surface" else "FULL LOG", "bold reverse", KEEP)]
        if self.stop is not None:
            parts.insert(0, part(f"◷ {self.stop.moment.label()}", "bold reverse magenta", KEEP))
            if self.stop.unfinished:  # scrubbed past the last request that went out: it has no answer yet
                parts.insert(1, part(f"request {UNFINISHED}", "bold magenta", 4))
        if self.filter.active:
            shortest = part(f"filter on ({key_of(self.app, 'main.clear_filter')} clears)", "yellow", KEEP)
            parts.append(shortest)
        if not self.live.follow:
            parts.append(part("not following (--no-follow)", "dim", 2))
        elif ev.following:
            parts.append(part("following", "green", 2))
        else:  # the list stopped at the operator's row; the agent itself runs on
            news = f" +{ev.new_rows} new" if ev.new_rows else ""
            parts.append(
                part(f"scroll lock{news} ({key_of(self.app, 'main.follow')} follows)", "bold yellow", 3)
            )
        if self.search_query:
            parts.append(part(self._search_label(), "cyan", 5))
        parts.append(part(f"row {ev.cursor + 1 if len(ev.view) else 0}/{len(ev.view)}", "", 6))
        problems = self._problems()
        if problems:
            said = f"{problems} problem{'s' if problems > 1 else ''} in the log ({key_of(self.app, 'app.diagnostics')})"
            parts.append(part(said, "yellow", 3))
        resynced = part("re-synced", "bold red", KEEP)
        if self._notice:
            parts.append(resynced)
        status = self.query_one("#status", Static)
        width = status.size.width or 10_000
        parts = fit(parts, width)

        def widen(short: Field, whole: Field) -> None:
            """``whole`` instead of ``short`` where it fits."""
            nonlocal parts
            if sum(t.cell_len for t, _ in parts) - short[0].cell_len + whole[0].cell_len <= width:
                parts = [whole if p is short else p for p in parts]

        if self.filter.active:  # the filter's whole description where it fits
            scan = self.filter_scan
            busy = "" if scan is None or scan.done else f" {int(scan.fraction * 100)}%"
            widen(shortest, part(f"filter: {self.filter.describe()}{busy}", "yellow", KEEP))
        if self._notice:  # and what the reset was
            widen(resynced, part(self._notice, "bold red", KEEP))
        text = join(parts)
        if text != self._status_shown:  # the panels' redraw after an append finds it as the append left it
            self._status_shown = text
            status.update(text, layout=False)

    def _problems(self) -> int:
        """Errors and warnings among the projection's diagnostics, counted incrementally (the list only grows;
        a reload brings a new session with a new list)."""
        diagnostics = self.live.session.diagnostics
        if diagnostics is not self._diag_list:
            self._diag_list, self._diag_seen, self._diag_problems = diagnostics, 0, 0
        for d in diagnostics[self._diag_seen :]:
            self._diag_problems += d.severity != "info"
        self._diag_seen = len(diagnostics)
        return self._diag_problems

    def _search_label(self) -> str:
        scanner = self.search_scan
        if scanner is None:
            return ""
        if not scanner.done and not scanner.seqs:
            return f"searching {int(scanner.fraction * 100)}%"
        total = len(scanner.seqs)
        if not total:
            return f"no matches for {self.search_query!r}"
        seq = self.events.current_seq
        k = bisect.bisect_right(scanner.seqs, seq) if seq is not None else 0
        at = k if k and scanner.seqs[k - 1] == seq else 0
        return (
            f"{at}/{total} matches for {self.search_query!r}"
            if at
            else f"{total} matches for {self.search_query!r}"
        )

    # list messages ----------------------------------------------------------------------------------------
    def on_event_list_highlighted(self, message: EventList.Highlighted) -> None:
        """Show the selected event (or stream) in the detail pane."""
        self.detail.show(message.seq, block=message.block)
        if self.events.following:
            self._status_after_frame()  # the cursor followed an append: the new row goes out first
        else:
            self._update_status()

    def on_event_list_follow_changed(self, message: EventList.FollowChanged) -> None:
        """Follow paused or resumed."""
        self._update_status()

    # actions ----------------------------------------------------------------------------------------------
    def refresh_host(self) -> None:
        """The host state changed: redraw the header."""
        self.query_one(SessionHeader).refresh_header(self._shown_count)

    def action_toggle_surface(self) -> None:
        """Switch between the full log and the surface (what the model sees now)."""
        self.mode = "surface" if self.mode == "full" else "full"
        keep = self.events.current_seq
        self._rebuild(reset=False)
        if keep is not None and not self.events.following:
            self.events.go_seq(keep)

    def action_search(self) -> None:
        """Open the search bar."""
        self.query_one(SearchBar).open()

    def on_search_bar_search(self, message: SearchBar.Search) -> None:
        """Run (or clear) a search in the background; the list takes the keys back (``n``/``N`` step through
        matches) and the cursor goes to the first match once the scan finds one."""
        self.search_query = message.query
        self._jump_to_match = bool(message.query)
        self._start_search()
        self.query_one(SearchBar).action_close()
        self._search_changed()

    def _start_search(self) -> None:
        """Scan for the search query among the events the filter passes (every event when none is on)."""
        if not self.search_query:
            self.search_scan = None
            return
        shown = self.filter.predicate(self.live.session) if self.filter.active else None
        self.search_scan = Scanner(
            self, self.live, search_predicate(self.search_query, shown), self._search_changed, "search"
        )
        self.search_scan.advance()

    def on_search_bar_closed(self, message: SearchBar.Closed) -> None:
        """Back to the list."""
        self.events.focus()

    def _search_changed(self) -> None:
        scanner = self.search_scan
        self.events.set_search(self.search_query, scanner.seqs if scanner is not None else None)
        if self._jump_to_match and scanner is not None and (scanner.seqs or scanner.done):
            self._jump_to_match = False
            if scanner.seqs:
                self.action_match(1, quiet=True)
                return
        self.query_one(SearchBar).set_count(self._search_label())
        self._update_status()

    def action_match(self, direction: int, quiet: bool = False) -> None:
        """Jump to the next (or previous) search match."""
        scanner = self.search_scan
        if scanner is None or not scanner.seqs:
            if quiet:
                return
            if scanner is not None and self.filter.active:  # the search looks only at the rows the filter shows
                self.notify(f"No match shown {self._hiding()}.", timeout=5)
            else:
                self.notify(f"No search matches; {key_of(self.app, 'main.search')} searches.", timeout=3)
            return
        if not self.events.go_match(scanner.seqs, direction > 0):
            count = len(scanner.seqs)
            self.notify(f"{count} match{'es' if count > 1 else ''}, none shown {self._hiding()}.", timeout=5)
        self._search_changed()

    def show_seq(self, seq: int) -> None:
        """Bring this screen to the top (closing the screens opened over it), put the cursor on ``seq``'s row (a
        delta opens its stream), or say what keeps it out of the list."""
        while self.app.screen is not self and self in self.app.screen_stack:
            self.app.pop_screen()
        if not self.events.go_seq(seq) or self.events.current_seq != seq:
            self.notify(f"The event at seq {seq} is not shown {self._hiding()}.", timeout=4)

    def _hiding(self) -> str:
        """What keeps search matches out of the list, and the key that shows them."""
        if self.mode == "surface":
            return f"on the surface: {key_of(self.app, 'main.surface')} shows the full log"
        if self.filter.active:
            return f"with the filter: {key_of(self.app, 'main.clear_filter')} clears it"
        if self.stop is not None:
            return f"up to {self.stop.moment.label()}: {key_of(self.app, 'main.live')} goes back to live"
        return "here"

    def action_filter(self) -> None:
        """Open the filter dialog."""
        types = sorted(self.live.session.counts)
        self.app.push_screen(FilterScreen(self.filter, types), self._set_filter)

    def action_hide_chunks(self) -> None:
        """Leave streamed chunks out of the list (a filter item ``!assistant/chunk``), or show them again."""
        self._set_filter(self.filter.toggled_type(HIDE_CHUNKS))

    def action_clear_filter(self) -> None:
        """Show every event again."""
        if not self.filter.active:
            self.notify(f"No filter to clear; {key_of(self.app, 'main.filter')} sets one.", timeout=3)
            return
        self._set_filter(EventFilter())

    def _set_filter(self, result: EventFilter | None) -> None:
        if result is None:
            return
        self.filter = result
        if result.active:
            self.filter_scan = Scanner(
                self, self.live, result.predicate(self.live.session), self._filter_changed, "filter"
            )
            self.filter_scan.advance()
        else:
            self.filter_scan = None
        self._rebuild(reset=False)
        if self.search_query:  # the search's matches are those the new filter shows
            self._start_search()
            self._search_changed()

    def _filter_changed(self) -> None:
        self._rebuild(reset=False)

    def action_top(self) -> None:
        """First row."""
        self.events.go(0)

    def action_bottom(self) -> None:
        """Last row (follow mode resumes there)."""
        self.events.go(len(self.events.view) - 1)

    def action_follow(self) -> None:
        """Resume follow mode."""
        self.events.resume_follow()
        self._update_status()

    def _jump(self, seqs: list[int], direction: int, what: str) -> None:
        """Move to the first row at or after the next (or previous) seq of ``seqs``; on the surface, whose rows follow
        the model's order rather than the seqs', to the next (or previous) row on screen that shows one of them."""
        current, forward = self.events.current_seq, direction > 0
        if current is None:
            return
        row = self._row_after(seqs, current, forward)
        if row is None:
            self.notify(f"No {'next' if forward else 'previous'} {what} in this view.", timeout=2)
        else:
            self.events.go(row)

    def _row_after(self, seqs: list[int], current: int, forward: bool) -> int | None:
        view, cursor = self.events.view, self.events.cursor
        if not view.in_seq_order:
            wanted = set(seqs)
            rows = range(cursor + 1, len(view)) if forward else range(cursor - 1, -1, -1)
            return next((r for r in rows if view.row(r)[0] in wanted), None)
        target = neighbour(seqs, current, forward)
        while target is not None:
            row = view.row_of_seq(target, at_or_after=True)
            if row is not None and (row > cursor if forward else row < cursor):
                return row
            target = neighbour(seqs, target, forward)
        return None

    def action_turn(self, direction: int) -> None:
        """Previous or next turn start."""
        self._jump(self._starts(self.live.facts.turn_starts), direction, "turn")

    def action_step(self, direction: int) -> None:
        """Previous or next step start."""
        self._jump(self._starts(self.live.facts.step_starts), direction, "step")

    def _starts(self, starts: list[int]) -> list[int]:
        """Boundaries to jump between: in the surface view, the first visible node after each start."""
        if self.mode != "surface":
            return starts
        shown = sorted(self.events.view.base)
        out: list[int] = []
        for start in starts:
            i = bisect.bisect_left(shown, start)
            if i < len(shown) and (not out or shown[i] != out[-1]):
                out.append(shown[i])
        return out

    def action_error(self, direction: int) -> None:
        """Previous or next error."""
        self._jump(self.live.facts.errors, direction, "error")

    def action_more(self) -> None:
        """Show more of a cut payload in the detail pane (or say why there is no more to show)."""
        pane = self.detail
        if not pane.display:
            key = key_of(self.app, "main.detail")
            self.notify(f"The detail pane is folded away at this width: {key} shows it.", timeout=3)
        elif not pane.hidden:
            self.notify("The detail pane already shows all of this event.", timeout=3)
        else:
            pane.more()

    def action_toggle_detail(self) -> None:
        """Hide or show the detail pane (the choice holds over resizes)."""
        pane = self.query_one(DetailPane)
        pane.display = self._detail_choice = not pane.display

    def on_resize(self, event: events.Resize) -> None:
        """Below ``DETAIL_MIN_WIDTH`` columns the detail pane folds away unless ``d`` asked for it; the status line is
        fitted to the new width."""
        if self._detail_choice is None:
            self.query_one(DetailPane).display = event.size.width >= DETAIL_MIN_WIDTH
        self.call_after_refresh(self._deferred_status)

    def action_toggle_time(self) -> None:
        """Show the time column as time of day (UTC) or as time ago (redrawn every second)."""
        self.events.toggle_time()
        if self.events.relative_time:
            self._ago_timer = self.set_interval(1.0, self.events.refresh_rows)
        elif self._ago_timer is not None:
            self._ago_timer.stop()
            self._ago_timer = None

    def action_copy(self, form: str) -> None:
        """Copy the selected event to the clipboard as JSON or as its text; on a model stream's row, the stream:
        its deltas (a JSON line each) or what it said."""
        seq = self.events.current_seq
        if seq is not None:
            self._copy(seq, form, self.events.current_block)

    @work(thread=True, group="copy", exclusive=True, exit_on_error=False)
    def _copy(self, seq: int, form: str, block: Block | None) -> None:
        if block is not None:
            deltas = [e for e in map(self.live.event, range(block.start, block.end)) if e is not None]
            if form == "json":
                text = "".join(dumps(e).decode() + "\n" for e in deltas)
            else:
                text = "\n\n".join(said for _, said in stream_text(deltas)[0])
            what = f"the stream seq {block.start}-{block.end - 1}"
        else:
            event = self.live.event(seq)
            if event is None:
                return
            if form == "json":
                text = dumps(event, option=orjson.OPT_INDENT_2).decode()
            else:
                sections = payload_sections(self.live.session, event)
                text = "\n\n".join(body for _, body, _ in sections) or dumps(event.get("data")).decode()
            what = f"seq {seq}"
        self.app.call_from_thread(self._copied, what, form, text)

    def _copied(self, what: str, form: str, text: str) -> None:
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {what} as {form} ({len(text)} chars).", timeout=3)
