"""The Checkpoints screen: checkpoint marks, and what rewinding to the one under the cursor would fold now.

Marks come from ``core.policies.checkpoint.marks``; each active mark's region from
``core.policies.rewind.preview_rewind`` (the same region selection the host's rewind uses, so the preview names
exactly the nodes that would fold, or why a rewind would fail, in ``operator_words``). The preview follows the
cursor (the newest mark at first); ``m`` asks the host to place a checkpoint (with an optional objective); ``w``
rewinds to the mark under the cursor: it shows that mark's preview in a confirm dialog, then asks the host to
rewind, sending the preview along so the outcome can compare the two.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Static

from core.policies.checkpoint import Mark, marks
from core.policies.rewind import NO_CHECKPOINT, RewindError, RewindPreview, operator_words, preview_rewind
from core.read.session import Session
from core.read.summary import human_chars, one_line, summarize, turn_span
from core.shared.text import printable
from tui.cells import cut, fitting, show_columns
from tui.keymap import key_of
from tui.screens.confirm import AskScreen, ConfirmScreen
from tui.screens.policy_screen import PolicyScreen, column_widths, fill_table
from tui.screens.stacked import while_stacked
from tui.widgets.table import RowTable

COLUMNS = ("seq", "turn", "kind", "chars", "content")  # the preview's: the content is cut to the room left
LEAST_NEEDED = ("turn", "content", "seq", "chars")  # left out in this order while the columns overflow
CONTENT_MIN = 10  # the content is left out in less room than this
MARK_COLUMNS = ("mark", "anchor", "turn", "by", "state", "objective")  # the objective is cut to the room left
OBJECTIVE_MIN = 12  # the objective is cut no shorter than this (the table scrolls sideways in less room)
# narrower than this, the preview goes under the marks: beside them (a third of the width) its table kept the kind
# column alone at 80 columns, and some of the content only from about 140
SIDE_BY_SIDE_WIDTH = 150


@dataclass(frozen=True, slots=True)
class RegionNode:
    """One surface node a rewind would fold."""

    seq: int
    turn: int
    kind: str
    chars: int
    summary: str


@dataclass(frozen=True, slots=True)
class MarkPreview:
    """What rewinding to one active mark would fold now."""

    preview: RewindPreview
    nodes: tuple[RegionNode, ...]
    turns: tuple[int, int] | None
    tools: tuple[tuple[str, int], ...]

    def covers(self) -> str:
        """One line on what the region holds: nodes, seqs, chars, turns and tool calls."""
        region = self.preview.region
        n = len(region.shadowed_seqs)
        turns = f" · {turn_span(*self.turns)}" if self.turns is not None else ""
        tools = ", ".join(f"{name}×{count}" for name, count in self.tools)
        return (
            f"{n} node{'' if n == 1 else 's'} (seq {region.start}..{region.end}) · "
            f"{self.preview.folded_chars:,} chars{turns}" + (f" · tool results: {tools}" if tools else "")
        )


@dataclass(frozen=True, slots=True)
class CheckpointsView:
    """Marks, what rewinding to each active one would fold, and why a rewind would fail where it would."""

    marks: tuple[Mark, ...]
    previews: tuple[MarkPreview, ...]  # every mark a rewind may target now, newest first
    problems: Mapping[int, str]  # per mark that cannot be rewound to: why, for the operator
    problem: str | None  # why no rewind can happen now (None while some mark can be rewound to)
    seq: int = 0  # the log length the previews were computed at

    def preview_for(self, mark_id: int | None) -> MarkPreview | None:
        """The preview of rewinding to ``mark_id`` (None: the newest mark a rewind may target)."""
        if mark_id is None:
            return self.previews[0] if self.previews else None
        return next((p for p in self.previews if p.preview.mark.mark_id == mark_id), None)

    def why_not(self, mark_id: int | None) -> str:
        """Why a rewind to ``mark_id`` (None: any) cannot happen now, as one sentence."""
        reason = self.problems.get(mark_id) if mark_id is not None else None
        return f"Nothing to rewind: {reason or self.problem or 'still reading the session'}."


def _kind(session: Session, event: Mapping[str, Any]) -> tuple[str, str | None]:
    """A node's kind label and, for a tool result, the tool's name."""
    etype = str(event.get("type"))
    data = event.get("data") if isinstance(event.get("data"), Mapping) else {}
    if etype == "tool/result":
        message = data.get("message") if isinstance(data.get("message"), Mapping) else {}
        source = message.get("source") if isinstance(message.get("source"), Mapping) else {}
        turn, step = data.get("turn"), data.get("step")
        call = (
            session.tool_call_at(turn, step, str(source.get("callId")))
            if isinstance(turn, int) and isinstance(step, int)
            else None
        )
        name = call.name if call else "tool"
        return f"result {name}", name
    if etype == "assistant/message":
        return "assistant", None
    if etype == "user/message":
        source = data.get("source") if isinstance(data.get("source"), Mapping) else {}
        return ("user" if source.get("kind") == "user" else "context"), None
    return etype, None


def _mark_preview(session: Session, preview: RewindPreview) -> MarkPreview:
    nodes = []
    tools: Counter[str] = Counter()
    for seq in preview.region.shadowed_seqs:
        event = session.events[seq]
        kind, tool = _kind(session, event)
        if tool is not None:
            tools[tool] += 1
        nodes.append(RegionNode(seq, session.turn_of(seq), kind, session.node_chars(seq), summarize(event, 90)))
    turns = [n.turn for n in nodes if n.turn > 0]
    span = (min(turns), max(turns)) if turns else None
    return MarkPreview(preview, tuple(nodes), span, tuple(sorted(tools.items())))


def derive_checkpoints(session: Session) -> CheckpointsView:
    """Every mark, and the region each active one would fold now (or why it cannot be rewound to)."""
    found = tuple(marks(session))
    if not found:
        return CheckpointsView(found, (), {}, operator_words(RewindError(NO_CHECKPOINT, "")), session.next_seq)
    previews: list[MarkPreview] = []
    problems: dict[int, str] = {}
    for mark in reversed(found):
        if mark.folded_by is not None:
            problems[mark.mark_id] = f"checkpoint {mark.mark_id} was already folded at seq {mark.folded_by}"
            continue
        try:
            previews.append(_mark_preview(session, preview_rewind(session, mark.mark_id)))
        except RewindError as exc:
            problems[mark.mark_id] = operator_words(exc, mark.mark_id)
    newest = found[-1].mark_id
    problem = None
    if not previews:
        problem = problems[newest] + ("; place a new one" if not found[-1].active else "")
    return CheckpointsView(found, tuple(previews), problems, problem, session.next_seq)


def region_line(view: CheckpointsView, selected: int | None) -> Text:
    """The line over the region table: what rewinding to ``selected`` (None: the newest mark) folds, or why it
    cannot (the tools' names are the log's, drawn as ``printable`` makes them)."""
    chosen = view.preview_for(selected)
    if chosen is None:
        return Text(printable(view.why_not(selected)), style="yellow")
    mark_id = chosen.preview.mark.mark_id
    return Text(printable(f"Rewinding to checkpoint {mark_id} folds {chosen.covers()}."), style="bold")


def objective_line(view: CheckpointsView, selected: int | None) -> Text:
    """The whole objective of the mark under the cursor (None: the newest), which its row may cut: the model's or
    the operator's words, drawn as ``printable`` makes them."""
    mark = next((m for m in view.marks if m.mark_id == selected), view.marks[-1] if view.marks else None)
    if mark is None:
        return Text("")
    line = Text(f"Checkpoint {mark.mark_id}: ", style="bold")
    return line.append(printable(mark.objective) if mark.objective else "no objective given",
                       style="" if mark.objective else "dim")  # fmt: skip


