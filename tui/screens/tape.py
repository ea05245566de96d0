"""The Tape screen: slice tape entries on the surface, the entries sealing would add now, and recall previews.

Entries on the surface are the ``user/message`` replacements ``core.policies.slice.is_tape_entry`` recognises,
with the turns ``entry_turns`` reads from them. The *next seal* rows are ``plan_seal`` under the effective
slice config: what the host would append at the next turn's first step. Selecting a row shows its rendered text
and the page ``recall_turn`` returns for one of its turns (``[``/``]`` move between the entry's turns, ``f``
switches between the dialogue and the full view), exactly as the model would receive it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from core.policies.recall import RECALL_TURN_TOOL, run_recall_tool
from core.policies.slice import entry_turns, is_tape_entry, plan_seal
from core.read.session import Session
from core.read.summary import human_chars
from core.shared.text import js_json, printable, text_of_blocks
from tui.failures import reads_log
from tui.screens.config import effective_config
from tui.screens.policy_screen import PolicyScreen, fill_table
from tui.screens.stacked import while_stacked
from tui.widgets.table import RowTable

ON_SURFACE = "on surface"
NEXT_SEAL = "next seal"


@dataclass(frozen=True, slots=True)
class EntryLine:
    """One tape entry, on the surface or planned."""

    key: str
    seq: int
    turns: tuple[int, int]
    nodes: int
    chars: int
    replaced_chars: int
    state: str
    text: str

    @property
    def span(self) -> str:
        """``A-B`` (or ``-`` for an entry whose turns are unknown)."""
        first, last = self.turns
        return f"{first}-{last}" if first else "-"


@dataclass(frozen=True, slots=True)
class TapeView:
    """Entries in surface order followed by the planned ones, and the seal's warnings."""

    entries: tuple[EntryLine, ...]
    warnings: tuple[str, ...]
    keep_recent_turns: int


def derive_tape(session: Session) -> TapeView:
    """Entries on the surface and what sealing now would add."""
    lines = []
    for seq in session.surface:
        event = session.events[seq]
        if not is_tape_entry(event):
            continue
        text = text_of_blocks((event.get("data") or {}).get("content"))
        sources = session.shadowed.get(seq, [])
        lines.append(
            EntryLine(
                f"entry:{seq}",
                seq,
                entry_turns(session, seq),
                len(sources),
                session.node_chars(seq),
                sum(session.node_chars(s) for s in sources),
                ON_SURFACE,
                text,
            )
        )
    config = effective_config(session).slice
    plan = plan_seal(session, config)
    for entry in plan.entries:
        lines.append(
            EntryLine(
                f"plan:{entry.seq}",
                entry.seq,
                entry.turns,
                len(entry.sources),
                len(entry.text),
                sum(session.node_chars(s) for s in entry.sources),
                NEXT_SEAL,
                entry.text,
            )
        )
    return TapeView(tuple(lines), tuple(w.message for w in plan.warnings), config.history.keepRecentTurns)


def recall_preview(session: Session, turn: int, view: str) -> str:
    """What ``recall_turn`` returns for ``turn`` (an error result is shown as such)."""
    args = {"turn": str(turn)} if view == "dialogue" else {"turn": str(turn), "view": view}
    result = run_recall_tool(session, RECALL_TURN_TOOL, args)
    call = f"{RECALL_TURN_TOOL}({js_json(args)})"
    return f"{call} → error: {result.text}" if result.is_error else f"{call}\n\n{result.text}"


