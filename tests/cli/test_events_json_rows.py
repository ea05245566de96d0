"""``events --json`` writes a packed row's members from the row itself (its fixed part dumped once, each member's
seq, time and delta put in), not by building an event dict per member and dumping those: the same bytes, with
one dict made per row instead of one per delta (nearly every event of a log is a delta)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.gen_session import generate
from core.cli import common, main
from core.cli.common import dumps_indented
from core.log.records import PackedRow

# deltas and names with what JSON escapes, what ``inert`` escapes (DEL, C1, BiDi, U+2028), a surrogate and a ``%``
texts = st.lists(
    st.sampled_from(
        [
            "a",
            " ",
            "\n",
            '"',
            "\\",
            "%",
            "%d",
            "\x00",
            "\x7f",
            "\x85",
            "\u202e",
            "\u2028",
            "é",
            "🙂",
            "\ud800",
        ]
    ),
    max_size=8,
).map("".join)
names = st.one_of(
    st.none(),
    texts,
    st.integers(-(2**63), 2**64 - 1),
    st.lists(st.integers(-(2**63), 2**64 - 1), max_size=3),
    st.dictionaries(texts, texts, max_size=2),
)


@st.composite
def rows(draw: st.DrawFn) -> tuple[dict[str, Any], int, int]:
    kind = draw(st.sampled_from(["text-chunks", "reasoning-chunks", "tool-call-chunks"]))
    pieces = draw(st.lists(texts, min_size=1, max_size=6))
    data: dict[str, Any] = {"turn": draw(st.integers(0, 99)), "step": draw(st.integers(0, 99))}
    data["index"] = draw(st.one_of(st.integers(0, 5), st.integers(-(2**63), 2**64 - 1)))
    if kind == "tool-call-chunks":
        if draw(st.booleans()):
            data["id"] = draw(names)
        if draw(st.booleans()):
            data["name"] = draw(st.one_of(st.none(), texts))
    data["dt"] = draw(
        st.lists(st.integers(-(10**6), 10**12), min_size=len(pieces) - 1, max_size=len(pieces) - 1)
    )
    data["args" if kind == "tool-call-chunks" else "texts"] = pieces
    seq0 = draw(st.integers(0, 10**9))
    time0 = draw(st.integers(-(10**12), 10**15))
    return {"type": kind, "data": data}, seq0, time0


@settings(max_examples=300, deadline=None)
@given(rows())
def test_a_row_s_members_are_the_bytes_its_events_dump_to(drawn: tuple[dict[str, Any], int, int]) -> None:
    """Whatever its kind, index, id, name, deltas and times, a row's members come out as its events dump to, in
    pieces of any size."""
    from core.cli.common import row_members

    row = PackedRow(*drawn)
    dumped = dumps_indented(row.events())
    assert b",".join(map(bytes, row_members(row))) == dumped[1 : len(dumped) - 2]
    pieces = common.ROW_MEMBERS
    # pieces of two members (set here, not by a fixture: hypothesis runs this test many times in one)
    common.ROW_MEMBERS = 2
    try:
        assert b",".join(map(bytes, row_members(row))) == dumped[1 : len(dumped) - 2]
    finally:
        common.ROW_MEMBERS = pieces


def test_events_json_builds_one_event_a_row_not_one_a_delta(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a generated log, ``events --json`` prints what dumping every member's event prints, and makes an event
    dict for at most one member of each row."""
    path = tmp_path / "session.jsonl"
    generate(path, 400_000, seed=3, profile="mixed")
    made: list[int] = []
    event = PackedRow.event

    def counted(self: PackedRow, k: int) -> dict[str, Any]:
        made.append(k)
        return event(self, k)

    monkeypatch.setattr(PackedRow, "event", counted)
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["events", str(path), "--json"]) == 0
    printed = capsysbinary.readouterr().out
    events = orjson.loads(printed)
    rows = sum(1 for line in path.read_bytes().splitlines() if b'-chunks"' in line[:30])
    deltas = sum(1 for e in events if e["type"] == "assistant/chunk")
    assert rows > 50 and deltas > 10 * rows, (rows, deltas)
    assert len(made) <= rows, (len(made), rows, deltas)
    monkeypatch.setattr(PackedRow, "event", event)
    assert printed == dumps_indented(events) + b"\n"
