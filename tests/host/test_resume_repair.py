"""``tapedeck repair`` on damage that is not a torn or garbled line: odd seqs, swapped lines, unusable headers.

A repair keeps every intact line byte for byte and its output always resumes, through the resume path our
host takes (``SessionWriter.resume``, which ``AgentHost.resume`` opens the log with). A seq far beyond what the
file could hold is damage to that line, not a count of lost events; a header the readers refuse is refused
here too, the file untouched.
"""

from __future__ import annotations

import contextlib
import functools
import io
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.cli import main
from core.log.frames import frame_end
from core.log.reader import read_log
from core.log.repair import LOST_EVENT, repair_log
from core.log.writer import SessionWriter, make_header
from core.shared.errors import LogFormatError

EVENTS = 40


def _log(root: Path, events: int = EVENTS, compressed: bool = False) -> Path:
    with SessionWriter.create(root, make_header("s", cwd="/a"), compressed=compressed) as writer:
        for n in range(events):
            writer.append([{"type": "tapedeck/note", "data": {"n": n, "text": f"event {n} " + "x" * (n % 7)}}])
    return writer.path


@functools.cache
def _template(compressed: bool) -> tuple[Path, bytes]:
    """A fresh log of ``EVENTS`` notes, as its path under the root and its bytes: written once by the writer, whose
    40 fsyncs took 0.1-0.3 s a log, and put in place for each example of the property below."""
    with tempfile.TemporaryDirectory() as tmp:
        log = _log(Path(tmp), compressed=compressed)
        return log.relative_to(tmp), log.read_bytes()


def _copy_of_log(root: Path, compressed: bool) -> Path:
    """``_template``'s log, written under ``root``."""
    name, blob = _template(compressed)
    log = root / name
    log.parent.mkdir(parents=True)
    log.write_bytes(blob)
    return log


def _lines(path: Path) -> list[bytes]:
    """The log's lines (a zstd log's decompressed)."""
    blob = path.read_bytes()
    if path.suffix == ".zstd":
        blob = b"".join(_frames_text(blob))
    return blob.rstrip(b"\n").split(b"\n")


