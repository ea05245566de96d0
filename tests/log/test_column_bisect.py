"""``_Column.bisect_right``, the line table's look-up of the line holding a seq, answers as ``bisect.bisect_right``
over the column's rows, across its blocks and with rows past ``hi`` (a block's unfilled tail) left out."""

from __future__ import annotations

import bisect
from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from core.log.linestore import SHIFT, _Column

BLOCK = 1 << SHIFT
ROWS = [3 * i + (i % 5 == 0) for i in range(2 * BLOCK + BLOCK // 2)]  # ascending, over three blocks, gaps
COLUMN = _Column("Q")
COLUMN.put(0, array("Q", ROWS))


@settings(max_examples=300)
@given(
    value=st.integers(min_value=0, max_value=ROWS[-1] + 5)
    | st.sampled_from([ROWS[0], ROWS[BLOCK - 1], ROWS[BLOCK], ROWS[2 * BLOCK], ROWS[-1]]),
    hi=st.integers(min_value=0, max_value=len(ROWS))
    | st.sampled_from([1, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK]),
)
def test_bisect_right_answers_as_bisect_over_the_rows(value: int, hi: int) -> None:
    assert COLUMN.bisect_right(value, hi) == bisect.bisect_right(ROWS, value, 0, hi)


def test_a_first_block_not_full_yet() -> None:
    column = _Column("Q")
    column.put(0, array("Q", [0, 4, 9]))
    assert [column.bisect_right(v, 3) for v in (0, 3, 4, 8, 9, 100)] == [1, 1, 2, 2, 3, 3]
    assert column.bisect_right(100, 2) == 2 and column.bisect_right(5, 0) == 0
