"""``emit_json_list_field`` writes one list of a payload a batch of items at a time, and ``JsonList`` a whole list (an
item or a few at a time), byte for byte what ``emit`` writes."""

from __future__ import annotations

import io
from collections.abc import Callable
from contextlib import redirect_stdout
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.cli.common import JsonList, emit, emit_json_list_field

_leaf = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=12)
_json = st.recursive(_leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=12)  # fmt: skip


def _out(write: Callable[[], None]) -> bytes:
    sink = io.BytesIO()
    out = io.TextIOWrapper(sink, encoding="utf-8", write_through=True)
    with redirect_stdout(out):
        write()
    out.flush()
    return sink.getvalue()


@settings(max_examples=60, deadline=None)
@given(
    before=st.dictionaries(st.text(max_size=8).filter(lambda k: k != "entries"), _json, max_size=3),
    items=st.lists(_json | st.text(min_size=1, max_size=3).map(lambda t: t * 25_000), max_size=6),  # past a batch
    after=_json,
    group=st.integers(1, 4),
)
def test_the_streamed_list_is_the_emitted_one(before: dict[str, Any], items: list[Any], after: Any, group: int) -> None:
    """Whatever the items and however many are dumped together."""
    payload = {**before, "entries": items, "later": {"entries": [], "text": '\n  "entries": []'}, "after": after}
    assert _out(lambda: emit_json_list_field(payload, "entries", group)) == _out(lambda: emit(payload, True, str))


def _listed(items: list[Any], groups: list[int]) -> None:
    """``items`` added one by one, but for each size in ``groups`` that many at once with ``extend`` (0: an empty
    one), in turns."""
    out = JsonList()
    rest, sizes = list(items), iter(groups)
    while rest:
        size = next(sizes, 1)
        if size == 1:
            out.add(rest.pop(0))
        else:
            out.extend(rest[:size])
            del rest[:size]
    out.close()


@settings(max_examples=80, deadline=None)
@given(items=st.lists(_json, max_size=6), groups=st.lists(st.integers(0, 4), max_size=4))
def test_a_list_printed_item_by_item_is_the_emitted_one(items: list[Any], groups: list[int]) -> None:
    """However many items go out in one ``extend``."""
    assert _out(lambda: _listed(items, groups)) == _out(lambda: emit(items, True, str))
    text = io.StringIO()  # a stdout without a byte buffer takes the text
    with redirect_stdout(text):
        _listed(items, groups)
    assert text.getvalue().encode() == _out(lambda: emit(items, True, str))
