"""A log followed from its end (``Tailer.follow_from_end``) has each byte past the start point read from the file
once: the bytes read to find where the events go on are decoded as they were read, never read again."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from core.log.tail import Tailer
from tests.log.helpers import HEADER, number, raw_log, user


class _Counted(Tailer):
    """A tailer that notes every byte of the file it reads (``reads``: how many times each offset was read)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.reads: Counter[int] = Counter()

    def _read_at(self, offset: int, size: int) -> bytes:
        data = super()._read_at(offset, size)
        self.reads.update(range(offset, offset + len(data)))
        return data

    def _file_chunks(self, end: int) -> Iterator[bytes]:
        for chunk in super()._file_chunks(end):
            self.reads.update(range(self.offset, self.offset + len(chunk)))
            yield chunk


def _long_log() -> bytes:
    """A log of a long line (where the end is taken while it is half written) and many lines after it."""
    return raw_log(number([user("a" * 20_000), *(user(f"line {n} " + "b" * 200) for n in range(300))]))


def test_a_start_inside_a_half_written_line_reads_each_byte_after_it_once(tmp_path: Path) -> None:
    """The end taken inside a line: the read there found the line's end and then read again from the next line on
    (the start moved there and looked again), so every byte after it was read twice."""
    path = tmp_path / "session.jsonl"
    blob = _long_log()
    half = blob.index(b"a" * 10_000) + 10_000  # inside the long line
    path.write_bytes(blob[:half])
    tailer = _Counted(path)
    tailer.follow_from_end(HEADER)
    with open(path, "ab") as f:
        f.write(blob[half:])
    update = tailer.poll()
    assert [e["seq"] for e in update.events] == list(range(1, 301)) and not update.diagnostics
    twice = sorted(at for at, n in tailer.reads.items() if at >= half and n > 1)
    assert not twice, f"{len(twice)} bytes after the start point read more than once, from {twice[0]}"
    assert tailer.offset == len(blob)