def rewind_summary(view: CheckpointsView, chosen: MarkPreview) -> Group:
    """The confirm dialog's body: what the rewind to ``chosen`` will replace, one row per node cut to the dialog's
    width (the objective and the tools' names are the log's: drawn as ``printable`` makes them), and when: our host
    writes a report at its next step, the DSH bridge a fixed note once the turn ends."""
    mark = chosen.preview.mark
    goal = f" ({mark.objective})" if mark.objective else ""
    head = Text(printable(f"Checkpoint {mark.mark_id}{goal}, placed at seq {mark.anchor} by the {mark.by}.\n"))
    if mark.bridged:  # the bridge has no report writer and rewinds at idle
        who, applier, by, when = "DSH", "DSH", "one short note", "once its turn ends (at idle)"
    else:
        who, applier, by, when = "The host", "the host", "one report", "at its next step"
    head.append(printable(f"{who} will replace {chosen.covers()} with {by} (previewed at seq {view.seq})."))
    nodes = Table.grid(padding=(0, 2), expand=True)
    nodes.add_column(justify="right", no_wrap=True)
    nodes.add_column(no_wrap=True, overflow="ellipsis", max_width=18)
    nodes.add_column(justify="right", no_wrap=True)
    nodes.add_column(no_wrap=True, overflow="ellipsis", ratio=1)
    for node in chosen.nodes[:12]:
        # Text, not str: a str cell is read as markup, and these are the log's words
        nodes.add_row(str(node.seq), Text(printable(node.kind)), human_chars(node.chars), Text(one_line(node.summary)))
    parts: list[RenderableType] = [head, "", Padding(nodes, (0, 0, 0, 2))]
    if len(chosen.nodes) > 12:
        parts.append(Text(f"  … and {len(chosen.nodes) - 12} more node(s)"))
    tail = f"The agent may run on before {applier} applies it ({when}); the outcome compares the two."
    return Group(*parts, Text(tail, style="dim"))  # no blank line over it: the text fits the dialog at 80x24


