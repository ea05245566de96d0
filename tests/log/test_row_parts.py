"""``row_parts``' one-step check of a packed row against its check-by-check form, on rows of any JSON shape."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.log.records import PackedRow, RecordError, _checked_row_parts, row_parts
from core.log.validate import MAX_COUNTER

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-2, MAX_COUNTER + 2), st.floats(allow_nan=False), st.text(max_size=3)
)
ANY = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=2), max_leaves=4)
COUNTER = st.one_of(st.integers(0, 3), st.just(MAX_COUNTER), ANY)


@st.composite
def rows(draw: st.DrawFn) -> dict[str, Any]:
    """A packed row, mostly well-formed, with any field replaced, dropped or made of another JSON type."""
    kind = draw(st.sampled_from(["text-chunks", "reasoning-chunks", "tool-call-chunks"]))
    members = draw(st.one_of(st.lists(st.text(max_size=4), min_size=0, max_size=4), ANY))
    size = len(members) if isinstance(members, list) else 1
    dt = draw(st.one_of(st.lists(st.integers(-1, 30), min_size=max(size - 1, 0), max_size=max(size - 1, 0)), ANY))
    if isinstance(dt, list) and dt and draw(st.booleans()):
        dt[draw(st.integers(0, len(dt) - 1))] = draw(ANY)  # one member of another type: a bool, a float, a string …
    data: dict[str, Any] = {
        "turn": draw(COUNTER),
        "step": draw(COUNTER),
        "index": draw(COUNTER),
        "dt": dt,
        "args" if kind == "tool-call-chunks" else "texts": members,
    }
    if draw(st.booleans()):
        data["name"] = draw(st.one_of(st.text(max_size=3), ANY))
    for key in draw(st.lists(st.sampled_from(sorted(data)), max_size=2)):
        data.pop(key, None)
    return {"type": kind, "seq0": 1, "time0": 0, "data": draw(st.one_of(st.just(data), ANY))}


def parts_or_problem(check: Any, row: dict[str, Any]) -> Any:
    try:
        return check(row)
    except RecordError as exc:
        return str(exc)


@settings(max_examples=600)
@given(rows())
def test_the_one_step_check_agrees_with_the_check_by_check_form(row: dict[str, Any]) -> None:
    expected = parts_or_problem(lambda r: _checked_row_parts(r, r["type"]), row)
    assert parts_or_problem(row_parts, row) == expected


def test_a_well_formed_row_passes_both_and_a_bool_in_dt_fails_both() -> None:
    row = {"type": "text-chunks", "data": {"turn": 1, "step": 2, "index": 0, "dt": [3], "texts": ["ab", "c"]}}
    assert row_parts(row) == ("text-chunks", row["data"], ["ab", "c"], [3], 1, 2, 3)
    row["data"]["dt"] = [True]
    assert parts_or_problem(row_parts, row) == "malformed text-chunks row: dt must hold 1 integers"


@pytest.mark.parametrize(
    ("dt", "steady"), [([], None), ([0], (100, 100)), ([-3, 5, 0], (97, 102)), ([4, 2, -1], None), ([-9, -1], None)]
)
def test_a_rows_steady_clock_is_the_ends_of_its_times_after_the_first(
    dt: list[int], steady: tuple[int, int] | None
) -> None:
    """``steady`` tells the second and last of ``times()`` when the times from the second on never go back (the
    alert engine folds such a row by its ends), else None."""
    row = {"type": "text-chunks", "data": {"turn": 1, "step": 1, "index": 0, "dt": dt, "texts": ["x"] * (len(dt) + 1)}}
    packed = PackedRow(row, 0, 100)
    assert packed.steady() == steady
    rest = packed.times()[1:]
    assert (rest == sorted(rest) and len(rest) > 0) == (steady is not None)
    if steady is not None:
        assert steady == (rest[0], rest[-1])
