"""Line API helpers: change a scroll view's virtual size without a screen-wide layout when that is safe."""

from __future__ import annotations

from textual.geometry import Size
from textual.scroll_view import ScrollView


def set_virtual_size(view: ScrollView, size: Size) -> None:
    """Give ``view`` a new virtual size.

    Assigning the ``virtual_size`` reactive (declared with ``layout=True``) lays out and repaints the whole
    screen. While the vertical scrollbar stays as it is (shown or hidden) and the width is unchanged, nothing
    outside the view moves, so the reactive is set quietly with ``set_reactive`` and the visible scrollbar is
    told the new extent through its public ``window_virtual_size`` / ``window_size`` reactives (which repaint
    just the bar); ``scroll_y`` is re-validated against the new ``max_scroll_y``. A follow-mode append then
    repaints only the list.
    """
    container = view.container_size
    if not container.height or size.width != view.virtual_size.width:
        view.virtual_size = size
        return
    needs_bar = view.styles.overflow_y == "scroll" or (
        view.styles.overflow_y == "auto" and size.height > container.height
    )
    if needs_bar != view.show_vertical_scrollbar:
        view.virtual_size = size
        return
    view.set_reactive(ScrollView.virtual_size, size)
    if view.show_vertical_scrollbar and view.styles.scrollbar_size_vertical:
        bar = view.vertical_scrollbar
        bar.window_virtual_size = size.height
        bar.window_size = container.height - view.scrollbar_size_horizontal
    view.scroll_y = view.scroll_y  # the validator clamps it to the new max_scroll_y (a no-op when in range)
    view.refresh()
