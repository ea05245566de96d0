"""The Folds screen: every tool result on the surface and what the fold policy did or will do with it.

Rows come from ``core.policies.fold.preview_fold`` under the effective slice config. The state column reads
``raw`` (the original is on the surface), ``folded`` (a digest replaced it), ``pruned`` (another policy cut it),
``pinned`` or ``expanded`` (the operator put the original back); the policy column says what the next step
would do with a raw result and why. The backoff column shows the result's resource ledger from
``FoldRow.backoff``: ``E/F exp`` (the model expanded E of the resource's F folded results in full) or
``backed off (E/F)`` once the policy stopped folding it. ``v`` shows the full original result here in the TUI;
``x`` asks the host to put it back on the surface for the model (control op ``expand``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Region
from textual.screen import Screen
from textual.widgets import DataTable, Static, TextArea

from core.control.host_state import KIND_DSH
from core.policies import fold
from core.read.session import Session
from core.read.summary import human_chars
from core.shared.text import printable, tool_result_text
from tui.cells import cut_start
from tui.failures import reads_log
from tui.keymap import key_of
from tui.live import SessionUpdated
from tui.screens.config import effective_config
from tui.screens.confirm import ConfirmScreen
from tui.screens.dialog import Dialog
from tui.screens.policy_screen import PolicyScreen, column_widths, fill_table
from tui.screens.stacked import while_stacked
from tui.screens.toasts import sentence, toast_room
from tui.widgets.detail import clip
from tui.widgets.footer import PriorityFooter
from tui.widgets.table import RowTable

FOLDED = "folded"
EXPANDED = "expanded"
PRUNED = "pruned"
PINNED = "pinned"
RAW = "raw"
RESULT_LIMIT = 100_000  # chars the full result view holds: Textual's text area wraps what it holds on the UI thread

_STATE = {fold.FOLDED: FOLDED, fold.UNFOLDED: EXPANDED, fold.REPLACED: PRUNED, fold.PINNED: PINNED}
_STATE_STYLE = {FOLDED: "cyan", EXPANDED: "green", PRUNED: "magenta", PINNED: "yellow", RAW: ""}
_BACKOFF_STYLE = {"backed-off": "bold red", "expanding": "yellow", "none": "dim", "": ""}
_POLICY_LABEL = {
    fold.FOLD: "folds next step",
    fold.KEPT: "kept",
    fold.SHOWN: "already sent",
    fold.ERROR: "error result",
    fold.RECALL: "recall result",
    fold.BACKED_OFF: "backed off",
    fold.PINNED: "pinned",
}


@dataclass(frozen=True, slots=True)
class FoldLine:
    """One table row."""

    seq: int
    original: int
    address: str
    tool: str
    path: str | None
    raw_chars: int
    surface_chars: int
    state: str
    policy: str
    backoff: str
    note: str
    backoff_level: str = ""  # "backed-off", "expanding" (some full expansions), "none" (no folds) or ""


def backoff_text(state: fold.ResourceBackoff | None, status: str) -> tuple[str, str]:
    """The backoff cell of a row and its level (see ``FoldLine.backoff_level``)."""
    if state is None:
        return ("backed off", "backed-off") if status == fold.BACKED_OFF else ("", "")
    if state.backed_off:
        return f"backed off ({state.expansions}/{state.folds})", "backed-off"
    if not state.folds:
        return "–", "none"
    return f"{state.expansions}/{state.folds} exp", "expanding" if state.expansions else ""


def fold_line(row: fold.FoldRow) -> FoldLine:
    """Present one fold preview row."""
    state = _STATE.get(row.status, RAW)
    replaced = row.seq != row.original
    note = row.reason
    if row.status == fold.FOLD:
        note = f"would fold to {human_chars(row.chars_after)} chars ({row.kind} digest)"
    elif row.status == fold.FOLDED and row.kind:
        note = f"{row.kind} digest of seq {row.original}"
    backoff, level = backoff_text(row.backoff, row.status)
    return FoldLine(
        seq=row.seq,
        original=row.original,
        address=f"{row.turn}.{row.step}.{row.call}",
        tool=row.tool,
        path=row.path,
        raw_chars=row.chars_before,
        surface_chars=row.chars_after if replaced else row.chars_before,
        state=state,
        policy="" if replaced else _POLICY_LABEL.get(row.status, row.status),
        backoff=backoff,
        note=note,
        backoff_level=level,
    )


@dataclass(frozen=True, slots=True)
class FoldsView:
    """The table rows plus the backoff threshold in force and how many resources are backed off."""

    lines: list[FoldLine]
    backoff_after: int
    backed_off: int
    logged: bool  # the log holds a tool result (on the surface or not)

    def line_of(self, original: int) -> FoldLine | None:
        """The row of the tool result logged at seq ``original`` (None: it is on the surface no more)."""
        return next((line for line in self.lines if line.original == original), None)


COLUMNS = ("seq", "t.s.c", "tool", "state", "raw", "surface", "path", "policy", "backoff", "note")
NOTELESS = 9  # the columns a table too narrow for the notes keeps
NARROW = 7  # those, up to the path, a table narrower still keeps


def row_cells(line: FoldLine) -> tuple[str | Text, ...]:
    """The table's cells of one row, one per column of ``COLUMNS``."""
    return (
        str(line.seq),
        line.address,
        line.tool,
        Text(line.state, style=_STATE_STYLE[line.state]),
        human_chars(line.raw_chars),
        human_chars(line.surface_chars),
        line.path or "",
        line.policy,
        Text(line.backoff, style=_BACKOFF_STYLE[line.backoff_level]),
        line.note,
    )


