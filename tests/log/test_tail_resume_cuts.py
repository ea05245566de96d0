"""A tailer resumed at a file offset (``Tailer.resume``, as a log's index restores one) goes on exactly there: at
every point a decoder can stop at (a line's end, a frame's), the events before it and those the resumed tailer
reads make the log's events once each. ``events_at_end`` on a zstd log decodes each frame once, however far its
window grows."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.log import tail
from core.log.decoder import Consumer, LogDecoder
from core.log.tail import Tailer, events_at_end
from tests.conftest import FIXTURES
from tests.log.helpers import assistant, number, user, zstd_log

_FIXTURE = FIXTURES / "compaction-recovery.session.jsonl"


def _events(batches: list[Any]) -> list[dict[str, Any]]:
    return [event for batch in batches for event in batch.events]


def _stops(blob: bytes, compressed: bool) -> tuple[list[int], list[dict[str, Any]]]:
    """Every offset a decoder fed the log byte by byte (a frame at a time: zstd) stops at with nothing held, and
    the log's events read whole."""
    whole = LogDecoder("t", compressed)
    events = _events([whole.feed(blob), whole.finish()])
    probe = LogDecoder("t", compressed)
    stops = []
    for at in range(len(blob)):
        probe.feed(blob[at : at + 1])
        if probe.at_boundary and probe.header is not None:
            stops.append(at + 1)
    return stops, events


def _resumed_at(path: Path, blob: bytes, compressed: bool, offset: int) -> list[dict[str, Any]]:
    """The events of the log read to ``offset``, then those a tailer resumed there reads of the rest."""
    first = LogDecoder(str(path), compressed)
    before = _events([first.feed(blob[:offset])])
    assert first.at_boundary
    after: list[dict[str, Any]] = []
    tailer = Tailer(path, consumer=Consumer(event=after.append))
    tailer.resume(LogDecoder.resumed(str(path), compressed, first.state(), offset, tailer.consumer), offset)
    update = tailer.poll()
    assert update.reset is False and update.fatal is None and not update.diagnostics
    tailer.finish()
    assert tailer.offset == len(blob)
    return before + after


_RAW = _FIXTURE.read_bytes()
_RAW_STOPS, _RAW_EVENTS = _stops(_RAW, False)
_ZSTD = zstd_log(number([user(f"message {k}") for k in range(40)]), batch=3)
_ZSTD_STOPS, _ZSTD_EVENTS = _stops(_ZSTD, True)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pick=st.integers(min_value=0, max_value=10**6))
def test_resume_at_any_line_end_of_a_dsh_log_loses_and_doubles_nothing(tmp_path: Path, pick: int) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(_RAW)
    assert _resumed_at(path, _RAW, False, _RAW_STOPS[pick % len(_RAW_STOPS)]) == _RAW_EVENTS


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pick=st.integers(min_value=0, max_value=10**6))
def test_resume_at_any_frame_end_of_a_zstd_log_loses_and_doubles_nothing(tmp_path: Path, pick: int) -> None:
    path = tmp_path / "session.jsonl.zst"
    path.write_bytes(_ZSTD)
    assert _resumed_at(path, _ZSTD, True, _ZSTD_STOPS[pick % len(_ZSTD_STOPS)]) == _ZSTD_EVENTS


def test_events_at_end_decodes_each_frame_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window grows 4× from 64 KiB until ``n`` events are in; the frames of a smaller window were decoded again
    with each bigger one."""
    noise = random.Random(1)
    events = number([assistant(1, 1, noise.randbytes(150).hex()) for _ in range(3000)])
    blob = zstd_log(events, batch=2)
    path = tmp_path / "session.jsonl.zst"
    path.write_bytes(blob)
    frames = 1 + (len(events) + 1) // 2
    decoded: list[bytes] = []
    real = tail.decode_frame

    def counted(frame: bytes | memoryview) -> bytes:  # the public decoder, called through: only counted
        decoded.append(bytes(frame))
        return real(frame)

    monkeypatch.setattr(tail, "decode_frame", counted)
    got = events_at_end(path, 2000)
    assert got is not None and [e["seq"] for e in got] == list(range(1000, 3000))
    assert len(set(decoded)) == len(decoded) <= frames  # each frame once, never one twice
