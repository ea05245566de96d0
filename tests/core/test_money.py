"""Dollar amounts as every report writes them (``cost``, the Markdown and HTML exports)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.shared.text import usd


def test_signs_and_rounding() -> None:
    assert usd(0.0301) == "$0.0301" and usd(-0.0301) == "-$0.0301"
    assert usd(-0.00004) == "$0.0000" and usd(-0.0) == "$0.0000"  # no "$-0.0000" for a net that rounds to nothing
    assert usd(None) == "n/a"


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False))
def test_the_amount_reads_back(value: float) -> None:
    text = usd(value)
    number = float(text.replace("$", ""))
    assert abs(number - value) <= 0.00005 + 1e-9 and "$-" not in text and text.count("$") == 1
