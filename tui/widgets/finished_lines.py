"""Finished lines of a Line API widget, kept by the content line they were made from.

Textual turns each content line of a widget into a finished line (border, padding, tint, opacity, the app's line
filters) in the widget's styles cache, which keeps finished lines by position. A scrolled list puts other content
at every position, so each repaint finishes every visible line again, although the rows themselves are drawn
once and reused. Keeping the finished line by the content line it was made from lets a list moved by one row
find every line but the new one; a line not found is finished by Textual as before.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

EDGE = -1  # a border or padding row is kept under (EDGE, y): it depends on the widget's decoration alone


class FinishedLines:
    """Finished lines of ``widget`` by content line (compared by identity), valid while its decoration holds."""

    def __init__(self, widget: Widget, limit: int) -> None:
        self.widget = widget
        self.limit = limit  # lines kept before the cache starts over
        self._decoration: tuple[Hashable, ...] | None = None
        self._lines: dict[object, tuple[Strip | None, Strip]] = {}

    def decoration(self) -> tuple[Hashable, ...]:
        """Everything besides the content line that a finished line depends on (what Textual's styles cache
        reads when it finishes a line)."""
        widget = self.widget
        styles, app = widget.styles, widget.app
        return (widget.outer_size, widget.content_region.size, widget.background_colors, styles.border, styles.outline,
                styles.padding, styles.tint, styles.text_opacity, styles.hatch if styles.has_rule("hatch") else None,
                widget.opacity, tuple(widget.get_line_filters()), app.ansi_theme, app.native_ansi_color,
                widget._border_title, widget._border_subtitle)  # fmt: skip

    def render(
        self,
        crop: Region,
        content: Callable[[int], tuple[Strip, bool]],
        finish: Callable[[Region], list[Strip]],
    ) -> list[Strip]:
        """The lines of ``crop``: ``content(y)`` gives content line ``y`` and whether it is a kept object (only
        those are looked up and remembered); ``finish(region)`` is Textual's own rendering of widget lines."""
        widget = self.widget
        decoration = self.decoration()
        if decoration != self._decoration or len(self._lines) > self.limit:
            self._decoration = decoration
            self._lines.clear()
        lines = self._lines
        gutter = widget.styles.gutter
        size = widget.outer_size
        first, stop = gutter.top, size.height - gutter.bottom
        width = size.width
        out: list[Strip | None] = []
        keys: list[object] = []
        for y in crop.line_range:
            key: object = None
            kept: Strip | None = None
            if first <= y < stop:
                line, stable = content(y - first)
                if stable:
                    key = id(line)
                    kept = line
            else:
                key = (EDGE, y)
            found = lines.get(key) if key is not None else None
            out.append(found[1] if found is not None and found[0] is kept else None)
            keys.append((key, kept))
        missing = [i for i, line in enumerate(out) if line is None]
        for i, line in zip(missing, self._finish(crop.y, missing, width, finish), strict=True):
            out[i] = line
            key, kept = keys[i]
            if key is not None:
                lines[key] = (kept, line)
        x1, x2 = crop.column_span
        if (x1, x2) != (0, width):
            return [line.crop(x1, x2) for line in out if line is not None]
        return [line for line in out if line is not None]

    def _finish(
        self, top: int, rows: list[int], width: int, finish: Callable[[Region], list[Strip]]
    ) -> list[Strip]:
        """Textual's finished lines for rows ``rows`` (offsets from widget line ``top``), one call per run of
        consecutive rows; the styles cache is told they are dirty, so none is a line it kept from before."""
        out: list[Strip] = []
        k = 0
        while k < len(rows):
            start = end = rows[k]
            while k + 1 < len(rows) and rows[k + 1] == end + 1:
                k += 1
                end += 1
            region = Region(0, top + start, width, end - start + 1)
            self.widget._styles_cache.set_dirty(region)
            out.extend(finish(region))
            k += 1
        return out
