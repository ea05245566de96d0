"""A screen compositor whose partial frames leave out the widgets that show nothing where the frame repaints, and
that says when each frame is rendered.

Textual's compositor renders, for a frame that repaints part of the screen, every widget whose clip (its
container's area) meets the repainted area, then keeps only the lines and cells inside it. On the main screen
the header, the context chart, the status line, the footer and the detail pane share a clip with the event list,
so a follow-mode append that repaints only the list's rows rendered and cut up all of them as well; and a frame
that repaints the header and the status line (the top and the bottom of the screen) rendered every widget between
them. Leaving out the widgets whose visible part meets none of the repainted regions changes nothing written:
their cells are never inside one. Nor does leaving out a widget behind one that covers every repainted region it
meets (the list's container and the screen, behind the list's rows): in each line the cells of the widget in
front are the ones written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from textual._compositor import ChopsUpdate, Compositor, CompositorUpdate
from textual.geometry import Region
from textual.strip import Strip


class CroppedCompositor(Compositor):
    """``Compositor`` whose partial renders skip widgets that show nothing inside the crop; ``rendered`` is called
    after each frame is rendered (before it is written)."""

    def __init__(self, rendered: Callable[[], None]) -> None:
        super().__init__()
        self.rendered = rendered
        self._repainted: list[Region] = []  # the regions the partial frame being rendered repaints

    def render_partial_update(self) -> ChopsUpdate | None:
        """Textual's ``render_partial_update``, noting the regions it repaints for ``_get_renders``."""
        self._repainted = list(self._dirty_regions)
        try:
            return super().render_partial_update()
        finally:
            self._repainted = []

    def render_update(self, *args: Any, **kwargs: Any) -> CompositorUpdate | None:
        """Textual's ``render_update``, then ``rendered``."""
        update = super().render_update(*args, **kwargs)
        self.rendered()
        return update

    def _get_renders(self, crop: Region | None = None) -> Iterable[tuple[Region, Region, list[Strip]]]:
        """The renders of the widgets whose visible part meets a region the partial frame repaints (every visible
        widget in any other frame): each widget's region, clip and the lines of its visible part, front to back."""
        repainted = [region for region in self._repainted if crop is not None and crop.overlaps(region)]
        if not repainted:
            yield from super()._get_renders(crop)
            return
        fronts: list[Region] = []  # the visible parts of the widgets rendered so far (in front of the next)
        for widget, (region, clip) in self.visible_widgets.items():
            shown = region.intersection(clip)
            met = [dirty for dirty in repainted if shown.overlaps(dirty)]
            if not (shown.width and shown.height and met):
                continue
            if all(any(front.contains_region(dirty) for front in fronts) for dirty in met):
                continue  # hidden behind what was rendered where it would be written
            fronts.append(shown)
            yield region, clip, widget.render_lines(shown.translate(-region.offset))
