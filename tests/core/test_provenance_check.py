"""The provenance check (``sourceEventSeqs`` must name earlier events) accepts exactly lists of earlier seqs.

``Session`` checks it in C (an assistant message names every chunk it was streamed from); it must agree with
the plain definition on any JSON value: a list whose every item is an int (bools count, as ``isinstance``
says) from 0 to seq - 1.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.read.session import _earlier_seqs

item = st.one_of(
    st.integers(-3, 12), st.integers(-(2**70), 2**70), st.booleans(), st.floats(-2, 12), st.none(), st.text(max_size=2),
    st.lists(st.integers(0, 3), max_size=2), st.just(2**64), st.just(2**64 - 1),
)  # fmt: skip


@settings(max_examples=400)
@given(sources=st.one_of(st.lists(item, max_size=6), st.lists(st.integers(0, 12), max_size=6), item), seq=st.integers(0, 10))
def test_only_lists_of_earlier_seqs_pass(sources: Any, seq: int) -> None:
    expected = isinstance(sources, list) and all(isinstance(s, int) and 0 <= s < seq for s in sources)
    assert _earlier_seqs(sources, seq) is expected
