"""Line API helpers: change a scroll view's virtual size without a screen-wide layout when that is safe."""

from __future__ import annotations

from textual.geometry import Size
from textual.scroll_view import ScrollView


def set_virtual_size(view: ScrollView, size: Size) -> None:
    """Give ``view`` a new virtual size.

    Assigning ``virtual_size`` lays out (and repaints) the whole screen. While the vertical scrollbar stays as it
    is, only the view's own scroll state changes, so the reactive is set quietly and the scrollbars updated in
    place; a follow-mode append then repaints just the list.
    """
    container = view.container_size
    if not container.height or size.width != view.virtual_size.width:
        view.virtual_size = size
        return
    needs_bar = size.height > container.height
    if needs_bar != view.show_vertical_scrollbar:
        view.virtual_size = size
        return
    view.set_reactive(ScrollView.virtual_size, size)
    view._scroll_update(size)  # Textual's own scrollbar refresh for a changed virtual size
    view.refresh()
