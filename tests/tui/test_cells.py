"""The one cutting helper every table uses (``tui.cells``): text in a number of terminal cells, and the columns
that fit a width."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from tui.cells import cut, cut_middle, cut_start, ending, fitting

WIDE = st.text(st.sampled_from("ab.c_D报告🚀é"), max_size=40)


@given(text=WIDE, room=st.integers(0, 45), tail=st.sampled_from(["", " (abc12345)"]))
def test_cut_fits_its_room_and_keeps_the_tail(text: str, room: int, tail: str) -> None:
    out = cut(text, room, tail)
    assert cell_len(out) <= room
    if cell_len(text + tail) <= room:
        assert out == text + tail
    elif room == 0:
        assert out == ""
    else:
        assert "…" in out
        if cell_len(tail) < room:
            assert out.endswith("…" + tail) and text.startswith(out[: -1 - len(tail)])


@given(text=WIDE, room=st.integers(0, 45))
def test_cut_middle_fits_its_room_and_keeps_both_ends(text: str, room: int) -> None:
    out = cut_middle(text, room)
    assert cell_len(out) <= room
    if cell_len(text) <= room:
        assert out == text
    elif room >= 1:
        head, _, end = out.partition("…")
        assert text.startswith(head) and text.endswith(end)
        assert cell_len(out) >= room - 1  # a wide character that does not fit leaves one cell at most


@given(text=WIDE, room=st.integers(1, 45))
def test_cut_start_keeps_the_end_of_a_path(text: str, room: int) -> None:
    out = cut_start(text, room)
    assert cell_len(out) <= room
    if cell_len(text) <= room:
        assert out == text
    else:
        assert out.startswith("…") and text.endswith(out[1:]) and cell_len(out) >= room - 1


@given(text=WIDE, room=st.integers(0, 45))
def test_ending_is_the_longest_end_that_fits(text: str, room: int) -> None:
    end = ending(text, room)
    assert text.endswith(end) and cell_len(end) <= room
    assert end == text or cell_len(text[len(text) - len(end) - 1 :]) > room


def test_cut_start_and_cut_middle_never_split_a_wide_character() -> None:
    assert cut_start("logs/报告.txt", 7) == "…告.txt"
    assert cut_start("logs/报告.txt", 6) == "….txt"  # 告 would take the sixth cell and a seventh
    assert cut_start("报告", 2) == "…"  # the last character takes two cells: one is left
    assert cut_middle("报告报告报告", 6) == "报…告"


def test_cut_middle_tells_apart_keys_that_differ_at_their_end() -> None:
    a, b = "slice.digest.structuredBlockCap", "slice.digest.structuredBlockMin"
    assert cut_middle(a, 12) != cut_middle(b, 12)
    assert cut_middle(a, 12) == "slice…ockCap"


def test_fitting_leaves_out_the_least_needed_first() -> None:
    widths = {"a": 10, "b": 10, "c": 10, "d": 10}
    assert fitting(widths, 40, ("d", "b")) == ["a", "b", "c", "d"]
    assert fitting(widths, 39, ("d", "b")) == ["a", "b", "c"]
    assert fitting(widths, 20, ("d", "b")) == ["a", "c"]
    assert fitting(widths, 5, ("d", "b")) == ["a", "c"]  # the others stay, whatever the room