def _frames_text(data: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(data):
        end = frame_end(data, pos)
        assert end is not None
        out.append(zstandard.ZstdDecompressor().decompress(data[pos:end]))
        pos = end
    return out


def _put(path: Path, lines: list[bytes]) -> None:
    """Write ``lines`` back (a zstd log: the header in its own frame, then a frame per three lines)."""
    if path.suffix != ".zstd":
        path.write_bytes(b"\n".join(lines) + b"\n")
        return
    pack = zstandard.ZstdCompressor(write_checksum=True).compress
    frames = [lines[:1]] + [lines[n : n + 3] for n in range(1, len(lines), 3)]
    path.write_bytes(b"".join(pack(b"".join(line + b"\n" for line in frame)) for frame in frames))


def _with_seq(line: bytes, seq: Any) -> bytes:
    event = orjson.loads(line)
    event["seq"] = seq
    return orjson.dumps(event)


def _resumes(path: Path) -> None:
    writer, data = SessionWriter.resume(path)
    try:
        stored = writer.append([{"type": "tapedeck/note", "data": {"after": "repair"}}])
    finally:
        writer.close()
    assert stored[0]["seq"] == len(data.events)
    assert [e["seq"] for e in read_log(path).events] == list(range(len(data.events) + 1))


def _kept_in_order(repaired: Path, intact: list[bytes]) -> None:
    """Every intact line is a line of the repaired log, byte for byte, in seq order."""
    out = _lines(repaired)
    where = {line: n for n, line in enumerate(out)}
    assert all(line in where for line in intact)
    seqs = [orjson.loads(line)["seq"] for line in sorted(intact, key=where.__getitem__)]
    assert seqs == sorted(seqs)


def test_holes_are_reported_in_file_order(tmp_path: Path) -> None:
    """Damage before a line that repeats a seq (which is left out) was reported after a later seq gap, as the holes
    were listed in the order the lines after them were written, the left-out lines' at the end: the report lists
    them by offset, in the text and in --json."""
    log = _log(tmp_path)
    lines = _lines(log)
    _put(log, [*lines[:5], b"garbage", lines[4], *lines[5:20], *lines[21:]])  # seq 3 again after it; seq 19 lost

    report = repair_log(log)

    assert [(h.reason[:8], h.seqs) for h in report.holes] == [("not JSON", []), ("seq gap:", [19])]
    assert [h.offset for h in report.holes] == sorted(h.offset for h in report.holes)


def test_a_bad_line_in_a_zstd_frame_is_named_by_the_frames_bytes(tmp_path: Path) -> None:
    """A damaged line of a zstd log was a hole at its frame's offset as long as the line's decoded text, so a line
    of 100,001 bytes in a 2 KB log ran past the file's end, in the report and in its tapedeck/lost event; the hole
    is the frame that holds it, bytes of the file."""
    log = _log(tmp_path, compressed=True)
    lines = _lines(log)
    lines[10] = b"{" + b"x" * 100_000  # seq 9, in the frame of lines 10-12
    _put(log, lines)
    blob = log.read_bytes()
    frame = 0
    for _ in range(4):  # the header's frame, then three of three lines each
        frame = frame_end(blob, frame)

    report = repair_log(log)

    [hole] = report.holes
    assert (hole.offset, hole.length, hole.seqs) == (frame, frame_end(blob, frame) - frame, [9])
    [lost] = [e for e in read_log(log).events if e["type"] == LOST_EVENT]
    assert (lost["data"]["offset"], lost["data"]["bytes"]) == (hole.offset, hole.length)


@pytest.mark.parametrize("seq", [10**6, 10**12, 2**64 - 1])
def test_one_huge_seq_is_one_damaged_line_not_a_count_of_lost_events(tmp_path: Path, seq: int) -> None:
    log = _log(tmp_path)
    lines = _lines(log)
    lines[11] = _with_seq(lines[11], seq)  # event 10
    _put(log, lines)
    size = log.stat().st_size

    report = repair_log(log)

    assert log.stat().st_size < 2 * size
    events = read_log(log).events
    assert [e["seq"] for e in events] == list(range(EVENTS))
    assert [e["seq"] for e in events if e["type"] == LOST_EVENT] == [10]
    assert [h.seqs for h in report.holes] == [[10]]
    _kept_in_order(log, lines[1:11] + lines[12:])
    _resumes(log)


@pytest.mark.parametrize(("gone", "said"), [(1, "seq gap: seq 10 is missing"), (3, "seq gap: seqs 10-12 are missing")])
def test_a_seq_gap_names_the_seqs_it_lost(tmp_path: Path, gone: int, said: str) -> None:
    """One lost line was reported as 'seq gap: 10 to 10 missing'."""
    log = _log(tmp_path)
    lines = _lines(log)
    _put(log, lines[:11] + lines[11 + gone :])

    report = repair_log(log)

    assert [(h.reason, h.seqs) for h in report.holes] == [(said, list(range(10, 10 + gone)))]


def test_two_swapped_intact_lines_are_both_kept(tmp_path: Path) -> None:
    log = _log(tmp_path)
    lines = _lines(log)
    lines[6], lines[7] = lines[7], lines[6]
    _put(log, lines)

    repair_log(log)

    events = read_log(log).events
    assert [e["seq"] for e in events] == list(range(EVENTS)) and not [e for e in events if e["type"] == LOST_EVENT]
    _kept_in_order(log, lines[1:])
    _resumes(log)


@pytest.mark.parametrize("seq", ["7", 2**64, 7.5, True, None, -1])
def test_a_seq_resume_refuses_is_repaired(tmp_path: Path, seq: Any) -> None:
    log = _log(tmp_path)
    lines = _lines(log)
    event = orjson.loads(lines[8])  # event 7
    if seq is None:
        del event["seq"]
        lines[8] = orjson.dumps(event)
    else:
        lines[8] = orjson.dumps(event).replace(b'"seq":7', b'"seq":' + (b"18446744073709551616" if seq == 2**64 else orjson.dumps(seq)))
    _put(log, lines)
    with pytest.raises(LogFormatError):
        SessionWriter.resume(log)

    report = repair_log(log)

    assert report.backup is not None and [h.seqs for h in report.holes] == [[7]]
    _kept_in_order(log, lines[1:8] + lines[9:])
    _resumes(log)


def _run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, err.getvalue()


@pytest.mark.parametrize(
    ("header", "says"),
    [
        (lambda line: b"\xef\xbb\xbf" + line, "byte order mark"),
        (lambda line: line.replace(b'"version":0', b'"version":1'), "v1"),
        (lambda line: b"[1, 2]", "not a session header"),
        (lambda line: b'"session"', "not a session header"),
    ],
    ids=["bom", "version-1", "list", "string"],
)
def test_a_header_the_readers_refuse_is_refused_untouched(tmp_path: Path, header: Any, says: str) -> None:
    log = _log(tmp_path)
    lines = _lines(log)
    lines[0] = header(lines[0])
    lines[5] = b"garbage"  # damage a repair would otherwise mend
    _put(log, lines)
    before = log.read_bytes()

    rc, err = _run(["repair", str(log)])

    assert rc == 2 and says in err and err.count("\n") == 1, err
    assert log.read_bytes() == before
    assert [p.name for p in log.parent.iterdir() if "damaged" in p.name] == []


# --- the property -------------------------------------------------------------------------------------------

ODD_SEQS = st.one_of(
    st.integers(-5, 3 * EVENTS), st.sampled_from([10**6, 10**12, 2**63, 2**64 - 1]), st.text(max_size=3),
    st.floats(allow_nan=False, allow_infinity=False), st.booleans(), st.none(),
)  # fmt: skip
DAMAGE = st.one_of(
    st.tuples(st.just("garble"), st.integers(1, EVENTS), st.binary(min_size=1, max_size=30)),
    st.tuples(st.just("swap"), st.integers(1, EVENTS - 1), st.integers(1, 4)),
    st.tuples(st.just("seq"), st.integers(1, EVENTS), ODD_SEQS),
    st.tuples(st.just("drop"), st.integers(1, EVENTS), st.integers(1, 5)),
)


def _damage(lines: list[bytes], how: tuple[str, int, Any], touched: set[bytes]) -> None:
    kind, at, arg = how
    at = min(at, len(lines) - 1)
    if kind == "garble":
        touched.add(lines[at])
        lines[at] = lines[at][: len(lines[at]) // 2] + arg.replace(b"\n", b"")
    elif kind == "swap":
        other = min(len(lines) - 1, at + arg)
        lines[at], lines[other] = lines[other], lines[at]
    elif kind == "seq":
        try:
            event = orjson.loads(lines[at])
        except orjson.JSONDecodeError:
            return
        touched.add(lines[at])
        if arg is None:
            event.pop("seq", None)
        else:
            event["seq"] = arg if not isinstance(arg, int) or -(2**63) <= arg < 2**64 else str(arg)
        lines[at] = orjson.dumps(event)
    else:
        touched.update(lines[at : at + arg])
        del lines[at : at + arg]


@pytest.mark.parametrize(
    "damages",
    [
        [("garble", 38, b"\x00"), ("seq", 36, 36)],  # the relabelled twin comes first and jumps a seq to get there
        [("seq", 17, 17), ("seq", 19, 10**6)],  # the true twin's other neighbour is a far, damaged seq
    ],
    ids=["twin-first", "far-neighbour"],
)
def test_a_relabelled_twin_loses_to_the_line_that_fits(tmp_path: Path, damages: list[tuple[str, int, Any]]) -> None:
    log = _log(tmp_path)
    lines = _lines(log)
    original, touched = set(lines[1:]), set[bytes]()
    for how in damages:
        _damage(lines, how, touched)
    _put(log, lines)

    repair_log(log)

    _kept_in_order(log, [line for line in lines[1:] if line in original and line not in touched])
    _resumes(log)


def _claimed(line: bytes) -> int | None:
    """The seq a damaged line still claims, if it claims one a reader would take."""
    try:
        event = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    seq = event.get("seq") if isinstance(event, dict) else None
    return seq if type(seq) is int else None


@settings(max_examples=200, deadline=None)
@given(damages=st.lists(DAMAGE, min_size=1, max_size=4), compressed=st.booleans())
@example(damages=[("seq", 4, None), ("swap", 1, 3)], compressed=False)  # the first line lost its seq
def test_repair_keeps_every_intact_line_and_always_resumes(damages: list[tuple[str, int, Any]], compressed: bool) -> None:
    """Every intact line is kept, except where a damaged line claims the same seq: then the seqs alone cannot
    always tell which of the two is true (a swap can make the true one look out of place), one of them is kept,
    and the copy beside the log keeps both."""
    with tempfile.TemporaryDirectory() as tmp:
        log = _copy_of_log(Path(tmp), compressed)
        lines = _lines(log)
        original = set(lines[1:])
        touched: set[bytes] = set()
        for how in damages:
            _damage(lines, how, touched)
        _put(log, lines)
        damaged = log.read_bytes()
        intact = [line for line in lines[1:] if line in original and line not in touched]
        claimed = {_claimed(line) for line in lines[1:] if line not in original}
        contested = [line for line in intact if orjson.loads(line)["seq"] in claimed]

        report = repair_log(log)

        assert [h.offset for h in report.holes] == sorted(h.offset for h in report.holes)
        assert all(h.length >= 0 and h.offset + h.length <= len(damaged) for h in report.holes)
        kept = set(_lines(log))
        _kept_in_order(log, [line for line in intact if line not in contested or line in kept])
        for line in contested:
            seq = orjson.loads(line)["seq"]
            assert line in kept or any(_claimed(other) == seq for other in kept if other not in original)
        if contested and report.backup is not None:
            assert report.backup.read_bytes() == damaged
        _resumes(log)