def derive_folds(session: Session) -> list[FoldLine]:
    """The fold preview of every tool result on the surface, under the effective slice config."""
    return derive_view(session).lines


def derive_view(session: Session) -> FoldsView:
    """Rows, threshold and backed-off resource count under the effective slice config (worker thread)."""
    config = effective_config(session).slice
    rows, ledger = fold.preview_with_backoff(session, config)
    return FoldsView(
        [fold_line(row) for row in rows],
        config.fold.backoffAfterExpansions,
        sum(1 for state in ledger.values() if state.backed_off),
        bool(session.counts.get("tool/result")),
    )


def selected_text(line: FoldLine) -> str:
    """The cursor row's line: its seq, path, policy (unless the note starts by saying it) and backoff, then the note
    as a sentence."""
    parts = [f"seq {line.seq}", f"path {line.path or '–'}"]
    if not (line.policy and line.note.startswith(line.policy)):
        parts.append(f"policy {line.policy or '–'}")
    parts.append(f"backoff {line.backoff or '–'}")
    return " · ".join(parts + ([sentence(line.note)] if line.note else []))


def empty_text(folds: FoldsView) -> str:
    """What the line under an empty table says: why no tool result is listed."""
    if folds.logged:
        return ("No tool result is on the surface now: a rewind's report, a tape entry or a compaction took the "
                "place of each one, and the log keeps the originals.")  # fmt: skip
    return "No tool result yet: the agent has called no tool in this session."


def folds_legend(app: App[Any]) -> tuple[tuple[str, str], ...]:
    """What the Folds screen's columns mean (for ``?``), naming the key ``app``'s keymap gives an expand."""
    return (
        (
            "state",
            "raw: the original is on the surface · folded: a digest replaced it · pruned: another policy cut it · "
            "pinned: an early, small result the fold leaves alone · expanded: the operator put the original back",
        ),
        ("policy", "what the next step's fold does with a raw result; the note says why"),
        (
            "backoff",
            "the fold ledger of the result's resource (the same path, else the same call arguments). "
            "E/F exp: the model expanded E of the resource's F folded results in full with expand_result. "
            "backed off (E/F): after fold.backoffAfterExpansions full expansions that cover at least half of its "
            "folds, the resource is no longer folded for the rest of the session. –: nothing of it was folded. "
            "grep/lines expansions, repeats of the same result and operator expands "
            f"({key_of(app, 'policy.folds.expand')}) do not count.",
        ),
    )


