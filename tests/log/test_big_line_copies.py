"""A multi-MB line that the decoder parses in slices (with a ``pace``: the TUI's loader) is copied out of the data
fed once: the hot loop's line iteration (d35dc17) must not add copies of it on the way to ``_line``."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import zstandard

from core.log.decoder import LogDecoder

FIXTURE = Path(__file__).parents[1] / "fixtures" / "dsh" / "multi-turn.session.jsonl"
TEXT = 20_000_000


def _peak(compressed: bool, data: bytes) -> float:
    """The decoder's peak of traced memory over one feed and the finish, in lengths of the long line."""
    decoder = LogDecoder("big.jsonl.zst" if compressed else "big.jsonl", compressed, pace=lambda: None)
    tracemalloc.start()
    try:
        batch = decoder.feed(data)
        decoder.finish()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [event["type"] for event in batch.events] == ["user/message"]
    return peak / TEXT


def _log() -> bytes:
    header = FIXTURE.read_bytes().split(b"\n", 1)[0] + b"\n"
    big = b'{"type":"user/message","seq":1,"time":1,"data":{"text":"' + b"x" * TEXT + b'"}}\n'
    return header + big


def test_a_long_line_in_a_zstd_frame_is_copied_once_on_its_way_to_the_parser() -> None:
    frame = zstandard.ZstdCompressor().compress(_log())
    assert _peak(True, frame) < 4.5  # 5dea6ca: 4.0 (line, text, parse); d35dc17: 5.0 (raw[:-1] is one more)


def test_a_long_line_fed_whole_before_a_partial_one_is_copied_once() -> None:
    assert _peak(False, _log() + b'{"type":"turn/end"') < 3.5  # 5dea6ca: 3.0; d35dc17: 5.0 (data[:end], raw[:-1])
