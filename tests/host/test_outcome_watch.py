"""``control --wait`` reads its request's outcome back from the session log: whatever a damaged or forged
``tapedeck/control`` event there holds, the watch answers (the outcome, or none yet), never an exception."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.control.outcome import OutcomeWatch

HEADER = b'{"type":"session","version":0,"id":"x"}\n'
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
OUTCOME = st.fixed_dictionaries(
    {"requestId": st.sampled_from(["r1", "r2"]) | JSON},
    optional={"outcome": st.sampled_from(["applied", "rejected", "pending"]) | JSON, "detail": JSON, "op": JSON},
)


@settings(max_examples=200, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.lists(JSON | OUTCOME, min_size=1, max_size=4))
def test_no_control_event_in_the_log_raises_out_of_the_wait(tmp_path: Path, data: list[Any]) -> None:
    """An event whose data was no object (a list, a string, a number) raised AttributeError out of the wait."""
    log = tmp_path / "session.jsonl"
    log.write_bytes(HEADER + b"".join(orjson.dumps({"type": "tapedeck/control", "seq": n, "data": d}) + b"\n"
                                      for n, d in enumerate(data, 1)))  # fmt: skip
    event = OutcomeWatch(log, "r1").wait(0)
    assert event is None or event["data"]["requestId"] == "r1"