def original_text(session: Session, seq: int) -> str:
    """The full text of the original tool result (its text parts joined by newlines)."""
    data = session.events[seq].get("data") or {}
    message = data.get("message") if isinstance(data, dict) else None
    return tool_result_text(message if isinstance(message, dict) else None, "\n")


class ResultScreen(Dialog[None]):
    """The full original text of one tool result, read-only, read from the log's ``epoch``: once the log is truncated
    or replaced, its title says the text is what the log held before."""

    CSS_PATH = "policy.tcss"
    BOX = ".policy-result-box"
    BINDINGS: ClassVar[list[Binding]] = [Binding("escape,q", "close", "Close", id="policy.result.close")]

    def __init__(self, title: str, text: str, epoch: int) -> None:
        super().__init__(classes="policy-dialog")
        self.heading = title
        self.text = text
        self.epoch = epoch

    def compose(self) -> ComposeResult:
        """Title and the text, and a footer of its own keys under them (the box would cover the screen's)."""
        with Vertical(classes="policy-dialog-box policy-result-box"):
            yield Static(Text(self.heading), classes="policy-dialog-title")
            yield TextArea(printable(self.text), read_only=True, soft_wrap=True, id="result-text")  # no escapes run
        yield PriorityFooter()

    def on_mount(self) -> None:
        """A log reset between the read and the opening is said at once."""
        live = getattr(self.app, "live", None)
        if live is not None:
            self._mark_stale(live.epoch)

    def on_session_updated(self, message: SessionUpdated) -> None:
        """The log was truncated or replaced: its seq now names another event, or none."""
        self._mark_stale(message.epoch)

    def _mark_stale(self, epoch: int) -> None:
        if epoch != self.epoch:
            live = getattr(self.app, "live", None)
            how = "truncated or replaced" if live is None else live.how_changed
            said = f"{self.heading} · the log was {how} since: this is what it held then"
            self.query_one(".policy-dialog-title", Static).update(Text(said))

    def toast_band(self) -> Region:
        """The whole screen: the box covers the Folds screen, and the rows above it are the toasts'."""
        return self.region

    def _place_toasts(self, screen: Screen[object]) -> None:
        """The box gives up the rows above it that the toasts take (half the screen at most; its text scrolls),
        so they are read while it is open, then stack there."""
        footer = self.query_one(PriorityFooter).outer_size.height
        self.query_one(self.BOX).styles.max_height = self.size.height - footer - toast_room(self)
        super()._place_toasts(screen)

    def action_close(self) -> None:
        """Back to the folds."""
        self.dismiss(None)


