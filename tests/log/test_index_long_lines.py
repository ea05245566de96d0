"""The offset index read in small slices, with lines far longer than a slice, equals a one-shot index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import core.log.index as index_module
from core.log.index import OffsetIndex
from core.log.reader import read_log
from tests.log.helpers import assistant, number, raw_log, tool_call, tool_result, user, zstd_log


def events_of(sizes: list[int], odd: list[bool]) -> list[dict[str, Any]]:
    """Turns whose tool results, prompts and packed rows have the given payload sizes."""
    events: list[dict[str, Any]] = []
    for k, (size, weird) in enumerate(zip(sizes, odd, strict=False), start=1):
        text = ('ab"c\\é\n' * (size // 7 + 1))[:size]
        start = {"type": "turn/start", "data": {"note": text, "turn": k} if weird else {"turn": k}}
        events += [start, {"type": "step/start", "data": {"turn": k, "step": 1}}, user(text)]
        events += [assistant(k, 1, text, [(f"c{k}", "read")]), tool_call(k, 1, f"c{k}", args='{"p": 1}')]
        events.append(tool_result(k, 1, f"c{k}", text, len(events) - 1))
        row_data: dict[str, Any] = {"turn": k, "step": 1, "index": 0}
        if weird:
            row_data["id"] = "i" * size  # the member list starts past a long head
        row_data.update(dt=[1, 1], texts=[text, "x", "y"])
        row = {"type": "text-chunks", "data": row_data}
        events += [row, {"type": "step/end", "data": {"turn": k, "step": 1}}]
        events.append({"type": "tapedeck/odd", "ignorable": True, "data": {"blob": text, "turn": k}})
    return number(events)


def snapshot(index: OffsetIndex) -> list[tuple[Any, ...]]:
    return [
        (index.type_of(n), index.turn_of(n), index.step_of(n), index.size_of(n), index.event(n))
        for n in range(len(index))
    ]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=3000), min_size=1, max_size=4),
    odd=st.lists(st.booleans(), min_size=4, max_size=4),
    chunk=st.integers(min_value=1, max_value=700),
    head=st.integers(min_value=8, max_value=400),
    compressed=st.booleans(),
)
def test_sliced_index_equals_one_shot(
    tmp_path: Path, sizes: list[int], odd: list[bool], chunk: int, head: int, compressed: bool
) -> None:
    events = events_of(sizes, odd)
    path = tmp_path / ("s.jsonl.zstd" if compressed else "s.jsonl")
    path.write_bytes(zstd_log(events, batch=2) if compressed else raw_log(events))
    whole = OffsetIndex(path, compressed)
    whole.extend()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(index_module, "CHUNK", chunk)
        mp.setattr(index_module, "ZSTD_CHUNK", chunk)
        mp.setattr(index_module, "LONG_LINE", chunk)
        mp.setattr(index_module, "HEAD", head)
        sliced = OffsetIndex(path, compressed)
        paced: list[int] = []
        sliced.extend(pace=lambda: paced.append(1))
    assert snapshot(sliced) == snapshot(whole)
    assert [sliced.event(n) for n in range(len(sliced))] == read_log(path).events
    assert paced  # the caller's pace ran between reads
