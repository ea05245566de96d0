"""Any moment of a session: the surface after any seq from checkpoints of the projection, and a read-only
view of the whole projection as it stood then.

``SurfaceTimeline`` is built from a projected ``Session`` without decoding a single event: every node that was
ever on the surface is either in ``Session.surface`` or in a ``Session.shadowed`` list, and every replacement
that took effect is a key of ``Session.shadowed`` (it swapped the contiguous run it lists for itself). Putting
these edits in seq order replays the fold the session already validated. Every ``every`` edits the timeline
keeps a copy of the surface, so the surface after any seq costs one copy plus at most ``every`` edits; events
that do not touch the surface cost nothing. ``extend`` takes in what a followed session appended since.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from core.read.session import Session, Turn

DEFAULT_EVERY = 256


@dataclass(frozen=True, slots=True)
class Moment:
    """Where a seq sits in the session: its turn and the step in progress (0 when none)."""

    seq: int
    turn: int
    step: int

    def label(self) -> str:
        """``at seq 4180 · turn 7 step 3``."""
        where = f" · turn {self.turn}" if self.turn else ""
        return f"at seq {self.seq}{where}{f' step {self.step}' if self.step else ''}"


class SurfaceTimeline:
    """The surface after any seq of a projected session (see the module docstring)."""

    def __init__(self, every: int = DEFAULT_EVERY) -> None:
        if every < 1:
            raise ValueError("checkpoint interval must be at least 1")
        self.every = every
        self.seen = 0  # events taken in: every seq below this is covered
        self._edit_seq = array("q")  # seq of each edit, ascending
        self._edit_pos = array("q")  # surface position it wrote
        self._edit_len = array("q")  # how many nodes it replaced (0 = append)
        self._nodes: list[int] = []  # the surface after the last edit
        self._marks: list[int] = [0]  # number of edits before each checkpoint
        self._copies: list[array[int]] = [array("q")]

    @classmethod
    def from_session(cls, session: Session, every: int = DEFAULT_EVERY) -> SurfaceTimeline:
        """The timeline of everything ``session`` has projected."""
        timeline = cls(every)
        timeline.extend(session)
        return timeline

    def extend(self, session: Session, lock: AbstractContextManager[Any] | None = None) -> None:
        """Take in the events ``session`` projected since the last call (the session only ever grows).

        ``lock`` guards reading the session while another thread applies events to it (the TUI's follower);
        only the copy of what is new is made under it.
        """
        start = self.seen
        with lock if lock is not None else nullcontext():
            end = session.next_seq
            if end <= start:
                return
            replacements = {}  # those from ``start`` on: the last keys, as replacements are applied in seq order
            for seq in reversed(session.shadowed):
                if seq < start:
                    break
                replacements[seq] = list(session.shadowed[seq])
            # the nodes from ``start`` on that were appended stand after every older node (a replacement keeps the
            # order of what it leaves, and is a key of ``replacements``): read from the end, not the whole surface
            surface, k = session.surface, len(session.surface)
            while k and surface[k - 1] >= start:
                k -= 1
            live = surface[k:]
        appended = {seq for seq in live if seq not in replacements}
        for nodes in replacements.values():
            appended.update(s for s in nodes if s >= start and s not in replacements)
        for seq in sorted(appended | replacements.keys()):
            shadowed = replacements.get(seq)
            if shadowed is None:
                self._edit(seq, len(self._nodes), 0)
            else:
                self._edit(seq, self._position(shadowed[0]), len(shadowed))
        self.seen = end

    def _position(self, seq: int) -> int:
        nodes = self._nodes
        for k in range(len(nodes) - 1, -1, -1):
            if nodes[k] == seq:
                return k
        raise ValueError(f"replaced node {seq} is not on the surface the timeline rebuilt")

    def _edit(self, seq: int, pos: int, length: int) -> None:
        self._nodes[pos : pos + length] = [seq]
        self._edit_seq.append(seq)
        self._edit_pos.append(pos)
        self._edit_len.append(length)
        if len(self._edit_seq) - self._marks[-1] >= self.every:
            self._marks.append(len(self._edit_seq))
            self._copies.append(array("q", self._nodes))

    @property
    def edits(self) -> int:
        """How many surface edits the timeline holds."""
        return len(self._edit_seq)

    def surface_at(self, seq: int) -> list[int]:
        """The surface node seqs, in model order, right after event ``seq`` (``seq < 0``: empty)."""
        if seq >= self.seen:
            raise IndexError(f"seq {seq} is past the {self.seen} events the timeline has taken in")
        stop = bisect.bisect_right(self._edit_seq, seq)  # edits at or before seq
        k = bisect.bisect_right(self._marks, stop) - 1
        nodes = list(self._copies[k])
        for i in range(self._marks[k], stop):
            pos = self._edit_pos[i]
            nodes[pos : pos + self._edit_len[i]] = [self._edit_seq[i]]
        return nodes


class SessionAt:
    """A projected session seen as it stood right after ``seq``: the parts of the ``Session`` API that a
    request is built from (the surface, turns, provenance, the latest request header), read-only.

    Everything the projection records about an event is fixed once that event is applied, so provenance and
    turn attribution are read from the whole projection; only the surface (from the timeline), the turns'
    ends and the request header depend on the moment.
    """

    def __init__(
        self, session: Session, timeline: SurfaceTimeline, seq: int, header_seqs: Sequence[int] | None = None
    ) -> None:
        """``header_seqs``: the seqs of the session's ``request/header`` events, when the caller keeps them."""
        self.whole = session
        self.seq = seq
        self.header = session.header
        self.events: Sequence[dict[str, Any]] = session.events
        self.surface = timeline.surface_at(seq)
        self.turns: dict[int, Turn] = {}
        self.open_turn: int | None = None
        for number, turn in session.turns.items():
            if turn.start_seq > seq:
                continue
            ended = turn.end_seq is not None and turn.end_seq <= seq
            steps = {n: st for n, st in turn.steps.items() if st.start_seq <= seq}
            self.turns[number] = Turn(number, turn.start_seq, turn.end_seq if ended else None,
                                      turn.end_reason if ended else None, steps)  # fmt: skip
            if not ended:
                self.open_turn = number
        headers = list(session.seqs_of(("request/header",))) if header_seqs is None else header_seqs
        i = bisect.bisect_right(headers, seq)
        self.request_header_seq: int | None = headers[i - 1] if i else None

    @property
    def next_seq(self) -> int:
        """One past the moment."""
        return self.seq + 1

    @cached_property
    def replaced_by(self) -> dict[int, int]:
        """Shadowed seq -> the replacement that had taken it off the surface by the moment."""
        return {s: r for s, r in self.whole.replaced_by.items() if r <= self.seq}

    @cached_property
    def _live(self) -> frozenset[int]:
        return frozenset(self.surface)

    def on_surface(self, seq: int) -> bool:
        """True while ``seq`` was a surface node at the moment."""
        return seq in self._live

    def in_turn(self, seq: int) -> bool:
        """Whether an event belongs to a turn (fixed once it is applied)."""
        return self.whole.in_turn(seq)

    def request_header(self) -> dict[str, Any] | None:
        """The latest ``request/header`` at the moment."""
        if self.request_header_seq is None:
            return None
        header = (self.events[self.request_header_seq].get("data") or {}).get("header")
        return header if isinstance(header, dict) else None

    def seqs_of(self, types: Collection[str], start: int = 0) -> Iterator[int]:
        """Seqs up to the moment of the events whose type is in ``types``."""
        return (s for s in self.whole.seqs_of(types, start) if s <= self.seq)

    def turn_of(self, seq: int) -> int:
        """The turn an event belongs to."""
        return self.whole.turn_of(seq)

    def is_replacement(self, seq: int) -> bool:
        """True for an event that carried a replace surface op."""
        return self.whole.is_replacement(seq)

    def sources_of(self, seq: int) -> list[int]:
        """``sourceEventSeqs`` of a replacement."""
        return self.whole.sources_of(seq)

    def original_of(self, seq: int) -> int:
        """The append-origin event of a node."""
        return self.whole.original_of(seq)


def moment(session: Session, seq: int) -> Moment:
    """The turn and step in progress at ``seq`` (a step counts from its ``step/start`` to its ``step/end``)."""
    turn = session.turn_of(seq)
    info = session.turns.get(turn)
    step = 0
    if info is not None:
        for number, s in info.steps.items():
            if s.start_seq <= seq and (s.end_seq is None or seq <= s.end_seq):
                step = number
    return Moment(seq, turn, step)
