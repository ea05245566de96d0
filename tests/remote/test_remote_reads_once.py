"""A remote log followed from its end (``RemoteTailer.follow_from_end``) has each byte past the start point fetched
once: the bytes read where the follow starts are decoded as they were read, however the log grew meanwhile."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from core.remote.link import RemoteStat
from core.remote.tail import RemoteTailer
from core.remote.target import RemoteTarget
from tests.log.helpers import HEADER, number, raw_log, user
from tests.remote.test_remote_tail import _Machine


class _Counting(_Machine):
    """``_Machine`` noting how many times each byte of the file was fetched (``fetched``); after the read call
    numbered ``after[0]`` it runs ``after[1]`` (a writer appending while the tailer polls)."""

    def __init__(self, after: tuple[int, Callable[[], None]] | None = None) -> None:
        super().__init__()
        self.fetched: Counter[int] = Counter()
        self.after = after

    def read_ranges(self, path: str, ranges: list[tuple[int, int]], unlinked: bool = False,
                    known: RemoteStat | None = None) -> list[bytes]:  # fmt: skip
        got = super().read_ranges(path, ranges)
        for (offset, _), data in zip(ranges, got, strict=True):
            self.fetched.update(range(offset, offset + len(data)))
        if self.after is not None and self.after[0] == self.reads:
            self.after[1]()
        return got


def _lines(first: int, n: int, size: int = 300) -> list[bytes]:
    """The lines of user messages ``first`` … ``first + n - 1`` of a numbered log (``size`` chars each)."""
    log = raw_log(number([user(f"m{k} " + "x" * size) for k in range(first + n)]))
    return log.splitlines(keepends=True)[1 + first :]


def _follow(path: Path, machine: _Counting) -> RemoteTailer:
    tailer = RemoteTailer(machine, RemoteTarget(None, "testbox", str(path)))  # type: ignore[arg-type]
    tailer.follow_from_end({**HEADER, "id": "t-1"})
    return tailer


def _twice(machine: _Counting, start: int) -> list[int]:
    return sorted(at for at, n in machine.fetched.items() if at >= start and n > 1)


def test_bytes_appended_as_the_follow_starts_are_fetched_once(tmp_path: Path) -> None:
    """The log grew between the stat where the follow started and the poll's: the poll's rewrite check read the
    new bytes from the last consumed ones on, the bytes read at the start point among them, a second time."""
    path = tmp_path / "session.jsonl"
    lines = _lines(0, 60)
    head = raw_log([]) + b"".join(lines[:10])
    path.write_bytes(head)

    def append() -> None:
        with path.open("ab") as f:
            f.write(b"".join(lines[30:]))

    machine = _Counting()
    tailer = _follow(path, machine)
    assert not tailer.poll()
    with path.open("ab") as f:
        f.write(b"".join(lines[10:30]))
    machine.after = (machine.reads + 2, append)  # the line at the start point is read, then resume's bytes
    update = tailer.poll()
    assert [e["seq"] for e in update.events] == list(range(10, 60)) and not update.diagnostics, update
    twice = _twice(machine, len(head))
    assert not twice, f"{len(twice)} bytes past the start point fetched more than once, from {twice[0]}"


def test_a_start_inside_a_half_written_line_fetches_each_byte_after_it_once(tmp_path: Path) -> None:
    """The end taken inside a line: the read there found the line's end, then fetched again from the next line on,
    where the events go on (the line cut began before)."""
    path = tmp_path / "session.jsonl"
    lines = _lines(0, 40, 3_000)
    whole = raw_log([]) + b"".join(lines)
    half = len(raw_log([]) + b"".join(lines[:5])) + 1_500
    path.write_bytes(whole[:half])
    machine = _Counting()
    tailer = _follow(path, machine)
    path.write_bytes(whole)
    update = tailer.poll()
    assert [e["seq"] for e in update.events] == list(range(6, 40)) and not update.diagnostics, update
    # what resume compares from before the point where the events go on is read again (``TAIL_CHECK`` bytes)
    twice = _twice(machine, whole.index(lines[6]))
    assert not twice, f"{len(twice)} bytes past the start point fetched more than once, from {twice[0]}"