class CheckpointsScreen(PolicyScreen):
    """Checkpoint marks and the rewind preview."""

    HEADING = "Checkpoints — marks and the rewind preview"
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (SIDE_BY_SIDE_WIDTH, "-wide")]
    ACTIONS: ClassVar[frozenset[str]] = frozenset({"mark", "rewind"})
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("K", "mark", "Place checkpoint", id="policy.checkpoints.mark"),  # ``K`` everywhere; ``m`` messages
        Binding("w", "rewind", "Rewind…", id="policy.checkpoints.rewind"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._view: CheckpointsView | None = None

    def compose_body(self) -> ComposeResult:
        """Marks on the left, the region preview on the right."""
        with Horizontal(classes="policy-body"):
            yield RowTable(id="marks-table", cursor_type="row", classes="policy-table")
            with Vertical(classes="policy-side"):
                with VerticalScroll(id="region-texts"):  # an objective of any length leaves the table room
                    yield Static(id="mark-objective")
                    yield Static("Rewind preview", classes="policy-subtitle")
                    yield Static(id="region-summary")
                yield RowTable(id="region-table", cursor_type="none", classes="policy-table")

    @while_stacked
    def on_mount(self) -> None:
        """Set up the tables, then derive."""
        self.query_one("#marks-table", DataTable).add_columns(*MARK_COLUMNS)
        super().on_mount()

    def derive(self, live: Any) -> CheckpointsView:
        """Marks and preview (worker thread)."""
        return derive_checkpoints(live.session)

    def show(self, view: CheckpointsView) -> None:
        """Refill the marks, then the preview of the mark under the cursor."""
        self._view = view
        targets = {p.preview.mark.mark_id for p in view.previews}
        default = view.preview_for(None)
        rows = []
        for mark in reversed(view.marks):
            if mark.active:
                bold = default is not None and mark.mark_id == default.preview.mark.mark_id
                state = Text("active", style="bold green" if bold else "green" if mark.mark_id in targets else "yellow")
            else:
                state = Text("replaced" if mark.replaced else f"folded at {mark.folded_by}", style="dim")
            rows.append((str(mark.mark_id), [str(mark.mark_id), str(mark.anchor), str(mark.turn), printable(mark.by),
                                              state, printable(mark.objective or "")]))  # fmt: skip
        table = self.query_one("#marks-table", DataTable)
        room = table.size.width - table.styles.scrollbar_size_vertical
        left = room - column_widths(MARK_COLUMNS[:-1], [cells for _, cells in rows]) - 2  # the objective's padding
        for _, cells in rows:  # the objective cut to the room the others leave; whole beside the table
            cells[-1] = cut(cells[-1], max(left, max(OBJECTIVE_MIN, cell_len(MARK_COLUMNS[-1]))))
        fill_table(table, rows)
        self._show_preview()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The cursor moved to another mark: preview rewinding to that one."""
        if event.data_table.id == "marks-table":
            self._show_preview()

    def _show_preview(self) -> None:
        view = self._view
        if view is None:
            return
        selected = self._selected_mark()
        chosen = view.preview_for(selected)
        objective = self.query_one("#mark-objective", Static)
        objective.display = bool(view.marks)
        objective.update(objective_line(view, selected))
        self.query_one("#region-summary", Static).update(region_line(view, selected))
        nodes = chosen.nodes if chosen is not None else ()
        values = [
            (str(n.seq), str(n.turn), n.kind, human_chars(n.chars), printable(n.summary))
            for n in nodes
        ]
        cells = [dict(zip(COLUMNS, node, strict=True)) for node in values]
        widths = {c: column_widths([c], [[row[c]] for row in cells]) for c in COLUMNS}
        widths["content"] = CONTENT_MIN + 2
        table = self.query_one("#region-table", DataTable)
        room = table.size.width - table.styles.scrollbar_size_vertical
        shown = fitting(widths, room, LEAST_NEEDED)
        left = room - sum(widths[c] for c in shown if c != "content") - 2  # the content's padding
        show_columns(table, shown)
        rows = [[cut(row[c], left) if c == "content" else row[c] for c in shown] for row in cells]
        fill_table(table, [(row["seq"], cut) for row, cut in zip(cells, rows, strict=True)])

    def on_resize(self) -> None:
        """Fit the preview's columns to the new width."""
        self.call_after_refresh(self._show_preview)

    def action_mark(self) -> None:
        """Ask for an objective, then ask the host to place a checkpoint."""

        def asked(objective: str | None) -> None:
            if objective is None:
                return
            args = {"objective": objective.strip()} if objective.strip() else {}
            label = f"checkpoint: {objective.strip()}" if objective.strip() else "checkpoint"
            self.send_request("checkpoint", args, label)

        self.app.push_screen(
            AskScreen(
                "Place a checkpoint",
                f"Objective of the exploration (optional); Enter sends, {key_of(self.app, 'policy.ask.cancel')} cancels.",
            ),
            asked,
        )

    def action_rewind(self) -> None:
        """Rewind to the active checkpoint under the cursor (the newest by default): preview, confirm, send."""
        view = self._view
        selected = self._selected_mark()
        chosen = view.preview_for(selected) if view is not None else None
        if view is None or chosen is None:
            self.say(view.why_not(selected) if view is not None else "Nothing to rewind yet: still reading.", error=True)
            return
        mark_id = chosen.preview.mark.mark_id
        dialog = ConfirmScreen(f"Rewind to checkpoint {mark_id}?", rewind_summary(view, chosen), "Rewind")
        shown = [(view, chosen)]  # the preview the dialog shows, the one sent along

        def revise(now: CheckpointsView) -> None:
            """The session moved on while the dialog was up: its preview now, or why the rewind cannot be."""
            again = now.preview_for(mark_id)
            if again is None:
                dialog.revise(f"{now.why_not(mark_id)} The session moved on while this dialog was up: confirming sends "
                              "nothing.")  # fmt: skip
                return
            shown[0] = (now, again)
            dialog.revise(None, rewind_summary(now, again))

        def send() -> None:
            now = self._view  # derived again while the dialog was up: the agent may have folded the mark since
            if now is not None and now.preview_for(mark_id) is None:
                self.say(f"Not sent, the session moved on while the dialog was up. {now.why_not(mark_id)}", error=True)
                return
            seen, sent = shown[0]
            preview = {"seq": seen.seq, "nodes": len(sent.preview.region.shadowed_seqs), "chars": sent.preview.folded_chars}
            self.send_request("rewind", {"markId": mark_id, "preview": preview}, f"rewind checkpoint {mark_id}")

        self.confirm_then(dialog, send, revise)

    def _selected_mark(self) -> int | None:
        table = self.query_one("#marks-table", DataTable)
        if not table.row_count or table.cursor_row < 0:
            return None
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return int(key) if key is not None else None
