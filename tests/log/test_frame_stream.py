"""``FrameStream``: compressed bytes fed in any pieces give the frames one feed of them all gives, and a feed costs
what it adds, not what the incomplete frame it extends already holds."""

from __future__ import annotations

import base64
import random
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import orjson
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st
from pytest import MonkeyPatch

from core.log import frames
from core.log.decoder import Consumer, DecodeBatch, LogDecoder
from core.log.frames import DecodedFrame, FrameStream
from tests.conftest import allocated_peak
from tests.log.helpers import HEADER, number, user


def blocky_frame(parts: list[bytes], checksum: bool = True) -> bytes:
    """One zstd frame with a block per part (each flushed as a block of its own), its size not in its header."""
    compressor = zstandard.ZstdCompressor(write_checksum=checksum, write_content_size=False).compressobj()
    out = b"".join(
        compressor.compress(part) + compressor.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK) for part in parts
    )
    return out + compressor.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH)


def skippable(payload: bytes) -> bytes:
    """A skippable frame around ``payload``."""
    return (0x184D2A50).to_bytes(4, "little") + len(payload).to_bytes(4, "little") + payload


def _seen(frame: DecodedFrame) -> tuple[Any, ...]:
    """What a frame says, with what its ``pieces`` decode to."""
    pieces = b"".join(piece for _, piece in frame.pieces()) if frame.error is None else None
    return frame.offset, frame.length, frame.error, pieces, frame.end


def _fed(blob: bytes, cuts: list[int], streamed: bool) -> tuple[list[tuple[Any, ...]], int, int]:
    stream = FrameStream(7, streamed=streamed)
    got: list[tuple[Any, ...]] = []
    pos = 0
    for cut in [*sorted({c % (len(blob) + 1) for c in cuts}), len(blob)]:
        got += map(_seen, stream.feed(blob[pos:cut]))
        pos = cut
    return got, stream.pending_offset, stream.pending


lines = st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"") + b"\n")
a_frame = st.one_of(
    st.builds(blocky_frame, st.lists(lines, min_size=1, max_size=8), st.booleans()),
    st.builds(lambda data: zstandard.ZstdCompressor(write_checksum=True).compress(data), lines),
    st.builds(skippable, st.binary(max_size=20)),
)


@settings(max_examples=300, deadline=None)
@given(
    blob=st.lists(a_frame, min_size=1, max_size=6).map(b"".join),
    cuts=st.lists(st.integers(min_value=0, max_value=2_000), max_size=20),
    torn=st.integers(min_value=0, max_value=12),
    streamed=st.booleans(),
)
def test_pieces_fed_one_by_one_give_the_frames_of_one_feed(
    blob: bytes, cuts: list[int], torn: int, streamed: bool
) -> None:
    blob = blob[: max(0, len(blob) - torn)]
    assert _fed(blob, cuts, streamed) == _fed(blob, [], streamed)


def _lines_run(call: Callable[[], object]) -> int:
    """How many lines of ``core/log/frames.py`` ``call`` runs."""
    count = 0

    def trace(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        if frame.f_code.co_filename != frames.__file__:
            return None
        if event == "line":
            count += 1
        return trace

    sys.settrace(trace)
    try:
        call()
    finally:
        sys.settrace(None)
    return count


def test_a_feed_walks_only_the_blocks_it_brings() -> None:
    """A frame of many blocks coming a block at a time (a writer that flushes each append): each feed walked the
    frame's block headers again from its start, so following it cost the square of its blocks."""
    blocks = 400
    frame = blocky_frame([b"%d\n" % k for k in range(blocks)])
    stream = FrameStream()
    step = len(frame) // blocks
    work = [
        _lines_run(lambda at=at: stream.feed(frame[at : at + step]))
        for at in range(0, len(frame) - step, step)
    ]
    (last,) = stream.feed(frame[len(work) * step :])
    assert last.data == b"".join(b"%d\n" % k for k in range(blocks))
    assert max(work[-20:]) <= 4 * max(work[:20]), (
        f"lines run by the first feeds {work[:20]}, by the last {work[-20:]}"
    )


def test_a_torn_final_frame_is_recovered_from_where_it_is_held_not_from_a_copy(
    monkeypatch: MonkeyPatch,
) -> None:
    """The decoder's ``finish`` handed the incomplete final frame to its recovery as a copy of the held-back bytes:
    a log written as one frame and cut short (``zstd FILE`` under way) was held twice while its lines were read."""
    monkeypatch.setattr(frames, "WINDOW", 256 << 10)  # the decoded side small beside the compressed one
    events = number([user(base64.b64encode(random.Random(k).randbytes(48_000)).decode()) for k in range(100)])
    compressor = zstandard.ZstdCompressor(level=1, write_checksum=True)
    body = compressor.compress(b"".join(orjson.dumps(event) + b"\n" for event in events))
    blob = compressor.compress(orjson.dumps(HEADER) + b"\n") + body[: len(body) - 100]
    seqs: list[int] = []
    decoder = LogDecoder("t", True, consumer=Consumer(event=lambda event: seqs.append(event["seq"])))
    decoder.feed(blob)
    held = len(body) - 100
    done: list[DecodeBatch] = []
    peak = allocated_peak(lambda: done.append(decoder.finish()))
    (torn,) = done[0].diagnostics
    assert torn.code == "torn-frame" and torn.message.endswith(f"recovered {len(seqs)} complete line(s)"), (
        torn
    )
    assert seqs == list(range(len(seqs))) and len(seqs) > 90
    assert peak < held // 2, f"finish held {peak:,} bytes at its peak for a torn frame of {held:,}"
