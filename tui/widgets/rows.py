"""The event list's row model: static row facts (computed in workers), live badges, and the virtual row view."""

from __future__ import annotations

import bisect
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from itertools import islice
from typing import Any

from core.log.vocabulary import SURFACE_TYPES
from core.read.rows import Row
from core.read.session import Session
from core.read.streams import Collapsed
from core.read.summary import GLYPHS, human_chars
from core.shared.clock import utc_time
from core.shared.seqview import SeqView

IMPLAUSIBLE_CLOCK = "??:??:??"  # the time of day of a time no clock gives

# What a node is called once a replacement of each kind took it off the surface.
SHADOW_BADGES = {
    "tape": "sealed",
    "fold": "folded",
    "prune": "pruned",
    "rewind": "rewound",
    "compaction": "compacted",
    "expand": "expanded",
    "replace": "replaced",
}


def clock(ms: float | None) -> str:
    """``HH:MM:SS`` (UTC) of an event time; ``--:--:--`` when unknown (None, or 0: the reader's stand-in for a line
    written without a time), ``IMPLAUSIBLE_CLOCK`` for a time no clock gives (``core.shared.clock.utc_time``)."""
    if not ms:
        return "--:--:--"
    return utc_time(ms, "%H:%M:%S") or IMPLAUSIBLE_CLOCK


def ago(ms: float | None, now_ms: float) -> str:
    """How long before ``now_ms`` an event was written: ``12s``, ``4m``, ``3h``, ``2d`` (``-`` when unknown, as
    for ``clock``; ``?`` for a time no clock gives)."""
    if not ms:
        return "-"
    if utc_time(ms) is None:
        return "?"
    seconds = max(0, int((now_ms - ms) / 1000))
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def huge_row(seq: int, etype: str, turn: int, step: int, nbytes: int) -> Row:
    """A row for an event whose line is too big to decode just for a summary (from the line table and the
    line's first bytes only).

    Decoding one multi-MB line holds the GIL for tens of milliseconds; a screen of them would stall the UI
    thread while the log loads. The detail pane still decodes the event when it is selected.
    """
    return Row(
        seq=seq,
        type=etype,
        turn=turn,
        step=step or None,
        glyph=GLYPHS.get(etype, "?"),
        summary=f"({human_chars(nbytes)}B {etype} line: select it to read it)",
        size=nbytes,
        error=False,
        replacement=None,
        surface_type=etype in SURFACE_TYPES,
        unit="B",
    )


def unreadable_row(seq: int, reason: str) -> Row:
    """A row for an event whose line could not be read back (the file changed since it was projected)."""
    return Row(
        seq=seq,
        type="?",
        turn=0,
        step=None,
        glyph="!",
        summary=f"(cannot read this line: {reason})",
        size=0,
        error=True,
        replacement=None,
        surface_type=False,
        unit="B",
    )


def badges(row: Row, session: Session, cut_kinds: dict[int, str]) -> list[str]:
    """Live badges of a row: what took it off the surface, what it replaced, error, on/off surface."""
    out: list[str] = []
    by = session.replaced_by.get(row.seq)
    if by is not None:
        out.append(SHADOW_BADGES.get(cut_kinds.get(by, "replace"), "replaced"))
    if row.replacement is not None:
        out.append(row.replacement)
    if row.error:
        out.append("error")
    if row.interrupted:
        out.append("interrupted")
    if row.surface_type and row.seq < session.next_seq:
        out.append("on" if session.on_surface(row.seq) else "off")
    return out


def originals(session: Session, seq: int) -> list[int]:
    """The append-origin events a replacement stands for, expanding nested replacements, in surface order."""
    out: list[int] = []
    stack = list(reversed(session.shadowed.get(seq, [])))
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        inner = session.shadowed.get(node)
        if inner:
            stack.extend(reversed(inner))
        else:
            out.append(node)
    return out


