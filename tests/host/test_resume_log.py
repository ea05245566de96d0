"""Reopening a log for appending never deletes an event a reader can see, and never lets two writers in."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from core.log.frames import frame_end
from core.log.reader import read_log
from core.log.repair import repair_log
from core.log.writer import DAMAGE_CODES, LOCK_NAME, DamagedLogError, SessionWriter, make_header
from core.shared.errors import LogFormatError, WriterLockedError


def _batches(n: int, size: int = 3) -> list[list[dict[str, Any]]]:
    return [
        [
            {"type": "tapedeck/note", "data": {"batch": b, "i": i, "text": f"event {b}.{i}"}}
            for i in range(size)
        ]
        for b in range(n)
    ]


def _log(tmp_path: Path, compressed: bool, batches: int = 6) -> Path:
    with SessionWriter.create(tmp_path, make_header("s", cwd="/a"), compressed=compressed) as writer:
        for batch in _batches(batches):
            writer.append(batch)
    return writer.path


def _frames(path: Path) -> list[tuple[int, int]]:
    data, pos, out = path.read_bytes(), 0, []
    while pos < len(data):
        end = frame_end(data, pos)
        assert end is not None
        out.append((pos, end))
        pos = end
    return out


def _corrupt_frame(path: Path, index: int, how: str) -> None:
    start, end = _frames(path)[index]
    data = bytearray(path.read_bytes())
    if how == "checksum":  # structure intact, content wrong
        data[end - 2] ^= 0xFF
    else:  # not a frame at all
        data[start : start + 4] = b"JUNK"
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["checksum", "magic"])
def test_resume_refuses_a_log_with_a_corrupt_frame_mid_file_and_keeps_every_byte(
    tmp_path: Path, how: str
) -> None:
    log = _log(tmp_path, compressed=True)
    _corrupt_frame(log, 3, how)
    before = log.read_bytes()

    with pytest.raises(LogFormatError, match=r"tapedeck repair") as raised:
        SessionWriter.resume(log)

    assert "damaged" in str(raised.value) and str(log) in str(raised.value)
    assert log.read_bytes() == before
    repair_log(log)  # the refusal released the lock: a repair can take it


@pytest.mark.parametrize("compressed", [False, True])
def test_repair_fills_the_hole_keeps_every_intact_event_and_a_copy(tmp_path: Path, compressed: bool) -> None:
    log = _log(tmp_path, compressed)
    if compressed:
        _corrupt_frame(log, 3, "checksum")  # frame 3 = batch 2 = seqs 6..8
    else:
        lines = log.read_bytes().splitlines(keepends=True)
        lines[8] = b'{"type":"tapedeck/note","seq":7,"ti\xff\n'  # line 8 = seq 7
        log.write_bytes(b"".join(lines))
    damaged = log.read_bytes()

    report = repair_log(log)

    assert report.backup.read_bytes() == damaged
    data = read_log(log)
    assert data.diagnostics == []
    assert [e["seq"] for e in data.events] == list(range(18))
    lost = [e["seq"] for e in data.events if e["type"] == "tapedeck/lost"]
    assert lost == ([6, 7, 8] if compressed else [7])
    intact = [e["data"] for e in data.events if e["type"] == "tapedeck/note"]
    expected = [b["data"] for batch in _batches(6) for b in batch]
    assert intact == [d for n, d in enumerate(expected) if n not in lost]
    writer, _ = SessionWriter.resume(log)
    writer.append([{"type": "tapedeck/note", "data": {}}])
    writer.close()
    assert read_log(log).events[-1]["seq"] == 18


def test_resume_refuses_a_raw_log_with_a_bad_line_mid_file(tmp_path: Path) -> None:
    log = _log(tmp_path, compressed=False)
    lines = log.read_bytes().splitlines(keepends=True)
    lines[5] = b"garbage\n"
    log.write_bytes(b"".join(lines))
    with pytest.raises(LogFormatError, match=r"tapedeck repair"):
        SessionWriter.resume(log)


def test_a_raw_last_line_without_its_newline_is_kept(tmp_path: Path) -> None:
    log = _log(tmp_path, compressed=False)
    log.write_bytes(log.read_bytes()[:-1])  # the final "\n" never reached the disk
    seen = read_log(log).events

    writer, data = SessionWriter.resume(log)
    writer.append([{"type": "tapedeck/note", "data": {"after": True}}])
    writer.close()

    final = read_log(log)
    assert data.events == seen and len(seen) == 18
    assert final.diagnostics == [] and final.events[:18] == seen and final.events[18]["seq"] == 18


def test_complete_lines_of_a_torn_final_frame_are_kept(tmp_path: Path) -> None:
    log = _log(tmp_path, compressed=True, batches=2)
    big = [{"type": "tapedeck/note", "data": {"i": i, "blob": os.urandom(40_000).hex()}} for i in range(6)]
    with SessionWriter.resume(log)[0] as writer:
        writer.append(big)  # one frame of several zstd blocks
    start, end = _frames(log)[-1]
    log.write_bytes(log.read_bytes()[: end - 30_000])  # killed while the frame was being written
    seen = read_log(log).events
    assert len(seen) > 6  # a reader already shows some events of the torn frame

    writer, data = SessionWriter.resume(log)
    writer.append([{"type": "tapedeck/note", "data": {"after": True}}])
    writer.close()

    final = read_log(log)
    assert data.events == seen
    assert final.diagnostics == [] and final.events[: len(seen)] == seen
    assert [e["seq"] for e in final.events] == list(range(len(seen) + 1))
    assert (
        len(zstandard.ZstdDecompressor().stream_reader(log.read_bytes(), read_across_frames=True).read()) > 0
    )


@pytest.mark.parametrize("compressed", [False, True])
def test_a_deleted_lock_file_does_not_let_a_second_writer_in(tmp_path: Path, compressed: bool) -> None:
    log = _log(tmp_path, compressed)
    first, _ = SessionWriter.resume(log)
    (log.parent / LOCK_NAME).unlink()

    with pytest.raises(WriterLockedError, match="already open for writing"):
        SessionWriter.resume(log)

    first.append([{"type": "tapedeck/note", "data": {}}])
    first.close()
    again, _ = SessionWriter.resume(log)
    again.close()
    assert [e["seq"] for e in read_log(log).events] == list(range(19))


def test_a_writer_whose_file_was_replaced_stops_appending(tmp_path: Path) -> None:
    log = _log(tmp_path, compressed=False)
    writer, _ = SessionWriter.resume(log)
    copy = log.with_name("copy")
    copy.write_bytes(log.read_bytes())
    os.replace(copy, log)

    with pytest.raises(LogFormatError, match="replaced"):
        writer.append([{"type": "tapedeck/note", "data": {}}])
    writer.close()


@pytest.mark.parametrize("compressed", [False, True])
def test_a_new_log_is_published_with_its_first_events(tmp_path: Path, compressed: bool) -> None:
    first = [{"type": "tapedeck/host", "data": {"tasks": ["t"], "workspace": "/a"}}]

    writer = SessionWriter.create(tmp_path, make_header("s", cwd="/a"), compressed=compressed, first=first)
    writer.close()

    data = read_log(writer.path)
    assert [e["type"] for e in data.events] == ["tapedeck/host"] and writer.next_seq == 1
    if compressed:  # the header alone in frame 1, then one frame for the batch
        assert len(_frames(writer.path)) == 2


def _spans(path: Path, compressed: bool) -> list[tuple[int, int]]:
    """Byte range of the line or frame holding each event, in seq order."""
    if compressed:
        return [span for span in _frames(path)[1:] for _ in range(3)]  # three events per batch frame
    spans, pos = [], 0
    for line in path.read_bytes().splitlines(keepends=True):
        spans.append((pos, pos + len(line)))
        pos += len(line)
    return spans[1:]


def test_a_torn_final_frame_holding_a_damaged_line_is_refused_untouched(tmp_path: Path) -> None:
    """The torn frame's complete lines are what a reader sees: one of them is not JSON, so the log is damaged
    before its end, and resume must refuse before it settles the tail (it used to rewrite the tail first)."""
    log = _log(tmp_path, compressed=True)
    frame = zstandard.ZstdCompressor(write_checksum=True).compress(b'not an event\n{"type": "tapedeck/note"')
    log.write_bytes(log.read_bytes() + frame[:-3])  # cut inside the checksum: every block is there, torn all the same
    before = log.read_bytes()

    with pytest.raises(DamagedLogError, match="bad-json"):
        SessionWriter.resume(log)
    assert log.read_bytes() == before


@settings(max_examples=60, deadline=None)
@given(compressed=st.booleans(), where=st.floats(0, 1), size=st.integers(1, 200), noise=st.binary(min_size=1))
def test_damage_anywhere_is_refused_untouched_or_repaired_keeping_every_intact_event(
    compressed: bool, where: float, size: int, noise: bytes
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log = _log(Path(tmp), compressed)
        original = read_log(log).events
        spans = _spans(log, compressed)
        data = bytearray(log.read_bytes())
        start = spans[0][0] + int(where * (len(data) - spans[0][0] - 1))
        end = min(len(data), start + size)
        fill = (noise * size)[: end - start] if compressed else b"\x00" * (end - start)  # raw: no checksum
        data[start:end] = fill
        log.write_bytes(bytes(data))
        seen = read_log(log).events
        try:
            writer, reopened = SessionWriter.resume(log)
        except DamagedLogError:
            assert log.read_bytes() == bytes(data)  # refused: not a byte changed
        else:
            writer.close()
            assert reopened.events == seen  # nothing a reader saw was cut
        repair_log(log)
        repaired = read_log(log)
        assert not [d for d in repaired.diagnostics if d.code in DAMAGE_CODES]
        assert [e["seq"] for e in repaired.events] == list(range(len(repaired.events)))
        gap = 0 if compressed else 1  # a raw line also needs the newline before it
        intact = [n for n, (a, b) in enumerate(spans) if b <= start or a - gap >= end]
        assert all(n < len(repaired.events) and repaired.events[n] == original[n] for n in intact)
        SessionWriter.resume(log)[0].close()


@settings(max_examples=40, deadline=None)
@given(compressed=st.booleans(), where=st.floats(0, 1), size=st.integers(1, 300), chunk=st.integers(1, 700))
def test_repair_reads_in_slices_of_any_size_with_the_same_result(
    compressed: bool, where: float, size: int, chunk: int
) -> None:
    """The repair never holds the file whole: slices of a few bytes give what one slice of the file gives."""
    with tempfile.TemporaryDirectory() as tmp:
        log = _log(Path(tmp), compressed, batches=12)
        data = bytearray(log.read_bytes())
        first = _spans(log, compressed)[0][0]
        start = first + int(where * (len(data) - first - 1))
        data[start : start + size] = (b"\xa5" * size)[: len(data) - start]
        results = []
        for step in (chunk, 1 << 30):
            log.write_bytes(bytes(data))
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr("core.log.repair.CHUNK", step)
                report = repair_log(log)
            results.append(([vars(h) for h in report.holes], report.events, read_log(log).events))
            if report.backup is not None:
                report.backup.unlink()  # the next run's copy may get the same name within the second
    assert results[0] == results[1]


def test_the_repair_command_a_damaged_log_names_can_be_pasted() -> None:
    """The refusal of a log damaged before its end named the repair command with the log's path as it is, so a
    session directory under a root with a space in its name ('my runs') gave a command that repairs no log, where
    the other commands tapedeck suggests (bridge install, sessions' DIR/*/) quote their path for the shell."""
    from core.log.writer import damage_message
    from core.shared.diagnostics import Diagnostic

    said = damage_message(Path("/srv/my runs/p/s/session.jsonl"), [Diagnostic("bad-json", "line 3 is not JSON", 99)])
    assert "Run `tapedeck repair '/srv/my runs/p/s/session.jsonl'`: it keeps" in said, said
