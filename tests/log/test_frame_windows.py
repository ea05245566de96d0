"""A frame decoded as a stream (``DecodedFrame.pieces``) holds one window of what it decodes to while the reader
works on it: the window handed on, not that and the buffer it was copied from as well."""

from __future__ import annotations

import random
import tracemalloc

import pytest
import zstandard

from core.log import frames

WINDOW = 256 << 10


def test_a_streamed_frame_holds_one_window_while_a_piece_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frames, "WINDOW", WINDOW)
    rng = random.Random(3)
    text = b"".join(rng.randbytes(300).hex().encode() + b"\n" for _ in range(8000))  # 4.8 MB
    frame = frames.DecodedFrame(0, 1, None, source=zstandard.ZstdCompressor().compress(text))
    held: list[int] = []
    out: list[bytes] = []
    tracemalloc.start()
    try:
        for _, piece in frame.pieces():
            held.append(tracemalloc.get_traced_memory()[0])  # the reader at work on ``piece``
            out.append(piece)
            del piece
            held[-1] -= sum(map(len, out[:-1]))  # what the test keeps is not the frame's
    finally:
        tracemalloc.stop()
    assert b"".join(out) == text and len(out) > 10
    # the piece, and the decoder's own state (zstd's window of the frame: 128 KiB here); it held a copy more
    assert max(held) < WINDOW + (160 << 10), held
