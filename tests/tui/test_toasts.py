"""Where the main screen's toasts sit: over the context chart, below the header, never over the rows the operator
reads (the newest, when following), the detail pane or the status line; the newest shown whole, the older ones
waiting while it takes the room."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.geometry import Region
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import DataTable
from textual.widgets._toast import Toast

from tests.tui.logs import policy_log
from tests.tui.pilot import make_app, quiet, settle, settled_main_screen, until
from tui.screens.help import HelpScreen
from tui.screens.policy_screen import PolicyScreen
from tui.screens.toasts import stack_toasts, toast_rack
from tui.widgets.chart import ContextChart
from tui.widgets.footer import PriorityFooter
from tui.widgets.header import SessionHeader

pytestmark = pytest.mark.anyio
SIZES = [(80, 24), (150, 45)]
EXPORTED = (
    "Exported the whole list (37 rows) and the surface now to /home/operator/.local/share/tapedeck/exports/"
    "t-1-20261205T174233Z.html (0 redactions). The filter (errors only) is not applied: the page lists every event."
)


def shown(toasts: list[Toast]) -> list[Toast]:
    """The toasts drawn now (a waiting one is not)."""
    return [t for t in toasts if t.display and t.parent is not None and t.parent.display and t.region.area]


async def two_toasts(pilot: Pilot[None], screen: Screen[None]) -> list[Toast]:
    """An answer's toast, then an alert's, raised on ``screen``: the ones drawn once they settled (the alert's
    last)."""
    pilot.app.notify("Checkpoint: find the bug.", title="Applied", timeout=60)
    pilot.app.notify("cache hit rate fell to 12% (seq 30, this session)", title="Alert: cache", severity="warning",
                     timeout=60)  # fmt: skip
    await until(pilot, lambda: len(screen.query(Toast)) == 2)
    await settle(pilot)
    await quiet(pilot)
    toasts = shown(list(screen.query(Toast)))
    assert toasts and "cache hit rate" in str(toasts[-1].render()), toasts
    return toasts


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_toasts_sit_over_the_chart_not_the_rows(tmp_path: Path, size: tuple[int, int]) -> None:
    """At 80x24 the toasts stacked at the bottom right, over the newest rows (and the detail pane, wider) for their
    whole timeout; they now take the chart's rows, the newest first, and the older ones wait."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"), follow=True)
    async with app.run_test(size=size, notifications=True) as pilot:
        screen = await settled_main_screen(pilot)
        toasts = await two_toasts(pilot, screen)
        chart = screen.query_one(ContextChart).region
        for toast in toasts:
            assert chart.contains_region(toast.region), (toast.region, chart)
        for widget in (screen.events, screen.detail, screen.query_one(SessionHeader), screen.query_one("#status")):
            for toast in toasts:
                assert not toast.region.overlaps(widget.region), (widget, toast.region, widget.region)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_a_long_toast_is_shown_whole_and_leaves_the_newest_rows(tmp_path: Path, size: tuple[int, int]) -> None:
    """An export's toast, longer than the chart is tall, is shown whole, as wide as reads well, and covers neither
    the header nor the list's newest row (its cursor, while following)."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"), follow=True)
    async with app.run_test(size=size, notifications=True) as pilot:
        screen = await settled_main_screen(pilot)
        app.notify(EXPORTED, timeout=60)
        await until(pilot, lambda: len(screen.query(Toast)) == 1)
        await settle(pilot)
        await quiet(pilot)
        [toast] = shown(list(screen.query(Toast)))
        assert toast.region.width >= min(60, size[0] * 3 // 4), toast.region
        assert screen.find_widget(toast).visible_region == toast.region, toast.region  # not cut by its rack
        events = screen.events.content_region
        newest = Region(events.x, events.bottom - 1, events.width, 1)
        assert not toast.region.overlaps(newest), (toast.region, newest)
        assert not toast.region.overlaps(screen.query_one(SessionHeader).region), toast.region


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("key", ["o", "c", "t", "r", "C", "D"])
async def test_policy_screen_toasts_sit_under_the_heading_not_over_the_outcomes(
    tmp_path: Path, size: tuple[int, int], key: str
) -> None:
    """On the policy screens the toasts stacked at Textual's bottom right, over the outcome panel that says how a
    request ended (and the message line above it); they now stack from the top of the screen's body, under its
    heading and its tables' column labels (which they covered too), as the main screen's do under its header, and
    leave the message line, the outcomes and the footer."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"), follow=True)
    async with app.run_test(size=size, notifications=True) as pilot:
        await settled_main_screen(pilot)
        await pilot.press(key)
        await until(pilot, lambda: isinstance(app.screen, PolicyScreen))
        screen = app.screen
        await settle(pilot)
        toasts = await two_toasts(pilot, screen)
        body = screen.query_one(".policy-body").region
        for toast in toasts:
            assert body.contains_region(toast.region), (toast.region, body)
        for widget in ("#policy-heading", "#policy-message", "#policy-outcomes", PriorityFooter):
            region = screen.query_one(widget).region  # type: ignore[call-overload]
            for toast in toasts:
                assert not toast.region.overlaps(region), (widget, toast.region, region)
        # nor the column labels of the screen's tables (they covered the right half of them)
        labels = [Region(t.region.x, t.region.y, t.region.width, t.header_height) for t in screen.query(DataTable)
                  if t.show_header and t.region.area]  # fmt: skip
        assert labels
        for region in labels:
            for toast in toasts:
                assert not toast.region.overlaps(region), ("column labels", toast.region, region)
        # nor a side pane beside the table (the value being typed on Config, Checkpoints' rewind preview)
        for side in screen.query(".policy-side"):
            if side.region.x > body.x:
                for toast in toasts:
                    assert not toast.region.overlaps(side.region), ("side pane", toast.region, side.region)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_help_screen_toasts_leave_the_help_text(tmp_path: Path, size: tuple[int, int]) -> None:
    """With help open, an answer's and an alert's toasts stacked at Textual's bottom right, over the help text for
    their whole timeout; the help box now gives up the rows they take (it scrolls), so both are read whole."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"), follow=True)
    async with app.run_test(size=size, notifications=True) as pilot:
        await settled_main_screen(pilot)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        screen = app.screen
        await settle(pilot)
        toasts = await two_toasts(pilot, screen)
        assert len(toasts) == 2, toasts
        box = screen.query_one("#help-dialog").region
        for toast in toasts:
            assert not toast.region.overlaps(box), (toast.region, box)
            assert screen.find_widget(toast).visible_region == toast.region, toast.region  # shown whole
        assert box.height >= size[1] // 2, box


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_request_view_toasts_leave_the_heading_the_labels_and_the_last_messages(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """In the request view (``R``) the toasts stacked at Textual's bottom right, over the request's last messages,
    the newest turn's, for their whole timeout; they now stack under the table's column labels, over its first
    messages (the system prompt and the oldest, the part the provider's cache holds), as on the policy screens."""
    from tui.screens.request import RequestScreen

    log = policy_log()
    for n in range(4, 24):  # a request of more messages than the view has rows
        log.turn(n, f"task {n}", "done")
    app = make_app(log.write(tmp_path / "session.jsonl"), follow=True)
    async with app.run_test(size=size, notifications=True) as pilot:
        await settled_main_screen(pilot)
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, RequestScreen) and app.screen.view is not None)
        screen = app.screen
        await settle(pilot)
        toasts = await two_toasts(pilot, screen)
        table = screen.query_one(DataTable)
        region = table.region
        table.scroll_end(animate=False)  # the last messages in sight
        await settle(pilot)
        last = Region(region.x, region.bottom - 2, region.width, 2)
        labels = Region(region.x, region.y, region.width, table.header_height)
        for name, widget in [("heading", screen.query_one("#request-heading").region), ("labels", labels),
                             ("last message", last), ("footer", screen.query_one(PriorityFooter).region)]:  # fmt: skip
            for toast in toasts:
                assert not toast.region.overlaps(widget), (name, toast.region, widget)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_alerts_screen_toasts_leave_the_heading_the_labels_the_newest_alerts_and_the_reason(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """On the Alerts screen (``A``) the toasts stacked at Textual's bottom right, over the newest alerts (listed
    last), the selected alert's reason and the count for their whole timeout; they now stack under the table's
    column labels, over its oldest alerts, as on the policy screens."""
    from core.alerts.engine import Alert
    from tui.screens.alerts import AlertsScreen

    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path, follow=True)
    async with app.run_test(size=size, notifications=True) as pilot:
        await settled_main_screen(pilot)
        for n in range(60):  # more alerts than the table has rows
            app.board.add(
                Alert("t-1", str(path), "error-streak", n, "warning", f"2 tool calls failed ({n})", n + 1), str(path)
            )
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AlertsScreen))
        screen = app.screen
        table = screen.query_one(DataTable)
        table.move_cursor(row=table.row_count - 1)  # the newest alert, its reason under the table
        await settle(pilot)
        toasts = await two_toasts(pilot, screen)
        region = table.region
        newest = Region(region.x, region.bottom - 2, region.width, 2)
        labels = Region(region.x, region.y, region.width, table.header_height)
        for name, widget in [("heading", screen.query_one("#policy-heading").region), ("labels", labels),
                             ("newest alerts", newest), ("reason", screen.query_one("#alerts-selected").region),
                             ("count", screen.query_one("#alerts-summary").region),
                             ("footer", screen.query_one(PriorityFooter).region)]:  # fmt: skip
            for toast in toasts:
                assert not toast.region.overlaps(widget), (name, toast.region, widget)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_full_result_view_toasts_leave_the_result(tmp_path: Path, size: tuple[int, int]) -> None:
    """The Folds screen's full result view (``v``) was the one dialog whose toasts stacked at Textual's bottom right,
    over the result's text for their whole timeout (and the Folds screen beneath drew the ones already up, peeking
    out around the box); they now keep clear of its box, as every dialog's do."""
    from textual.widgets import TextArea

    from tui.screens.folds import FoldsScreen, ResultScreen

    app = make_app(policy_log().write(tmp_path / "session.jsonl"), follow=True)
    async with app.run_test(size=size, notifications=True) as pilot:
        await settled_main_screen(pilot)
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, FoldsScreen))
        await settle(pilot)
        app.notify("an alert already up", timeout=60)
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, ResultScreen))
        screen = app.screen
        await settle(pilot)
        app.notify(EXPORTED, title="exported", timeout=60)  # a long one: several rows
        await until(pilot, lambda: len(screen.query(Toast)) == 2)
        await settle(pilot)
        await quiet(pilot)
        box = screen.query_one(TextArea).parent.region  # type: ignore[union-attr]
        toasts = [t for s in app.screen_stack for t in shown(list(s.query(Toast)))]
        for toast in toasts:
            assert not toast.region.overlaps(box), (toast.region, box)
        # at 80x24 the box, in the middle, left a row above it and two below: the newest toast alone was shown and
        # the one already up waited until the view closed; the box now sits at the bottom and gives up the rows
        # above it that the toasts take (half the screen at most; its text scrolls)
        assert [t.parent.parent.screen for t in toasts] == [screen, screen], toasts  # type: ignore[union-attr]
        for toast in toasts:
            assert screen.find_widget(toast).visible_region == toast.region, toast.region  # shown whole
            assert toast.region.bottom <= box.y, (toast.region, box)
        assert box.height >= size[1] // 2, box


