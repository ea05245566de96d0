"""The request view: one model request rebuilt from the log, and what changed against the request before it.

The heading names the step, the moment and the sizes; the diff line says where the provider's prefix cache
broke and which event broke it; the table lists the chat-completions messages with their roles and sizes, the
message where the cache broke marked ``✂``. ``,`` and ``.`` move one request back or forward. The request is
rebuilt in a worker (``tui.travel.Moments.request``).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from core.read.summary import human_chars, one_line
from core.rebuild.request import UNFINISHED, wire_chars
from core.rebuild.request_diff import break_location
from core.shared.text import QUOTED, clip, model_label, printable
from core.shared.wire import call_text
from tui.cells import cut
from tui.failures import READ_ERRORS, report_log_failure
from tui.live import SessionUpdated
from tui.screens.policy_screen import column_widths, fill_table
from tui.screens.stacked import while_stacked
from tui.screens.toasts import stack_under_labels
from tui.travel import RequestView, TimeTravel
from tui.widgets.footer import PriorityFooter
from tui.widgets.table import RowTable

PREVIEW = 160
COLUMNS = ("", "#", "role", "chars", "from", "content")
CONTENT_MIN = 10  # a preview is cut no shorter than this (the table scrolls sideways in less room)


def _key(key: int | str) -> str:
    return f"note@{key.split(':', 1)[1]}" if isinstance(key, str) else str(key)


def heading(view: RequestView) -> Text:
    """``request 12/40 · turn 7 step 3 · at seq 4180 · model · 24 messages · 81k chars · max_tokens …``, its control
    characters drawn as pictures."""
    r = view.request
    attempt = f" attempt {r.attempt}" if r.attempt > 1 else ""
    parts = [
        f"request {view.index + 1}/{view.total}",
        f"turn {r.turn} step {r.step}{attempt}",
        f"at seq {r.seq}",
        clip(model_label(r.provider, r.model, "?/?"), QUOTED),  # the log's to say: cut as a message cuts a name
        f"{len(r.wire)} messages",
        f"{human_chars(r.chars)} chars",
    ]
    if r.body.get("max_tokens") is not None:
        parts.append(f"max_tokens {r.body['max_tokens']}")
    if r.body.get("tool_choice"):
        parts.append(f"tool_choice {r.body['tool_choice']}")
    if r.usage:
        parts.append("usage " + " ".join(f"{k}={v}" for k, v in r.usage.items()))
    if r.unfinished:
        parts.append(UNFINISHED)
    return Text(printable(" · ".join(parts)), style="bold")  # the model and the usage's keys quote the log


def diff_line(view: RequestView, width: int | None = None) -> Text:
    """The cache-break point and its cause, or that the request extends the previous one, then the nodes added,
    removed and replaced: after it when the whole fits in ``width`` cells (None: any width), else on a line of their
    own, so that the counts never wrap apart."""
    d = view.diff
    if d.before is None:
        return Text("The session's first request: nothing cached before it.", style="dim")
    changes = f"+{len(d.added)} −{len(d.removed)} nodes" + (f", {len(d.replaced)} replaced" if d.replaced else "")
    if not d.broke:
        said = Text.assemble(
            ("prefix kept: ", "bold green"),
            f"the first {d.prefix_bytes:,} of {d.total_bytes:,} bytes are the previous request's",
        )
    else:
        cause = (d.cause or "?") + (f" at seq {d.cause_seq}" if d.cause_seq is not None else "")
        share = d.prefix_bytes / d.total_bytes if d.total_bytes else 0
        said = Text.assemble(
            ("✂ cache broke ", "bold red"),
            f"at byte {d.prefix_bytes:,} of {d.total_bytes:,} ({share:.0%} reused) · cause: ",
            (cause, "bold"),
        )
    fits = width is None or said.cell_len + 2 + len(changes) <= width
    return Text.assemble(said, "  " if fits else "\n", changes)


def message_rows(view: RequestView, room: int = PREVIEW) -> list[tuple[str, tuple[Any, ...]]]:
    """Table rows: break mark, index, wire role, chars, where it came from, a preview (cut to ``room`` cells)."""
    r = view.request
    where = break_location(view.diff)
    has_system = bool(r.wire) and r.wire[0].get("role") == "system"
    rows = []
    first = 1 if has_system else 0
    for i, m in enumerate(r.wire):
        k = i - first
        origin = _key(r.keys[k]) if 0 <= k < len(r.keys) else ""
        text = m.get("content") or ""
        calls = [call_text(c) for c in m.get("tool_calls") or ()]
        preview = cut(one_line(" ".join([text, *calls]), PREVIEW), room)
        broke = where == ("message", i)
        style = "bold red" if broke else ""
        rows.append(
            (
                str(i),
                (
                    Text("✂" if broke else "", style=style),
                    str(i),
                    Text(m["role"], style=style or ("cyan" if m["role"] == "assistant" else "")),
                    human_chars(wire_chars(m)),
                    origin,
                    Text(preview, style="dim" if m["role"] == "system" else ""),
                ),
            )
        )
    return rows


class RequestScreen(Screen[None]):
    """One rebuilt request and its diff (see the module docstring)."""

    DEFAULT_CSS = """
    RequestScreen { layout: vertical; }
    RequestScreen #request-heading { height: auto; max-height: 40%; padding: 0 1; background: $primary; color: $text; }
    RequestScreen #request-diff { height: auto; max-height: 20%; padding: 0 1; }
    RequestScreen #request-tools { height: auto; max-height: 3; padding: 0 1; color: $text-muted; }
    RequestScreen #request-table { height: 1fr; }
    """
    BINDINGS = [
        Binding("escape", "close", "Back", id="request.close"),
        Binding("comma", "move(-1)", "Prev request", id="request.prev"),
        Binding("full_stop", "move(1)", "Next request", id="request.next"),
    ]

    def __init__(self, travel: TimeTravel, index: int) -> None:
        super().__init__()
        self.travel = travel
        self.index = index
        self.loading = False
        self.view: RequestView | None = None  # the request shown
        self.waiting = False  # the log holds no request now (replaced, cut short or deleted): the first one is shown

    def compose(self) -> ComposeResult:
        """Heading, diff line, tool list, messages, footer."""
        yield Static(Text("Rebuilding the request…"), id="request-heading")
        yield Static(id="request-diff")
        yield Static(id="request-tools")
        yield RowTable(id="request-table", cursor_type="row")
        yield PriorityFooter()

    @while_stacked
    def on_mount(self) -> None:
        """Columns, then the first rebuild; the toasts kept off the last messages."""
        self.screen_layout_refresh_signal.subscribe(self, self._place_toasts)
        self.query_one(DataTable).add_columns(*COLUMNS)
        self.query_one(DataTable).focus()
        self._load(self.index)

    def _place_toasts(self, screen: Screen[object]) -> None:
        """The toasts stack under the table's column labels, over its first messages (the system prompt and the
        oldest, what the provider's cache holds): the heading, the diff, the last messages and the footer stay."""
        stack_under_labels(self, self.query_one(DataTable))

    def on_resize(self) -> None:
        """Fit the diff line and the table to the new width."""
        self.call_after_refresh(self._draw_diff)
        self.call_after_refresh(self._fill)

    def _fill(self) -> None:
        """The messages in the table's width (it never scrolls sideways): each preview cut to the room the other
        columns leave."""
        if self.view is None:
            return
        table = self.query_one(DataTable)
        rows = message_rows(self.view)
        room = table.size.width - table.styles.scrollbar_size_vertical
        left = room - column_widths(COLUMNS[:-1], [cells for _, cells in rows]) - 2  # the preview's padding
        fill_table(table, message_rows(self.view, max(left, CONTENT_MIN)))

    def _draw_diff(self) -> None:
        if self.view is not None:
            line = self.query_one("#request-diff", Static)
            line.update(diff_line(self.view, line.content_size.width or None))

    def action_close(self) -> None:
        """Back to where the view was opened."""
        self.dismiss(None)

    def on_session_updated(self, message: SessionUpdated) -> None:
        """The log was truncated or replaced: the request shown was the old log's, so it is rebuilt from the new one
        (the request at the same place, else its last); appends leave it as it is, unless the log held no request,
        when they may bring its first."""
        if message.reset or self.waiting and not self.loading:
            self._load(self.index)

    def action_move(self, step: int) -> None:
        """One request back or forward (counting the requests that went out since the view was opened)."""
        if not self.loading:
            self._load(self.index + step, self.index)

    def _load(self, index: int, here: int | None = None) -> None:
        self.loading = True
        self._rebuild(index, here)

    @work(thread=True, group="timetravel", exclusive=True)
    def _rebuild(self, index: int, here: int | None) -> None:
        """Rebuild request ``index``; a move from request ``here`` past either end (of the timeline caught up with
        the log) is only said."""
        try:
            moments = self.travel.sync()
            count = len(moments.points)
            if not count:
                self.app.call_from_thread(self._show_none, self.travel.live.log_deleted)
                return
            if here is not None and not 0 <= index < count and here < count:
                end = "first" if index < here else "last"
                self.app.call_from_thread(self._at_end, f"This is the {end} request ({here + 1} of {count}).")
                return
            view = moments.request(index)
        except READ_ERRORS as exc:
            self.app.call_from_thread(self._failed, exc)
            return
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show, view)

    def _at_end(self, said: str) -> None:
        self.loading = False
        self.notify(said, timeout=3)

    def _failed(self, error: BaseException) -> None:
        self.loading = False
        report_log_failure(self, error)

    def _show_none(self, deleted: bool) -> None:
        """The log holds no request (``deleted``: there is no log at all): say so, and list nothing of the request
        shown before (the old log's)."""
        self.loading = False
        self.waiting = True
        if not self.is_attached:
            return
        self.view = None
        said = (
            "No model request: the log was deleted; its requests show here if a log comes back at its path."
            if deleted
            else "No model request yet: the log was replaced or cut short; its first request shows here when it goes out."
        )
        self.query_one("#request-heading", Static).update(Text(said, style="bold"))
        for line in ("#request-diff", "#request-tools"):
            self.query_one(line, Static).update("")
        self.query_one(DataTable).clear()

    def _show(self, view: RequestView) -> None:
        self.loading = False
        self.waiting = False
        if not self.is_attached:
            return
        self.index = view.index
        r = view.request
        self.query_one("#request-heading", Static).update(heading(view))
        self.view = view
        self._draw_diff()
        tools = Text(f"tools ({len(r.tool_names)}): " + (printable(", ".join(r.tool_names)) or "none"))
        if break_location(view.diff) == ("tools", 0):
            tools.stylize("bold red")
            tools = Text("✂ ") + tools
        self.query_one("#request-tools", Static).update(tools)
        table = self.query_one(DataTable)
        table.clear()  # the cursor on the first message, or the one the cache broke at
        self._fill()
        where = break_location(view.diff)
        if where is not None and where[0] == "message":
            table.move_cursor(row=where[1])
