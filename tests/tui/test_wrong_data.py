"""What the main screen shows must match the log: wrapped payloads, turn attribution, interrupted answers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.read.event_filter import EventFilter
from tests.core.test_turn_attribution import between_turns_log
from tests.tui.logs import Log, append
from tests.tui.pilot import main_screen, make_app, settle, settled_main_screen, until
from tui.screens.main import MainScreen
from tui.widgets.detail import TextView

pytestmark = pytest.mark.anyio


def shown_lines(view: TextView) -> list[str]:
    """Every line of a text column as the screen draws it (cropped at the column's content width)."""
    width = view.scrollable_content_region.width
    return [line.crop_extend(0, width, None).text for line in view.lines]


@pytest.mark.parametrize("size", [(150, 40), (80, 24), (61, 20)])
async def test_detail_pane_shows_every_character_of_a_wrapped_payload(tmp_path: Path, size: tuple[int, int]) -> None:
    words = [f"w{i:03d}{'x' * (i % 13)}," for i in range(400)]
    payload = " ".join(words) + " exit code 1)."
    log = Log()
    seqs = log.turn(1, "run it", payload)
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        screen = await settled_main_screen(pilot)
        if not screen.query_one("#detail").display:
            await pilot.press("d")  # folded away on a narrow screen: show it
        screen.events.go_seq(seqs["result"])
        await settle(pilot)
        view = screen.query_one("#detail-original", TextView)
        lines = shown_lines(view)
        start = next(i for i, line in enumerate(lines) if line.startswith("w000")) - 1
        end = next(i for i, line in enumerate(lines) if line.startswith("── event JSON"))
        shown = "".join(lines[start + 1 : end])
        assert re.sub(r"\s+", "", shown) == re.sub(r"\s+", "", payload)


def row_text(screen: MainScreen, seq: int) -> str:
    """The list line drawn for ``seq`` (the row is scrolled into view first)."""
    events = screen.events
    events.go_seq(seq)
    row = events.view.row_of_seq(seq)
    assert row is not None
    return events.render_line(row - int(events.scroll_y)).text


async def test_events_between_turns_show_no_turn(tmp_path: Path) -> None:
    log, outside = between_turns_log()
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(150, 40)) as pilot:
        screen = await settled_main_screen(pilot)
        for seq in outside:
            text = row_text(screen, seq)
            assert text.split()[1] == "–" and "None" not in text, text
        assert row_text(screen, outside[0] - 1).split()[1] == "1"  # turn 1's turn/end
        screen.events.go_seq(outside[0])
        await settle(pilot)
        title = shown_lines(screen.query_one("#detail-original", TextView))[0]
        assert "between turns" in title and "turn 1 " not in title
        screen._set_filter(EventFilter(turns=(1, 1)))
        await settle(pilot)
        assert not set(outside) & set(screen.events.view.base)


async def test_interrupted_answer_is_marked(tmp_path: Path) -> None:
    log = Log()
    seqs = log.turn(1, "first", "ok")
    log.events[seqs["answer"]]["data"]["interrupted"] = True
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(150, 40)) as pilot:
        screen = await settled_main_screen(pilot)
        assert "interrupted" in row_text(screen, seqs["answer"])
        await settle(pilot)
        title = " ".join(shown_lines(screen.query_one("#detail-original", TextView))[:3])
        assert "interrupted" in title


def header_count(screen: MainScreen) -> int:
    match = re.search(r"(\d+) events", str(screen.query_one("#header").render()))
    assert match is not None
    return int(match.group(1))


async def test_header_counts_never_lag_the_list(tmp_path: Path) -> None:
    """Once loaded and after every batch of appends, the header counts at least every row the list shows.

    An append repaints the header in the frame right after the list's (``MainScreen._status_after_frame``: one
    frame, so the list's frame does not widen to the detail pane). The test waits for conditions (rows shown,
    no header repaint pending), never for a time, and checks the count at each of those points.
    """
    log = Log()
    for n in range(1, 400):
        log.turn(n, f"task {n}", "x" * 600)
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path, follow=True)
    async with app.run_test(size=(150, 40)) as pilot:
        screen = await settled_main_screen(pilot)

        def painted(rows: int) -> bool:
            return len(screen.events.view) == rows and not screen._status_due

        assert painted(len(log.events)) and header_count(screen) >= len(log.events)
        for batch in range(5):
            start = len(log.events)
            for n in range(400 + 4 * batch, 404 + 4 * batch):
                log.turn(n, "later", "ok")
            append(path, log, start)
            await until(pilot, lambda: painted(len(log.events)))
            assert header_count(screen) >= len(log.events), str(screen.query_one("#header").render())
        await settle(pilot)
        assert header_count(screen) == len(log.events)


async def test_status_bar_says_when_the_list_does_not_follow(tmp_path: Path) -> None:
    log = Log()
    log.turn(1, "first", "ok")
    path = log.write(tmp_path / "session.jsonl")
    async with make_app(path, follow=False).run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        screen = main_screen(pilot.app)  # type: ignore[arg-type]
        assert screen is not None
        status = str(screen.query_one("#status").render())
        assert "not following" in status and " following" not in status.replace("not following", "")
    async with make_app(path, follow=True).run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        screen = main_screen(pilot.app)  # type: ignore[arg-type]
        assert screen is not None
        assert "following" in str(screen.query_one("#status").render())
        await pilot.press("up")
        status = str(screen.query_one("#status").render())
        assert "scroll lock" in status and "paused" not in status
