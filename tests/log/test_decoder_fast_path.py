"""The decoder's hot loop gives exactly what its careful per-line path gives, on any line.

``LogDecoder._lines`` hands a line that orjson parses into an object straight to the row/event code and sends
everything else (blank, torn, corrupt, non-object, header-like lines) through ``_line``. Fed hostile lines, the
fast loop must yield the same events and the same diagnostics (code, message, offset, seq, severity) as
``_line`` on each line alone; and a streaming load, which projects each item as the decoder hands it over, must
end in the projection of a one-shot read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.log.decoder import Consumer, DecodeBatch, LogDecoder
from core.log.reader import read_log
from core.log.records import PackedRow
from core.read.load import load_session
from core.read.session import Session
from tests.log.helpers import HEADER

ROW_TYPES = ["text-chunks", "reasoning-chunks", "tool-call-chunks"]
junk = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 5), st.floats(allow_nan=False), st.text(max_size=4),
    st.lists(st.integers(0, 3), max_size=3), st.dictionaries(st.sampled_from(["kind", "x"]), st.integers(-(2**40), 2**40), max_size=2),
)  # fmt: skip
small = st.one_of(st.integers(0, 4), junk)


@st.composite
def event_line(draw: st.DrawFn) -> dict[str, Any]:
    """An event whose every field may be missing, of the wrong type or out of place."""
    etype = draw(st.one_of(st.sampled_from([
        "assistant/chunk", "tool/result", "assistant/message", "user/message", "turn/start", "turn/end",
        "step/start", "request/header", "mode/set", "no/such", "team/x", "steering/message", "",
    ]), junk))  # fmt: skip
    data: dict[str, Any] = draw(st.dictionaries(st.sampled_from(["turn", "step", "reason", "header"]), small, max_size=3))
    if draw(st.booleans()):
        data["chunk"] = draw(st.one_of(junk, st.fixed_dictionaries(
            {"type": st.sampled_from(["usage", "finish", "text-delta"]), "usage": small, "reason": small})))  # fmt: skip
    if draw(st.booleans()):
        data["message"] = draw(st.one_of(junk, st.fixed_dictionaries(
            {"role": small, "content": st.one_of(junk, st.lists(junk, max_size=2)), "source": small})))  # fmt: skip
    event: dict[str, Any] = {"type": etype, "data": draw(st.one_of(st.just(data), junk))}
    for key, values in (("seq", small), ("time", small), ("surfaceOp", small), ("sourceEventSeqs", small),
                        ("ignorable", st.booleans()), ("invalid", small), ("extra", small)):  # fmt: skip
        if draw(st.integers(0, 3)) == 0:
            event[key] = draw(values)
    return event


@st.composite
def row_line(draw: st.DrawFn) -> dict[str, Any]:
    """A packed chunk row, often malformed (members, dt, counters, name)."""
    kind = draw(st.sampled_from(ROW_TYPES))
    pieces = draw(st.one_of(st.lists(st.text(max_size=3), max_size=4), junk, st.lists(junk, max_size=3)))
    data: dict[str, Any] = {"turn": draw(small), "step": draw(small), "index": draw(small)}
    data["args" if kind == "tool-call-chunks" else "texts"] = pieces
    data["dt"] = draw(st.one_of(st.lists(st.integers(0, 9), max_size=4), junk))
    if draw(st.booleans()):
        data["name"] = draw(small)
    row: dict[str, Any] = {"type": kind, "data": draw(st.one_of(st.just(data), junk))}
    if draw(st.booleans()):
        row["seq0"] = draw(small)
    if draw(st.booleans()):
        row["time0"] = draw(small)
    return row


raw_line = st.one_of(
    event_line().map(orjson.dumps),
    row_line().map(orjson.dumps),
    junk.map(orjson.dumps),  # JSON that is no object
    st.binary(max_size=30).filter(lambda b: b"\n" not in b),  # garbage, blank or torn lines
    st.sampled_from([b"", b"   ", b"\r", b'{"type":"turn/start"', b"\xef\xbb\xbf{}", b'{"a":1}\r']),
    event_line().map(lambda e: orjson.dumps(e) + b"\r"),
)


def _item(item: Any) -> Any:
    return ("row", item.seq0, item.count, item.turn, item.step, item.events()) if type(item) is PackedRow else item


def _careful(lines: list[bytes], lazy: bool) -> tuple[list[Any], list[tuple[Any, ...]]]:
    decoder = LogDecoder("t", False, consumer=Consumer(packed_rows=lazy))
    out = DecodeBatch()
    decoder.feed(orjson.dumps(HEADER) + b"\n")
    decoder._put = out.events.append  # the careful path, one line at a time
    offset = len(orjson.dumps(HEADER)) + 1
    for line in lines:
        decoder._line(line, offset, out)
        offset += len(line) + 1
    return [_item(i) for i in out.events], [tuple(d.to_dict().items()) for d in out.diagnostics]


def _fast(lines: list[bytes], lazy: bool, cut: int) -> tuple[list[Any], list[tuple[Any, ...]]]:
    decoder = LogDecoder("t", False, consumer=Consumer(packed_rows=lazy))
    blob = orjson.dumps(HEADER) + b"\n" + b"".join(line + b"\n" for line in lines)
    cut = cut % (len(blob) + 1)
    events, diags = [], []
    for piece in (blob[:cut], blob[cut:]):
        batch = decoder.feed(piece)
        events += batch.events
        diags += batch.diagnostics
    batch = decoder.finish()
    return [_item(i) for i in events + batch.events], [tuple(d.to_dict().items()) for d in diags + batch.diagnostics]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(raw_line, max_size=12), lazy=st.booleans(), cut=st.integers(0, 10_000))
def test_the_hot_loop_decodes_every_line_as_the_careful_path_does(lines: list[bytes], lazy: bool, cut: int) -> None:
    assert _fast(lines, lazy, cut) == _careful(lines, lazy)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(raw_line, max_size=12), torn=st.binary(max_size=8).filter(lambda b: b"\n" not in b))
def test_a_streaming_load_projects_what_a_one_shot_read_does(tmp_path: Path, lines: list[bytes], torn: bytes) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(orjson.dumps(HEADER) + b"\n" + b"".join(line + b"\n" for line in lines) + torn)
    data = read_log(path)
    full = Session(data.header, path=data.path)
    full.diagnostics.extend(data.diagnostics)
    for event in data.events:
        full.apply(event)
    seen: list[int] = []
    lazy = load_session(path, retain=False, observe=lambda s, item: seen.append(s.next_seq))
    assert seen == sorted(seen) and (not seen or seen[-1] == full.next_seq)
    for name in ("counts", "surface", "turns", "tool_calls", "results_by_step", "cuts", "diagnostics"):
        assert getattr(lazy, name) == getattr(full, name), name
    assert [lazy.turn_of(n) for n in range(full.next_seq)] == [full.turn_of(n) for n in range(full.next_seq)]
    assert [lazy.in_turn(n) for n in range(full.next_seq)] == [full.in_turn(n) for n in range(full.next_seq)]
