"""LiveSession on hostile input: a bad event is a diagnostic, loading finishes, following goes on."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from tests.log.helpers import user
from tests.tui.logs import Log, append, policy_log
from tests.tui.pilot import main_screen, make_app, settle, settled_main_screen, until
from tests.tui.test_live import Follower, load, wait_for
from tui.failures import LOG_CHANGED
from tui.screens.diagnostics import DiagnosticsScreen
from tui.screens.folds import FoldsScreen
from tui.widgets.detail import TextView


def bad_events(log: Log) -> list[int]:
    """Append one event of each kind that used to break a reader; return their seqs."""
    return [
        log.add({"type": "step/end", "data": {"turn": [[[]]], "step": 1}}),
        log.add({"type": "turn/end", "data": {"turn": 3, "reason": [1, "a", None]}}),
        log.add({"type": "assistant/chunk", "data": {"turn": 3, "step": 1, "chunk": "x"}}),
        log.add({**user("five"), "data": {**user("five")["data"], "content": 5}}),
    ]


@pytest.mark.parametrize("retain_bytes", [None, 1], ids=["in-memory", "read-back"])
def test_mutated_log_loads_to_ready_with_diagnostics(tmp_path: Path, retain_bytes: int | None) -> None:
    log = policy_log()
    bad = bad_events(log)
    log.add(user("after the damage"))
    live, _ = load(log.write(tmp_path / "session.jsonl"), retain_bytes=retain_bytes)
    assert live.ready and live.error is None
    assert live.session.next_seq == len(log.events)
    reported = [d.seq for d in live.session.diagnostics if d.code == "bad-event"]
    assert reported == bad
    assert live.session.surface[-1] == len(log.events) - 1
    for seq in bad:
        assert live.event(seq)["seq"] == seq  # still listed, as is


def test_follow_goes_on_past_a_bad_event(tmp_path: Path) -> None:
    log = policy_log()
    path = log.write(tmp_path / "session.jsonl")
    follower = Follower(path)
    live = follower.live
    try:
        wait_for(lambda: live.phase == "following")
        start = len(log.events)
        bad = bad_events(log)
        append(path, log, start)
        wait_for(lambda: live.session.next_seq == len(log.events))
        start = len(log.events)
        last = log.add(user("still following"))
        append(path, log, start)
        wait_for(lambda: live.session.next_seq == len(log.events))
        assert live.session.surface[-1] == last
        assert [d.seq for d in live.session.diagnostics if d.code == "bad-event"] == bad
        assert live.error is None and follower.thread.is_alive()
    finally:
        follower.stop()


@pytest.mark.anyio
async def test_diagnostics_show_in_the_status_line_and_their_screen(tmp_path: Path) -> None:
    log = policy_log()
    bad = bad_events(log)
    log.add(user("after the damage"))
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await settled_main_screen(pilot)
        status = str(screen.query_one("#status", Static).render())
        assert f"{len(bad)} problems in the log (D)" in status
        await pilot.press("D")
        await until(pilot, lambda: isinstance(app.screen, DiagnosticsScreen) and app.screen.shown_generation >= 0)
        table = app.screen.query_one("#diagnostics-table", DataTable)
        codes = [str(table.get_row_at(row)[1]) for row in range(table.row_count)]
        seqs = [str(table.get_row_at(row)[2]) for row in range(table.row_count)]
        assert codes.count("bad-event") == len(bad) and [str(s) for s in bad] == [
            s for c, s in zip(codes, seqs, strict=True) if c == "bad-event"
        ]
        table.move_cursor(row=codes.index("bad-event") + 1)  # the second bad event
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is screen)
        assert screen.events.current_seq == bad[1]


@pytest.mark.anyio
async def test_a_log_cut_short_under_a_no_follow_view_is_a_message_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tui.live

    monkeypatch.setattr(tui.live, "RETAIN_BYTES", 1)  # events are read back from the file on demand …
    monkeypatch.setattr("core.log.linestore.CACHE_LINES", 1)  # … and hardly any stay decoded in memory
    log = policy_log()
    for turn in range(4, 400):  # more than one read block of the file after the first result
        log.turn(turn, f"prompt {turn}", f"result {turn} " * 40)
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path)  # --no-follow: nothing notices the file change
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, FoldsScreen) and app.screen._lines)
        header = path.read_bytes().split(b"\n")[0]
        path.write_bytes(header + b"\n")  # every event line is gone
        await pilot.press("enter")  # the selected result's original: read back from the file
        await until(pilot, lambda: any(n.title == LOG_CHANGED for n in app._notifications))
        assert app.is_running and isinstance(app.screen, FoldsScreen)  # no crash, no result screen
        (note,) = [n for n in app._notifications if n.title == LOG_CHANGED]
        assert "session.jsonl" in note.message and "no longer holds seq" in note.message
        assert note.severity == "error"


@pytest.mark.anyio
async def test_rows_of_a_log_cut_short_say_they_cannot_be_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tui.live

    monkeypatch.setattr(tui.live, "RETAIN_BYTES", 1)
    monkeypatch.setattr("core.log.linestore.CACHE_LINES", 1)
    log = policy_log()
    for turn in range(4, 400):
        log.turn(turn, f"prompt {turn}", f"result {turn} " * 40)
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        mid = len(log.events) // 2
        assert screen is not None and screen.events.cache.get(mid) is None  # far from both ends: not computed
        titles: list[str | None] = []
        notify = app.notify
        monkeypatch.setattr(app, "notify", lambda *a, **kw: (titles.append(kw.get("title")), notify(*a, **kw))[1])
        path.write_bytes(path.read_bytes()[:4096])  # the rest of the file is gone
        assert screen.events.go_seq(mid)
        await until(pilot, lambda: screen.events.cache.get(mid) is not None)
        cut = screen.events.cache.get(mid)
        assert cut is not None and cut.error and cut.summary.startswith("(cannot read this line: ")
        await until(pilot, lambda: LOG_CHANGED in titles)
        assert screen.events.go_seq(0)  # the first lines are still in the file
        await until(pilot, lambda: screen.events.cache.get(0) is not None)
        first = screen.events.cache.get(0)
        assert first is not None and not first.error and not first.summary.startswith("(cannot read")
        assert screen.events.go_seq(mid + 200)
        await until(pilot, lambda: screen.events.cache.get(mid + 200) is not None)
        await settle(pilot)
        assert app.is_running and titles.count(LOG_CHANGED) == 1  # told once per file
        assert screen.events.go_seq(mid)

        def shown() -> str:
            return " ".join(strip.text.strip() for strip in screen.query_one("#detail-original", TextView).lines)

        await until(pilot, lambda: shown().startswith(f"seq {mid} cannot be read: "))
        assert f"no longer holds seq {mid}" in shown()


@pytest.mark.anyio
@pytest.mark.parametrize("size", [(80, 24), (60, 20)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_diagnostics_messages_are_read_whole_on_a_narrow_terminal(tmp_path: Path, size: tuple[int, int]) -> None:
    """At 80 columns the Diagnostics table ran past the screen: each message was cut at its edge (the rest reached
    only by scrolling sideways); the message column now takes the width left and its text wraps in its row."""
    log = policy_log()
    bad_events(log)
    path = log.write(tmp_path / "session.jsonl")
    with open(path, "ab") as f:
        f.write(b'{"type": "user/message", "seq": torn\n')  # a line that is not JSON: the longest message
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await settled_main_screen(pilot)
        await pilot.press("D")
        await until(pilot, lambda: isinstance(app.screen, DiagnosticsScreen) and app.screen.shown_generation >= 0)
        await settle(pilot)
        table = app.screen.query_one("#diagnostics-table", DataTable)
        assert table.virtual_size.width <= table.scrollable_content_region.width, (table.virtual_size, table.size)
        x = sum(column.get_render_width(table) for column in table.ordered_columns[:-1])
        column = " ".join(
            "".join(segment.text for segment in table.render_line(y))[x:].strip()
            for y in range(1, table.virtual_size.height)
        )
        messages = [d.message for d in app.live.session.diagnostics]
        assert any("not valid JSON" in m for m in messages), messages
        for message in messages:
            assert " ".join(message.split()) in " ".join(column.split()), (message, column)