class TapeScreen(PolicyScreen):
    """Slice tape entries and recall previews."""

    HEADING = "Tape — slice entries and the next seal"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("left_square_bracket", "turn(-1)", "Prev turn", id="policy.tape.prev"),
        Binding("right_square_bracket", "turn(1)", "Next turn", id="policy.tape.next"),
        Binding("f", "toggle_view", "Dialogue/full", id="policy.tape.view"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._entries: dict[str, EntryLine] = {}
        self._selected: str | None = None
        self._turn = 0
        self._view_name = "dialogue"

    def compose_body(self) -> ComposeResult:
        """Entry table on the left; entry text and recall page on the right."""
        with Horizontal(classes="policy-body"):
            with Vertical(id="tape-pane", classes="policy-pane"):
                yield RowTable(id="tape-table", cursor_type="row", classes="policy-table")
                with VerticalScroll(id="tape-summary-box"):  # the seal's warnings, any number, leave the table rows
                    yield Static(id="tape-summary")
            with Vertical(classes="policy-side"):
                yield Static("Entry text", classes="policy-subtitle")
                with VerticalScroll(classes="policy-pane"):
                    yield Static(id="tape-text")
                yield Static("recall_turn preview", id="tape-recall-title", classes="policy-subtitle")
                with VerticalScroll(classes="policy-pane"):
                    yield Static(id="tape-recall")

    @while_stacked
    def on_mount(self) -> None:
        """Set up the table, then derive."""
        self.query_one("#tape-table", DataTable).add_columns(
            "seq", "turns", "nodes", "replaced", "entry", "state"
        )
        super().on_mount()

    def derive(self, live: Any) -> TapeView:
        """Entries and the seal preview (worker thread)."""
        return derive_tape(live.session)

    def show(self, view: TapeView) -> None:
        """Refill the table, the summary and the selected entry."""
        self._entries = {line.key: line for line in view.entries}
        rows = [
            (
                line.key,
                (
                    str(line.seq),
                    line.span,
                    str(line.nodes),
                    human_chars(line.replaced_chars),
                    human_chars(line.chars),
                    Text(line.state, style="yellow" if line.state == NEXT_SEAL else "green"),
                ),
            )
            for line in view.entries
        ]
        table = self.query_one("#tape-table", DataTable)
        fill_table(table, rows)
        sealed = sum(1 for line in view.entries if line.state == ON_SURFACE)
        planned = len(view.entries) - sealed
        summary = Text(
            f"{sealed} entr{'y' if sealed == 1 else 'ies'} on the surface · "
            f"sealing now would add {planned} · history.keepRecentTurns = {view.keep_recent_turns}"
        )
        for warning in view.warnings:
            summary.append(f"\n{warning}", style="yellow")
        self.query_one("#tape-summary", Static).update(summary)
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            self._select(key or "", refresh=True)
        else:
            self._selected = None
            self.query_one("#tape-text", Static).update(Text("No tape entries yet.", style="dim"))
            self.query_one("#tape-recall", Static).update("")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Show the highlighted entry."""
        if event.row_key.value is not None:
            self._select(event.row_key.value)

    def _select(self, key: str, refresh: bool = False) -> None:
        line = self._entries.get(key)
        if line is None or (key == self._selected and not refresh):
            return
        if key != self._selected:
            self._selected = key
            self._turn = line.turns[0]
        self.query_one("#tape-text", Static).update(Text(printable(line.text)))
        self._load_recall()

    def action_turn(self, delta: int) -> None:
        """Preview the previous or next turn of the selected entry."""
        line = self._entries.get(self._selected or "")
        if line is None:
            self._no_entry()
            return
        if not line.turns[0]:
            self.notify("This entry names no turn to recall.", timeout=3)
            return
        first, last = line.turns
        turn = min(max(self._turn + delta, first), last)
        if turn == self._turn:
            end = "first" if delta < 0 else "last"
            self.notify(f"Turn {turn} is the {end} turn of the entry (turns {line.span}).", timeout=3)
            return
        self._turn = turn
        self._load_recall()

    def action_toggle_view(self) -> None:
        """Switch the recall preview between the dialogue and the full view."""
        if self._entries.get(self._selected or "") is None:
            self._no_entry()
            return
        self._view_name = "full" if self._view_name == "dialogue" else "dialogue"
        self._load_recall()

    def _no_entry(self) -> None:
        self.notify("No tape entry to preview yet.", timeout=3)

    def _load_recall(self) -> None:
        line = self._entries.get(self._selected or "")
        if line is None:
            return
        first, last = line.turns
        where = f"turn {self._turn} of {line.span}" if first else "no turns recorded"
        self.query_one("#tape-recall-title", Static).update(
            Text(f"recall_turn preview · {where} · view {self._view_name}")
        )
        if not first:
            self.query_one("#tape-recall", Static).update(
                Text("This entry names no turn to recall.", style="dim")
            )
            return
        self._recall(self._turn, self._view_name)

    @work(thread=True, exclusive=True, group="tape-recall")
    @reads_log
    def _recall(self, turn: int, view: str) -> None:
        live = self.live
        with live.lock:
            page = recall_preview(live.session, turn, view)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_recall, turn, view, page)

    def _show_recall(self, turn: int, view: str, page: str) -> None:
        if self.is_attached and (turn, view) == (self._turn, self._view_name):
            self.query_one("#tape-recall", Static).update(Text(printable(page)))  # full view: tool output
