"""A zstd log followed while it grows in pieces of any size (frames cut anywhere, a frame of many blocks cut between
and inside its blocks): the tailer gives the events and diagnostics of one read of the whole file, and each poll
costs what it brings, not the frame it extends (``bench/zstd_tail.py`` times it)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from core.log.reader import read_log
from core.log.tail import Tailer
from tests.log.helpers import HEADER, one_turn_with_tool, zstd_log
from tests.log.test_frame_stream import _lines_run, blocky_frame

texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200)


def _one_frame(text: str, block: int) -> bytes:
    """The log of ``one_turn_with_tool(text)`` as one frame, a block every ``block`` decoded bytes."""
    data = b"".join(orjson.dumps(line) + b"\n" for line in [HEADER, *one_turn_with_tool(text)])
    return blocky_frame([data[at : at + block] for at in range(0, len(data), block)])


def _followed(path: Path, blob: bytes, cuts: list[int]) -> tuple[list[dict], list[tuple[str, int | None]]]:
    """What a tailer polled after each append of ``blob`` cut at ``cuts`` (then finished) gives."""
    path.write_bytes(b"")
    tailer = Tailer(path)
    events: list[dict] = []
    codes: list[tuple[str, int | None]] = []
    pos = 0
    with path.open("ab", buffering=0) as f:
        for cut in [*sorted({c % (len(blob) + 1) for c in cuts}), len(blob)]:
            f.write(blob[pos:cut])
            pos = max(pos, cut)
            update = tailer.poll()
            events += update.events
            codes += [(d.code, d.seq) for d in update.diagnostics]
    update = tailer.finish()
    return events + update.events, codes + [(d.code, d.seq) for d in update.diagnostics]


@settings(max_examples=60, deadline=None)
@given(
    text=texts,
    shape=st.one_of(
        st.integers(1, 4).map(lambda batch: ("frames", batch)), st.integers(16, 400).map(lambda b: ("one", b))
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=20_000), max_size=25),
    torn=st.integers(min_value=0, max_value=12),
)
def test_a_zstd_log_followed_as_it_grows_gives_what_one_read_gives(
    text: str, shape: tuple[str, int], cuts: list[int], torn: int
) -> None:
    kind, size = shape
    blob = zstd_log(one_turn_with_tool(text), batch=size) if kind == "frames" else _one_frame(text, size)
    blob = blob[: len(blob) - torn]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "session.jsonl.zstd")
        path.write_bytes(blob)
        once = read_log(path)
        events, codes = _followed(Path(tmp, "grown.jsonl.zstd"), blob, cuts)
    assert events == once.events
    assert codes == [(d.code, d.seq) for d in once.diagnostics]


def test_a_poll_of_a_frame_growing_a_block_at_a_time_costs_the_block(tmp_path: Path) -> None:
    """A log written as one frame, a block flushed per append (``zstd`` compressing a growing file): each poll
    walked the frame's blocks from its start again, so following it cost the square of its blocks."""
    blocks = 300
    frame = blocky_frame([b"%d\n" % k for k in range(blocks)])
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(b"")
    tailer = Tailer(path)
    step = len(frame) // blocks
    work = []
    with path.open("ab", buffering=0) as f:
        for at in range(0, len(frame) - step, step):
            f.write(frame[at : at + step])
            work.append(_lines_run(tailer.poll))
    assert max(work[-20:]) <= 4 * max(work[:20]), (
        f"lines run by the first polls {work[:20]}, by the last {work[-20:]}"
    )
