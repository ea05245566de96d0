"""Any moment of a session: the surface after any seq from checkpoints of the projection, and a read-only
view of the whole projection as it stood then.

``SurfaceTimeline`` is built from a projected ``Session`` without decoding a single event: every node that was
ever on the surface is either in ``Session.surface`` or in a ``Session.shadowed`` list, and every replacement
that took effect is a key of ``Session.shadowed`` (it swapped the contiguous run it lists for itself). Putting
these edits in seq order replays the fold the session already validated. Every ``every`` edits the timeline
keeps a copy of the surface, so the surface after any seq costs one copy plus at most ``every`` edits; events
that do not touch the surface cost nothing. ``extend`` takes in what a followed session appended since.

The timeline also indexes the session's turns and each turn's steps by their seqs (``TurnIndex``), so that a moment
finds the turn open and the step in progress by bisection instead of walking every turn and step; a ``SessionAt``
reads turns, replacements and typed seqs from the whole projection, bounded by its seq, copying none of them.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from functools import cached_property
from itertools import islice, pairwise, takewhile
from typing import Any

from core.read.session import Session, Step, Turn

DEFAULT_EVERY = 256
# the events that change a turn or its steps
TURN_EVENTS = ("turn/start", "turn/end", "step/start", "step/end")


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
        self.turns = TurnIndex()

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
            self.turns.extend(session, start)
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


@dataclass(slots=True)
class _Steps:
    """One turn as indexed: its ``Turn``, its step numbers and steps in the turn's order, their start seqs, and
    whether a seq can only be in the last step started by then (the starts ascend, each step ends before the next)."""

    turn: Turn
    numbers: list[int]
    steps: list[Step]
    starts: list[int]
    ordered: bool


class TurnIndex:
    """A session's turns in its order with their start seqs, and each turn's steps likewise, kept up to date by
    ``SurfaceTimeline.extend``: the turn open and the step in progress at a seq are found by bisection. A log whose
    turns (or a turn's steps) overlap or restart out of order, which the projection diagnoses, is searched in order."""

    def __init__(self) -> None:
        self._numbers: list[int] = []  # the session's turn numbers, in its order
        self._starts: list[int] = []  # their start seqs
        self._position: dict[int, int] = {}  # turn number -> its index in ``_numbers``
        self._turns: dict[int, _Steps] = {}
        self._overlaps: set[int] = set()  # positions p where turn p does not end before turn p + 1 starts
        self._steps = 0  # the steps indexed, in every turn
        self._counts: list[int] = []  # the session's count of each of TURN_EVENTS when last taken in

    def extend(self, session: Session, start: int) -> None:
        """Take in the turns and steps that the events from seq ``start`` on started, ended or replaced."""
        counts = [session.counts.get(etype, 0) for etype in TURN_EVENTS]
        if counts == self._counts:
            return  # none of them came: no turn or step changed
        self._counts = counts
        turns = session.turns
        added = list(islice(reversed(turns), len(turns) - len(self._numbers)))  # new numbers: the dict's last
        for number in reversed(added):
            self._position[number] = len(self._numbers)
            self._numbers.append(number)
            self._starts.append(turns[number].start_seq)
        touched = set(added)
        # more events came than there are turns and steps: looking at every turn costs less than reading them
        if session.next_seq - start > len(turns) + self._steps:
            touched.update(turns)
        else:
            events = session.events
            for seq in session.seqs_of(TURN_EVENTS, start):
                data = events[seq].get("data")
                number = data.get("turn") if isinstance(data, dict) else None
                if isinstance(number, int) and number in turns:
                    touched.add(number)
        for number in touched:
            turn = turns[number]
            self._starts[self._position[number]] = turn.start_seq
            steps = list(turn.steps.values())
            before = self._turns.get(number)
            self._steps += len(steps) - (len(before.steps) if before is not None else 0)
            starts = [step.start_seq for step in steps]
            self._turns[number] = _Steps(turn, list(turn.steps), steps, starts, _in_order(steps))
        last = len(self._numbers) - 1
        for p in {q for number in touched for q in (self._position[number] - 1, self._position[number])}:
            if 0 <= p < last:
                if _ends_before(self._turns[self._numbers[p]].turn, self._turns[self._numbers[p + 1]].turn):
                    self._overlaps.discard(p)
                else:
                    self._overlaps.add(p)

    def open_at(self, seq: int) -> int | None:
        """The turn open right after ``seq``: the last in the session's order started by then and not ended by then."""
        if not self._overlaps:  # only the last turn started by then can be open
            k = bisect.bisect_right(self._starts, seq)
            positions: Iterable[int] = [k - 1] if k else []
        else:
            positions = reversed(range(len(self._numbers)))
        for p in positions:
            turn = self._turns[self._numbers[p]].turn
            if turn.start_seq <= seq and (turn.end_seq is None or turn.end_seq > seq):
                return self._numbers[p]
        return None

    def step_at(self, number: int, seq: int) -> int:
        """The step of turn ``number`` in progress at ``seq``, from its ``step/start`` to its ``step/end`` (0: none);
        of several, the last in the turn's order."""
        indexed = self._turns.get(number)
        if indexed is None:
            return 0
        steps = indexed.steps
        if indexed.ordered:
            k = bisect.bisect_right(indexed.starts, seq)
            candidates: Iterable[int] = [k - 1] if k else []
        else:
            candidates = reversed(range(len(steps)))
        for i in candidates:
            step = steps[i]
            if step.start_seq <= seq and (step.end_seq is None or seq <= step.end_seq):
                return indexed.numbers[i]
        return 0


def _ends_before(before: Turn | Step, after: Turn | Step) -> bool:
    """Whether ``before`` started and ended before ``after`` started."""
    return (
        before.end_seq is not None and before.start_seq < after.start_seq and before.end_seq < after.start_seq
    )


def _in_order(steps: list[Step]) -> bool:
    """Whether each step starts after the one before it has ended."""
    return all(_ends_before(before, after) for before, after in pairwise(steps))


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
        self.turns: Mapping[int, Turn] = _TurnsAt(session.turns, seq)
        self.open_turn = timeline.turns.open_at(seq)
        headers = list(session.seqs_of(("request/header",))) if header_seqs is None else header_seqs
        i = bisect.bisect_right(headers, seq)
        self.request_header_seq: int | None = headers[i - 1] if i else None

    @property
    def next_seq(self) -> int:
        """One past the moment."""
        return self.seq + 1

    @cached_property
    def replaced_by(self) -> Mapping[int, int]:
        """Shadowed seq -> the replacement that had taken it off the surface by the moment."""
        return _ReplacedAt(self.whole, self.seq)

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
        return takewhile(lambda s: s <= self.seq, self.whole.seqs_of(types, start))  # they come in log order

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


def moment(session: Session, seq: int, turns: TurnIndex) -> Moment:
    """The turn and step in progress at ``seq`` (a step counts from its ``step/start`` to its ``step/end``);
    ``turns``: the index of a timeline that has taken in ``seq``."""
    turn = session.turn_of(seq)
    return Moment(seq, turn, turns.step_at(turn, seq))


class _TurnsAt(Mapping[int, Turn]):
    """The turns started by ``seq``, each as it stood then (not ended yet, only the steps started by then), made when
    looked up: nothing is copied for the turns a moment never reads."""

    def __init__(self, turns: dict[int, Turn], seq: int) -> None:
        self._turns = turns
        self._seq = seq

    def __getitem__(self, number: int) -> Turn:
        turn, seq = self._turns[number], self._seq
        if turn.start_seq > seq:
            raise KeyError(number)
        ended = turn.end_seq is not None and turn.end_seq <= seq
        steps = {n: st for n, st in turn.steps.items() if st.start_seq <= seq}
        return Turn(number, turn.start_seq, turn.end_seq if ended else None, turn.end_reason if ended else None,
                    steps)  # fmt: skip

    def __iter__(self) -> Iterator[int]:
        return (number for number, turn in self._turns.items() if turn.start_seq <= self._seq)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _ReplacedAt(Mapping[int, int]):
    """``Session.replaced_by`` as it stood right after ``seq``: a lookup is one of the whole session's, and it lists
    the nodes in the order the replacements took them off (``Session.shadowed``'s)."""

    def __init__(self, session: Session, seq: int) -> None:
        self._session = session
        self._seq = seq

    def __getitem__(self, shadowed: int) -> int:
        replacement = self._session.replaced_by[shadowed]
        if replacement > self._seq:
            raise KeyError(shadowed)
        return replacement

    def __iter__(self) -> Iterator[int]:
        for replacement, run in self._session.shadowed.items():
            if replacement > self._seq:
                break
            yield from run

    def __len__(self) -> int:
        return sum(1 for _ in self)
