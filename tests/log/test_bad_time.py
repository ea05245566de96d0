"""An event's ``time`` or a packed row's ``time0`` that is no integer (a string, a number with a fraction or past
64 bits, which orjson reads as a float, a boolean) is read as 0 and said so with a ``bad-time`` warning; the event
is kept, and projected as any other (a bad time breaks no reader once it is 0)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.cli import main
from core.log.decoder import LogDecoder
from core.log.validate import is_invalid
from tests.log.helpers import HEADER

_BAD = [
    (b'"noon"', "a string"),
    (b"1.5", "a number"),
    (b"100000000000000000000000000000", "a number"),  # past 64 bits: orjson reads it as a float
    (b"true", "a boolean"),
    (b"false", "a boolean"),
    (b"[1]", "a list"),
    (b'{"t":1}', "an object"),
]


def _log(time: bytes, time0: bytes) -> bytes:
    return b"\n".join(
        [
            orjson.dumps(HEADER),
            b'{"type":"turn/start","seq":0,"time":' + time + b',"data":{"turn":1}}',
            b'{"type":"text-chunks","seq0":1,"time0":'
            + time0
            + b',"data":{"turn":1,"step":1,"index":0,"dt":[3,4],"texts":["a","b","c"]}}',
            b'{"type":"turn/start","seq":4,"time":7,"data":{"turn":2}}',
            b"",
        ]
    )


@pytest.mark.parametrize(("value", "kind"), _BAD)
def test_a_time_that_is_no_integer_is_read_as_0_and_said(value: bytes, kind: str) -> None:
    batch = LogDecoder("t", False).feed(_log(value, value))
    said = [(d.code, d.message, d.offset, d.seq, d.severity) for d in batch.diagnostics]
    row_at = len(_log(value, value).split(b"\n")[0]) + 1 + len(_log(value, value).split(b"\n")[1]) + 1
    assert said == [
        ("bad-time", f"turn/start: time is {kind}, expected an integer; read as 0", len(orjson.dumps(HEADER)) + 1, 0,
         "warning"),
        ("bad-time", f"text-chunks: time0 is {kind}, expected an integer; read as 0", row_at, 1, "warning"),
    ]  # fmt: skip
    events = batch.events
    assert [(e["type"], e["seq"], e["time"]) for e in events] == [
        ("turn/start", 0, 0), ("assistant/chunk", 1, 0), ("assistant/chunk", 2, 3), ("assistant/chunk", 3, 7),
        ("turn/start", 4, 7),
    ]  # fmt: skip
    assert not any(is_invalid(e) for e in events)


def test_integer_and_absent_times_say_nothing() -> None:
    blob = _log(b"-5", b"9223372036854775808").replace(b',"time":7', b"")
    batch = LogDecoder("t", False).feed(blob)
    assert batch.diagnostics == []
    assert [e["time"] for e in batch.events][:2] == [-5, 9223372036854775808]


@settings(max_examples=100, deadline=None)
@given(value=st.one_of(st.text(max_size=8), st.floats(allow_nan=False, allow_infinity=False), st.booleans()))
def test_any_time_that_is_no_integer_is_said(value: object) -> None:
    """Whatever JSON value that is no integer a time holds, one ``bad-time`` for it, and the event at time 0."""
    raw = orjson.dumps(value)
    if (
        orjson.loads(raw).__class__ is int
    ):  # a float that JSON writes as an integer (1.0 is written 1.0: none)
        return
    batch = LogDecoder("t", False).feed(_log(raw, b"5"))
    assert [d.code for d in batch.diagnostics] == ["bad-time"]
    assert batch.events[0]["time"] == 0 and not is_invalid(batch.events[0])


def test_inspect_and_events_say_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "session.jsonl"
    log.write_bytes(_log(b'"noon"', b"true"))
    assert main(["inspect", str(log)]) == 0
    out = capsys.readouterr().out
    assert (
        "  warning: bad-time (seq 0, offset 87): turn/start: time is a string, expected an integer; read as 0\n"
        in out
    )
    assert (
        "  warning: bad-time (seq 1, offset 149): text-chunks: time0 is a boolean, expected an integer; read as 0\n"
        in out
    )
    assert "turn 1: " in out  # the turn it starts is projected
    assert main(["events", str(log)]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[2] for line in listed] == ["turn/start", *["assistant/chunk"] * 3, "turn/start"]
    assert "invalid" not in "".join(listed)
