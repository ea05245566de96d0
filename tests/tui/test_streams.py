"""A model stream is one list row: it grows while it streams, ⏎ lists its deltas, a chunk filter shows them all."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.read.event_filter import EventFilter
from core.read.streams import Block
from tests.log.helpers import assistant, user
from tests.tui.logs import Log, append
from tests.tui.pilot import make_app, settle, settled_main_screen, until
from tests.tui.test_wrong_data import shown_lines
from tui.live import LiveSession
from tui.screens.main import MainScreen
from tui.widgets.detail import TextView, describe

pytestmark = pytest.mark.anyio
SIZE = (150, 40)


def delta(text: str, turn: int = 1, step: int = 1) -> dict:
    return {"type": "assistant/chunk", "data": {"turn": turn, "step": step, "chunk": {"type": "text-delta", "index": 0, "text": text}}}


def streaming_log(texts: list[str]) -> tuple[Log, list[int]]:
    """A turn whose first step is streaming ``texts`` (no answer yet)."""
    log = Log()
    log.add({"type": "turn/start", "data": {"turn": 1}})
    log.add(user("write a haiku"))
    log.add({"type": "step/start", "data": {"turn": 1, "step": 1}})
    return log, [log.add(delta(t)) for t in texts]


def test_a_stream_cut_short_names_the_key_that_shows_more(tmp_path: Path) -> None:
    """'… N more deltas (press + to show more)' named the default key of main.more whatever the keymap said; the
    pane passes the key the keymap gives (tests/tui/test_keymap.py shows the pane asking for it)."""
    log, chunks = streaming_log(["an ", "old ", "pond"])
    live = LiveSession(log.write(tmp_path / "session.jsonl"), follow=False)
    live.run()
    block = Block(chunks[0], chunks[-1] + 1, 1, 1, 11)
    left, _, _ = describe(live, chunks[0], 3, block=block, more_key="f10")
    assert "… 2 more deltas (press f10 to show more)" in left.plain, left.plain


def line_of(screen: MainScreen, seq: int, depth: int = 0) -> str:
    """The text drawn for the row of ``seq`` at ``depth``."""
    view = screen.events.view
    row = next(i for i in range(len(view)) if view.row(i) == (seq, depth))
    screen.events.go(row)
    return screen.events.render_line(row - int(screen.events.scroll_y)).text


async def test_a_finished_stream_is_one_row_that_enter_expands_and_collapses(tmp_path: Path) -> None:
    log, chunks = streaming_log(["an ", "old ", "pond"])
    log.add(assistant(1, 1, "an old pond"))
    log.add({"type": "step/end", "data": {"turn": 1, "step": 1}})
    log.add({"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}})
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        view = screen.events.view
        assert len(view) == len(log.events) - 2 and chunks[1] not in list(view.base)
        text = line_of(screen, chunks[0])
        assert "streamed 11 chars · 3 deltas" in text and "streaming" not in text and " 11 ch" in text
        await pilot.press("enter")
        await settle(pilot)
        assert len(screen.events.view) == len(log.events) + 1  # the block's row and its three deltas
        assert [screen.events.view.row(screen.events.cursor + k) for k in (1, 2, 3)] == [(s, 1) for s in chunks]
        assert "'old '" in line_of(screen, chunks[1], 1)
        screen.events.go_seq(chunks[0])
        await pilot.press("enter")
        await settle(pilot)
        assert len(screen.events.view) == len(log.events) - 2


async def test_the_streaming_row_grows_while_following_and_its_expansion_follows_too(tmp_path: Path) -> None:
    log, chunks = streaming_log(["The ", "light "])
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        rows = len(screen.events.view)
        assert rows == 4 and "streaming… 10 chars · 2 deltas" in line_of(screen, chunks[0])
        await settle(pilot)
        assert "The light" in " ".join(shown_lines(screen.query_one("#detail-original", TextView)))
        start = len(log.events)
        more = [log.add(delta(t)) for t in ("of ", "the ", "moon")]
        append(path, log, start)
        await until(pilot, lambda: screen.live.session.next_seq == len(log.events))
        await settle(pilot)
        assert len(screen.events.view) == rows  # the same row, grown
        assert "streaming… 21 chars · 5 deltas" in line_of(screen, chunks[0])
        await settle(pilot)
        detail = " ".join(shown_lines(screen.query_one("#detail-original", TextView)))
        assert "model stream of turn 1 step 1 · 5 deltas" in detail and "The light of the moon" in detail
        screen.events.go_seq(chunks[0])
        await pilot.press("enter")
        await settle(pilot)
        assert len(screen.events.view) == rows + 5
        screen.events.resume_follow()
        start = len(log.events)
        last = log.add(delta("!"))
        append(path, log, start)
        await until(pilot, lambda: len(screen.events.view) == rows + 6)
        await settle(pilot)
        assert screen.events.view.row(len(screen.events.view) - 1) == (last, 1) and screen.events.following
        assert chunks + more + [last] == [screen.events.view.row(3 + k)[0] for k in range(1, 7)]
        start = len(log.events)
        log.add(assistant(1, 1, "The light of the moon!"))
        log.add({"type": "step/end", "data": {"turn": 1, "step": 1}})
        log.add({"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}})
        append(path, log, start)
        await until(pilot, lambda: screen.live.session.next_seq == len(log.events))
        await settle(pilot)
        assert "streamed 22 chars · 6 deltas" in line_of(screen, chunks[0])


async def test_a_chunk_filter_lists_every_delta_again(tmp_path: Path) -> None:
    log, chunks = streaming_log(["a", "b", "c", "d"])
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        screen._set_filter(EventFilter.parse("assistant/chunk", "", "", False, ""))
        await settle(pilot)
        assert list(screen.events.view.base) == chunks
        assert "'c'" in line_of(screen, chunks[2]) and "deltas" not in line_of(screen, chunks[0])
        screen._set_filter(EventFilter.parse("", "", "1", False, ""))  # a filter that does not name chunks
        await settle(pilot)
        assert list(screen.events.view.base) == [0, 1, 2, chunks[0]]
        assert "4 deltas" in line_of(screen, chunks[0])


async def test_a_filtered_list_keeps_one_row_for_a_stream_that_grows(tmp_path: Path) -> None:
    log, chunks = streaming_log(["a", "b"])
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        screen._set_filter(EventFilter.parse("", "", "1", False, ""))
        await settle(pilot)
        assert list(screen.events.view.base) == [0, 1, 2, chunks[0]]
        start = len(log.events)
        for text in "cde":
            log.add(delta(text))
        append(path, log, start)
        await until(pilot, lambda: screen.filter_scan is not None and screen.filter_scan.upto == len(log.events))
        await settle(pilot)
        assert list(screen.events.view.base) == [0, 1, 2, chunks[0]]
        assert "5 deltas" in line_of(screen, chunks[0])
        start = len(log.events)
        answer = log.add(assistant(1, 1, "abcde"))
        append(path, log, start)
        await until(pilot, lambda: answer in list(screen.events.view.base))
        assert list(screen.events.view.base) == [0, 1, 2, chunks[0], answer]


async def test_a_search_match_inside_a_collapsed_stream_opens_it_at_the_delta(tmp_path: Path) -> None:
    log, chunks = streaming_log(["an ", "old ", "pond", " frog"])
    log.add(assistant(1, 1, "an old pond"))
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        await pilot.press("slash", *"frog", "enter")
        await settle(pilot)
        events = screen.events
        assert events.current_seq == chunks[3] and events.view.row(events.cursor) == (chunks[3], 1)
        assert events.view.row(events.cursor - 4) == (chunks[0], 0)  # the stream's row, now open above it
