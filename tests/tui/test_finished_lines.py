"""``FinishedLines``: a list moved by one row has Textual finish (border, filters) only the lines it never showed,
and every line it gives is the line Textual itself would draw."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from rich.segment import Segment
from rich.style import Style
from textual._styles_cache import StylesCache
from textual.app import App, ComposeResult
from textual.geometry import Region, Size
from textual.pilot import Pilot
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from tests.tui.logs import Log, append
from tests.tui.pilot import make_app, settle, until
from tui.widgets.event_list import EventList
from tui.widgets.finished_lines import FinishedLines

pytestmark = pytest.mark.anyio


class Rows(ScrollView, can_focus=True):
    """Numbered rows drawn once each (kept by number), in a bordered list whose border changes with focus."""

    DEFAULT_CSS = """
    Rows { border: round red; padding: 0 1; }
    Rows:focus { border: round green; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.drawn: dict[int, Strip] = {}
        self.finished = FinishedLines(self, 100)
        self.virtual_size = Size(20, 200)

    def content(self, y: int) -> tuple[Strip, bool]:
        row = int(self.scroll_y) + y
        if row not in self.drawn:
            self.drawn[row] = Strip([Segment(f"row {row}", Style(bold=row % 2 == 0))])
        return self.drawn[row], True

    def render_line(self, y: int) -> Strip:
        return self.content(y)[0]

    def render_lines(self, crop: Region) -> list[Strip]:
        return self.finished.render(crop, self.content, super().render_lines)


def textual_lines(widget: Widget, crop: Region) -> list[Strip]:
    """What Textual draws for ``crop`` of ``widget`` from scratch."""
    widget._styles_cache.clear()
    return Widget.render_lines(widget, crop)


class Finishing:
    """Counts the content lines Textual's styles cache finishes for one widget."""

    def __init__(self, widget: Widget) -> None:
        self.widget = widget
        self.lines = 0

    def __enter__(self) -> Finishing:
        original = StylesCache.render_line
        counter = self

        def render_line(cache: StylesCache, *args: Any, **kwargs: Any) -> Strip:
            if cache is counter.widget._styles_cache:
                counter.lines += 1
            return original(cache, *args, **kwargs)

        self._patch = pytest.MonkeyPatch()
        self._patch.setattr(StylesCache, "render_line", render_line)
        return self

    def __exit__(self, *exc: object) -> None:
        self._patch.undo()


@asynccontextmanager
async def following(log: Log, tmp_path: Path) -> AsyncIterator[tuple[Pilot[None], Path, EventList]]:
    """The app following ``log`` (written under ``tmp_path``), settled: its pilot, the log's path, its list."""
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path, follow=True)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        yield pilot, path, app.screen.query_one(EventList)


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield Rows()


def strips_text(strips: list[Strip]) -> list[tuple[str, list[Any]]]:
    return [(strip.text, [segment.style for segment in strip]) for strip in strips]


async def test_a_list_moved_by_one_row_finishes_only_the_new_line() -> None:
    app = Host()
    async with app.run_test(size=(30, 12)) as pilot:
        rows = app.query_one(Rows)
        whole = Region(0, 0, *rows.outer_size)
        first = rows.render_lines(whole)
        assert strips_text(first) == strips_text(textual_lines(rows, whole))
        await pilot.pause()
        with Finishing(rows) as finishing:
            rows.scroll_to(y=1, animate=False)
            await pilot.pause()  # the app's own frame
            moved = rows.render_lines(whole)
        assert finishing.lines == 1  # the row that came into view; the borders and the other rows are kept
        assert strips_text(moved) == strips_text(textual_lines(rows, whole))


async def test_a_changed_decoration_finishes_every_line_again() -> None:
    app = Host()
    async with app.run_test(size=(30, 12)) as pilot:
        rows = app.query_one(Rows)
        whole = Region(0, 0, *rows.outer_size)
        await pilot.pause()
        with Finishing(rows) as finishing:
            app.set_focus(None if rows.has_focus else rows)  # the border changes colour
            await pilot.pause()
            focused = rows.render_lines(whole)
        assert finishing.lines == rows.outer_size.height
        assert strips_text(focused) == strips_text(textual_lines(rows, whole))
        crop = Region(3, 2, 10, 4)  # a clipped part of the widget
        assert strips_text(rows.render_lines(crop)) == strips_text(textual_lines(rows, crop))


async def test_an_appended_row_in_follow_mode_is_the_only_row_finished(tmp_path: Path) -> None:
    log = Log()
    for n in range(1, 80):
        log.turn(n, f"task {n}", "ok")
    async with following(log, tmp_path) as (pilot, path, events):
        whole = Region(0, 0, *events.outer_size)
        start = len(log.events)
        log.add({"type": "user/message", "data": {"id": "u-late", "role": "user", "source": {"kind": "user"},
                                                  "content": [{"type": "text", "text": "appended now"}]},
                 "surfaceOp": "append"})  # fmt: skip
        with Finishing(events) as finishing:
            append(path, log, start)
            await until(pilot, lambda: len(events.view) == len(log.events))
            await settle(pilot)
            shown = events.render_lines(whole)
        # the new row, and the row the cursor left (drawn without the cursor for the first time)
        assert finishing.lines <= 2, finishing.lines
        assert "appended now" in shown[-2].text
        assert strips_text(shown) == strips_text(textual_lines(events, whole))


async def test_a_row_an_append_takes_off_the_surface_is_drawn_again(tmp_path: Path) -> None:
    """Rows drawn once are reused while nothing they show changed; a cut appended later (a fold replacing a
    visible tool result) changes that row's tags and dimming, and the row is drawn again."""
    log = Log()
    seqs = [log.turn(n, f"task {n}", f"output {n}") for n in range(1, 4)]
    async with following(log, tmp_path) as (pilot, path, events):
        whole = Region(0, 0, *events.outer_size)
        result = seqs[-1]["result"]

        def line_of(seq: int) -> str:
            return next(strip.text for strip in events.render_lines(whole) if strip.text[1:9].strip() == str(seq))

        assert "[on]" in line_of(result) and "[folded]" not in line_of(result)
        start = len(log.events)
        log.fold(result, "digest of the output")
        append(path, log, start)
        await until(pilot, lambda: len(events.view) == len(log.events))
        await settle(pilot)
        assert "[folded]" in line_of(result) and "[off]" in line_of(result), line_of(result)