class RowCache:
    """An LRU of computed rows keyed by seq."""

    def __init__(self, capacity: int = 20000) -> None:
        self._rows: OrderedDict[int, Row] = OrderedDict()
        self.capacity = capacity
        self._lock = threading.Lock()  # rows arrive from the follower thread and from fetch workers

    def get(self, seq: int) -> Row | None:
        """The cached row for ``seq``."""
        return self._rows.get(seq)

    def put(self, rows: Sequence[Row]) -> None:
        """Add computed rows, evicting the oldest beyond capacity."""
        with self._lock:
            for row in rows:
                self._rows[row.seq] = row
                self._rows.move_to_end(row.seq)
            while len(self._rows) > self.capacity:
                self._rows.popitem(last=False)

    def clear(self) -> None:
        """Forget every row (after a reset the seqs mean other events)."""
        with self._lock:
            self._rows.clear()


class RowView:
    """The rows the list shows: a base sequence of seqs plus expanded replacements' originals beneath them."""

    def __init__(self, base: Sequence[int]) -> None:
        self.base = base
        self._anchors: list[int] = []  # base positions of expanded rows, sorted
        self._children: dict[int, Sequence[int]] = {}  # base position -> child seqs
        self._before: list[int] = []  # children rows before each anchor's own children
        self._anchor_rows: list[int] = []  # row index of each anchor

    def __len__(self) -> int:
        return len(self.base) + (
            self._before[-1] + len(self._children[self._anchors[-1]]) if self._anchors else 0
        )

    @property
    def in_seq_order(self) -> bool:
        """True when the base rows ascend by seq (the full log, a filter's rows); the surface's follow the model's
        order."""
        return isinstance(self.base, (range, Collapsed)) or _is_sorted_hint(self.base)

    def row(self, i: int) -> tuple[int, int]:
        """``(seq, depth)`` of row ``i`` (depth 1 for an expanded replacement's originals)."""
        k = bisect.bisect_right(self._anchor_rows, i) - 1
        if k < 0:
            return self.base[i], 0
        anchor = self._anchors[k]
        offset = i - self._anchor_rows[k]
        children = self._children[anchor]
        if offset == 0:
            return self.base[anchor], 0
        if offset <= len(children):
            return children[offset - 1], 1
        return self.base[i - self._before[k] - len(children)], 0

    def parent_of(self, i: int) -> int | None:
        """The base seq of the expanded row that lists row ``i`` beneath it (None for a row at depth 0)."""
        k = bisect.bisect_right(self._anchor_rows, i) - 1
        if k < 0:
            return None
        anchor = self._anchors[k]
        return self.base[anchor] if 0 < i - self._anchor_rows[k] <= len(self._children[anchor]) else None

    def row_of_child(self, parent: int, seq: int) -> int | None:
        """Row index of ``seq`` listed beneath the expanded row of base seq ``parent`` (None when not shown)."""
        pos = self.position_of(parent)
        children = self._children.get(pos) if pos is not None else None
        if not children or seq not in children:
            return None
        return self.row_of_position(pos) + 1 + children.index(seq)

    def position_of(self, seq: int) -> int | None:
        """Base position of ``seq`` (None when not in the base)."""
        base = self.base
        if isinstance(base, range):
            return seq - base.start if seq in base else None
        if isinstance(base, Collapsed):
            return base.position_of(seq)
        i = bisect.bisect_left(base, seq) if _is_sorted_hint(base) else None
        if i is not None and i < len(base) and base[i] == seq:
            return i
        try:
            return list(base).index(seq)
        except ValueError:
            return None

    def row_of_position(self, pos: int) -> int:
        """Row index of base position ``pos``."""
        k = bisect.bisect_left(self._anchors, pos)
        extra = self._before[k - 1] + len(self._children[self._anchors[k - 1]]) if k > 0 else 0
        return pos + extra

    def row_of_seq(self, seq: int, at_or_after: bool = False) -> int | None:
        """Row index showing ``seq`` at depth 0; with ``at_or_after`` the first row whose seq is >= ``seq``."""
        pos = self.position_of(seq)
        if pos is None and at_or_after and isinstance(self.base, Collapsed):
            pos = self.base.position_at_or_after(seq)  # a later delta of a block: the block's row
        elif pos is None and at_or_after and _is_sorted_hint(self.base):
            pos = bisect.bisect_left(self.base, seq)
            if pos >= len(self.base):
                return None
        return None if pos is None else self.row_of_position(pos)

    def toggle(self, pos: int, children: Sequence[int]) -> None:
        """Expand base position ``pos`` to ``children``, or collapse it when already expanded."""
        if pos in self._children:
            del self._children[pos]
        elif children:
            self._children[pos] = children
        self._anchors = sorted(self._children)
        before, total = [], 0
        for anchor in self._anchors:
            before.append(total)
            total += len(self._children[anchor])
        self._before = before
        self._anchor_rows = [a + b for a, b in zip(self._anchors, before, strict=True)]

    def expanded_positions(self) -> dict[int, Sequence[int]]:
        """Expanded base positions and their children (to carry over to a grown view)."""
        return dict(self._children)