@pytest.mark.parametrize("size", [(80, 24), (60, 20)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_history_toast_leaves_the_only_alert_on_the_alerts_screen(tmp_path: Path, size: tuple[int, int]) -> None:
    """The history's toast (``1 alert in this log's history``), opened on with ``A``, stacked under the column
    labels over the table's first row, which with one alert is the newest: it now takes the blank rows under the
    alerts listed, and the newest alert stays in sight."""
    from core.alerts.engine import Alert
    from tui.alerts import HistoryRecalled
    from tui.screens.alerts import AlertsScreen

    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path, follow=True)
    async with app.run_test(size=size, notifications=True) as pilot:
        await settled_main_screen(pilot)
        alert = Alert("t-1", str(path), "error-streak", 3, "warning", "2 tool calls failed in a row", 1_000)
        app.board.add(alert, alert.path)
        app.post_message(HistoryRecalled([alert]))
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AlertsScreen) and len(app.screen.query(Toast)) == 1)
        screen = app.screen
        await settle(pilot)
        await quiet(pilot)
        [toast] = shown(list(screen.query(Toast)))
        assert "in this log's history" in str(toast.render()), toast.render()
        table = screen.query_one(DataTable)
        row = Region(table.region.x, table.region.y + table.header_height, table.region.width, 1)
        for name, widget in [("newest alert", row), ("labels", Region(row.x, table.region.y, row.width, 1)),
                             ("reason", screen.query_one("#alerts-selected").region),
                             ("count", screen.query_one("#alerts-summary").region),
                             ("footer", screen.query_one(PriorityFooter).region)]:  # fmt: skip
            assert not toast.region.overlaps(widget), (name, toast.region, widget)


async def test_an_emptied_holder_leaves_the_older_toasts_shown() -> None:
    """A toast whose notification is gone before its timer fires (expired, or unnotified) is taken out of its holder
    at the next refresh, and Textual leaves the holder empty. ``stack_toasts`` counted an empty holder as one that
    did not fit, and hid every older toast behind it, however much room there was; it now takes no room."""
    app: App[None] = App()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        for text in ("older", "gone", "newest"):
            app.notify(text, timeout=60)
        await until(pilot, lambda: len(app.screen.query(Toast)) == 3)
        app._unnotify(list(app._notifications)[1])  # as Textual does when a notification expired
        await until(pilot, lambda: len(app.screen.query(Toast)) == 2)
        await pilot.pause()
        rack = toast_rack(app.screen)
        assert rack is not None and [len(holder.children) for holder in rack.children] == [1, 0, 1]
        stack_toasts(app.screen, top=True, edge=0, room=20, keep_newest=True)
        assert [holder.display for holder in rack.children] == [True, False, True]
