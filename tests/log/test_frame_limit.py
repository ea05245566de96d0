"""A zstd frame that decodes to more than a reader can hold: one whose header says so (a few KiB of run-length
blocks declaring 4 GiB) or one that does not say and decodes past ``FRAME_LIMIT``. Each is skipped as a
``corrupt-frame`` diagnostic naming its size (as the first frame, the log is refused, naming ``zstd -d``), never a
``MemoryError`` out of a reading command nor a wait while gigabytes are decoded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard

from core.cli import main
from core.log import frames
from core.log.frames import FrameStream, FrameTooLarge, decode_frame, recover_lines
from tests.log.helpers import one_turn_with_tool, raw_log, zstd_log

BLOCK = 128 << 10  # what one run-length block of four bytes decodes to


def rle_frame(blocks: int, byte: bytes = b" ", declared: int | None = None) -> bytes:
    """A zstd frame of ``blocks`` run-length blocks of ``byte``; its header says it decodes to ``declared`` bytes,
    or says nothing of its size (None)."""
    descriptor = ((3 << 6) if declared is not None else 0).to_bytes(1, "little")  # 8-byte size field, or none
    window = bytes([(17 - 10) << 3])  # a 128 KiB window
    size = declared.to_bytes(8, "little") if declared is not None else b""
    body = b"".join(
        ((BLOCK << 3) | (1 << 1) | (i == blocks - 1)).to_bytes(3, "little") + byte for i in range(blocks)
    )
    return zstandard.FRAME_HEADER + descriptor + window + size + body


def test_a_frame_declaring_gigabytes_after_the_header_is_a_diagnostic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log whose last frame says (truly) that it decodes to 4 GiB: the reading commands ran out of memory
    (``MemoryError``, a traceback) or decoded it for minutes; now they read the rest and name the frame."""
    log = tmp_path / "session.jsonl.zstd"
    log.write_bytes(zstd_log(one_turn_with_tool()) + rle_frame(1 << 15, declared=(1 << 15) * BLOCK))
    assert main(["inspect", str(log), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (said,) = [d["message"] for d in report["diagnostics"] if d["code"] == "corrupt-frame"]
    assert said.startswith("a zstd frame that decodes to 4,294,967,296 bytes, past the 1 GiB"), said
    assert report["turns"][0]["status"] == "completed"


def test_a_whole_log_in_one_frame_of_gigabytes_is_refused_naming_zstd_d(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first frame, as ``zstd FILE`` writes a whole log in one, past the limit: no header can be read, so the
    log is refused (exit 2) with the size and the way to read it."""
    log = tmp_path / "session.jsonl.zstd"
    log.write_bytes(rle_frame(1 << 15, declared=(1 << 15) * BLOCK))
    assert main(["events", str(log)]) == 2
    err = capsys.readouterr().err
    assert (
        "4,294,967,296 bytes" in err and "`zstd -d` the log to read it" in err and "Traceback" not in err
    ), err


def test_a_frame_that_does_not_say_its_size_is_stopped_at_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A frame with no size in its header is decoded until it passes the limit, then refused; one within the limit
    (and a torn one) decodes as before."""
    monkeypatch.setattr(frames, "FRAME_LIMIT", 4 * BLOCK)
    assert decode_frame(rle_frame(4, b"\n")) == b"\n" * (4 * BLOCK)
    with pytest.raises(FrameTooLarge, match="more than 524,288 bytes"):
        decode_frame(rle_frame(64))
    (frame,) = FrameStream().feed(rle_frame(64))
    assert (
        frame.data is None and frame.error is not None and frame.error.startswith("a zstd frame that decodes")
    )
    whole = rle_frame(64, b"\n")
    assert recover_lines(whole[: len(whole) - 4]) == b""
    assert recover_lines(rle_frame(4, b"\n")[:-4]) == b"\n" * (3 * BLOCK)


def test_frames_of_an_ordinary_log_decode_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same log, raw and in zstd frames (with and without their sizes), reads the same."""
    events = one_turn_with_tool()
    raw, packed = tmp_path / "raw" / "session.jsonl", tmp_path / "zstd" / "session.jsonl.zstd"
    for path, data in ((raw, raw_log(events)), (packed, zstd_log(events))):
        path.parent.mkdir()
        path.write_bytes(data)
    outputs = []
    for path in (raw, packed):
        assert main(["events", str(path), "--json"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    sizeless = zstandard.ZstdCompressor(write_content_size=False).compress(raw_log(events))
    assert zstandard.frame_content_size(sizeless) == -1 and decode_frame(sizeless) == raw_log(events)
