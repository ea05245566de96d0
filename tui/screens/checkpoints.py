"""The Checkpoints screen: checkpoint marks, and what rewinding the active one would fold right now.

Marks come from ``core.policies.checkpoint.marks``; the region preview from ``core.policies.rewind.preview_rewind``
(the same region selection the host's rewind uses, so the preview names exactly the nodes that would fold, or
the classified error a rewind would fail with). ``m`` asks the host to place a checkpoint (with an optional
objective); ``w`` rewinds to the selected active mark (the newest by default): it shows that mark's preview in a
confirm dialog, then asks the host to rewind, sending the preview along so the outcome can compare the two.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Static

from core.policies.checkpoint import Mark, latest_mark, marks
from core.policies.rewind import RewindError, RewindPreview, preview_rewind
from core.read.session import Session
from core.read.summary import human_chars, one_line, summarize, turn_span
from tui.screens.confirm import AskScreen, ConfirmScreen
from tui.screens.policy_screen import PolicyScreen, fill_table


@dataclass(frozen=True, slots=True)
class RegionNode:
    """One surface node a rewind would fold."""

    seq: int
    turn: int
    kind: str
    chars: int
    summary: str


@dataclass(frozen=True, slots=True)
class CheckpointsView:
    """Marks and the rewind preview (or why a rewind would fail now)."""

    marks: tuple[Mark, ...]
    preview: RewindPreview | None
    problem: str | None
    nodes: tuple[RegionNode, ...] = ()
    turns: tuple[int, int] | None = None
    tools: tuple[tuple[str, int], ...] = ()
    others: tuple[RewindPreview, ...] = ()  # the other active marks a rewind may choose, newest first
    seq: int = 0  # the log length the previews were computed at

    def preview_for(self, mark_id: int | None) -> RewindPreview | None:
        """The preview of rewinding to ``mark_id`` (None: the newest active mark)."""
        if mark_id is None or (self.preview is not None and self.preview.mark.mark_id == mark_id):
            return self.preview
        return next((p for p in self.others if p.mark.mark_id == mark_id), None)

    def covers(self) -> str:
        """One line on what the region holds: nodes, seqs, chars, turns and tool calls."""
        if self.preview is None:
            return ""
        region = self.preview.region
        n = len(region.shadowed_seqs)
        turns = ""
        if self.turns is not None:
            lo, hi = self.turns
            turns = f" · {turn_span(lo, hi)}"
        tools = ", ".join(f"{name}×{count}" for name, count in self.tools)
        return (
            f"{n} node{'' if n == 1 else 's'} (seq {region.start}..{region.end}) · "
            f"{self.preview.folded_chars:,} chars{turns}" + (f" · tool results: {tools}" if tools else "")
        )


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


def derive_checkpoints(session: Session) -> CheckpointsView:
    """Every mark, and the region the active one would fold now."""
    found = tuple(marks(session))
    try:
        preview = preview_rewind(session)
    except RewindError as exc:
        latest = latest_mark(session)
        problem = str(exc)
        if latest is not None and not latest.active:
            problem = (
                f"checkpoint {latest.mark_id} was already folded at seq {latest.folded_by}; place a new one"
            )
        return CheckpointsView(found, None, f"{problem} [{exc.code}]")
    nodes = []
    tools: Counter[str] = Counter()
    for seq in preview.region.shadowed_seqs:
        event = session.events[seq]
        kind, tool = _kind(session, event)
        if tool is not None:
            tools[tool] += 1
        nodes.append(
            RegionNode(seq, session.turn_of(seq), kind, session.node_chars(seq), summarize(event, 90))
        )
    turns = [n.turn for n in nodes if n.turn > 0]
    span = (min(turns), max(turns)) if turns else None
    others = []
    for mark in reversed(found):
        if mark.active and mark.mark_id != preview.mark.mark_id:
            try:
                others.append(preview_rewind(session, mark.mark_id))
            except RewindError:
                continue
    return CheckpointsView(
        found,
        preview,
        None,
        tuple(nodes),
        span,
        tuple(sorted(tools.items())),
        tuple(others),
        session.next_seq,
    )


def rewind_summary(view: CheckpointsView, chosen: RewindPreview | None = None) -> Text:
    """The confirm dialog's body: what the rewind to ``chosen`` (default: the newest mark) will replace."""
    if view.preview is None:
        return Text(view.problem or "")
    target = chosen or view.preview
    mark = target.mark
    out = Text()
    goal = f" ({mark.objective})" if mark.objective else ""
    out.append(f"Checkpoint {mark.mark_id}{goal}, placed at seq {mark.anchor} by the {mark.by}.\n")
    if target is not view.preview:
        region = target.region
        n = len(region.shadowed_seqs)
        out.append(
            f"The host will replace {n} node{'' if n == 1 else 's'} (seq {region.start}..{region.end}) · "
            f"{target.folded_chars:,} chars with one report (previewed at seq {view.seq}).\n"
        )
        return out
    out.append(f"The host will replace {view.covers()} with one report (previewed at seq {view.seq}).\n\n")
    for node in view.nodes[:12]:
        out.append(
            f"  {node.seq:>6}  {node.kind:<18} {human_chars(node.chars):>6}  {one_line(node.summary, 48)}\n"
        )
    if len(view.nodes) > 12:
        out.append(f"  … and {len(view.nodes) - 12} more node(s)\n")
    out.append(
        "\nThe agent may run on before the host applies it (at its next step); the outcome compares the two.",
        style="dim",
    )
    return out


