"""Streamed blocks: runs of ``assistant/chunk`` deltas that a list can show as one row each.

Nearly every event of a real log is a stream delta. A *block* is a maximal run of consecutive seqs that are all
``assistant/chunk`` events of one turn and step (one model stream, from its first delta to its ``finish``).
``StreamBlocks`` is built as events are projected (a packed row is added in one call, its size taken from the row
without building its members) and only ever grows at its end: every block but the last is final. ``Collapsed``
is the seq list a reader shows with each block reduced to its first seq.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable, Iterator
from typing import Any

from core.shared.records import record
from core.shared.seqview import SeqView

CHUNK_TYPE = "assistant/chunk"


def delta_chars(chunk: Any) -> int:
    """Code points a stream chunk adds: the text of a text or reasoning delta, the arguments of a tool-call delta."""
    if not isinstance(chunk, dict):
        return 0
    text = chunk.get("argumentsDelta") if chunk.get("type") == "tool-call-delta" else chunk.get("text")
    return len(text) if isinstance(text, str) else 0


@record(frozen=True, slots=True)
class Block:
    """One streamed block: seqs ``start`` … ``end - 1`` of turn ``turn``, step ``step``; ``chars`` streamed."""

    start: int
    end: int
    turn: int
    step: int
    chars: int

    @property
    def deltas(self) -> int:
        """How many chunk events the block holds."""
        return self.end - self.start


class StreamBlocks:
    """The blocks of a log, grown in seq order by ``add``; readers on other threads may read any block by index.

    Per block it keeps a few machine integers: a 200 MB log has about as many blocks as model calls.
    """

    def __init__(self) -> None:
        self.starts = array("q")
        self.ends = array("q")
        self._keys = array("q")  # turn << 20 | step (-1 when either is not a number)
        self.chars = array("q")
        self._end, self._turn, self._step = -1, None, None  # the last block's end and step, as given to ``add``
        self.hidden_before = array("q")  # per block: the seqs the blocks before it hide (each member but the first)
        self.heads = array("q")  # per block: its row in a collapsed list (start - hidden_before)

    def __len__(self) -> int:
        return len(self.starts)

    def add(self, seq: int, turn: Any, step: Any, count: int = 1, chars: int = 0) -> None:
        """Record ``count`` chunk events from ``seq`` on, of ``turn``/``step``, adding ``chars`` streamed chars.

        They extend the last block when they follow it directly in the same step; otherwise they open a block.
        """
        if seq == self._end and turn == self._turn and step == self._step:  # the stream goes on
            self._end = self.ends[-1] = seq + count
            if chars:  # a block's start and end add none
                self.chars[-1] += chars
            return
        self._end, self._turn, self._step = seq + count, turn, step
        key = _key(turn, step)
        n = len(self.starts)
        # ``starts`` last: a reader on another thread that finds the block there finds the rest of it too
        hidden = self.hidden_before[n - 1] + self.ends[n - 1] - self.starts[n - 1] - 1 if n else 0
        self.hidden_before.append(hidden)
        self.heads.append(seq - hidden)
        self.ends.append(seq + count)
        self._keys.append(key)
        self.chars.append(chars)
        self.starts.append(seq)

    def index_of(self, seq: int) -> int | None:
        """The index of the block holding ``seq``, or None."""
        i = bisect.bisect_right(self.starts, seq) - 1
        return i if i >= 0 and seq < self.ends[i] else None

    def head_index(self, seq: int) -> int | None:
        """The index of the block whose first seq is ``seq``, or None."""
        i = bisect.bisect_left(self.starts, seq)
        return i if i < len(self.starts) and self.starts[i] == seq else None

    def block(self, i: int) -> Block:
        """Block ``i`` as it stands now."""
        key = self._keys[i]
        turn, step = (key >> 20, key & 0xFFFFF) if key >= 0 else (-1, -1)
        return Block(self.starts[i], self.ends[i], turn, step, self.chars[i])

    def __iter__(self) -> Iterator[Block]:
        return (self.block(i) for i in range(len(self.starts)))

    def hidden_below(self, seq: int) -> int:
        """How many seqs below ``seq`` a collapsed list leaves out (block members after each block's first)."""
        i = bisect.bisect_right(self.starts, seq - 1) - 1
        if i < 0:
            return 0
        return self.hidden_before[i] + max(0, min(self.ends[i], seq) - self.starts[i] - 1)


_KEY_LIMIT = 1 << 20  # a turn and a step each fit in 20 bits of a block's key


def _key(turn: Any, step: Any) -> int:
    """``turn << 20 | step``, or -1 unless both are ints (bools are not) from 0 to 2**20 - 1 (asked without a
    generator: a new block of every step asks it)."""
    ok = (
        isinstance(turn, int) and not isinstance(turn, bool) and 0 <= turn < _KEY_LIMIT
        and isinstance(step, int) and not isinstance(step, bool) and 0 <= step < _KEY_LIMIT
    )  # fmt: skip
    return (turn << 20) | step if ok else -1



def stream_blocks(rows: Iterable[tuple[int, str, Any, Any, int]]) -> list[Block]:
    """The blocks of ``(seq, type, turn, step, chars)`` rows given in seq order (``chars``: the row's delta chars)."""
    blocks = StreamBlocks()
    for seq, etype, turn, step, chars in rows:
        if etype == CHUNK_TYPE:
            blocks.add(seq, turn, step, 1, chars)
    return list(blocks)


class Collapsed(SeqView):
    """Seqs ``0`` … ``stop - 1`` with every block reduced to its first seq (a frozen view of growing blocks).

    Only blocks that had begun when the view was made count, so a view stays the same while the log grows;
    the position of a seq and the seq at a position are found by bisection over the blocks.
    """

    def __init__(self, blocks: StreamBlocks, stop: int) -> None:
        self.blocks = blocks
        self.stop = stop
        self._count = bisect.bisect_left(blocks.starts, stop)  # blocks that begin below stop
        self._len = stop - blocks.hidden_below(stop)

    def _at(self, p: int) -> int:
        blocks = self.blocks
        i = bisect.bisect_right(blocks.heads, p, 0, self._count) - 1
        if i < 0:
            return p
        head = blocks.starts[i]
        if p == blocks.heads[i]:
            return head
        return p + blocks.hidden_before[i] + blocks.ends[i] - head - 1

    def is_head(self, seq: int) -> bool:
        """True when ``seq`` is the first seq of a block (the row that stands for it)."""
        i = self.blocks.head_index(seq)
        return i is not None and i < self._count

    def position_of(self, seq: int) -> int | None:
        """The position of ``seq``, None when it is not shown (a later member of a block, or past the end)."""
        if not 0 <= seq < self.stop:
            return None
        i = self.blocks.index_of(seq)
        if i is not None and seq != self.blocks.starts[i]:
            return None
        return seq - self.blocks.hidden_below(seq)

    def position_at_or_after(self, seq: int) -> int | None:
        """The position of the first shown seq at or after ``seq`` (a block member gives its block's row)."""
        if seq >= self.stop:
            return None
        seq = max(seq, 0)
        i = self.blocks.index_of(seq)
        if i is not None:
            seq = self.blocks.starts[i]
        return seq - self.blocks.hidden_below(seq)


def stream_text(chunks: Iterable[dict[str, Any]], limit: int | None = None) -> tuple[list[tuple[str, str]], int]:
    """What a stream said, from its ``assistant/chunk`` events in order: ``(part, text)`` per content block
    (``reasoning``, ``text``, ``tool call NAME`` for its arguments), and how many of the chunks were read.

    With ``limit``, reading stops once the parts hold that many chars (a huge stream is shown a screen at a time).
    """
    parts: dict[tuple[str, Any], list[str]] = {}
    names: dict[tuple[str, Any], str] = {}
    total = read = 0
    for event in chunks:
        if limit is not None and total >= limit:
            break
        read += 1
        data = event.get("data")
        chunk = data.get("chunk") if isinstance(data, dict) else None
        if not isinstance(chunk, dict) or not isinstance(kind := chunk.get("type"), str) or kind not in _PART_OF:
            continue
        index = chunk.get("index")  # a block's number; anything else is one unnumbered block (a dict key)
        key = (_PART_OF[kind], index if isinstance(index, int) else None)
        if key[0] == "tool call" and isinstance(chunk.get("name"), str):
            names.setdefault(key, chunk["name"])
        piece = chunk.get("argumentsDelta") if key[0] == "tool call" else chunk.get("text")
        if isinstance(piece, str):
            parts.setdefault(key, []).append(piece)
            total += len(piece)
    out = []
    for key, pieces in parts.items():
        title = f"tool call {names.get(key, '?')}" if key[0] == "tool call" else key[0]
        out.append((title, "".join(pieces)))
    return out, read


_PART_OF = {"reasoning-delta": "reasoning", "text-delta": "text", "tool-call-delta": "tool call"}


def collapse_seqs(seqs: Iterable[int], blocks: StreamBlocks) -> list[int]:
    """Ascending ``seqs`` with each block member replaced by its block's first seq, once (a filtered list's rows)."""
    out: list[int] = []
    for seq in seqs:
        i = blocks.index_of(seq)
        shown = seq if i is None else blocks.starts[i]
        if not out or out[-1] != shown:
            out.append(shown)
    return out
