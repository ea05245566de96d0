"""Time travel in the TUI: picking a moment (row, chart, Router screen), stepping by request, back to live."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from tests.tui.logs import Log, append, policy_log, streaming_log
from tests.tui.pilot import main_screen, make_app, opened, quiet, settle, until
from tui.screens.request import RequestScreen
from tui.screens.router import RouterScreen

SIZE = (150, 42)


def _copy(fixtures_dir: Path, tmp_path: Path, name: str) -> Path:
    return Path(shutil.copy(fixtures_dir / name, tmp_path / "session.jsonl"))


@pytest.mark.anyio
async def test_stepping_by_request_and_back_to_live(fixtures_dir: Path, tmp_path: Path) -> None:
    app = make_app(_copy(fixtures_dir, tmp_path, "compaction-recovery.session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = main_screen(app)
        assert main is not None and main.stop is None
        seen = []
        for key in ("comma", "comma", "comma", "comma", "full_stop"):
            await pilot.press(key)
            await settle(pilot)
            assert main.stop is not None
            seen.append((main.stop.moment.seq, main.stop.surface))
        assert seen == [(22, [21, 13, 15]), (17, [4, 13, 15]), (7, [4]), (7, [4]), (17, [4, 13, 15])]
        assert main.mode == "surface" and [main.events.view.base[i] for i in range(3)] == [4, 13, 15]
        await pilot.press("L")
        await settle(pilot)
        assert main.stop is None and list(main.events.view.base) == [21, 13, 15, 28]


@pytest.mark.anyio
async def test_a_row_picks_the_moment_and_r_opens_its_request(fixtures_dir: Path, tmp_path: Path) -> None:
    app = make_app(_copy(fixtures_dir, tmp_path, "compaction-recovery.session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = main_screen(app)
        assert main is not None
        main.events.go_seq(19)  # compaction/start: after the failed attempt, before the compaction landed
        await pilot.press("T")
        await settle(pilot)
        assert main.stop is not None and main.stop.moment.label() == "at seq 19 · turn 1 step 2"
        assert main.stop.surface == [4, 13, 15]
        await pilot.press("R")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RequestScreen)
        assert (screen.index, screen.travel.sync().points[screen.index].attempt) == (1, 1)
        await pilot.press("full_stop")
        await settle(pilot)
        assert screen.index == 2
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is main


@pytest.mark.anyio
async def test_t_on_a_collapsed_stream_row_travels_to_after_its_last_delta(tmp_path: Path) -> None:
    log = streaming_log()
    chunks = [e["seq"] for e in log.events if e["type"] == "assistant/chunk"]
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = main_screen(app)
        assert main is not None
        main.events.go_seq(chunks[0])
        await settle(pilot)
        block = main.events.current_block
        assert block is not None and (block.start, block.end) == (chunks[0], chunks[-1] + 1)  # the row stands for all
        await pilot.press("T")
        await settle(pilot)
        assert main.stop is not None and main.stop.moment.label() == f"at seq {chunks[-1]} · turn 4 step 1"


@pytest.mark.anyio
async def test_a_click_on_the_chart_travels_to_that_request(fixtures_dir: Path, tmp_path: Path) -> None:
    app = make_app(_copy(fixtures_dir, tmp_path, "tool-call-turn.session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = main_screen(app)
        assert main is not None
        await pilot.click("#chart", offset=(18, 0))  # the first column of bars: the first request
        await settle(pilot)
        assert main.stop is not None and main.stop.moment.label() == "at seq 8 · turn 1 step 1"
        await pilot.click("#chart", offset=(19, 0))
        await settle(pilot)
        assert main.stop.moment.label() == "at seq 67 · turn 1 step 2"


@pytest.mark.anyio
async def test_the_router_screen_travels_to_a_step(tmp_path: Path) -> None:
    app = make_app(policy_log().write(tmp_path / "demo" / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert isinstance(app.screen, RouterScreen)
        await pilot.press("down", "T")
        await settle(pilot)
        main = main_screen(app)
        assert app.screen is main and main is not None and main.stop is not None
        point = main.travel.sync().points[main.stop.point or 0]
        assert (point.turn, point.step) == (main.stop.moment.turn, main.stop.moment.step)
        assert main.stop.moment.seq == point.seq


@pytest.mark.anyio
async def test_request_keys_at_either_end_and_router_t_without_a_step_say_why(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    """``,`` on the first request, ``.`` on the last and ``T`` on a Router screen with no decision did nothing."""
    app = make_app(_copy(fixtures_dir, tmp_path, "compaction-recovery.session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = main_screen(app)
        assert main is not None
        main.events.go_seq(7)  # the first request went out there
        await pilot.press("R")
        await settle(pilot)
        assert isinstance(app.screen, RequestScreen) and app.screen.index == 0
        app.clear_notifications()
        await pilot.press("comma")
        await until(pilot, lambda: any("the first request" in n.message for n in app._notifications))
        last = len(app.screen.travel.sync().points) - 1
        while app.screen.index < last:
            await pilot.press("full_stop")
            await settle(pilot)
        app.clear_notifications()
        await pilot.press("full_stop")
        await until(pilot, lambda: any("the last request" in n.message for n in app._notifications))
        await pilot.press("escape", "r")
        await until(pilot, lambda: isinstance(app.screen, RouterScreen))
        await settle(pilot)
        app.clear_notifications()
        await pilot.press("T")
        await until(pilot, lambda: any("decision" in n.message for n in app._notifications))


@pytest.mark.anyio
async def test_request_keys_after_the_log_was_replaced_by_a_shorter_one(fixtures_dir: Path, tmp_path: Path) -> None:
    """The request view kept the index of a request of the log it was opened on; once that log was replaced by one
    with fewer requests, ``,`` asked the new timeline for a request it does not have and the worker's IndexError
    ended the app. It steps within the new log's requests instead."""
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await opened(pilot, "R", RequestScreen)  # the last request
        assert screen.index == 5
        replacement = tmp_path / "new.jsonl"
        shutil.copy(fixtures_dir / "compaction-recovery.session.jsonl", replacement)
        replacement.replace(path)  # three requests
        live = app.live
        assert live is not None
        await until(pilot, lambda: live.ready and live.session.next_seq == 31)
        await pilot.press("comma")
        await settle(pilot)
        assert app.is_running and app.screen is screen
        assert 0 <= screen.index < len(screen.travel.sync().points) == 3


