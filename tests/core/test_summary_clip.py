"""``one_line`` collapses only a head of a long text, and gives exactly what collapsing all of it gives (control
characters shown as pictures); ``row_summaries`` gives each packed row member's ``summarize``."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from core.log.records import PackedRow
from core.read.summary import one_line, row_summaries, summarize
from core.shared.text import printable


def reference(text: str, limit: int) -> str:
    flat = printable(re.sub(r"\s+", " ", text).strip())  # a control character is one picture: lengths hold
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


pieces = st.sampled_from(["a", "bc", " ", "  ", "\n", "\t\t", "\u2003", "é", "x" * 50, " " * 300, "\n" * 900])


@settings(max_examples=300, deadline=None)
@given(st.lists(pieces, max_size=80).map("".join), st.integers(min_value=-3, max_value=130))
def test_one_line_equals_collapsing_the_whole_text(text: str, limit: int) -> None:
    assert one_line(text, limit) == reference(text, limit)


def test_one_line_of_a_multi_megabyte_text() -> None:
    text = "word " * 2_000_000
    assert one_line(text, 20) == reference(text, 20) == "word word word word…"


WHITESPACE = [chr(c) for c in range(0x110000) if re.fullmatch(r"\s", chr(c))]  # every one the regex engine knows


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(WHITESPACE), st.text(max_size=3)), max_size=60).map("".join),
       st.integers(min_value=1, max_value=40))  # fmt: skip
def test_one_line_collapses_every_unicode_whitespace_as_the_regex_engine_does(text: str, limit: int) -> None:
    assert one_line(text, limit) == reference(text, limit)


ROW_TEXT = st.lists(st.one_of(st.sampled_from([" ", "  ", "\n", "\t", "\x1b[2J", "\u2003", "\u202e", "'", '"', "\\", "é",
                                               "x" * 60]), st.text(max_size=4)), max_size=12).map("".join)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["text-chunks", "reasoning-chunks", "tool-call-chunks"]),
       st.one_of(st.just(...), st.none(), st.sampled_from(["", "bash", "a b", " x", "x ", "a  b", "\x07", "\u2003"])),
       st.lists(ROW_TEXT, min_size=1, max_size=6), st.integers(min_value=-3, max_value=130))  # fmt: skip
def test_row_summaries_are_each_members_summary(kind: str, name: object, texts: list[str], limit: int) -> None:
    data = {"texts" if kind != "tool-call-chunks" else "args": texts, "dt": [1] * (len(texts) - 1), "turn": 2,
            "step": 1, "index": 0, **({} if name is ... else {"name": name})}  # fmt: skip
    row = PackedRow({"type": kind, "data": data}, 40, 1000)
    assert row_summaries(row, limit) == [summarize(event, limit) for event in row.events()]
