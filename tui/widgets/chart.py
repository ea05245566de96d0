"""The per-request context-size chart: a sparkline of surface chars with markers where cuts shrank it."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import Static

from core.read.summary import human_chars
from core.rebuild.cost import session_cost
from tui.live import LiveSession
from tui.widgets.chart_model import ChartModel

BARS = " ▁▂▃▄▅▆▇█"
LEGEND = "s seal  f fold  p prune  r rewind  c compaction"


def sparkline(values: Sequence[int], top: int) -> str:
    """One line of bars scaled to ``top``."""
    if top <= 0:
        return " " * len(values)
    return "".join(BARS[min(8, max(1 if v else 0, round(v * 8 / top)))] for v in values)


def cache_line(shares: Sequence[float | None]) -> Text:
    """One bar per column, as high as its (lowest) cache-hit share; ``·`` where none is known."""
    line = Text()
    for share in shares:
        if share is None:
            line.append("·", style="dim")
            continue
        line.append(BARS[max(1, round(share * 8))], style="green" if share >= 0.5 else "red")
    return line


class ContextChart(Static):
    """Chars on the surface at each model request, with cut markers underneath and, where the provider
    reports it, the cache-hit share of each request. A click picks the request under the pointer."""

    LABEL_WIDTH = 16

    class Picked(Message):
        """The chart was clicked: ``seq`` is the assistant message that answered the request under the pointer (None:
        no request went out there, or none is known, the log not loaded)."""

        def __init__(self, seq: int | None) -> None:
            super().__init__()
            self.seq = seq

    def __init__(self, live: LiveSession, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.live = live
        self.moment_seq: int | None = None  # time travel: the request in flight then is drawn reversed
        self.model = ChartModel()
        self._shown: Text | None = None  # what the chart shows now (an unchanged chart is not repainted)

    def on_mount(self) -> None:
        """Draw the initial state."""
        self.refresh_chart()

    def on_resize(self) -> None:
        """Redraw for the new width."""
        self.refresh_chart()

    def refresh_chart(self) -> None:
        """Redraw from ``Session.context_samples`` and ``Session.cuts``, taken in by the ``ChartModel`` as they
        grow: a redraw costs the same however long the log, and a chart that would look the same is not
        repainted."""
        session = self.live.session
        model = self.model
        model.sync(session)
        n = len(model)
        label_width = self.LABEL_WIDTH
        width = max(10, self.size.width - label_width - 1)
        peak = model.peak
        label = f"ctx {human_chars(model.now):>5}/{human_chars(peak):<5}"
        bars = Text(f"{label:<{label_width}} ")
        bars.append(sparkline(model.columns(width), peak) or "no model requests yet", style="green")
        if self.moment_seq is not None and n:
            col = label_width + 1 + model.column_of(model.index_at(self.moment_seq), width)
            bars.stylize("reverse bold magenta", col, col + 1)
        first, *more = model.cut_marks(width, rows=2)
        marks = Text(f"{n} req {model.cuts} cut{'' if model.cuts == 1 else 's'}".ljust(label_width) + " ")
        marks.append(first, style="bold magenta")
        if more:  # two cuts in one step: the second row of marks takes the legend's place (? explains them)
            second = Text(" " * (label_width + 1))
            second.append(more[0], style="bold magenta")
        else:
            second = Text(" " * (label_width + 1) + LEGEND, style="dim")
        lines = [bars, marks, second]
        try:
            cached = session_cost(session)[1]  # the header's figure: one definition of "cached" (? says it)
        except RuntimeError:  # the follower added a turn while we read: the next refresh shows it
            cached = None
        if cached is not None:
            lines.append(Text(f"cached {cached:>4.0%}".ljust(label_width) + " "))
            lines[-1].append_text(cache_line(model.column_shares(width)))
        height = len(lines)
        if self.styles.height is None or self.styles.height.value != height:
            self.styles.height = height
        text = Text("\n").join(lines)
        if text != self._shown:  # an append that sent no request (most of them) leaves the chart as it was
            self._shown = text
            self.update(text, layout=False)

    def on_click(self, event: events.Click) -> None:
        """Pick the request in the clicked column (the screen says why when there is none)."""
        offset = event.get_content_offset(self)
        if offset is None:
            return
        samples = self.live.session.context_samples
        col = offset.x - self.LABEL_WIDTH - 1
        width = max(10, self.size.width - self.LABEL_WIDTH - 1)
        n = len(samples)
        i = col if n <= width else col * n // width
        self.post_message(self.Picked(samples[i][0] if 0 <= i < n else None))
