"""Line API helpers: change a scroll view's virtual size without a screen-wide layout when that is safe, and a
vertical scrollbar that is drawn again only when it would look different."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, Self

from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip

DEFAULT_BACK, DEFAULT_BAR = Color.parse("#555555"), Color.parse("bright_magenta")  # ScrollBarRender's fallbacks


class SteadyScrollBar(ScrollBar):
    """A scrollbar that reuses its last lines while its cells stay the same.

    Each follow-mode append grows the list by a row and scrolls it by one, which moves the bar's thumb by a
    fraction of a cell on a long log (often by nothing at all), yet repaints the bar: Textual then draws each of
    its lines again (about 1 ms for a screen's height). Its look (the segments ``ScrollBarRender`` gives for
    this size, extent, position and colours) is cheap to compute and decides whether the lines drawn last time
    still hold, and whether the bar needs repainting at all: a bar left out of a frame costs that frame nothing.
    """

    _steady: tuple[Any, list[Strip]] | None = None
    _held = False  # inside ``held``
    _asked = False  # a repaint was asked for while held

    def render_lines(self, crop: Region) -> list[Strip]:
        """The bar's lines in ``crop``: the last ones when nothing that shows changed."""
        key = (crop, *self._state())
        if self._steady is not None and self._steady[0] == key:
            return self._steady[1]
        lines = super().render_lines(crop)
        self._steady = (key, lines)
        return lines

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Self:
        """Repaint the bar, unless it would look as it was last drawn (its extent and position change with every
        append to a followed list, its cells rarely); while held, only note that it was asked for."""
        if not (regions or layout or recompose) and self._steady is not None:
            if self._held:
                self._asked = True
                return self
            if self._steady[0][1:] == self._state():
                return self
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the bar's repaints while its extent and position change together (an append grows the list, then
        scrolls it): the look is compared once, at the end, never in between, where it would differ."""
        self._held, self._asked = True, False
        try:
            yield
        finally:
            self._held = False
            if self._asked:
                self.refresh()

    def _state(self) -> tuple[Any, ...]:
        """What the drawn bar depends on: its size, the theme and its look."""
        return (self.size, self.app.theme, self.app.ansi_color, self._look())

    def _look(self) -> tuple[Segment, ...] | None:
        """The segments of the bar as it would be drawn now (None when its renderer is not Textual's kind)."""
        renderer = self.render()
        if not isinstance(renderer, ScrollBarRender):
            return None
        style = Style.parse(renderer.style) if isinstance(renderer.style, str) else renderer.style
        back, bar = style.bgcolor, style.color
        along, across = (self.size.height, self.size.width) if self.vertical else (self.size.width, self.size.height)
        look = renderer.render_bar(size=along, virtual_size=renderer.virtual_size, window_size=renderer.window_size,
                                   position=renderer.position, thickness=across, vertical=self.vertical,
                                   back_color=back or DEFAULT_BACK, bar_color=bar or DEFAULT_BAR)  # fmt: skip
        return tuple(look.segments)


def steady_scrollbar(view: ScrollView) -> None:
    """Make ``view``'s vertical scrollbar a ``SteadyScrollBar`` (Textual creates it as a plain ``ScrollBar``; the
    subclass adds no state of its own, only a cache)."""
    bar = view.vertical_scrollbar
    if type(bar) is ScrollBar:
        bar.__class__ = SteadyScrollBar


def held_scrollbar(view: ScrollView) -> AbstractContextManager[None]:
    """``SteadyScrollBar.held`` for ``view``'s vertical bar (nothing held for another kind of bar)."""
    bar = view.vertical_scrollbar
    return bar.held() if isinstance(bar, SteadyScrollBar) else nullcontext()


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
    view.refresh(view.scrollable_content_region.reset_offset)  # the content: the border and the bar stay as they are
