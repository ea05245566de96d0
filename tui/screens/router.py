"""The Router screen: every adaptive-policy decision the host logged, one row per turn and step.

The host logs each decision as a ``tapedeck/route`` event (task class, phase, output caps, step budgets, the
risk router's verdict with its score and reason, the prune level, context pressure, chars removed and the
pruned seqs). This screen only reads those events back; the selected row's full record shows on the right.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from core.log.vocabulary import ROUTE_EVENT
from core.read.session import Session
from core.read.summary import human_chars
from core.shared.text import js_json, printable
from tui.cells import cut, fitting, show_columns
from tui.screens.policy_screen import PolicyScreen, column_widths, fill_table, logged
from tui.screens.stacked import while_stacked
from tui.widgets.table import RowTable

COLUMNS = (
    "t.s",
    "class",
    "phase",
    "cap",
    "soft/hard",
    "risk",
    "score",
    "prune",
    "pressure",
    "removed",
    "reason",
)
# left out in this order while the columns are wider than the table (the selected decision's record has them all)
LEAST_NEEDED = ("removed", "pressure", "score", "prune", "soft/hard", "cap", "reason", "phase")
REASON_MIN = 10  # the reason is left out in less room than this


def compact(value: Any) -> str:
    """A route field in one short line: mappings as ``k=v``, lists comma-joined, absent as ``-``."""
    if value is None or value == "" or value == [] or value == {}:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, Mapping):
        return " ".join(f"{k}={compact(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ",".join(compact(v) for v in value)
    return str(value)


@dataclass(frozen=True, slots=True)
class RouteLine:
    """One logged decision."""

    seq: int
    turn: int | None
    step: int | None
    task_class: str
    phase: str
    caps: str
    budgets: str
    risk: str
    score: str
    reason: str
    prune_level: str
    pressure: str
    chars_removed: int
    data: Mapping[str, Any]


def _caps(value: Any) -> str:
    if isinstance(value, Mapping) and set(value) == {"maxTokens"}:
        return compact(value["maxTokens"])
    return compact(value)


def _budgets(value: Any) -> str:
    if isinstance(value, Mapping) and set(value) == {"soft", "hard"}:
        return f"{compact(value['soft'])}/{compact(value['hard'])}"
    return compact(value)


def _pressure(value: Any) -> str:
    if isinstance(value, float | int) and not isinstance(value, bool):
        return f"{value:.0%}" if isinstance(value, float) and value <= 1 else str(value)
    return compact(value)


def route_line(seq: int, data: Mapping[str, Any]) -> RouteLine:
    """Present one ``tapedeck/route`` event."""
    risk = data.get("risk") if isinstance(data.get("risk"), Mapping) else {}
    removed = data.get("charsRemoved")
    turn, step = data.get("turn"), data.get("step")
    return RouteLine(
        seq=seq,
        turn=turn if isinstance(turn, int) else None,
        step=step if isinstance(step, int) else None,
        task_class=compact(data.get("taskClass")),
        phase=compact(data.get("phase")),
        caps=_caps(data.get("caps")),
        budgets=_budgets(data.get("budgets")),
        risk=compact(risk.get("risk")) if risk.get("risk") else "none",
        score=compact(risk.get("score")),
        reason=compact(risk.get("reason")),
        prune_level=compact(data.get("pruneLevel")),
        pressure=_pressure(data.get("pressure")),
        chars_removed=removed if isinstance(removed, int) and not isinstance(removed, bool) else 0,
        data=data,
    )


def derive_routes(session: Session) -> list[RouteLine]:
    """Every logged route decision, oldest first."""
    lines = []
    for seq, event in logged(session, ROUTE_EVENT):
        data = event.get("data")
        lines.append(route_line(seq, data if isinstance(data, Mapping) else {}))
    return lines


SPACED_DEPTH = 8  # a value nested deeper than this is written compact from there on


def _spaced_json(value: Any, depth: int = 0) -> str:
    """``value`` as ``js_json`` writes it, with a space after each ``,`` and ``:`` between members, so that a narrow
    pane wraps it between members rather than inside a number or a key."""
    if depth >= SPACED_DEPTH:
        return js_json(value)
    if isinstance(value, Mapping):
        members = (f"{js_json(str(key))}: {_spaced_json(item, depth + 1)}" for key, item in value.items())
        return "{" + ", ".join(members) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_spaced_json(item, depth + 1) for item in value) + "]"
    return js_json(value)


def route_detail(line: RouteLine) -> Text:
    """The full record of one decision, a field per line (as the log has it, its control characters drawn as
    ``printable`` makes them; a nested value spaced to wrap between its members)."""
    out = Text()
    out.append(f"seq {line.seq} · turn {line.turn} step {line.step}\n", style="bold")
    for key, value in line.data.items():
        shown = value if isinstance(value, str) else _spaced_json(value)
        out.append(printable(f"{key}: "), style="bold")
        out.append(printable(f"{shown}\n"))
    return out


class RouterScreen(PolicyScreen):
    """Adaptive routing decisions per turn and step."""

    HEADING = "Router — adaptive policy decisions per step"
    BINDINGS: ClassVar[list[Binding]] = [Binding("T", "time_travel", "Time travel", id="router.time_travel")]

    def __init__(self) -> None:
        super().__init__()
        self._lines: dict[str, RouteLine] = {}
        self._view: list[RouteLine] = []  # the decisions shown, drawn again for a new width

    def compose_body(self) -> ComposeResult:
        """Decision table, totals and the selected record."""
        with Horizontal(classes="policy-body"):
            with Vertical(id="router-pane", classes="policy-pane"):
                yield RowTable(id="router-table", cursor_type="row", classes="policy-table")
                yield Static(id="router-summary")
            with VerticalScroll(classes="policy-side"):
                yield Static(id="router-detail")

    @while_stacked
    def on_mount(self) -> None:
        """Set up the table, then derive."""
        self.query_one("#router-table", DataTable).add_columns(*COLUMNS)
        super().on_mount()

    def on_resize(self) -> None:
        """Fit the table's columns to the new width."""
        super().on_resize()
        self.call_after_refresh(self._fill)

    def derive(self, live: Any) -> list[RouteLine]:
        """Route decisions (worker thread)."""
        return derive_routes(live.session)

    def show(self, view: list[RouteLine]) -> None:
        """Refill the table and the totals."""
        self._view = view
        self._lines = {str(line.seq): line for line in view}
        table = self._fill()
        removed = sum(line.chars_removed for line in view)
        summary = (
            f"{len(view)} decision(s) · {human_chars(removed)} chars pruned in total"
            if view
            else "No route decisions in this log (the adaptive policy logs one per step on a tapedeck host)."
        )
        self.query_one("#router-summary", Static).update(Text(summary))
        self._show_detail(table)

    def _fill(self) -> DataTable[Any]:
        """The table in its width (it never scrolls sideways; the record beside it holds every field): the least
        needed columns left out while the rest do not fit, the reason cut to the room the others leave."""
        table = self.query_one("#router-table", DataTable)
        rows = [
            {"t.s": f"{line.turn}.{line.step}", "class": line.task_class, "phase": line.phase, "cap": line.caps,
             "soft/hard": line.budgets, "risk": Text(line.risk, style="bold" if line.risk != "none" else "dim"),
             "score": line.score, "prune": line.prune_level, "pressure": line.pressure,
             "removed": human_chars(line.chars_removed), "reason": printable(line.reason)}
            for line in self._view
        ]  # fmt: skip
        widths = {c: column_widths([c], [[row[c]] for row in rows]) for c in COLUMNS}
        room = table.size.width - table.styles.scrollbar_size_vertical
        shown = fitting({**widths, "reason": min(widths["reason"], REASON_MIN + 2)}, room, LEAST_NEEDED)
        left = room - sum(widths[c] for c in shown if c != "reason") - 2  # the reason's padding
        show_columns(table, shown)
        cells = [[cut(row[c], left) if c == "reason" else row[c] for c in shown] for row in rows]
        fill_table(table, [(str(line.seq), row) for line, row in zip(self._view, cells, strict=True)])
        return table

    def _show_detail(self, table: DataTable[Any]) -> None:
        detail = self.query_one("#router-detail", Static)
        if not table.row_count:
            detail.update("")
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        line = self._lines.get(key or "")
        detail.update(route_detail(line) if line else "")

    def action_time_travel(self) -> None:
        """Back to the main screen, showing the session as it stood when the selected step's request went out."""
        table = self.query_one("#router-table", DataTable)
        if not table.row_count:
            self.notify("No router decision to travel to: this log holds none.", timeout=3)
            return
        line = self._lines.get(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value or "")
        if line is None or line.turn is None or line.step is None:
            self.notify("This decision names no step to travel to.", timeout=3)
            return
        self.dismiss(None)
        main = next((s for s in reversed(self.app.screen_stack) if hasattr(s, "travel_to_step")), None)
        if main is not None:
            main.travel_to_step(line.turn, line.step)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Show the highlighted decision's full record."""
        self._show_detail(event.data_table)
