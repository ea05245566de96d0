"""Feeding a log in arbitrary chunks gives exactly the state of a one-shot read (raw and zstd)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.log.decoder import LogDecoder
from core.log.validate import is_invalid
from tests.log.helpers import one_turn_with_tool, raw_log, zstd_log


def _decode(blob: bytes, compressed: bool, cuts: list[int]) -> tuple[list, list, dict | None]:
    decoder = LogDecoder("t", compressed)
    events, diags = [], []
    pos = 0
    for cut in sorted(set(c % (len(blob) + 1) for c in cuts)) + [len(blob)]:
        batch = decoder.feed(blob[pos:cut])
        events += batch.events
        diags += batch.diagnostics
        pos = max(pos, cut)
    batch = decoder.finish()
    return events + batch.events, [(d.code, d.seq) for d in diags + batch.diagnostics], decoder.header


texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300)
garbage = st.lists(st.binary(min_size=1, max_size=40).filter(lambda b: b"\n" not in b), max_size=3)


@settings(max_examples=150, deadline=None)
@given(text=texts, cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12), junk=garbage,
       torn=st.integers(min_value=0, max_value=30))  # fmt: skip
def test_raw_chunked_equals_one_shot(text: str, cuts: list[int], junk: list[bytes], torn: int) -> None:
    blob = raw_log(one_turn_with_tool(text))
    lines = blob.split(b"\n")
    # splice garbage lines after the header and tear the final line
    blob = b"\n".join([lines[0], *junk, *lines[1:]])
    blob = blob[: len(blob) - torn] if torn < len(blob) - len(lines[0]) else blob
    assert _decode(blob, False, cuts) == _decode(blob, False, [])


@settings(max_examples=100, deadline=None)
@given(text=texts, cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
       batch=st.integers(min_value=1, max_value=5), torn=st.integers(min_value=0, max_value=20))  # fmt: skip
def test_zstd_chunked_equals_one_shot(text: str, cuts: list[int], batch: int, torn: int) -> None:
    blob = zstd_log(one_turn_with_tool(text), batch=batch)
    blob = blob[: len(blob) - torn]
    assert _decode(blob, True, cuts) == _decode(blob, True, [])


def test_zstd_decodes_across_every_frame() -> None:
    events = one_turn_with_tool()
    got, diags, header = _decode(zstd_log(events, batch=2), True, [])
    assert got == events and diags == [] and header["id"] == "t-1"


def test_torn_and_garbage_lines_become_diagnostics() -> None:
    events = one_turn_with_tool()
    blob = raw_log(events)
    lines = blob.split(b"\n")
    blob = b"\n".join([lines[0], b"{not json", *lines[1:]])[:-10]
    got, diags, _ = _decode(blob, False, [])
    assert got == events[:-1]
    assert [code for code, _ in diags] == ["bad-json", "torn-line"]


def test_a_line_that_is_no_object_is_named_by_its_json_kind() -> None:
    """A line of JSON that is no object was named by its Python type: 'line holds a JSON str', 'int', 'NoneType'."""
    lines = raw_log([]).split(b"\n")[:1] + [b'"x"', b"5", b"1.5", b"null", b"true", b"[1]", b""]
    decoder = LogDecoder("t", False)
    said = [d.message for d in decoder.feed(b"\n".join(lines)).diagnostics]
    assert said == [f"line holds {kind}, not an event" for kind in
                    ("a string", "an integer", "a number", "null", "a boolean", "a list")]  # fmt: skip


def test_torn_final_frame_keeps_complete_frames() -> None:
    events = one_turn_with_tool()
    blob = zstd_log(events, batch=4)
    got, diags, _ = _decode(blob[:-5], True, [])
    assert got == events[:8]
    assert [code for code, _ in diags] == ["torn-frame"]


def test_corrupt_complete_frame_is_reported_and_skipped() -> None:
    events = one_turn_with_tool()
    blob = bytearray(zstd_log(events, batch=4))
    header_frame_len = len(zstd_log([], batch=4))
    blob[header_frame_len + 12] ^= 0xFF  # flip a byte inside the first batch frame
    got, diags, _ = _decode(bytes(blob), True, [])
    assert [code for code, _ in diags] == ["corrupt-frame", "seq-gap"]
    assert got == [dict(e, seq=e["seq"] - 4) for e in events[4:]]


def test_bad_header_is_fatal_with_file_name() -> None:
    decoder = LogDecoder("x.jsonl", False)
    decoder.feed(b'{"type":"session","version":3,"id":"s"}\n')
    assert decoder.fatal and "x.jsonl" in decoder.fatal and "v3" in decoder.fatal


def test_fixture_style_envelopes_are_synthesized_and_gaps_reported() -> None:
    decoder = LogDecoder("t", False)
    batch = decoder.feed(
        b'{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\n'
        b'{"type":"turn/start","seq":0,"time":5,"data":{"turn":1}}\n'
        b'{"type":"step/start","seq":2,"time":6,"data":{"turn":1,"step":1}}\n'
    )
    assert [e["seq"] for e in batch.events] == [0, 1]
    assert [d.code for d in batch.diagnostics] == ["seq-gap"]


def test_packed_rows_expand_with_times() -> None:
    decoder = LogDecoder("t", False)
    batch = decoder.feed(
        b'{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\n'
        b'{"type":"text-chunks","seq0":0,"time0":100,"data":{"turn":1,"step":1,"index":0,"dt":[3,-1],"texts":["a","b","c"]}}\n'
        b'{"type":"tool-call-chunks","seq0":3,"time0":200,"data":{"turn":1,"step":1,"index":1,"id":"k","name":"bash","dt":[1,1],"args":["{","}",""]}}\n'
    )
    assert [(e["seq"], e["time"]) for e in batch.events] == [
        (0, 100),
        (1, 103),
        (2, 102),
        (3, 200),
        (4, 201),
        (5, 202),
    ]
    assert batch.events[3]["data"]["chunk"] == {
        "type": "tool-call-delta",
        "index": 1,
        "id": "k",
        "name": "bash",
        "argumentsDelta": "{",
    }
    bad = decoder.feed(
        b'{"type":"text-chunks","seq0":6,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b","c"]}}\n'
    )
    assert [d.code for d in bad.diagnostics] == ["bad-row"]
    # the seqs the row claims (one per dt gap plus one) are kept, marked invalid
    assert [(e["seq"], is_invalid(e)) for e in bad.events] == [(6, True), (7, True)]


def test_legacy_shapes_are_upgraded() -> None:
    decoder = LogDecoder("t", False)
    batch = decoder.feed(
        b'{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}\n'
        b'{"type":"turn/start","data":{"turn":1,"trigger":{"kind":"user"}}}\n'
        b'{"type":"assistant/message","data":{"turn":1,"step":1,"content":[{"type":"text","text":"x"}],"provenance":{"provider":"p","model":"m"}},"surfaceOp":"append"}\n'
        b'{"type":"tool/result","data":{"turn":1,"step":1,"callId":"c","content":[{"type":"text","text":"o"}],"isError":false},"surfaceOp":"append"}\n'
        b'{"type":"turn/end","data":{"turn":1,"reason":{"kind":"disposed"}}}\n'
        b'{"type":"mystery/thing","data":{}}\n'
    )
    e = batch.events
    assert e[0]["data"] == {"turn": 1}
    assert e[1]["data"]["message"]["source"] == {"provider": "p", "model": "m", "kind": "model"}
    assert e[2]["data"]["message"]["content"][0]["toolCallId"] == "c"
    assert e[3]["data"]["reason"] == {"kind": "aborted", "reason": {"kind": "disposed"}}
    assert e[4]["type"] == "mystery/thing"
    assert [d.code for d in batch.diagnostics] == ["unknown-type"]


def test_a_value_a_diagnostic_names_reads_as_the_logs_json(tmp_path) -> None:
    """The readers' diagnostics quoted an event's type, a declared seq, a call id and a surfaceOp as Python writes
    them ('1'), whole (a 100,000-character type) and with their controls as Python's escapes: each reads as the log's
    JSON, cut, its controls as JSON escapes."""
    from core.read.load import load_session

    long = "k" * 100_000
    events = [
        {"type": long, "seq": 0, "time": 1, "data": {}},
        {"type": "turn/end", "seq": "1", "time": 1, "data": {"turn": 1}},
        {"type": "tool/result", "seq": 2, "time": 1, "surfaceOp": "append", "data": {"turn": 1, "step": 1,
         "message": {"role": "tool", "content": [], "source": {"callId": "c\x1b[2J"}}}},
        {"type": "tool/result", "seq": 3, "time": 1, "data": {}, "surfaceOp": long},
    ]  # fmt: skip
    log = tmp_path / "session.jsonl"
    log.write_bytes(raw_log(events))
    session = load_session(log)
    said = [d.message for d in session.diagnostics]
    assert said and all(len(m) < 300 and "\x1b" not in m and "'" not in m for m in said), said
    assert any('found "1"' in m for m in said) and any('call "c\\u001b[2J"' in m for m in said), said