class CheckpointsScreen(PolicyScreen):
    """Checkpoint marks and the rewind preview."""

    HEADING = "Checkpoints — marks and the rewind preview"
    ACTIONS: ClassVar[frozenset[str]] = frozenset({"mark", "rewind"})
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("m", "mark", "Place checkpoint", id="policy.checkpoints.mark"),
        Binding("w", "rewind", "Rewind…", id="policy.checkpoints.rewind"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._view: CheckpointsView | None = None

    def compose_body(self) -> ComposeResult:
        """Marks on the left, the region preview on the right."""
        with Horizontal(classes="policy-body"):
            yield DataTable(id="marks-table", cursor_type="row", classes="policy-table")
            with Vertical(classes="policy-side"):
                yield Static("Rewind preview", classes="policy-subtitle")
                yield Static(id="region-summary")
                yield DataTable(id="region-table", cursor_type="none", classes="policy-table")

    def on_mount(self) -> None:
        """Set up the tables, then derive."""
        self.query_one("#marks-table", DataTable).add_columns(
            "mark", "anchor", "turn", "by", "state", "objective"
        )
        self.query_one("#region-table", DataTable).add_columns("seq", "turn", "kind", "chars", "content")
        super().on_mount()

    def derive(self, live: Any) -> CheckpointsView:
        """Marks and preview (worker thread)."""
        return derive_checkpoints(live.session)

    def show(self, view: CheckpointsView) -> None:
        """Refill the marks and the preview."""
        self._view = view
        active_id = view.preview.mark.mark_id if view.preview else None
        rows = []
        for mark in reversed(view.marks):
            if mark.active:
                state = Text("active", style="bold green" if mark.mark_id == active_id else "green")
            else:
                state = Text(f"folded at {mark.folded_by}", style="dim")
            rows.append(
                (
                    str(mark.mark_id),
                    (
                        str(mark.mark_id),
                        str(mark.anchor),
                        str(mark.turn),
                        mark.by,
                        state,
                        mark.objective or "",
                    ),
                )
            )
        fill_table(self.query_one("#marks-table", DataTable), rows)
        summary = self.query_one("#region-summary", Static)
        if view.preview is None:
            summary.update(Text(f"Rewinding now would fail: {view.problem}", style="yellow"))
        else:
            summary.update(Text(f"Rewinding now folds {view.covers()}.", style="bold"))
        fill_table(
            self.query_one("#region-table", DataTable),
            [
                (str(n.seq), (str(n.seq), str(n.turn), n.kind, human_chars(n.chars), n.summary))
                for n in view.nodes
            ],
        )

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
                "Place a checkpoint", "Objective of the exploration (optional); Enter sends, Esc cancels."
            ),
            asked,
        )

    def action_rewind(self) -> None:
        """Rewind to the selected active checkpoint (the newest by default): preview, confirm, send."""
        view = self._view
        if view is None or view.preview is None:
            self.say(
                f"Nothing to rewind: {view.problem if view else 'still reading the session'}", error=True
            )
            return
        chosen = view.preview_for(self._selected_mark())
        if chosen is None:
            self.say("That checkpoint was already folded; choose an active one (or the newest).", error=True)
            return
        mark_id = chosen.mark.mark_id
        preview = {"seq": view.seq, "nodes": len(chosen.region.shadowed_seqs), "chars": chosen.folded_chars}

        def decided(confirmed: bool | None) -> None:
            if confirmed:
                self.say("")
                self.send_request(
                    "rewind", {"markId": mark_id, "preview": preview}, f"rewind checkpoint {mark_id}"
                )

        self.app.push_screen(
            ConfirmScreen(f"Rewind to checkpoint {mark_id}?", rewind_summary(view, chosen), "Rewind"), decided
        )

    def _selected_mark(self) -> int | None:
        table = self.query_one("#marks-table", DataTable)
        if not table.row_count or table.cursor_row < 0:
            return None
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return int(key) if key is not None else None
