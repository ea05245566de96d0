"""The per-request context-size chart: a sparkline of surface chars with markers where cuts shrank it."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import Static

from core.read.session import Cut, Session
from core.read.summary import human_chars
from core.rebuild.cost import session_cost, usage_cached
from tui.live import LiveSession

BARS = " ▁▂▃▄▅▆▇█"
CUT_MARKS = {"tape": "s", "fold": "f", "prune": "p", "rewind": "r", "compaction": "c", "expand": "+"}
LEGEND = "s seal  f fold  p prune  r rewind  c compaction"


def columns(values: Sequence[int], width: int) -> list[int]:
    """Down-sample ``values`` to at most ``width`` columns, keeping each bucket's peak."""
    n = len(values)
    if n <= width:
        return list(values)
    return [max(values[i * n // width : max((i + 1) * n // width, i * n // width + 1)]) for i in range(width)]


def sparkline(values: Sequence[int], top: int) -> str:
    """One line of bars scaled to ``top``."""
    if top <= 0:
        return " " * len(values)
    return "".join(BARS[min(8, max(1 if v else 0, round(v * 8 / top)))] for v in values)


def cut_marks(sample_seqs: Sequence[int], cuts: Sequence[Cut], width: int, rows: int | None = None) -> list[str]:
    """Marker lines: each cut's letter under the first request made after it, stacked when several cuts
    land in one column (a rewind and a fold in the same step both show). With ``rows``, a column with more
    marks than rows ends in ``…``."""
    n = len(sample_seqs)
    if not n:
        return [""]
    stacks: list[list[str]] = [[] for _ in range(min(n, width))]
    for cut in cuts:
        if cut.chars_removed <= 0 and cut.kind != "tape":
            continue
        i = min(bisect.bisect_right(sample_seqs, cut.seq), n - 1)
        col = i if n <= width else i * width // n
        stacks[col].append(CUT_MARKS.get(cut.kind, "x"))
    depth = max(1, max(map(len, stacks)))
    if rows is not None and depth > rows:
        stacks = [stack if len(stack) <= rows else [*stack[: rows - 1], "…"] for stack in stacks]
        depth = rows
    return ["".join(stack[k] if k < len(stack) else " " for stack in stacks) for k in range(depth)]


def cache_shares(session: Session, samples: Sequence[tuple[int, int, int, int]]) -> list[float | None]:
    """Per request, the share of its input the provider served from its cache (``usage_cached``; None: not
    reported)."""
    out: list[float | None] = []
    for _, turn, step, _ in samples:
        info = session.turns.get(turn)
        found = info.steps.get(step) if info else None
        out.append(usage_cached(found.usage if found else None))
    return out


def cache_line(shares: Sequence[float | None], width: int) -> Text:
    """One bar per column, as high as the cache-hit share (the bucket's lowest); ``·`` where none is known."""
    n = len(shares)
    buckets = [shares[i : i + 1] for i in range(n)] if n <= width else [
        shares[i * n // width : max((i + 1) * n // width, i * n // width + 1)] for i in range(width)
    ]  # fmt: skip
    line = Text()
    for bucket in buckets:
        known = [v for v in bucket if v is not None]
        if not known:
            line.append("·", style="dim")
            continue
        share = min(known)
        line.append(BARS[max(1, round(share * 8))], style="green" if share >= 0.5 else "red")
    return line


class ContextChart(Static):
    """Chars on the surface at each model request, with cut markers underneath and, where the provider
    reports it, the cache-hit share of each request. A click picks the request under the pointer."""

    LABEL_WIDTH = 16

    class Picked(Message):
        """A request was clicked: ``seq`` is the assistant message that answered it."""

        def __init__(self, seq: int) -> None:
            super().__init__()
            self.seq = seq

    def __init__(self, live: LiveSession, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.live = live
        self.moment_seq: int | None = None  # time travel: the request in flight then is drawn reversed

    def on_mount(self) -> None:
        """Draw the initial state."""
        self.refresh_chart()

    def on_resize(self) -> None:
        """Redraw for the new width."""
        self.refresh_chart()

    def refresh_chart(self) -> None:
        """Redraw from ``Session.context_samples`` and ``Session.cuts`` (copied, so appends cannot interfere)."""
        session = self.live.session
        samples = list(session.context_samples)
        cuts = list(session.cuts)
        label_width = self.LABEL_WIDTH
        width = max(10, self.size.width - label_width - 1)
        chars = [s[3] for s in samples]
        peak = max(chars, default=0)
        cols = columns(chars, width)
        now = chars[-1] if chars else 0
        label = f"ctx {human_chars(now):>5}/{human_chars(peak):<5}"
        bars = Text(f"{label:<{label_width}} ")
        bars.append(sparkline(cols, peak) or "no model requests yet", style="green")
        if self.moment_seq is not None and samples:
            i = min(bisect.bisect_left([s[0] for s in samples], self.moment_seq), len(samples) - 1)
            col = label_width + 1 + (i if len(samples) <= width else i * width // len(samples))
            bars.stylize("reverse bold magenta", col, col + 1)
        first, *more = cut_marks([s[0] for s in samples], cuts, width, rows=2)
        marks = Text(f"{len(samples)} req {len(cuts)} cuts".ljust(label_width) + " ")
        marks.append(first, style="bold magenta")
        if more:  # two cuts in one step: the second row of marks takes the legend's place (? explains them)
            second = Text(" " * (label_width + 1))
            second.append(more[0], style="bold magenta")
        else:
            second = Text(" " * (label_width + 1) + LEGEND, style="dim")
        lines = [bars, marks, second]
        shares = cache_shares(session, samples)
        try:
            cached = session_cost(session)[1]  # the header's figure: one definition of "cached" (? says it)
        except RuntimeError:  # the follower added a turn while we read: the next refresh shows it
            cached = None
        if cached is not None:
            lines.append(Text(f"cached {cached:>4.0%}".ljust(label_width) + " "))
            lines[-1].append_text(cache_line(shares, width))
        height = len(lines)
        if self.styles.height is None or self.styles.height.value != height:
            self.styles.height = height
        self.update(Text("\n").join(lines), layout=False)

    def on_click(self, event: events.Click) -> None:
        """Pick the request in the clicked column."""
        offset = event.get_content_offset(self)
        samples = self.live.session.context_samples
        if offset is None or not samples:
            return
        col = offset.x - self.LABEL_WIDTH - 1
        width = max(10, self.size.width - self.LABEL_WIDTH - 1)
        n = len(samples)
        i = col if n <= width else col * n // width
        if 0 <= i < n:
            self.post_message(self.Picked(samples[i][0]))
