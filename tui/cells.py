"""Text cut to a number of terminal cells, and the columns of a table that fit a width, for every screen's tables.

A wide character (CJK, most emoji) takes two cells; a cut never splits one, and marks itself with ``…``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.cells import cell_len, set_cell_size


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
