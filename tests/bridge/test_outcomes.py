"""Reading the bridge's ``control.outcomes.jsonl`` incrementally (``core.bridge.files.OutcomeReader``)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from core.bridge.files import OUTCOMES_FILE, OutcomeReader


def test_lines_are_read_as_they_complete_and_a_final_outcome_stays(tmp_path: Path) -> None:
    path = tmp_path / OUTCOMES_FILE
    reader = OutcomeReader(tmp_path)
    assert reader.read() == []
    path.write_text(
        '{"requestId":"a","op":"pause","outcome":"pending","at":1}\n{"requestId":"a","op":"pause","out'
    )
    assert [o["outcome"] for o in reader.read()] == ["pending"]
    with open(path, "a") as f:
        f.write('come":"applied","at":2}\n{"requestId":"a","op":"pause","outcome":"pending","at":3}\n')
    assert [o["outcome"] for o in reader.read()] == ["applied"]
    assert reader.outcomes["a"]["at"] == 2


def test_lines_that_are_no_outcome_are_skipped_and_counted(tmp_path: Path) -> None:
    (tmp_path / OUTCOMES_FILE).write_text(
        "not json\n[1]\n"
        '{"requestId":"","outcome":"applied"}\n{"requestId":"b","outcome":"maybe"}\n'
        '{"requestId":"c","op":{"x":1},"outcome":"applied"}\n'
        '{"requestId":"d","op":"stop","outcome":"rejected","error":"no turn"}\n'
    )
    reader = OutcomeReader(tmp_path)
    assert [o["requestId"] for o in reader.read()] == ["d"] and reader.skipped == 5


def test_a_replaced_file_is_read_from_its_start(tmp_path: Path) -> None:
    path = tmp_path / OUTCOMES_FILE
    path.write_text('{"requestId":"a","op":"pause","outcome":"applied"}\n')
    reader = OutcomeReader(tmp_path)
    reader.read()
    replacement = tmp_path / "new"
    replacement.write_text('{"requestId":"b","op":"resume","outcome":"applied"}\n')
    os.replace(replacement, path)
    assert [o["requestId"] for o in reader.read()] == ["b"] and set(reader.outcomes) == {"b"}


_B_AND_C = '{"requestId":"b","op":"resume","outcome":"applied"}\n{"requestId":"c","op":"pause","outcome":"applied"}\n'


def test_an_outcomes_file_made_again_with_the_old_inode_number_is_read_from_its_start(tmp_path: Path) -> None:
    """A missing file left the reader where it stood in the file gone: the next one, given the old inode number (a
    file system hands a freed one out again at once; here the old file itself, kept through a hard link) and as
    long, was read from that offset, its first outcomes never seen (a 'control --wait' on the bridge timed out)."""
    path = tmp_path / OUTCOMES_FILE
    path.write_text('{"requestId":"a","op":"pause","outcome":"applied"}\n')
    reader = OutcomeReader(tmp_path)
    reader.read()
    aside = tmp_path / "aside"
    os.link(path, aside)
    path.unlink()
    assert reader.read() == []
    aside.write_text(_B_AND_C)
    aside.rename(path)
    assert [o["requestId"] for o in reader.read()] == ["b", "c"] and set(reader.outcomes) == {"b", "c"}


def test_an_outcomes_file_written_again_in_place_is_read_from_its_start(tmp_path: Path) -> None:
    """A file truncated and written again (the same inode), as long as what was read of it or longer, was read on
    from the old offset: the new file's first outcomes were never seen. What was read is checked as the file
    grows (its first bytes and those before the offset, as the inbox reader does)."""
    path = tmp_path / OUTCOMES_FILE
    path.write_text('{"requestId":"a","op":"pause","outcome":"applied"}\n')
    reader = OutcomeReader(tmp_path)
    reader.read()
    with open(path, "r+") as f:
        f.truncate(0)
        f.write(_B_AND_C)
    assert [o["requestId"] for o in reader.read()] == ["b", "c"] and set(reader.outcomes) == {"b", "c"}


def test_an_outcomes_file_written_again_in_place_at_the_same_size_is_read_from_its_start(tmp_path: Path) -> None:
    """What was read was checked only when the file grew: one written again in place at the size read (a request
    id of the same length answered anew) kept the reader where it stood, its outcomes never seen. A change of size
    or modification time now has it checked, as the log tailer does."""
    path = tmp_path / OUTCOMES_FILE
    path.write_text('{"requestId":"a","op":"pause","outcome":"applied"}\n')
    reader = OutcomeReader(tmp_path)
    assert [o["requestId"] for o in reader.read()] == ["a"]
    before = os.stat(path)
    with open(path, "r+") as f:
        f.write('{"requestId":"b","op":"pause","outcome":"applied"}\n')
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))  # a second on, whatever the clock's grain
    assert os.stat(path).st_size == before.st_size
    assert [o["requestId"] for o in reader.read()] == ["b"] and set(reader.outcomes) == {"b"}
    assert reader.read() == []  # unchanged since: not read again


def test_a_fifo_swapped_in_after_the_reader_looked_is_never_waited_on(tmp_path: Path) -> None:
    """The reader looked (lstat: a regular file), then opened the file to read it, blocking: a FIFO put in its place
    between the two held the open (a 'control --wait' on a DSH session, the TUI's poll) until a writer came. It is
    opened without waiting and read only as a regular file, else taken as gone."""

    class Raced(OutcomeReader):
        def _stat(self) -> tuple[tuple[int, int], int, int] | None:
            return (0, 0), 100, 0  # what the look saw, before the FIFO took the file's place

    fifo = tmp_path / OUTCOMES_FILE
    os.mkfifo(fifo)
    found: list[object] = []
    reading = threading.Thread(target=lambda: found.append(Raced(tmp_path).read()), daemon=True)
    reading.start()
    reading.join(60)
    if reading.is_alive():  # held in the open: a writer lets it go
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert found == [[]]


def test_a_huge_outcomes_file_is_read_in_slices_never_whole(tmp_path: Path) -> None:
    """A control.outcomes.jsonl of 64 MiB (forged, or a runaway plugin's) was read in one piece at the TUI's every
    host check and by 'control --wait', holding it whole (1 GB: 1 GB of memory); it is read a slice at a time,
    its outcomes kept, and what a read holds does not grow with the file."""
    import tracemalloc

    path = tmp_path / OUTCOMES_FILE
    with open(path, "wb") as f:
        f.write(b'{"requestId":"a","op":"pause","outcome":"applied"}\n')
        f.truncate(64 << 20)  # NUL bytes: one line far over the longest outcome
        f.seek(0, os.SEEK_END)
        f.write(b'\n{"requestId":"b","op":"resume","outcome":"applied"}\nnot json\n')
    reader = OutcomeReader(tmp_path)
    tracemalloc.start()
    try:
        found = reader.read()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [o["requestId"] for o in found] == ["a", "b"] and reader.skipped == 2  # the NUL line and "not json"
    assert peak < 8 << 20, peak


def test_a_symlinked_outcomes_file_is_not_read(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text('{"requestId":"a","op":"pause","outcome":"applied"}\n')
    (tmp_path / OUTCOMES_FILE).symlink_to(target)
    assert OutcomeReader(tmp_path).read() == []


@settings(max_examples=150, deadline=None)
@given(
    chunks=st.lists(
        st.one_of(
            st.binary(max_size=30),
            st.builds(
                lambda i, o: json.dumps({"requestId": i, "op": "pause", "outcome": o}) + "\n",
                st.sampled_from(["a", "b", ""]),
                st.sampled_from(["pending", "applied", "rejected", "nope"]),
            ).map(str.encode),
        ),
        max_size=8,
    )
)
def test_any_bytes_in_any_pieces_never_raise_and_finals_are_kept(
    tmp_path_factory, chunks: list[bytes]
) -> None:
    directory = tmp_path_factory.mktemp("o")
    reader = OutcomeReader(directory)
    final: dict[str, str] = {}
    with open(directory / OUTCOMES_FILE, "ab") as f:
        for chunk in chunks:
            f.write(chunk)
            f.flush()
            reader.read()
            for rid, o in reader.outcomes.items():
                if rid in final:
                    assert o["outcome"] == final[rid]
                elif o["outcome"] in ("applied", "rejected"):
                    final[rid] = o["outcome"]
