"""The facts a screen lists (``core.read.facts``): what ``SessionFacts.observe`` records of an event."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from core.log.validate import mark
from core.read.facts import SessionFacts
from core.read.rows import is_error_event

_VALUE = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.text(max_size=6))
_REASON = st.one_of(
    _VALUE,
    st.fixed_dictionaries(
        {}, optional={"kind": st.one_of(st.sampled_from(["error", "stop", "length", "aborted"]), _VALUE),
                      "failure": st.one_of(_VALUE, st.fixed_dictionaries({"message": st.text(max_size=6)}))},
    ),
)  # fmt: skip


@given(reason=_REASON, with_reason=st.booleans(), ctype=st.sampled_from(["finish", "finish", "usage", "text-delta"]))
@example(reason={"kind": "error", "failure": {"message": "boom"}}, with_reason=True, ctype="finish")
@example(reason={"kind": "error"}, with_reason=True, ctype="finish")
@example(reason={"kind": "stop"}, with_reason=True, ctype="finish")
@example(reason="error", with_reason=True, ctype="finish")
def test_a_chunk_is_an_error_fact_exactly_when_it_is_a_valid_failed_finish(
    reason: Any, with_reason: bool, ctype: str
) -> None:
    """Of the chunks the general path sees (finishes and usage samples, deltas when observed), a finish is
    recorded as an error exactly when validation lets it through and ``is_error_event`` calls it one."""
    chunk: dict[str, Any] = {"type": ctype, **({"reason": reason} if with_reason else {})}
    event = {"type": "assistant/chunk", "seq": 7, "time": 0, "data": {"turn": 1, "step": 1, "chunk": chunk}}
    valid = mark(event) is None
    facts = SessionFacts.empty()
    facts.observe(event)
    assert facts.errors == ([7] if valid and is_error_event(event) else [])
    assert facts.state() == {**SessionFacts.empty().state(), "errors": facts.errors}
    told = SessionFacts.empty()  # what a read that writes the index tells of a chunk the general path took
    told.general_observers()["assistant/chunk"](event)
    assert told.state() == facts.state()