@contextlib.asynccontextmanager
async def _at_the_last_request(path: Path) -> AsyncIterator[tuple[Pilot[Any], RequestScreen, Callable[[], str]]]:
    """The request view opened on the last of ``path``'s six requests, followed live, and its heading."""
    app = make_app(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await opened(pilot, "R", RequestScreen)

        def heading() -> str:
            return str(screen.query_one("#request-heading").render())

        assert heading().startswith("request 6/6"), heading()
        yield pilot, screen, heading


@pytest.mark.anyio
async def test_the_request_view_shows_the_new_logs_request_once_the_log_was_replaced(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    """A log replaced (or truncated and rewritten) under an open request view left the view showing the old log's
    request (``request 6/6``, its messages and diff) as if it were the open log's, until a key was pressed; the view
    now rebuilds from the new log at once: its request at the same place, else its last."""
    path = policy_log().write(tmp_path / "session.jsonl")
    async with _at_the_last_request(path) as (pilot, screen, heading):
        replacement = tmp_path / "new.jsonl"
        shutil.copy(fixtures_dir / "compaction-recovery.session.jsonl", replacement)
        replacement.replace(path)  # three requests
        await until(pilot, lambda: heading().startswith("request 3/3 · turn 1 step 2 attempt 2"))
        assert pilot.app.screen is screen and len(screen.query_one(DataTable).rows) == 4


@pytest.mark.anyio
async def test_the_request_view_says_a_replacing_session_has_no_request_yet(tmp_path: Path) -> None:
    """A log replaced by a new session that had sent no request yet left the view showing the old session's request
    (its heading, diff, tools and messages) as the open log's, with an error toast telling to reopen the log; it
    now says the log holds no request yet, lists nothing, and shows the new session's requests once they go
    out."""
    path = policy_log().write(tmp_path / "session.jsonl")
    async with _at_the_last_request(path) as (pilot, screen, heading):
        fresh = Log({**Log().header, "id": "t-2"})
        fresh.write(tmp_path / "new.jsonl").replace(path)  # a new session: its header alone
        await until(pilot, lambda: "no model request yet" in heading().lower())
        assert pilot.app.screen is screen and screen.view is None
        assert not screen.query_one(DataTable).rows
        for line in ("#request-diff", "#request-tools"):
            assert not str(screen.query_one(line).render()).strip(), line
        assert not [n.message for n in pilot.app._notifications if n.severity == "error"]  # no "reopen the log"
        fresh.turn(1, "first task", "done")
        append(path, fresh, 0)
        await until(pilot, lambda: heading().startswith("request 2/2 · turn 1 step 2"))  # its last, as ever
        assert screen.query_one(DataTable).rows


@pytest.mark.anyio
async def test_the_request_view_says_a_deleted_log_was_deleted(tmp_path: Path) -> None:
    """A log deleted under an open request view was said to be "replaced or cut short"; the view says it was
    deleted, and shows the requests of a log that comes back at its path."""
    path = policy_log().write(tmp_path / "session.jsonl")
    async with _at_the_last_request(path) as (pilot, screen, heading):
        path.unlink()
        await until(pilot, lambda: "no model request" in heading().lower())
        assert "deleted" in heading() and "replaced" not in heading(), heading()
        assert screen.view is None and not screen.query_one(DataTable).rows
        policy_log().write(tmp_path / "new.jsonl").replace(path)
        await until(pilot, lambda: heading().startswith("request 6/6"))


@pytest.mark.anyio
async def test_request_view_steps_on_to_requests_that_went_out_while_it_was_open(tmp_path: Path) -> None:
    """The request view bounded ``.`` by the requests the timeline held when it was last caught up: on a followed
    log, a request that went out while the view was open could not be reached (``This is the last request``) until
    something else caught the timeline up; ``.`` catches it up first."""
    log = policy_log()
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await opened(pilot, "R", RequestScreen)  # the last request
        assert screen.index == 5
        start = len(log.events)
        log.turn(4, "one more", "done")
        append(path, log, start)
        live = app.live
        assert live is not None
        await until(pilot, lambda: live.session.next_seq == len(log.events))
        await settle(pilot)
        await pilot.press("full_stop")
        await settle(pilot)
        assert screen.index == 6


@pytest.mark.anyio
@pytest.mark.parametrize("key", ["R", "T", "comma", "full_stop", "click"])
async def test_travel_keys_and_chart_clicks_on_a_deleted_log_say_why_they_do_nothing(tmp_path: Path, key: str) -> None:
    """With the followed log deleted, R, ',' and '.' did nothing and T said it needed a loaded log and a selected
    row, which the operator had (only the header told), and a click on the context chart did nothing without a
    word: each toast says the log was deleted."""
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        path.unlink()
        await until(pilot, lambda: app.live is not None and app.live.log_deleted)
        app.clear_notifications()
        if key == "click":
            await pilot.click("#chart", offset=(18, 0))
        else:
            await pilot.press(key)
        await until(pilot, lambda: any(": the log was deleted" in n.message for n in app._notifications))


@pytest.mark.anyio
async def test_a_click_on_the_chart_past_its_last_request_says_none_went_out_there(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    """A click on the chart right of its last bar (two requests, two columns) did nothing, without a word; the
    toast says no model request went out there."""
    app = make_app(_copy(fixtures_dir, tmp_path, "tool-call-turn.session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = main_screen(app)
        assert main is not None
        app.clear_notifications()
        await pilot.click("#chart", offset=(40, 0))
        await until(pilot, lambda: any("No model request went out there" in n.message for n in app._notifications))
        assert main.stop is None


@pytest.mark.anyio
async def test_a_long_model_name_leaves_the_request_views_messages_in_sight_at_60x20(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    """The request view's heading named the log's model whole; a name of 1,500 characters (a request header's
    config is the log's to say) wrapped over the whole screen at 60x20 and pushed the diff line, the tools and the
    messages' table below its end: no message could be brought in sight. The heading takes at most 40% of the
    screen and the diff line 20%: the table keeps its rows; and the model is cut at 80 characters, as a message cuts
    a name, so the heading's parts after it (the message count, the sizes, the usage) are in sight too."""
    lines = (fixtures_dir / "compaction-recovery.session.jsonl").read_text().splitlines()
    events = [orjson.loads(line) for line in lines]
    for event in events:
        if event.get("type") == "request/header":
            event["data"]["header"]["config"]["model"] = "m" * 1500
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(event) + b"\n" for event in events))
    app = make_app(path)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        main = main_screen(app)
        assert main is not None
        main.events.go_seq(19)
        screen = await opened(pilot, "R", RequestScreen)
        table = screen.query_one(DataTable)
        await until(pilot, lambda: table.row_count == 4)
        await quiet(pilot)
        assert table.region.bottom <= 19 and table.region.height >= 5, table.region  # its header and the 4 rows
        shown = screen.query_one("#request-heading")  # whole in its rows: the parts after the model in sight too
        rows = shown.get_content_height(shown.region.size, app.size, shown.content_region.width)
        assert rows <= shown.content_region.height and "4 messages" in str(shown.render()), (rows, shown.region)
