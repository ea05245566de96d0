"""A line read back from a zstd log decodes its frame only as far as the line: from the frame's start to the
line's newline (or, for ``line_facts``, its head), not the whole frame, which for a log written as one frame
(``zstd FILE``) is the whole log. Lines read in order go on from where the last one stopped."""

from __future__ import annotations

import random
from collections import deque
from pathlib import Path

import orjson
import pytest
import zstandard

from core.log import frames
from core.log.linestore import LineStore
from core.read.load import load_session
from tests.conftest import allocated_peak
from tests.log.helpers import HEADER, one_turn_with_tool

SMALL_WINDOW = 64 << 10  # decoded bytes kept before the last line read: far less than the frame
TURNS = 400  # about 3 MB of lines, 8 KB a tool result


@pytest.fixture(scope="module")
def one_frame(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """A log of ``TURNS`` turns written as one checksummed zstd frame, and its events as a retaining load has them."""
    rng = random.Random(7)  # results of hex digits: about 2 bytes of text a compressed byte, as logs go
    events = [e for _ in range(TURNS) for e in one_turn_with_tool(rng.randbytes(4000).hex())]
    body = orjson.dumps(HEADER) + b"\n" + b"".join(orjson.dumps(e) + b"\n" for e in events)
    assert len(body) > 3_000_000
    path = tmp_path_factory.mktemp("one-frame") / "session.jsonl.zstd"
    path.write_bytes(zstandard.ZstdCompressor(write_checksum=True).compress(body))
    return path, list(load_session(path).events)


def _store(path: Path) -> LineStore:
    store = load_session(path, retain=False, readback=True).events
    assert isinstance(store, LineStore)
    return store


def test_an_early_line_is_read_back_without_decoding_the_rest_of_its_frame(
    one_frame: tuple[Path, list[dict]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading back an event near the start of a 3 MB frame holds a few of its lines, not all it decodes to; one
    half way in, a window of it."""
    monkeypatch.setattr(frames, "WINDOW", SMALL_WINDOW)
    path, kept = one_frame
    store = _store(path)
    assert allocated_peak(lambda: store.raw(5)) < 1_000_000  # a block of the file read (256 KiB), a few lines decoded
    assert store.raw(5) == kept[5]
    assert allocated_peak(lambda: store.line_facts(len(kept) // 2)) < 1_000_000


def test_lines_read_in_order_and_out_of_order_are_the_events(
    one_frame: tuple[Path, list[dict]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scan in order (which goes on from the last line read, holding a window) and reads back and forth give
    the events a retaining load holds."""
    monkeypatch.setattr(frames, "WINDOW", SMALL_WINDOW)
    path, kept = one_frame
    store = _store(path)
    peak = allocated_peak(lambda: deque(store.iter_raw(0, len(kept)), maxlen=0))
    assert peak < 1_000_000
    assert list(store.iter_raw(0, len(kept))) == kept
    for n in [len(kept) - 1, 3, len(kept) // 2, 0, len(kept) // 2 + 1, len(kept) // 3]:
        assert store.raw(n) == kept[n]
