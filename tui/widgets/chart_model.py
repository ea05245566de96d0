"""What the context chart draws, kept up to date from the session's append-only samples and cuts.

Each sync reads only what arrived since the last one (and the few samples whose step is still open, whose usage
can still change). A redraw after a change costs O(width · log n): a bucket's peak or lowest cache share comes from
a ``Pyramid`` of running maxima or minima, never from walking every sample. A redraw after a sync that changed
nothing (an operator's message, a tool result: most appends) reuses the columns drawn last, O(width). So a
follow-mode append costs the same on a 10 MB log as on a 1 GB one.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from core.read.session import Cut, Session
from core.rebuild.cost import usage_cached

CUT_MARKS = {"tape": "s", "fold": "f", "prune": "p", "rewind": "r", "compaction": "c", "expand": "+"}
UNKNOWN = 2.0  # a share no provider reported: above every real share, so a bucket's minimum skips it


class Pyramid:
    """Values with ``pick`` (max or min) over any range in O(log n); appending or changing one is O(log n).

    Level ``k`` holds ``pick`` over aligned blocks of ``2**k`` values (the last block may be partial)."""

    def __init__(self, pick: Callable[[float, float], float]) -> None:
        self.pick = pick
        self.levels: list[list[float]] = [[]]

    def __len__(self) -> int:
        return len(self.levels[0])

    @property
    def values(self) -> list[float]:
        """The values themselves (do not modify)."""
        return self.levels[0]

    def set(self, i: int, value: float) -> None:
        """Set value ``i``, or append it when ``i`` is the length."""
        levels, pick = self.levels, self.pick
        k = 0
        while True:
            row = levels[k]
            if i == len(row):
                row.append(value)
            else:
                row[i] = value
            if len(row) == 1:
                return
            if k + 1 == len(levels):
                levels.append([])
            j = i & ~1
            value = pick(row[j], row[j + 1]) if j + 1 < len(row) else row[j]
            i >>= 1
            k += 1

    def query(self, lo: int, hi: int) -> float | None:
        """``pick`` over values ``lo`` … ``hi - 1`` (None for an empty range)."""
        levels, pick = self.levels, self.pick
        found: float | None = None
        k = 0
        while lo < hi:
            if lo & 1:
                found = levels[k][lo] if found is None else pick(found, levels[k][lo])
                lo += 1
            if hi & 1:
                hi -= 1
                found = levels[k][hi] if found is None else pick(found, levels[k][hi])
            lo >>= 1
            hi >>= 1
            k += 1
        return found


class ChartModel:
    """The chart's data: per request its seq, surface chars and cache-hit share; the cuts to mark, each with the
    number of requests made up to it (it is drawn under the first request after it)."""

    def __init__(self) -> None:
        self.session: Session | None = None
        self.seqs: list[int] = []  # each request's seq
        self.steps: list[tuple[int, int]] = []  # each request's (turn, step)
        self.chars = Pyramid(max)
        self.shares = Pyramid(min)
        self.cuts = 0  # cuts of every kind read so far (the label counts them all)
        self.cut_seqs: list[int] = []  # the cuts drawn: their seqs, letters, and requests up to them
        self.cut_letters: list[str] = []
        self.cut_before: list[int] = []
        self._open = 0  # the first request whose step had not ended at the last sync (its share may change)
        self._placed = 0  # cuts whose request count is final (a request was made after them)
        # what the drawing methods gave since the last change, by (method, width, rows)
        self._drawn: dict[tuple[str, int, int | None], list[Any]] = {}

    def __len__(self) -> int:
        return len(self.seqs)

    def sync(self, session: Session) -> None:
        """Take in what ``session`` gained since the last sync (everything, for another or a reloaded session)."""
        samples = session.context_samples
        if session is not self.session or len(samples) < len(self.seqs) or len(session.cuts) < self.cuts:
            self.__init__()  # type: ignore[misc]
            self.session = session
        n = len(samples)  # the follower may append meanwhile: read up to here
        self.extend(samples[len(self.seqs) : n])
        for i in range(self._open, n):
            turn, step = self.steps[i]
            info = session.turns.get(turn)
            found = info.steps.get(step) if info else None
            self.set_share(i, usage_cached(found.usage if found else None))
            if i == self._open and (found is None or found.end_seq is not None):
                self._open = i + 1
        cuts = session.cuts
        self.add_cuts(cuts[self.cuts : len(cuts)])

    def extend(self, samples: Iterable[tuple[int, int, int, int]]) -> None:
        """Add requests ``(seq, turn, step, chars)`` (their shares unknown until ``set_share``)."""
        for seq, turn, step, chars in samples:
            self._drawn.clear()
            i = len(self.seqs)
            self.seqs.append(seq)
            self.steps.append((turn, step))
            self.chars.set(i, chars)
            self.shares.set(i, UNKNOWN)

    def set_share(self, i: int, share: float | None) -> None:
        """Request ``i``'s cache-hit share (None: not reported)."""
        value = UNKNOWN if share is None else share
        if self.shares.values[i] != value:
            self._drawn.clear()
            self.shares.set(i, value)

    def add_cuts(self, cuts: Sequence[Cut]) -> None:
        """Add cuts, in log order; a cut that grew the surface is not drawn (a tape entry always is)."""
        self.cuts += len(cuts)
        for cut in cuts:
            if cut.chars_removed <= 0 and cut.kind != "tape":
                continue
            self.cut_seqs.append(cut.seq)
            self.cut_letters.append(CUT_MARKS.get(cut.kind, "x"))
            self.cut_before.append(-1)
        n = len(self.seqs)
        for k in range(self._placed, len(self.cut_seqs)):
            before = bisect.bisect_right(self.seqs, self.cut_seqs[k])
            if before != self.cut_before[k]:
                self._drawn.clear()
                self.cut_before[k] = before
            if k == self._placed and before < n:
                self._placed = k + 1

    # drawing ----------------------------------------------------------------------------------------------
    def _buckets(self, width: int) -> list[tuple[int, int]]:
        """The requests each column stands for: one each, or ``width`` buckets of about ``n / width``."""
        n = len(self.seqs)
        if n <= width:
            return [(i, i + 1) for i in range(n)]
        return [(i * n // width, max((i + 1) * n // width, i * n // width + 1)) for i in range(width)]

    @property
    def peak(self) -> int:
        """The most chars any request carried (0 before any)."""
        top = self.chars.levels[-1]
        return int(top[0]) if top else 0

    @property
    def now(self) -> int:
        """The chars of the newest request (0 before any)."""
        return int(self.chars.values[-1]) if self.seqs else 0

    def _kept(self, key: tuple[str, int, int | None], draw: Callable[[], list[Any]]) -> list[Any]:
        """What ``draw`` gives, kept under ``key`` until the next change."""
        drawn = self._drawn.get(key)
        if drawn is None:
            drawn = self._drawn[key] = draw()
        return drawn

    def columns(self, width: int) -> list[int]:
        """Each column's peak chars."""
        return self._kept(("columns", width, None),
                          lambda: [int(self.chars.query(lo, hi) or 0) for lo, hi in self._buckets(width)])  # fmt: skip

    def column_shares(self, width: int) -> list[float | None]:
        """Each column's lowest reported cache share (None where no request of it reported one)."""
        return self._kept(("shares", width, None), lambda: [_reported(self.shares.query(lo, hi))
                                                             for lo, hi in self._buckets(width)])  # fmt: skip

    def column_of(self, i: int, width: int) -> int:
        """The column request ``i`` is drawn in."""
        n = len(self.seqs)
        return i if n <= width else i * width // n

    def index_at(self, seq: int) -> int:
        """The first request at or after ``seq`` (the last one when none is)."""
        return min(bisect.bisect_left(self.seqs, seq), len(self.seqs) - 1)

    def cut_marks(self, width: int, rows: int | None = None) -> list[str]:
        """Marker lines: each cut's letter under the first request made after it, stacked when several cuts land
        in one column. With ``rows``, a column with more marks than rows ends in ``…``."""
        return self._kept(("cuts", width, rows), lambda: self._cut_marks(width, rows))

    def _cut_marks(self, width: int, rows: int | None) -> list[str]:
        n = len(self.seqs)
        if not n:
            return [""]
        ncols = min(n, width)
        before = self.cut_before
        stacks: list[list[str]] = []
        start = 0
        for col in range(ncols):
            # requests i with column_of(i) == col: i from ceil(col * n / width) to the next column's start
            last = col == ncols - 1
            lo = col if n <= width else -(-col * n // width)
            hi = col + 1 if n <= width else -(-(col + 1) * n // width)
            start = bisect.bisect_left(before, lo, start)  # a cut past the newest request is drawn under it
            end = len(before) if last else bisect.bisect_left(before, hi, start)
            stacks.append(self.cut_letters[start : end if rows is None else min(end, start + rows + 1)])
            start = end
        depth = max(1, max(map(len, stacks)))
        if rows is not None and depth > rows:
            stacks = [stack if len(stack) <= rows else [*stack[: rows - 1], "…"] for stack in stacks]
            depth = rows
        return ["".join(stack[k] if k < len(stack) else " " for stack in stacks) for k in range(depth)]


def _reported(low: float | None) -> float | None:
    """A column's lowest share as drawn: None where no request of it reported one."""
    return None if low is None or low >= UNKNOWN else low
