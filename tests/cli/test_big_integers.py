"""Integers at and past the 64 bits a log's JSON holds, in any integer field of a log: the commands that print a
log's events or what they add up to as JSON (``events``, ``inspect``, ``surface``, ``request``) answer without a
traceback. A packed row whose members' times (``time0`` plus the running sum of ``dt``) leave the integers orjson
writes is malformed, as a row with a bad ``dt`` is: its members print as invalid placeholders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.cli import main
from core.log.records import PackedRow, RecordError, decode_row
from tests.conftest import FIXTURES

LOW, HIGH = -(2**63), 2**64 - 1
HEADER = '{"type":"session","version":0,"id":"s1","createdAt":0,"cwd":"/x","delegationDepth":0}\n'
JSON_COMMANDS = [
    ["events", "--json"],
    ["inspect", "--json"],
    ["surface", "--json"],
    ["request", "--all", "--json"],
]


def _log(tmp_path: Path, *lines: dict[str, Any]) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text(HEADER + "".join(json.dumps(line) + "\n" for line in lines))
    return path


def _row(time0: int, dt: list[int]) -> dict[str, Any]:
    texts = ["m"] * (len(dt) + 1)
    return {
        "type": "text-chunks",
        "time0": time0,
        "data": {"turn": 1, "step": 1, "index": 0, "texts": texts, "dt": dt},
    }


@pytest.mark.parametrize(
    ("time0", "dt"), [(HIGH, [5]), (LOW, [-1]), (HIGH - 10, [4, 4, 4]), (0, [HIGH, HIGH, LOW])]
)
def test_events_json_on_a_row_whose_times_leave_64_bits_marks_it_malformed(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], time0: int, dt: list[int]
) -> None:
    """``events --json`` on such a row crashed with orjson's 'Integer exceeds 64-bit range'."""
    path = _log(tmp_path, {"type": "turn/start", "data": {"turn": 1}}, _row(time0, dt))
    assert main(["events", str(path), "--json"]) == 0
    events = orjson.loads(capsysbinary.readouterr().out)
    members = [e for e in events if e["type"] == "text-chunks"]
    assert len(members) == len(dt) + 1, events
    assert all("time0 plus the running sum of dt" in e["invalid"] for e in members), members


@pytest.mark.parametrize(
    ("time0", "dt"), [(HIGH, []), (LOW, []), (HIGH - 8, [4, 4, -8]), (LOW, [HIGH, -HIGH, HIGH])]
)
def test_a_row_whose_times_stay_in_64_bits_is_kept(time0: int, dt: list[int]) -> None:
    """Times at either end of the range, reached by any path, are times orjson writes: the row is well-formed."""
    row, problem = decode_row(_row(time0, dt), 0, time0)
    assert problem is None and isinstance(row, PackedRow)
    assert orjson.loads(orjson.dumps(row.events())) == row.events()


@settings(max_examples=300, deadline=None)
@given(
    st.integers(LOW, HIGH),
    st.lists(st.one_of(st.integers(-5, 5), st.integers(LOW, HIGH), st.sampled_from([LOW, HIGH])), max_size=6),
)
def test_a_row_is_refused_exactly_when_a_member_s_time_leaves_64_bits(time0: int, dt: list[int]) -> None:
    """The quick bound and the member-by-member check agree with the times themselves."""
    times = [time0]
    for gap in dt:
        times.append(times[-1] + gap)
    fits = all(LOW <= t <= HIGH for t in times)
    try:
        row = PackedRow(_row(time0, dt), 0, time0)
    except RecordError as exc:
        assert not fits and "time0 plus the running sum of dt" in str(exc)
    else:
        assert fits and row.times() == times


# integers at the edges of what a log's JSON holds, just past them (orjson reads those as floats), and far past
big = st.one_of(
    st.sampled_from([LOW, LOW - 1, HIGH, HIGH + 1, 2**63 - 1, 2**63, -(2**64), 2**80, -(2**80)]),
    st.integers(LOW - 2**65, HIGH + 2**65),
    st.integers(-3, 3),
)


def _filled(node: Any, draw: st.DrawFn) -> Any:
    """``node`` with each integer in it replaced, or not, by a drawn one."""
    if isinstance(node, dict):
        return {key: _filled(value, draw) for key, value in node.items()}
    if isinstance(node, list):
        return [_filled(value, draw) for value in node]
    if isinstance(node, int) and not isinstance(node, bool) and draw(st.booleans()):
        return draw(big)
    return node


@st.composite
def logs(draw: st.DrawFn) -> str:
    """A fixture log (text, tool-call and usage events, packed rows of every kind) with integers drawn into any of
    its integer fields, a time on every line and a ``time0`` on every row."""
    name = draw(st.sampled_from(["tool-call-turn", "code-mode-turn", "multi-turn"]))
    lines = [
        orjson.loads(line) for line in (FIXTURES / f"{name}.session.jsonl").read_bytes().splitlines() if line
    ]
    for line in lines[1:]:
        line["time0" if str(line.get("type", "")).endswith("-chunks") else "time"] = draw(big)
    return "".join(json.dumps(_filled(line, draw)) + "\n" for line in lines)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(logs())
def test_no_json_output_crashes_on_big_integers_anywhere(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch, log: str
) -> None:
    """Every JSON-printing reader answers (0, or 2 with a message) with JSON that parses, whatever integers lie in
    the log's fields."""
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "big.session.jsonl"
    path.write_text(log)
    for command in JSON_COMMANDS:
        code = main([command[0], str(path), *command[1:]])
        out = capsysbinary.readouterr()
        assert code in (0, 2), (command, code, out.err)
        if code == 0:
            orjson.loads(out.out)
        else:
            assert out.err.startswith(b"tapedeck: ") and b"Traceback" not in out.err, (command, out.err)