def _is_sorted_hint(base: Sequence[int]) -> bool:
    return isinstance(base, (SortedSeqs, SortedPrefix))


class SortedSeqs(list[int]):
    """A list of seqs known to be ascending (filtered views), so lookups can bisect."""


class Prefix(SeqView):
    """The first ``stop`` seqs of a list that only grows at its end: a frozen view of it without a copy (a list of
    rows gains rows at the cost of the new ones alone)."""

    def __init__(self, seqs: list[int], stop: int) -> None:
        self.seqs = seqs
        self.stop = stop
        self._len = stop

    def _at(self, p: int) -> int:
        return self.seqs[p]

    def __getitem__(self, p: Any) -> Any:
        if type(p) is int and 0 <= p < self._len:  # the rows of a frame: no detour through ``SeqView``
            return self.seqs[p]
        return super().__getitem__(p)

    def __iter__(self) -> Iterator[int]:
        return islice(self.seqs, self._len)


class SortedPrefix(Prefix):
    """A ``Prefix`` of an ascending list (a filtered list's rows: lookups can bisect)."""


class SurfaceRows:
    """The surface view's rows, kept from one call to the next: every node of the live surface, or the nodes among a
    filter's matches. Between two cuts the surface only grows at its end (a replacement always makes a cut), so a
    call reads only the nodes and the matches that are new since the last one; a cut, another session or another
    filter makes them again from the whole surface."""

    def __init__(self) -> None:
        self._source: tuple[object, object] | None = None  # (session, matches) the rows are made from
        self._cuts = -1  # the session's cuts when the rows were made (-1: make them again at the next call)
        self._read = 0  # surface nodes taken in
        self._rows: list[int] = []
        self._keep: set[int] = set()  # the matches taken in …
        self._kept = 0  # … and how many

    def view(
        self,
        session: Session,
        lock: AbstractContextManager[Any],
        matches: Sequence[int] | None = None,
        upto: int = 0,
    ) -> Prefix:
        """The rows now, in surface order: every node, or (with ``matches``, the ascending seqs a filter's scan found
        among those below ``upto``, a list that only grows) the nodes among them. ``lock`` guards the session while
        another thread applies events to it."""
        if self._source is None or self._source[0] is not session or self._source[1] is not matches:
            self._source, self._keep, self._kept, self._cuts = (session, matches), set(), 0, -1
        if matches is not None:
            self._keep.update(matches[self._kept :])
            self._kept = len(matches)
        with lock:
            cuts = len(session.cuts)
            whole = cuts != self._cuts
            nodes = session.surface[0 if whole else self._read :]
        if whole:
            self._cuts, self._read = cuts, len(nodes)
            self._rows = nodes if matches is None else [s for s in nodes if s in self._keep]
            if matches is not None and nodes and max(nodes) >= upto:  # nodes the scan has not reached yet
                self._cuts = -1  # … are looked at again once it has
        elif matches is None:
            self._rows.extend(nodes)
            self._read += len(nodes)
        else:  # new nodes are new events, in seq order: the first the scan has not reached ends what can be read
            keep, rows = self._keep, self._rows
            for seq in nodes:
                if seq >= upto:
                    break
                if seq in keep:
                    rows.append(seq)
                self._read += 1
        return Prefix(self._rows, len(self._rows))
