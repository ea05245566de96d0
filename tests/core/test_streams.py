"""Streamed blocks: consecutive stream deltas of one step, grouped for the list (core.read.streams)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.log.reader import read_log
from core.read.load import load_session
from core.read.rows import BLOCK_GLYPH, block_row, build_row
from core.read.streams import (
    CHUNK_TYPE,
    Block,
    Collapsed,
    StreamBlocks,
    collapse_seqs,
    delta_chars,
    stream_blocks,
    stream_text,
)

# one row per seq: (is a chunk, turn, step, chars)
ROWS = st.lists(st.tuples(st.booleans(), st.integers(1, 2), st.integers(1, 2), st.integers(0, 50)), max_size=60)


def as_rows(rows: list[tuple[bool, int, int, int]]) -> list[tuple[int, str, int, int, int]]:
    return [(seq, CHUNK_TYPE if chunk else "step/start", t, s, c) for seq, (chunk, t, s, c) in enumerate(rows)]


@settings(max_examples=300)
@given(ROWS)
def test_blocks_partition_the_chunk_seqs_into_maximal_runs_of_one_step(rows: list) -> None:
    table = as_rows(rows)
    blocks = stream_blocks(table)
    members = [seq for b in blocks for seq in range(b.start, b.end)]
    assert members == [seq for seq, etype, *_ in table if etype == CHUNK_TYPE]  # every chunk once, in order
    for b in blocks:
        assert {(table[s][2], table[s][3]) for s in range(b.start, b.end)} == {(b.turn, b.step)}
        assert b.chars == sum(table[s][4] for s in range(b.start, b.end))
        after = table[b.end] if b.end < len(table) else None
        assert after is None or after[1] != CHUNK_TYPE or (after[2], after[3]) != (b.turn, b.step)  # maximal


@settings(max_examples=300)
@given(ROWS, st.data())
def test_packed_runs_give_the_same_blocks_as_single_deltas(rows: list, data: st.DataObject) -> None:
    table = as_rows(rows)
    packed = StreamBlocks()
    seq = 0
    while seq < len(table):  # runs of equal chunks added in one call, as a packed row is
        _, etype, turn, step, _ = table[seq]
        end = seq + 1
        while end < len(table) and table[end][1:4] == (etype, turn, step):
            end += 1
        end = data.draw(st.integers(seq + 1, end))
        if etype == CHUNK_TYPE:
            packed.add(seq, turn, step, end - seq, sum(r[4] for r in table[seq:end]))
        seq = end
    assert list(packed) == stream_blocks(table)


@settings(max_examples=300)
@given(ROWS, st.data())
def test_a_collapsed_list_shows_every_seq_but_later_block_members(rows: list, data: st.DataObject) -> None:
    table = as_rows(rows)
    blocks = StreamBlocks()
    for seq, etype, turn, step, chars in table:
        if etype == CHUNK_TYPE:
            blocks.add(seq, turn, step, 1, chars)
    stop = data.draw(st.integers(0, len(table)))
    hidden = {s for b in blocks for s in range(b.start + 1, b.end)}
    expected = [s for s in range(stop) if s not in hidden]
    view = Collapsed(blocks, stop)
    assert list(view) == expected and len(view) == len(expected)
    for pos, seq in enumerate(expected):
        assert view.position_of(seq) == pos
        assert view.is_head(seq) == (blocks.head_index(seq) is not None)
    for seq in range(stop):
        at = view.position_at_or_after(seq)
        i = blocks.index_of(seq)
        assert at is not None and view[at] == (seq if i is None else blocks.starts[i])
        if seq in hidden:
            assert view.position_of(seq) is None
    assert view.position_at_or_after(stop) is None
    assert collapse_seqs(range(stop), blocks) == expected


def test_a_view_stays_as_made_while_its_last_block_grows() -> None:
    blocks = StreamBlocks()
    blocks.add(0, 1, 1, 1, 0)  # a step/start would be seq 0 in a log; here the block starts the list
    blocks.add(1, 1, 1, 2, 5)
    view = Collapsed(blocks, 3)
    blocks.add(3, 1, 1, 4, 9)  # streaming on
    assert list(view) == [0] and len(Collapsed(blocks, 7)) == 1
    assert blocks.block(0).chars == 14 and blocks.block(0).deltas == 7


def test_delta_chars() -> None:
    assert delta_chars({"type": "text-delta", "text": "héllo"}) == 5
    assert delta_chars({"type": "tool-call-delta", "argumentsDelta": '{"a"'}) == 4
    assert delta_chars({"type": "finish", "reason": {"kind": "stop"}}) == 0
    assert delta_chars("nonsense") == 0


@pytest.mark.parametrize("name", ["code-mode-turn", "multi-turn", "cancel-tool-calls", "compaction-recovery"])
def test_the_projection_counts_packed_rows_as_their_members_would(fixtures_dir: Path, name: str) -> None:
    """Packed rows are added unexpanded (their size from the row); the blocks equal those of the expanded events."""
    log = fixtures_dir / f"{name}.session.jsonl"
    session = load_session(log)
    events = read_log(log).events  # every packed row expanded into events
    table = [
        (e["seq"], e["type"], e["data"].get("turn"), e["data"].get("step"), delta_chars(e["data"].get("chunk")))
        for e in events
    ]
    assert list(session.streams) == stream_blocks(table)
    assert sum(b.deltas for b in session.streams) == session.counts[CHUNK_TYPE]


def test_stream_text_joins_each_content_block_of_a_stream() -> None:
    def chunk(body: dict) -> dict:
        return {"type": "assistant/chunk", "data": {"turn": 1, "step": 1, "chunk": body}}

    chunks = [
        chunk({"type": "block-start", "index": 0, "blockType": "reasoning"}),
        chunk({"type": "reasoning-delta", "index": 0, "text": "think "}),
        chunk({"type": "reasoning-delta", "index": 0, "text": "hard"}),
        chunk({"type": "text-delta", "index": 1, "text": "Done."}),
        chunk({"type": "tool-call-delta", "index": 2, "id": "c1", "name": "bash", "argumentsDelta": '{"co'}),
        chunk({"type": "tool-call-delta", "index": 2, "id": "c1", "argumentsDelta": 'mmand":"ls"}'}),
        chunk({"type": "finish", "reason": {"kind": "tool-calls"}}),
    ]
    parts, read = stream_text(chunks)
    assert parts == [("reasoning", "think hard"), ("text", "Done."), ("tool call bash", '{"command":"ls"}')]
    assert read == len(chunks)
    parts, read = stream_text(chunks, limit=6)
    assert parts == [("reasoning", "think ")] and read == 2


@pytest.mark.parametrize("index", [{"type": "text", "text": 5}, [1, "a", None]])
def test_stream_text_reads_past_a_delta_whose_index_is_not_a_number(index: object) -> None:
    def chunk(body: dict) -> dict:
        return {"type": "assistant/chunk", "data": {"turn": 1, "step": 1, "chunk": body}}

    chunks = [chunk({"type": "text-delta", "index": 0, "text": "one "}),
              chunk({"type": "text-delta", "index": index, "text": "two"})]  # fmt: skip
    assert stream_text(chunks) == ([("text", "one "), ("text", "two")], 2)


@given(streaming=st.booleans(), error=st.booleans(), interrupted=st.booleans(), chars=st.integers(0, 10**6),
       deltas=st.integers(1, 500))  # fmt: skip
def test_a_block_row_is_its_head_with_the_block_s_glyph_summary_and_size(
    streaming: bool, error: bool, interrupted: bool, chars: int, deltas: int
) -> None:
    """``block_row`` keeps every field of its head that it does not set (it builds the row directly)."""
    head = build_row({"type": CHUNK_TYPE, "seq": 7, "time": 1_700_000_000_000, "data": {"turn": 2, "step": 3}})
    block = Block(7, 7 + deltas, 2, 3, chars)
    verb = "streaming…" if streaming else "streamed"
    expected = replace(head, glyph=BLOCK_GLYPH, summary=f"{verb} {chars} chars · {deltas} delta{'' if deltas == 1 else 's'}",
                       size=chars, unit="ch", error=error, interrupted=interrupted)  # fmt: skip
    assert block_row(head, block, streaming, error, interrupted) == expected
