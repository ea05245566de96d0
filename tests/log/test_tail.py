"""Following a file that is being written, truncated, rewritten and replaced."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from core.log.decoder import Consumer
from core.log.tail import FileState, Tailer, TailUpdate, follow, wakeups
from tests.log.helpers import HEADER, one_turn_with_tool, raw_log, zstd_log


def test_waits_for_a_file_that_does_not_exist_yet(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    tailer = Tailer(path)
    assert tailer.poll().waiting
    path.write_bytes(raw_log(one_turn_with_tool()))
    update = tailer.poll()
    assert not update.waiting and update.header["id"] == "t-1" and len(update.events) == 11


def test_partial_lines_wait_for_their_newline(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    blob = raw_log(one_turn_with_tool())
    cut = blob.index(b"\n", blob.index(b"\n") + 1) + 20  # mid-way through the second event line
    path.write_bytes(blob[:cut])
    tailer = Tailer(path)
    assert [e["seq"] for e in tailer.poll().events] == [0]
    with open(path, "ab") as f:
        f.write(blob[cut:])
    assert [e["seq"] for e in tailer.poll().events] == list(range(1, 11))


def test_zstd_partial_frame_is_kept_for_the_next_poll(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl.zstd"
    blob = zstd_log(one_turn_with_tool(), batch=4)
    path.write_bytes(blob[:-7])
    tailer = Tailer(path)
    first = tailer.poll()
    with open(path, "ab") as f:
        f.write(blob[-7:])
    second = tailer.poll()
    assert len(first.events) == 8 and len(second.events) == 3 and not first.diagnostics


def test_truncated_and_rewritten_file_resyncs(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    events = one_turn_with_tool()
    path.write_bytes(raw_log(events))
    tailer = Tailer(path)
    assert len(tailer.poll().events) == 11
    with open(path, "r+b") as f:  # same inode, shorter content
        f.truncate(0)
        f.write(raw_log(events[:3]))
    update = tailer.poll()
    assert update.reset and [d.code for d in update.diagnostics] == ["log-reset"]
    assert "truncated" in update.diagnostics[0].message
    assert [e["seq"] for e in update.events] == [0, 1, 2]


def test_replaced_file_resyncs(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    events = one_turn_with_tool()
    path.write_bytes(raw_log(events))
    tailer = Tailer(path)
    tailer.poll()
    other = tmp_path / "new.jsonl"
    other.write_bytes(raw_log(events + events[:0]))
    os.replace(other, path)
    update = tailer.poll()
    assert update.reset and "replaced by a new file" in update.diagnostics[0].message
    assert len(update.events) == 11


def test_removed_file_is_waited_for(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(raw_log(one_turn_with_tool()))
    tailer = Tailer(path)
    tailer.poll()
    path.unlink()
    update = tailer.poll()
    assert update.waiting and [d.code for d in update.diagnostics] == ["file-removed"]
    assert update.reset  # what comes back replaces what was read, as the remote tailer says too
    path.write_bytes(raw_log(one_turn_with_tool()))
    back = tailer.poll()
    assert not back.reset and [e["seq"] for e in back.events] == list(range(11))


def _follow_collect(path: Path, use_watchfiles: bool) -> list[int]:
    events = one_turn_with_tool()
    blob = raw_log(events)
    head, rest = blob.split(b"\n", 1)
    stop = threading.Event()
    seen: list[int] = []
    done = threading.Event()

    def run() -> None:
        for update in follow(path, stop, interval=0.05, use_watchfiles=use_watchfiles):
            seen.extend(e["seq"] for e in update.events)
            if len(seen) >= 11:
                done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    path.write_bytes(head + b"\n")
    for line in rest.splitlines(keepends=True):
        with open(path, "ab") as f:
            f.write(line)
    done.wait(60)
    stop.set()
    thread.join(60)
    return seen


def test_follow_with_watchfiles_sees_every_event(tmp_path: Path) -> None:
    assert _follow_collect(tmp_path / "session.jsonl", True) == list(range(11))


def test_follow_polling_fallback_sees_every_event(tmp_path: Path) -> None:
    assert _follow_collect(tmp_path / "session.jsonl", False) == list(range(11))


def test_wakeups_end_when_stopped(tmp_path: Path) -> None:
    for use_watchfiles in (False, True):
        stop = threading.Event()
        count = 0
        for _ in wakeups(tmp_path / "session.jsonl", stop, 0.01, use_watchfiles):
            count += 1
            if count == 3:
                stop.set()
        assert count == 3


def test_wakeups_drive_a_tailer_to_every_appended_event(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    blob = raw_log(one_turn_with_tool())
    path.write_bytes(b"")
    tailer, stop, seen = Tailer(path), threading.Event(), []
    lines = blob.splitlines(keepends=True)
    for _ in wakeups(path, stop, 0.01, use_watchfiles=False):
        seen.extend(e["seq"] for e in tailer.poll().events)
        if lines:
            with open(path, "ab") as f:
                f.write(lines.pop(0))
        elif len(seen) == 11:
            stop.set()
    assert seen == list(range(11))


def test_a_consumer_takes_each_decoded_event_but_a_replaced_file_comes_in_the_update(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    events = one_turn_with_tool()
    path.write_bytes(raw_log(events[:5]))
    taken: list[dict] = []
    tailer = Tailer(path, consumer=Consumer(event=taken.append))
    assert tailer.poll().events == [] and [e["seq"] for e in taken] == list(range(5))
    with open(path, "ab") as f:
        f.write(raw_log(events)[len(raw_log(events[:5])) :])
    assert tailer.poll().events == [] and [e["seq"] for e in taken] == list(range(11))
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(raw_log(events[:3]))
    os.replace(replacement, path)
    update = tailer.poll()
    assert update.reset and [e["seq"] for e in update.events] == [0, 1, 2]  # the new file's, for a fresh start
    assert len(taken) == 11  # the consumer of the old file got none of them


def test_following_from_the_end_reads_only_what_is_appended(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    events = one_turn_with_tool()
    blob = raw_log(events)
    cut = blob.index(b"\n", blob.index(b"\n") + 1) + 1  # the header and seq 0 are there when it starts
    path.write_bytes(blob[:cut])
    tailer = Tailer(path)
    tailer.follow_from_end(HEADER)
    assert not tailer.poll() and tailer.offset == 0  # nothing new yet, and nothing of the old read
    with open(path, "ab") as f:
        f.write(blob[cut:])
    update = tailer.poll()
    assert [e["seq"] for e in update.events] == list(range(1, 11)) and not update.diagnostics
    assert tailer.offset == len(blob)


def test_following_from_the_end_of_a_line_half_written_goes_on_from_the_next_line(tmp_path: Path) -> None:
    """The end taken in the middle of a line (a writer's large line not all on disk yet, as a stat over SSH may
    catch it): that line began before, and the events follow from the next one, not from the log's start (which
    read the whole log again, for a control wait, however large)."""
    path = tmp_path / "session.jsonl"
    events = one_turn_with_tool("x" * 10_000)
    blob = raw_log(events)
    starts = [0, *(i + 1 for i, byte in enumerate(blob) if byte == 0x0A)]
    big = max(range(2, len(starts) - 2), key=lambda i: starts[i + 1] - starts[i])  # the long tool result's line
    half = (starts[big] + starts[big + 1]) // 2
    path.write_bytes(blob[:half])
    tailer = Tailer(path)
    tailer.follow_from_end(HEADER)
    with open(path, "ab") as f:
        f.write(blob[half:])
    update = tailer.poll()
    assert [e["seq"] for e in update.events] == list(range(big, len(starts) - 2)) and not update.diagnostics
    assert tailer.offset == len(blob)


def _bytes_read() -> int:
    """Bytes this process has read through read(2) so far (Linux ``/proc/self/io``)."""
    with open("/proc/self/io", "rb") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(b"rchar:"))


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs Linux /proc/self/io")
def test_the_bytes_read_to_start_following_from_the_end_are_decoded_not_read_again(tmp_path: Path) -> None:
    """Following from the end read up to 1 MiB past the start point to find the first line's seq, then the poll
    read those bytes again from the file to decode them; they are now handed to the decoder as they were read."""
    path = tmp_path / "session.jsonl"
    events = one_turn_with_tool("x" * 300_000)
    blob = raw_log(events)
    cut = blob.index(b"\n", blob.index(b"\n") + 1) + 1
    path.write_bytes(blob[:cut])
    tailer = Tailer(path)
    tailer.follow_from_end(HEADER)
    assert not tailer.poll()
    with open(path, "ab") as f:
        f.write(blob[cut:])
    before = _bytes_read()
    update = tailer.poll()
    read = _bytes_read() - before
    assert [e["seq"] for e in update.events] == list(range(1, 11)) and tailer.offset == len(blob)
    assert read < (len(blob) - cut) * 1.2, f"read {read} bytes to decode the {len(blob) - cut} appended"


def test_a_zstd_log_followed_from_the_end_is_read_from_its_start(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(zstd_log(one_turn_with_tool(), batch=4))
    tailer = Tailer(path)
    tailer.follow_from_end(HEADER)
    assert len(tailer.poll().events) == 11


class _Swapped(Tailer):
    """A tailer whose next stat is followed at once by ``swap`` (another file renamed over the log): the moment
    between a poll's stat and its read, held open."""

    swap: Callable[[], None] | None = None

    def _stat(self) -> FileState | None:
        st = super()._stat()
        if self.swap is not None:
            swap, self.swap = self.swap, None
            swap()
        return st


