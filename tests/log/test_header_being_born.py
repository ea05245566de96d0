"""``read_log_header`` on a file that ends inside its first line or frame: wait only for what can become a header."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

import pytest
import zstandard

import core.log.reader as reader
from core.log.reader import read_log_header
from core.shared.errors import LogFormatError, LogIncompleteError

HEADER = b'{"type":"session/header","data":{"version":0}}\n'


@pytest.mark.parametrize("head", [b"", b"  ", b"{", b'{"type":"sess', b"\n{"])
def test_the_start_of_a_json_object_is_a_log_being_born(tmp_path: Path, head: bytes) -> None:
    log = tmp_path / "session.jsonl"
    log.write_bytes(head)
    with pytest.raises(LogIncompleteError):
        read_log_header(log)


@pytest.mark.parametrize("head", [b"\x00\x01", b"[1,", b"\xef\xbb\xbf{", b"hello"])
def test_bytes_no_header_can_start_with_are_refused_at_once(tmp_path: Path, head: bytes) -> None:
    log = tmp_path / "session.jsonl"
    log.write_bytes(head)
    with pytest.raises(LogFormatError) as caught:
        read_log_header(log)
    assert not isinstance(caught.value, LogIncompleteError)
    assert "line 1" in str(caught.value)


def test_a_torn_first_zstd_frame_waits_and_a_foreign_one_does_not(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl.zstd"
    frame = zstandard.ZstdCompressor().compress(HEADER)
    log.write_bytes(frame[: len(frame) // 2])
    with pytest.raises(LogIncompleteError):
        read_log_header(log)
    log.write_bytes(b"PK\x03\x04")
    with pytest.raises(LogFormatError) as caught:
        read_log_header(log)
    assert not isinstance(caught.value, LogIncompleteError)


@pytest.mark.parametrize("compressed", [False, True])
def test_only_the_first_line_or_frame_is_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compressed: bool
) -> None:
    """The header is the first line: a zstd log's first frame (or a raw log's first line) is all that is decoded,
    not every frame (line) of the first 64 KiB read."""
    import core.log.frames as frames
    from core.log.decoder import LogDecoder
    from tests.conftest import FIXTURES

    lines = (FIXTURES / "multi-turn.session.jsonl").read_bytes().splitlines(keepends=True)
    if compressed:
        log = tmp_path / "session.jsonl.zstd"
        log.write_bytes(b"".join(zstandard.ZstdCompressor().compress(line) for line in lines))
    else:
        log = tmp_path / "session.jsonl"
        log.write_bytes(b"".join(lines))
    assert log.stat().st_size < 1 << 16 and len(lines) > 20
    decoded, fed = [], []
    real_decode, real_feed = frames.decode_frame, LogDecoder.feed
    monkeypatch.setattr(frames, "decode_frame", lambda frame: decoded.append(len(frame)) or real_decode(frame))
    monkeypatch.setattr(LogDecoder, "feed", lambda self, data: fed.append(len(data)) or real_feed(self, data))
    assert read_log_header(log)["type"] == "session"
    first = len(zstandard.ZstdCompressor().compress(lines[0])) if compressed else len(lines[0])
    assert sum(fed) == first
    assert decoded == ([first] if compressed else [])


@pytest.mark.parametrize("compressed", [False, True])
def test_a_header_that_ends_in_the_last_chunk_before_the_limit_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compressed: bool
) -> None:
    """Every byte read up to ``HEADER_LIMIT`` is looked at: a first line or frame whose end is in the chunk that
    reaches the limit is the header, not 'no complete first line'."""
    monkeypatch.setattr(reader, "HEADER_LIMIT", 1 << 17)
    padding = base64.b64encode(random.Random(1).randbytes(90_000)).decode()  # random: its zstd frame is about as long
    first = json.dumps({"type": "session", "version": 0, "id": "big", "padding": padding}).encode() + b"\n"
    unit = zstandard.ZstdCompressor().compress(first) if compressed else first
    assert 1 << 16 < len(unit) < 1 << 17
    log = tmp_path / ("session.jsonl.zstd" if compressed else "session.jsonl")
    log.write_bytes(unit + unit)
    assert read_log_header(log)["padding"] == padding
