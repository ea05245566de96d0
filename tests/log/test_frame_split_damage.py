"""A zstd log's damage (garbage between frames, a frame whose blocks are corrupt, a torn last frame) is reported the
same however its bytes arrive: a tailer reading a growing ``.zst`` log feeds them in pieces cut anywhere, and must
get the events and diagnostics one feed of them all gives."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.log.decoder import LogDecoder
from tests.log.helpers import one_turn_with_tool, zstd_log

_EVENTS = one_turn_with_tool()
_LOG = zstd_log(_EVENTS, batch=2)
_HEADER_LEN = len(zstd_log([], batch=2))
_MAGIC = (0xFD2FB528).to_bytes(4, "little")


def _decoded(blob: bytes, cuts: list[int]) -> tuple[list[dict[str, Any]], list[tuple[Any, ...]], str | None]:
    """Events, diagnostics (all they say) and fatal message of ``blob`` fed in pieces cut at ``cuts``, then finished."""
    decoder = LogDecoder("t.jsonl.zst", True)
    events: list[dict[str, Any]] = []
    diags: list[tuple[Any, ...]] = []
    pos = 0
    for cut in [*sorted({c % (len(blob) + 1) for c in cuts}), len(blob)]:
        batch = decoder.feed(blob[pos:cut])
        events += batch.events
        diags += [(d.code, d.message, d.offset, d.seq) for d in batch.diagnostics]
        pos = cut
    batch = decoder.finish()
    events += batch.events
    diags += [(d.code, d.message, d.offset, d.seq) for d in batch.diagnostics]
    return events, diags, decoder.fatal


def _damaged(junk: list[tuple[int, bytes]], torn: int) -> bytes:
    """The log with each ``(at, bytes)`` of ``junk`` put in after its header frame, ``at`` bytes on (a frame boundary
    or not), and ``torn`` bytes cut from its end."""
    blob = bytearray(_LOG)
    for at, garbage in sorted(junk, reverse=True):
        where = _HEADER_LEN + at % (len(_LOG) - _HEADER_LEN + 1)
        blob[where:where] = garbage
    return bytes(blob[: max(_HEADER_LEN, len(blob) - torn)])


@settings(max_examples=300, deadline=None)
@given(
    junk=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=4_000),
            st.one_of(st.binary(min_size=1, max_size=30), st.just(_MAGIC[:3]), st.just(b"\x00" * 9)),
        ),
        max_size=3,
    ),
    torn=st.integers(min_value=0, max_value=40),
    cuts=st.lists(st.integers(min_value=0, max_value=4_000), max_size=10),
)
@example(junk=[(len(_LOG), b"junk at the end, in two feeds")], torn=0, cuts=[len(_LOG) + _HEADER_LEN + 5])
@example(junk=[(0, b"junk before a frame")], torn=0, cuts=[_HEADER_LEN + 21])  # the cut inside the next magic
def test_any_split_of_a_damaged_log_reads_as_one_feed(
    junk: list[tuple[int, bytes]], torn: int, cuts: list[int]
) -> None:
    blob = _damaged(junk, torn)
    assert _decoded(blob, cuts) == _decoded(blob, [])


def test_garbage_split_across_feeds_is_one_corrupt_span() -> None:
    """Garbage after the last frame, its second half in a later feed, was reported twice, each half at its offset."""
    junk = b"not a zstd frame, written after the last one"
    blob = _LOG + junk
    events, diags, fatal = _decoded(blob, [len(_LOG) + 10])
    assert events == _EVENTS and fatal is None
    assert diags == [
        (
            "corrupt-frame",
            f"bad zstd magic 0x{int.from_bytes(junk[:4], 'little'):08x}; {len(junk)} bytes skipped",
            len(_LOG),
            None,
        )
    ]


def test_garbage_then_a_frame_whose_magic_is_split() -> None:
    """Garbage before a frame, the feed cut inside that frame's magic: the frame was lost with the garbage."""
    junk = b"garbage"
    blob = _LOG[:_HEADER_LEN] + junk + _LOG[_HEADER_LEN:]
    events, diags, _ = _decoded(blob, [_HEADER_LEN + len(junk) + 2])
    assert events == _EVENTS
    assert [(code, offset) for code, _, offset, _ in diags] == [("corrupt-frame", _HEADER_LEN)]