class FoldsScreen(PolicyScreen):
    """Tool results: raw, folded, pruned, pinned or expanded."""

    HEADING = "Folds — tool results on the surface"
    ACTIONS: ClassVar[frozenset[str]] = frozenset({"expand"})
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("v", "view", "Full result", id="policy.folds.view"),
        Binding("x", "expand", "Expand for the model", id="policy.folds.expand"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._lines: dict[str, FoldLine] = {}
        self._view: FoldsView | None = None  # the rows shown, drawn again for a new width

    def columns_legend(self) -> tuple[tuple[str, str], ...]:
        """What ``?`` explains below the keys (``folds_legend``)."""
        return folds_legend(self.app)

    def compose_body(self) -> ComposeResult:
        """The results table, the cursor row's columns the table leaves out when narrow, and a totals line."""
        with Vertical(classes="policy-body"):
            yield RowTable(id="folds-table", cursor_type="row", classes="policy-table")
            with VerticalScroll(id="folds-selected-box"):  # a path of any length leaves the table room
                yield Static(id="folds-selected")
            yield Static(id="folds-totals")

    @while_stacked
    def on_mount(self) -> None:
        """Set up the table, then derive."""
        table = self.query_one("#folds-table", DataTable)
        for label in COLUMNS:
            table.add_column(label, key=label)
        self.query_one("#folds-selected-box").display = False
        super().on_mount()

    def on_resize(self) -> None:
        """Fit the table's columns to the new width."""
        if self._view is not None:
            self.call_after_refresh(self.show, self._view)

    def derive(self, live: Any) -> FoldsView:
        """Fold preview rows and backoff totals (worker thread)."""
        return derive_view(live.session)

    def show(self, folds: FoldsView) -> None:
        """Refill the table (every column where they fit the width, else all but the note, else those up to the path,
        clipped to fit, with a line giving the cursor row whole) and the totals."""
        self._view = folds
        view = folds.lines
        self._lines = {str(line.seq): line for line in view}
        rows = [(str(line.seq), row_cells(line)) for line in view]
        table = self.query_one("#folds-table", DataTable)
        room = self.size.width - table.styles.scrollbar_size_vertical
        cells = [cells for _, cells in rows]
        shown = next((n for n in (len(COLUMNS), NOTELESS) if column_widths(COLUMNS[:n], cells) <= room), NARROW)
        if shown == NARROW:
            path = max(room - column_widths(COLUMNS[: NARROW - 1], cells) - 2, 4)
            rows = [(key, (*cells[: NARROW - 1], cut_start(str(cells[NARROW - 1]), path))) for key, cells in rows]
        for label in COLUMNS[shown : len(table.columns)]:
            table.remove_column(label)
        for label in COLUMNS[len(table.columns) : shown]:
            table.add_column(label, key=label)
        fill_table(table, [(key, cells[:shown]) for key, cells in rows])
        self.query_one("#folds-selected-box").display = shown < len(COLUMNS) or not view
        self._show_selected()
        counts: dict[str, int] = {}
        for line in view:
            counts[line.state] = counts.get(line.state, 0) + 1
        raw = sum(line.raw_chars for line in view)
        surface = sum(line.surface_chars for line in view)
        # an empty table's line says why it is empty
        by_state = ", ".join(f"{n} {state}" for state, n in counts.items()) or "0 tool results"
        backoff = f"backoff after {folds.backoff_after} full expansions covering ≥ half a resource's folds"
        if folds.backed_off:
            backoff += f" · {folds.backed_off} resource{'s' if folds.backed_off != 1 else ''} backed off"
        self.query_one("#folds-totals", Static).update(
            Text(
                f"{by_state} · {human_chars(raw)} raw chars, {human_chars(surface)} on the surface\n"
                f"{backoff} ({key_of(self.app, 'app.help')} explains the columns)"
            )
        )

    def _selected(self) -> FoldLine | None:
        table = self.query_one("#folds-table", DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self._lines.get(key or "")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The cursor moved: say the row's columns the table leaves out."""
        self._show_selected()

    def _show_selected(self) -> None:
        line = self._selected()
        if line is not None:
            said = selected_text(line)
        else:
            said = empty_text(self._view) if self._view is not None and not self._view.lines else ""
        self.query_one("#folds-selected", Static).update(Text(printable(said)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row shows its full result."""
        self.action_view()

    def action_view(self) -> None:
        """Show the selected result's full original text."""
        line = self._selected()
        if line is None:
            self.say("No tool result selected.")
            return
        self._load_original(line)

    @work(thread=True, group="folds-load")
    @reads_log
    def _load_original(self, line: FoldLine) -> None:
        with self.live.lock:  # the follower thread applies appends, and a new file, under this lock
            epoch = self.live.epoch
            text = original_text(self.live.session, line.original)
        where = f" {line.path}" if line.path else ""
        title = f"{line.tool}{where} · seq {line.original} · {human_chars(len(text))} chars (original)"
        shown, cut = clip(text, RESULT_LIMIT)  # the text area lays out (wraps) all it holds on the UI thread
        if cut:
            shown += f"\n\n[… {human_chars(cut)} more chars of the result are left out here.]"
        self.app.call_from_thread(self.app.push_screen, ResultScreen(title, shown, epoch))

    def action_expand(self) -> None:
        """Ask the host to put the selected folded result back on the surface for the model."""
        line = self._selected()
        if line is None:
            self.say("No tool result selected.")
            return
        dsh = self.live.host.kind == KIND_DSH  # the DSH bridge also puts back what DSH's compaction pruned
        if (why := unexpandable(line, dsh)) is not None:
            self.say(sentence(why), error=True)
            return
        self._offer_expand(line, dsh)

    @work(thread=True, group="folds-expand")
    @reads_log
    def _offer_expand(self, line: FoldLine, dsh: bool) -> None:
        """Open the expand confirm, unless the result left the surface since the table was drawn (a rewind, a seal
        or a compaction landed meanwhile): the newest projection is asked, not the rows shown."""
        gone = self._gone(line)
        if gone is not None:
            self.app.call_from_thread(self.say, f"Nothing to expand: {gone}.", error=True)
        else:
            self.app.call_from_thread(self._confirm_expand, line, dsh)

    def _gone(self, line: FoldLine) -> str | None:
        """Why ``line``'s result has left the surface of the live session now, or None (worker thread)."""
        with self.live.lock:  # the follower thread applies appends under this lock
            return fold.off_surface(self.live.session, line.original)

    @work(thread=True, group="folds-expand")
    @reads_log
    def _send_expand(self, line: FoldLine) -> None:
        """Send the confirmed expand, unless the result left the surface while the confirm was up."""
        gone = self._gone(line)
        if gone is not None:
            self.app.call_from_thread(self.say, f"Not sent: {gone}.", error=True)
        else:
            label = f"expand seq {line.original} ({line.tool})"
            self.app.call_from_thread(self.send_request, "expand", {"seq": line.original}, label)

    def _confirm_expand(self, line: FoldLine, dsh: bool) -> None:
        """Ask before putting ``line``'s original back, saying what it costs the context; while the dialog is up it
        follows the result's row as the view is derived again (the host may expand it, a rewind take it off the
        surface), and says when confirming would send nothing."""
        if not self.is_attached:
            return
        self.say("")
        dialog = ConfirmScreen(f"Expand seq {line.original} for the model?", expand_text(line, dsh), "Expand")

        def revise(now: FoldsView) -> None:
            again = now.line_of(line.original)
            if again is None:
                dialog.revise(f"The tool result at seq {line.original} left the surface while this dialog was up: "
                              "confirming sends nothing.")  # fmt: skip
            elif unexpandable(again, dsh) is not None:
                dialog.revise(f"Seq {line.original} is {again.state} now: it changed while this dialog was up, so "
                              "confirming sends nothing.")  # fmt: skip
            else:
                dialog.revise(None, expand_text(again, dsh))

        def send() -> None:
            again = self._view.line_of(line.original) if self._view else None  # derived again while it was up
            if again is not None and unexpandable(again, dsh) is not None:
                self.say(f"Not sent: seq {line.original} is {again.state} now, changed while the dialog was up.",
                         error=True)  # fmt: skip
                return
            self._send_expand(line)  # a result gone from the surface is told by the newest projection

        self.confirm_then(dialog, send, revise)


def unexpandable(line: FoldLine, dsh: bool) -> str | None:
    """Why ``line``'s result cannot be expanded, or None: only a folded one can (under the DSH bridge ``dsh``, a
    pruned one too)."""
    if line.state == FOLDED or (dsh and line.state == PRUNED):
        return None
    which = "folded or pruned" if dsh else "folded"
    return f"only {which} results can be expanded; seq {line.seq} is {line.state}"


def expand_text(line: FoldLine, dsh: bool) -> Text:
    """The expand confirm's body: who puts ``line``'s original back, when, and what it costs the context."""
    back = line.raw_chars - line.surface_chars
    who, when = ("DSH", "once the agent is idle") if dsh else ("The host", "before the model's next call")
    return Text(
        f"{who} puts the original result of {line.tool} (seq {line.original}) back on the surface {when}: "
        f"{human_chars(line.raw_chars)} chars replace the {human_chars(line.surface_chars)}-char "
        f"{'digest' if line.state == FOLDED else 'pruned version'}, so {human_chars(max(back, 0))} chars go back "
        "into the context."
    )
