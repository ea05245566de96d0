"""Text cut to a number of terminal cells, and the columns of a table that fit a width, for every screen's tables.

A wide character (CJK, most emoji) takes two cells; a cut never splits one, and marks itself with ``…``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.cells import cell_len, get_character_cell_size, set_cell_size
from textual.widgets import DataTable


def cut(text: str, room: int, tail: str = "") -> str:
    """``text`` then ``tail`` in ``room`` cells: ``text`` cut at its end with ``…`` where both are wider, so that
    ``tail`` stays whole (``tail`` alone wider than the room: cut too)."""
    if cell_len(text + tail) <= room:
        return text + tail
    if room <= 0:
        return ""
    keep = room - 1 - cell_len(tail)
    if keep < 0:
        return cut(text + tail, room)
    return set_cell_size(text, keep).rstrip() + "…" + tail


def cut_middle(text: str, room: int) -> str:
    """``text`` in ``room`` cells, its middle replaced by ``…`` where it is wider: the head and the end both stay,
    so that two long names that differ only at their ends (``slice.digest.structuredBlockCap`` and ``…Min``) are
    still told apart. The end gets the larger half: it is where dotted keys and paths differ most."""
    if cell_len(text) <= room:
        return text
    if room <= 1:
        return "…"[:room]
    head_room = (room - 1) // 2
    tail = ending(text, room - 1 - head_room)
    head = set_cell_size(text[: len(text) - len(tail)], room - 1 - cell_len(tail)).rstrip()  # a wide character
    return head + "…" + tail  # that does not fit gives room


def cut_start(text: str, room: int) -> str:
    """``text`` in ``room`` cells: its end after ``…`` where it is wider (a path, whose end names the file)."""
    if cell_len(text) <= room:
        return text
    return "…" + ending(text, room - 1)


def ending(text: str, room: int) -> str:
    """The longest end of ``text`` that takes at most ``room`` cells (a wide character that would not fit whole is
    left out)."""
    start, used = len(text), 0
    while start and used + get_character_cell_size(text[start - 1]) <= room:
        start -= 1
        used += get_character_cell_size(text[start])
    return text[start:]


def fitting(widths: Mapping[str, int], room: int, least_needed: Sequence[str]) -> list[str]:
    """The columns of ``widths`` (each column's cells, padding included, in the table's order) that fit ``room``
    cells: the ``least_needed`` left out in that order while the rest are wider than the room (the others stay,
    whatever the room)."""
    shown = list(widths)
    for column in least_needed:
        if sum(widths[c] for c in shown) <= room:
            break
        shown.remove(column)
    return shown


def show_columns(table: DataTable, shown: Sequence[str]) -> bool:
    """Give ``table`` the columns ``shown`` (each keyed by its label), clearing it only when they change; whether
    they did."""
    if list(table.columns) == list(shown):
        return False
    table.clear(columns=True)
    for label in shown:
        table.add_column(label, key=label)
    return True