def _other_session(tmp_path: Path, path: Path) -> Callable[[], None]:
    """Renames a log of another session, longer than ``path``'s, over it."""
    other = tmp_path / "other.jsonl"
    other.write_bytes(raw_log(one_turn_with_tool("another output " * 20), {**HEADER, "id": "t-2"}))
    return lambda: os.replace(other, path)


def _replaced_whole(update: TailUpdate) -> None:
    assert update.reset and [d.code for d in update.diagnostics] == ["log-reset"], update.diagnostics
    assert "replaced by a new file" in update.diagnostics[0].message
    assert [e["seq"] for e in update.events] == list(range(11)) and update.header["id"] == "t-2"


def test_a_file_renamed_over_the_log_between_the_stat_and_the_read_is_not_read_as_the_old_one(tmp_path: Path) -> None:
    """A poll stat the log, then opened it again by name to read up to the size that stat gave: a file renamed over
    it in between was read from the old one's offset (or, as the old one rewritten, from its start) up to the old
    one's size. The read takes the file the stat measured or nothing; the next poll reads the new one whole."""
    path = tmp_path / "session.jsonl"
    events = one_turn_with_tool()
    path.write_bytes(raw_log(events[:3]))
    tailer = _Swapped(path)
    assert len(tailer.poll().events) == 3
    with open(path, "ab") as f:
        f.write(raw_log(events[3:])[len(raw_log([])) :])
    tailer.swap = _other_session(tmp_path, path)

    update = tailer.poll()

    assert not update.events and not update.diagnostics and not update.reset
    _replaced_whole(tailer.poll())


def test_a_file_renamed_over_the_log_before_following_from_its_end_starts_is_read_whole(tmp_path: Path) -> None:
    """Following from the end (a control wait) took the old file's end as an offset into the new one."""
    path = tmp_path / "session.jsonl"
    events = one_turn_with_tool()
    blob = raw_log(events)
    cut = blob.index(b"\n", blob.index(b"\n") + 1) + 1
    path.write_bytes(blob[:cut])
    tailer = _Swapped(path)
    tailer.follow_from_end(HEADER)
    with open(path, "ab") as f:
        f.write(blob[cut:])
    tailer.swap = _other_session(tmp_path, path)

    assert not tailer.poll()
    _replaced_whole(tailer.poll())
