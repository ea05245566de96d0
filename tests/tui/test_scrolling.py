"""``set_virtual_size``: a growing list updates its scrollbar in place and lays out only when the bar changes."""

from __future__ import annotations

from typing import Any

import pytest
from textual._compositor import Compositor
from textual.app import App, ComposeResult
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from tui.widgets.scrolling import SteadyScrollBar, held_scrollbar, set_virtual_size, steady_scrollbar

pytestmark = pytest.mark.anyio


class Lines(ScrollView):
    """A line-API view that records every refresh that asks for a layout."""

    def __init__(self) -> None:
        super().__init__()
        self.layouts = 0

    def render_line(self, y: int) -> Strip:
        return Strip.blank(self.size.width)

    def refresh(self, *regions: Any, layout: bool = False, **kwargs: Any) -> Any:
        self.layouts += layout
        return super().refresh(*regions, layout=layout, **kwargs)


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield Lines()


async def test_appends_update_the_bar_without_a_layout() -> None:
    app = Host()
    async with app.run_test(size=(40, 10)) as pilot:
        view = app.query_one(Lines)
        set_virtual_size(view, Size(10, 50))  # the bar appears: a real layout
        await pilot.pause()
        assert view.show_vertical_scrollbar and view.layouts >= 1
        before = view.layouts
        for height in (60, 70, 80):
            set_virtual_size(view, Size(view.virtual_size.width, height))
            await pilot.pause()
        assert view.layouts == before
        assert view.virtual_size.height == 80
        assert view.vertical_scrollbar.window_virtual_size == 80
        assert view.vertical_scrollbar.window_size == view.container_size.height
        assert view.max_scroll_y == 80 - view.container_size.height


async def test_shrinking_clamps_the_scroll_and_a_vanishing_bar_lays_out() -> None:
    app = Host()
    async with app.run_test(size=(40, 10)) as pilot:
        view = app.query_one(Lines)
        set_virtual_size(view, Size(10, 100))
        await pilot.pause()
        view.scroll_to(y=90, animate=False)
        await pilot.pause()
        set_virtual_size(view, Size(view.virtual_size.width, 20))
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y == 20 - view.container_size.height
        before = view.layouts
        set_virtual_size(view, Size(view.virtual_size.width, 3))  # fits: the bar goes away
        await pilot.pause()
        assert view.layouts > before and not view.show_vertical_scrollbar and view.scroll_y == 0


async def test_a_steady_bar_is_drawn_again_only_when_it_looks_different() -> None:
    app = Host()
    async with app.run_test(size=(40, 10)) as pilot:
        view = app.query_one(Lines)
        steady_scrollbar(view)
        set_virtual_size(view, Size(10, 10_000))
        await pilot.pause()
        bar = view.vertical_scrollbar
        assert isinstance(bar, SteadyScrollBar)
        crop = Region(0, 0, bar.size.width, bar.size.height)
        first = bar.render_lines(crop)
        set_virtual_size(view, Size(10, 10_001))  # one row more: the thumb moves by far less than an eighth of a cell
        await pilot.pause()
        assert bar.render_lines(crop) is first
        view.scroll_to(y=view.max_scroll_y, animate=False)
        await pilot.pause()
        moved = bar.render_lines(crop)
        assert moved is not first and [list(line) for line in moved] != [list(line) for line in first]  # the thumb moved
        assert bar.render_lines(crop) is moved


class Frames:
    """The widgets each frame repaints (the compositor's per-frame ``update_widgets`` call)."""

    def __init__(self) -> None:
        self.frames: list[set[Widget]] = []
        self._patch = pytest.MonkeyPatch()
        update_widgets = Compositor.update_widgets

        def recorded(compositor: Compositor, widgets: set[Widget]) -> None:
            self.frames.append(set(widgets))
            update_widgets(compositor, widgets)

        self._patch.setattr(Compositor, "update_widgets", recorded)

    def __enter__(self) -> Frames:
        return self

    def __exit__(self, *exc: object) -> None:
        self._patch.undo()

    def repainted(self, widget: Widget) -> bool:
        return any(widget in frame for frame in self.frames)


async def test_a_steady_bar_that_looks_the_same_is_left_out_of_the_frame() -> None:
    """Growing the view by a row and scrolling it to the end (an append in follow mode) inside ``held_scrollbar``
    leaves the bar out of the frame while its cells read the same, and puts it in when they change."""
    app = Host()
    async with app.run_test(size=(40, 10)) as pilot:
        view = app.query_one(Lines)
        steady_scrollbar(view)
        set_virtual_size(view, Size(10, 10_000))  # the bar appears: laid out in the next frame
        await pilot.pause()
        view.scroll_to(y=view.max_scroll_y, animate=False)
        await pilot.pause()
        bar = view.vertical_scrollbar
        with Frames() as frames:
            with held_scrollbar(view):
                set_virtual_size(view, Size(10, 10_001))
                view.scroll_to(y=view.max_scroll_y, animate=False)
            await pilot.pause()
        assert frames.repainted(view) and not frames.repainted(bar)
        with Frames() as frames:
            with held_scrollbar(view):
                set_virtual_size(view, Size(10, 20))  # the thumb grows to half the bar
                view.scroll_to(y=view.max_scroll_y, animate=False)
            await pilot.pause()
        assert frames.repainted(bar)
