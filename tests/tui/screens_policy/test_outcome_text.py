"""The outcome panel's line for a rewind, made from the outcome's ``detail`` as the log or the bridge's outcomes file
gives it: whatever JSON that holds, a line, never an exception in the screen that shows it."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import example, given
from hypothesis import strategies as st

from tui.screens.policy_screen import describe, rewind_outcome

# what orjson reads from a line: integers within 64 bits (a longer one reads as a float), finite floats
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6) | st.just("9" * 5000),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)  # fmt: skip
PREVIEW = st.fixed_dictionaries({}, optional={"stepsSince": JSON, "chars": JSON, "nodes": JSON, "seq": JSON})
DETAIL = st.fixed_dictionaries({}, optional={"foldedChars": JSON, "foldedNodes": JSON, "seq": JSON,
                                             "preview": PREVIEW | JSON})  # fmt: skip


@given(detail=DETAIL | JSON)
@example(detail={"preview": {"stepsSince": "two", "chars": 10}})  # ValueError out of int() before
@example(detail={"preview": {"stepsSince": 1, "chars": ["x"]}})  # TypeError
@example(detail={"preview": {"chars": "9" * 5000}})  # ValueError: more digits than int() takes
def test_any_rewind_detail_is_a_line(detail: Any) -> None:
    detail = orjson.loads(orjson.dumps(detail))  # as read back from a log
    line = rewind_outcome(detail)
    assert isinstance(line, str) and "\n" not in line or isinstance(detail, str)
    assert isinstance(describe(detail), str)


def test_a_valid_detail_reads_as_before() -> None:
    detail = {"foldedNodes": 22, "foldedChars": 8000, "seq": 802,
              "preview": {"nodes": 12, "chars": 4400, "seq": 780, "stepsSince": 2}}  # fmt: skip
    assert rewind_outcome(detail) == (
        "previewed 12 nodes / 4.4k chars at seq 780; applied 22 / 8.0k at seq 802: the agent ran 2 more steps"
    )
    detail["preview"]["stepsSince"] = 0
    assert rewind_outcome(detail).endswith(": nothing changed in between")


def test_one_node_is_one_node() -> None:
    """A rewind of one node read 'folded 1 nodes' and 'previewed 1 nodes'."""
    assert rewind_outcome({"foldedNodes": 1, "foldedChars": 10, "seq": 5}) == "folded 1 node / 10 chars"
    preview = {"nodes": 1, "chars": 10, "seq": 4, "stepsSince": 0}
    assert rewind_outcome({"foldedNodes": 1, "foldedChars": 10, "seq": 5, "preview": preview}) == (
        "previewed 1 node / 10 chars at seq 4; applied 1 / 10 at seq 5: nothing changed in between"
    )
