"""A follow-mode append costs the same whatever came before it: the work the main screen does for one appended
event (rows, chart, header, counts, status, filter) is counted in executed lines of tapedeck's own code, on a log
and on one ten times its size, in the full log and the surface view, each also filtered."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

import orjson
import pytest
from textual._compositor import Compositor
from textual.geometry import Region
from textual.screen import UPDATE_PERIOD
from textual.widget import Widget

from bench.gen_session import generate
from core.log.tail import tail_events
from tests.tui.logs import Log, append
from tests.tui.pilot import main_screen, make_app, recorded, settle, settled_main_screen, until
from tui.live import SessionUpdated
from tui.screens.main import MainScreen
from tui.widgets.event_list import FRAME_WAIT_SECONDS
from tui.widgets.header import SessionHeader

pytestmark = pytest.mark.anyio
ROOT = str(Path(__file__).resolve().parents[2])
OURS = tuple(f"{ROOT}/{package}/" for package in ("tui", "core"))
WIDTH = 50  # the chart's 33 columns: fewer than either log's requests, so both logs draw every column


def lines_run(action: Any) -> int:
    """Lines of ``tui`` and ``core`` executed by ``action()`` in this thread."""
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def outer(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(OURS) else None

    sys.settrace(outer)
    try:
        action()
    finally:
        sys.settrace(None)
    return count


def one_append(screen: MainScreen, start: int) -> None:
    """What the main screen does for an appended event: the update, the panels' and the status line's redraw."""
    live = screen.live
    screen.on_session_updated(SessionUpdated(live.generation, False, start, live.session.next_seq, live.epoch))
    screen._refresh_panels()
    screen._deferred_status()


def one_turn_log(tmp_path: Path) -> tuple[Log, Path]:
    """A log of one finished turn, and the file it is written to under ``tmp_path``."""
    log = Log()
    log.turn(1, "first", "ok")
    return log, log.write(tmp_path / "session.jsonl")


def user_event(seq: int, text: str) -> bytes:
    data = {"id": text, "role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}
    return orjson.dumps({"type": "user/message", "seq": seq, "time": 1, "data": data, "surfaceOp": "append"}) + b"\n"


async def work_per_append(path: Path, keys: str) -> int:
    app = make_app(path, follow=True)
    async with app.run_test(size=(WIDTH, 30)) as pilot:
        await settle(pilot, 120)
        for key in keys:
            await pilot.press(key)
            await settle(pilot, 60)
        screen = main_screen(app)
        assert screen is not None
        seq = int(tail_events(path, 1)[-1]["seq"]) + 1
        with path.open("ab") as f:
            f.write(user_event(seq, "operator says hello"))
        await until(pilot, lambda: app.live is not None and app.live.session.next_seq > seq, 30)
        await settle(pilot, 30)
        # the append's frame is rendered within the measure, however long ago the last one went out (_frame_now
        # renders it at once only past Textual's frame period): the count no longer depends on the clock
        screen._framed = time.monotonic() - UPDATE_PERIOD
        return lines_run(lambda: one_append(screen, seq))


@pytest.mark.parametrize("keys", ["", "s", "h", "sh"], ids=["full-log", "surface", "filtered", "filtered-surface"])
async def test_an_append_costs_the_same_on_a_log_ten_times_longer(tmp_path: Path, keys: str) -> None:
    small, big = tmp_path / "small" / "session.jsonl", tmp_path / "big" / "session.jsonl"
    for path, size in ((small, 400_000), (big, 4_000_000)):
        path.parent.mkdir()
        generate(path, size, seed=3, profile="short-turns")
    assert big.stat().st_size > 9 * small.stat().st_size
    on_small = await work_per_append(small, keys)
    on_big = await work_per_append(big, keys)
    # an operator's message changes nothing the chart draws: its redraw reuses the columns, with no pyramid query
    # (O(width · log n): 3,307 -> 4,395 lines here when every redraw queried them)
    assert on_big <= on_small * 1.02, (on_small, on_big)


async def append_message(pilot: Any, screen: MainScreen, path: Path, log: Log) -> None:
    """Append an operator's message to the log at ``path``; wait until the list shows it and the status line and
    header followed."""
    start = len(log.events)
    log.add({"type": "user/message", "data": {"id": "u-late", "role": "user", "source": {"kind": "user"},
                                              "content": [{"type": "text", "text": "appended now"}]},
             "surfaceOp": "append"})  # fmt: skip
    append(path, log, start)
    await until(pilot, lambda: len(screen.events.view) == len(log.events) and not screen._status_due)
    await settle(pilot)


async def test_the_frame_that_shows_an_appended_row_repaints_the_list_alone(tmp_path: Path) -> None:
    """In follow mode the frame that brings the new row repaints the list (and its scrollbar) only; the header and
    the status line, which span the screen (a frame's crop is the box around everything it repaints), follow in
    a later frame (once: the panels' redraw finds them unchanged), and the chart, which an operator's message
    does not change, is not repainted at all. In the list, the frame writes the rows alone: not its border, and
    not its scrollbar while the bar's cells read the same. Frames are told apart by the compositor's per-frame
    ``update_widgets`` call; what a frame writes is the compositor's dirty regions."""
    log = Log()
    for n in range(1, 120):
        log.turn(n, f"task {n}", "ok")
    path = log.write(tmp_path / "session.jsonl")
    frames: list[set[str]] = []
    update_widgets = Compositor.update_widgets

    def recorded(self: Compositor, widgets: set[Widget]) -> None:
        frames.append({w.id or type(w).__name__ for w in widgets})
        update_widgets(self, widgets)

    written: list[list[Region]] = []
    render_partial_update = Compositor.render_partial_update

    def writes(self: Compositor) -> Any:
        written.append(list(self._dirty_regions))
        return render_partial_update(self)

    app = make_app(path, follow=True)
    async with app.run_test(size=(150, 40)) as pilot:
        screen = await settled_main_screen(pilot)
        rows = screen.events.scrollable_content_region
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Compositor, "update_widgets", recorded)
            patch.setattr(Compositor, "render_partial_update", writes)
            await append_message(pilot, screen, path, log)
        shown = next(i for i, frame in enumerate(frames) if "events" in frame)
        assert not frames[shown] & {"header", "status", "chart", "detail", "SteadyScrollBar"}, frames[shown]
        frame = next(regions for regions in written if any(region.overlaps(rows) for region in regions))
        assert frame and all(rows.contains_region(region) for region in frame), (frame, rows)
        assert any("header" in frame for frame in frames[shown + 1 :]), frames
        assert not any("chart" in frame for frame in frames), frames
        assert sum("status" in frame for frame in frames) == 1, frames  # the panels' redraw found it unchanged
        assert f"{len(log.events)} events" in str(screen.query_one("#header").render())


async def test_what_waits_for_the_lists_frame_runs_when_another_screen_covers_it(tmp_path: Path) -> None:
    """A callback waiting for the list's next frame (the status line and header after an append) runs when a
    screen is pushed over the main screen, where no frame of the list would come; with the main screen covered it
    runs at once."""
    _, path = one_turn_log(tmp_path)
    app = make_app(path, follow=True)
    async with app.run_test(size=(150, 40)) as pilot:
        screen = await settled_main_screen(pilot)
        ran: list[str] = []
        screen.events.after_frame(lambda: ran.append("waited"))  # nothing repaints the list: it waits
        await pilot.pause()
        assert ran == []
        await pilot.press("question_mark")
        await until(pilot, lambda: app.screen is not screen)
        assert ran == ["waited"]
        screen.events.after_frame(lambda: ran.append("at once"))
        assert ran == ["waited", "at once"]


async def test_a_status_update_that_fires_after_the_panels_are_gone_does_nothing(tmp_path: Path) -> None:
    """When the app exits, Textual takes the screen's widgets down one by one, and the status line and header update
    that waits for the list's frame (a timer of the list's) can fire after they are gone: it must not raise (it
    failed a CI run: NoMatches for the header, raised again by ``run_test`` at exit)."""
    _, path = one_turn_log(tmp_path)
    app = make_app(path, follow=True)
    async with app.run_test(size=(150, 40)) as pilot:
        screen = await settled_main_screen(pilot)
        await screen.query_one(SessionHeader).remove()
        await screen.query_one("#status").remove()
        screen._status_after_frame()  # an append's status update, due once the list's frame is out
        screen.events.frame_rendered()
        await until(pilot, lambda: not screen._status_due)  # the update ran, on a header and status line gone


async def test_an_appended_events_update_goes_straight_to_the_screens(tmp_path: Path) -> None:
    """The follower hands an append's update to the screens that handle it, not to the app to pass on (a hop
    through the app's queue before the main screen's); loading progress still reaches the app (its GC switch)."""
    log, path = one_turn_log(tmp_path)
    app = make_app(path, follow=True)
    with pytest.MonkeyPatch.context() as patch:
        posted = recorded(patch, type(app), "post_message")
        async with app.run_test(size=(150, 40)) as pilot:
            screen = await settled_main_screen(pilot)
            start = len(log.events)
            log.turn(2, "second", "ok")
            append(path, log, start)
            await until(pilot, lambda: len(screen.events.view) == len(log.events))
    to_app = [type(message).__name__ for message in posted]
    assert "LoadProgress" in to_app and "SessionUpdated" not in to_app, to_app


_IDLE_MOVE = re.compile(r"\x1b\[\d+;\d+H(?=\x1b\[\d+;\d+H|\Z)")  # a cursor move that nothing is written after


def _written(frame: str) -> str:
    """What a frame's escape sequences write on the terminal: a cursor move that another follows before anything is
    written changes no cell. Textual's frame may move to a chop it then writes nothing in, which the cropped
    compositor leaves out (seen once in CI: a move to column 112 of the footer's line, then on to column 139)."""
    return _IDLE_MOVE.sub("", frame)


async def test_the_appended_rows_frame_renders_only_what_it_repaints_and_writes_what_textual_would(
    tmp_path: Path,
) -> None:
    """The main screen's compositor leaves out of a partial frame the widgets whose visible part meets none of the
    repainted regions or lies behind a widget covering those it meets: the frame that brings an appended row
    renders the list alone, not its container and the screen behind it, nor the header, chart, status line,
    footer or detail pane beside it, all of which Textual's own compositor renders and cuts up (they share the
    list's clip); the next frame, which repaints the header and the status line, renders neither the list nor
    the detail pane between them. Every partial frame of the append writes the same bytes as Textual's
    compositor would. The frame with the new row is rendered by the update itself, not loop turns later."""
    from tui.widgets.compositing import CroppedCompositor

    log = Log()
    for n in range(1, 120):
        log.turn(n, f"task {n}", "ok")
    path = log.write(tmp_path / "session.jsonl")
    rendered: list[set[str]] = []
    compared: list[int] = []
    updating: list[bool] = [False]  # inside the main screen's append update
    in_update: list[bool] = []  # each partial frame: rendered inside it
    on_session_updated = MainScreen.on_session_updated

    def handled(self: MainScreen, message: SessionUpdated) -> None:
        updating[0] = True
        try:
            on_session_updated(self, message)
        finally:
            updating[0] = False
    get_renders = CroppedCompositor._get_renders
    render_partial_update = CroppedCompositor.render_partial_update

    def named(self: CroppedCompositor, crop: Region | None = None) -> Any:
        names = {(r, c): w.id or type(w).__name__ for w, (r, c) in self.visible_widgets.items()}
        shown: set[str] = set()
        rendered.append(shown)
        in_update.append(updating[0])
        for render in get_renders(self, crop):
            shown.add(names[render[0], render[1]])
            yield render

    def checked(self: CroppedCompositor) -> Any:
        dirty = set(self._dirty_regions)
        update = render_partial_update(self)
        self._dirty_regions.update(dirty)
        self.__class__ = Compositor
        try:
            textual = Compositor.render_partial_update(self)
        finally:
            self.__class__ = CroppedCompositor
        if update is not None:
            assert textual is not None
            assert _written(update.render_segments(app.console)) == _written(textual.render_segments(app.console))
            compared.append(len(update.render_segments(app.console)))
        return update

    app = make_app(path, follow=True)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        assert screen is not None and type(screen._compositor) is CroppedCompositor
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(CroppedCompositor, "_get_renders", named)
            patch.setattr(CroppedCompositor, "render_partial_update", checked)
            patch.setattr(MainScreen, "on_session_updated", handled)
            await append_message(pilot, screen, path, log)
    assert len(compared) >= 2 and all(compared), compared  # the list's frame, then the header's and status line's
    listed = next(k for k, shown in enumerate(rendered) if "events" in shown)
    assert rendered[listed] == {"events"}, rendered
    assert in_update[listed], in_update
    headed = next(shown for shown in rendered[listed + 1 :] if "header" in shown)
    assert "status" in headed and not headed & {"events", "detail", "body"}, rendered


async def test_what_waits_for_the_lists_frame_runs_when_no_frame_comes(tmp_path: Path) -> None:
    """An append that repaints nothing of the list brings no frame of it: what waits for that frame (the status
    line and the header after an append) still runs, ``FRAME_WAIT_SECONDS`` later, instead of never (a settle
    under load timed out on ``_status_due`` left set, the header's count stale until the next repaint)."""
    _, path = one_turn_log(tmp_path)
    app = make_app(path, follow=True)
    async with app.run_test(size=(150, 40)) as pilot:
        screen = await settled_main_screen(pilot)
        ran: list[str] = []
        screen.events.after_frame(lambda: ran.append("waited"))  # nothing repaints the list: no frame comes
        await pilot.pause()
        assert ran == []
        await until(pilot, lambda: ran == ["waited"], 10 * FRAME_WAIT_SECONDS)
        await pilot.pause(FRAME_WAIT_SECONDS)
        assert ran == ["waited"]  # once
