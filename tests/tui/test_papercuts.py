"""The operator's papercuts (issue 23): each flow as the operator meets it, driven through the keys."""

from __future__ import annotations

import io
import os
import re
import shutil
from pathlib import Path

import orjson
import pytest
from rich.console import Console
from textual import events
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Footer, Input, Label, Static, TextArea
from textual.widgets._footer import FooterKey
from textual.widgets._toast import Toast

from core.control.host_state import write_state
from tests.tui.logs import hold_host, policy_log, release_hosts, streaming_log
from tests.tui.pilot import (
    NO_KEYMAP,
    main_screen,
    make_app,
    open_filter,
    palette_searched,
    quiet,
    raised_toasts,
    settle,
    settled_main_screen,
    until,
)
from tui.app import TapedeckApp
from tui.screens.confirm import AskScreen, ConfirmScreen
from tui.screens.control import first_run_hint
from tui.screens.filter import FilterScreen
from tui.screens.help import HelpScreen
from tui.screens.main import MainScreen
from tui.widgets.chart import ContextChart
from tui.widgets.detail import DetailPane, TextView
from tui.widgets.header import SessionHeader, cost_label, host_label, provider_model

pytestmark = pytest.mark.anyio
SIZE = (150, 40)


async def test_the_filter_dialog_takes_typing_at_once(tmp_path: Path) -> None:
    log = policy_log()
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f")
        assert isinstance(app.screen, FilterScreen)
        await pilot.press(*"tool/result", "enter")
        await settle(pilot)
        screen = main_screen(app)
        assert isinstance(app.screen, MainScreen) and screen is not None
        assert list(screen.events.view.base) == [e["seq"] for e in log.events if e["type"] == "tool/result"]


@pytest.mark.parametrize("size", [(80, 24), (150, 45)], ids=["80x24", "150x45"])
async def test_the_filter_dialog_shows_its_labels_whole(tmp_path: Path, size: tuple[int, int]) -> None:
    """The dialog's labels were cut at its width, whatever the terminal's (the types field's help lost
    ``!assistant/chunk leaves one out``, the seen types their tail); they wrap."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        dialog = await open_filter(pilot)
        inside = dialog.query_one("#filter-dialog").scrollable_content_region
        labels = [label for label in dialog.query(Label) if str(label.content)]
        assert len(labels) >= 5
        for label in labels:
            assert label.region.right <= inside.right, (str(label.content), label.region, inside)


async def test_the_palette_names_each_command_once(tmp_path: Path) -> None:
    """Each palette entry is its title plus a help line; the help line must not say the title again."""
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: len(app.screen.query("CommandList")) == 1)
        # the palette lists its commands from a worker of its own, a batch at a time: read once it is done
        await until(pilot, lambda: palette_searched(app) and app.screen.query_one("CommandList").option_count > 20)
        options = app.screen.query_one("CommandList")
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        entries = [p.split("\n", 1) for p in prompts]
        assert all(len(e) == 2 for e in entries)
        repeated = [t for t, help_line in entries if help_line == t or help_line.startswith(f"{t} (")]
        assert repeated == []
        assert "Checkpoint\nkey K" in prompts


@pytest.mark.parametrize("key", ["K", "P", "m", "S"])
async def test_a_control_key_on_a_read_only_log_says_why(tmp_path: Path, key: str) -> None:
    path = policy_log(host=False).write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(key)
        await until(pilot, lambda: any("DeepSeek Harness" in n.message for n in app._notifications))
        assert isinstance(app.screen, MainScreen)  # no dialog opened
        assert not (tmp_path / "control.jsonl").exists()


async def test_a_control_key_after_the_host_exited_says_when(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The message says when the host exited, as host.json says: the live session's worker reads that file
    with the host's state; the key read it on the UI thread at each press."""
    import threading

    from core.control import host_state

    on_ui: list[Path] = []
    read_regular = host_state.read_regular

    def recorded(file: Path, *args: object, **kwargs: object) -> bytes:
        if threading.current_thread() is threading.main_thread():
            on_ui.append(file)
        return read_regular(file, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(host_state, "read_regular", recorded)
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    toasts = raised_toasts(app)  # the first may go (8 s) before a loaded machine shows the fourth
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await until(pilot, lambda: "host running" in str(app.screen.query_one(SessionHeader).render()))
        release_hosts()
        write_state(path, "exited", 1, 1786000000000)
        await until(pilot, lambda: "host exited" in str(app.screen.query_one(SessionHeader).render()))
        for key in ("K", "P", "m", "S"):
            await pilot.press(key)
        await until(
            pilot, lambda: sum("No live host (it exited at 2026" in n.message for n in toasts) == 4
        )
        assert on_ui == []
        assert isinstance(app.screen, MainScreen)
        assert not (tmp_path / "control.jsonl").exists()


async def test_one_cached_share_on_the_main_screen_and_help_says_what_it_is(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    log = shutil.copy(fixtures_dir / "tool-call-turn.session.jsonl", tmp_path / "session.jsonl")
    app = make_app(Path(log))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        header = str(app.screen.query_one(SessionHeader).render())
        chart = str(app.screen.query_one(ContextChart).render())
        shares = re.findall(r"(\d+)% cached|cached +(\d+)%", header + "\n" + chart)
        assert len(shares) == 2 and len({a or b for a, b in shares}) == 1, (header, chart)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        legend = dict(app.screen.legend)
        assert "cache-hit input tokens / all input tokens" in legend["cached"]


@pytest.mark.parametrize("width", [80, 100])
async def test_d_shows_the_detail_pane_wrapped_to_its_width(tmp_path: Path, width: int) -> None:
    """Rows selected while the pane is folded away are never wrapped for its zero width (one cell a line)."""
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=(width, 30)) as pilot:
        screen = await settled_main_screen(pilot)
        pane = screen.query_one(DetailPane)
        original = pane.query_one("#detail-original", TextView)
        await pilot.press("g", "down", "up")
        await settle(pilot)
        assert not pane.display
        assert all(line.cell_length > 1 for line in original.lines[:3]), [
            line.text for line in original.lines[:3]
        ]
        await pilot.press("d")
        await settle(pilot)
        assert pane.display and pane.size.width > 20
        assert max(line.cell_length for line in original.lines) > 20, [
            line.text for line in original.lines[:3]
        ]


def _header_lines(app: TapedeckApp) -> list[str]:
    return str(app.screen.query_one(SessionHeader).render()).split("\n")


async def test_the_header_has_one_state_word(tmp_path: Path) -> None:
    """The host's state is the header's one state word; line 1 says where the session is."""
    path = streaming_log().write(tmp_path / "session.jsonl")  # turn 4 is open
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        write_state(path, "paused", os.getpid(), 1)
        await until(pilot, lambda: "host paused" in _header_lines(app)[1])
        line1 = _header_lines(app)[0]
        assert "turn 4 step 1" in line1
        assert not {"running", "paused", "idle", "exited"} & set(line1.split())


async def test_a_stopped_session_reads_as_the_turn_that_ended_and_the_host(tmp_path: Path) -> None:
    log = policy_log()
    log.add({"type": "turn/start", "data": {"turn": 4}})
    log.add(
        {"type": "turn/end", "data": {"turn": 4, "reason": {"kind": "aborted", "reason": {"kind": "user"}}}}
    )
    path = log.write(tmp_path / "session.jsonl")
    release_hosts()
    write_state(path, "exited", 1, 1786000000000)
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await until(pilot, lambda: "host exited" in _header_lines(app)[1])
        assert "turn 4 aborted" in _header_lines(app)[0]


async def test_line_one_keeps_turn_step_and_phase_at_60_columns(tmp_path: Path) -> None:
    log = policy_log()
    log.add({"type": "session/title", "data": {"title": "Make the failing integration tests pass again"}})
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        line1 = app.screen.query_one(SessionHeader).render_line(0).text
        assert "turn 3 completed" in line1 and "phase explore" in line1, line1


@pytest.mark.parametrize("width", [80, 200])
async def test_the_header_keeps_state_model_turn_and_cost_whole(fixtures_dir: Path, width: int) -> None:
    """At 80 columns the lesser fields give way; state, model, turn and cost stay, and no word is cut."""
    app = make_app(fixtures_dir / "multi-turn.session.jsonl")
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        header = app.screen.query_one(SessionHeader)
        live = header.live
        lines = [header.render_line(i).text.rstrip() for i in range(2)]
        title = live.facts.title or ""
        assert "turn 2 completed" in lines[0] and provider_model(live) in lines[0], lines
        assert host_label(live)[0] in lines[1] and cost_label(live) and cost_label(live) in lines[1], lines
        words = set(title.split())
        for line in lines:
            assert not line.endswith("…"), lines
            for word in line.split():  # the title may end in a whole word and …; nothing else is cut
                assert not word.endswith("…") or word[:-1] in words, (word, lines)
        if width == 200:
            assert title in lines[0] and f"session {live.session.id}" in lines[1], lines


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
@pytest.mark.parametrize("key", ["S", "f", "a"])
async def test_toasts_leave_a_dialogs_buttons_and_fields_in_sight(
    tmp_path: Path, key: str, size: tuple[int, int]
) -> None:
    """Toasts arriving while a dialog is up never cover its buttons or its input lines."""
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=size, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press(key)
        await until(pilot, lambda: isinstance(app.screen, ModalScreen))
        for i in range(5):
            app.notify(f"toast {i}: something happened that takes a few words to say", timeout=60)
        await until(pilot, lambda: len(app.screen.query(Toast)) >= 5)
        await settle(pilot)
        dialog = app.screen
        controls = [*dialog.query(Button), *dialog.query(Input), *dialog.query(TextArea)]
        assert controls
        for control in controls:
            region = dialog.find_widget(control).visible_region  # a long form may scroll some out of view
            covered = {
                (x, y)
                for y in range(region.y, region.bottom)
                for x in range(region.x, region.right)
                if dialog.get_widget_at(x, y)[0] not in (control, *control.walk_children())
            }
            assert not covered, (control, sorted(covered)[:3])


def _screen_text(app: TapedeckApp) -> str:
    """The terminal's text as the app draws it now, the screens under a dialog included."""
    console = Console(width=app.size.width, height=app.size.height, file=io.StringIO(), force_terminal=True,
                      record=True, legacy_windows=False, safe_box=False)  # fmt: skip
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


@pytest.mark.parametrize("size", [(80, 24), (150, 45)], ids=["80x24", "150x45"])
@pytest.mark.parametrize("key", ["f", "a"])
async def test_a_toast_shown_before_a_dialog_opens_is_drawn_once(
    tmp_path: Path, key: str, size: tuple[int, int]
) -> None:
    """A toast on the main screen when a dialog opens was drawn twice: by the dialog (clear of its box) and by the
    main screen beneath it, where it was (or peeking out beside a dialog as tall as the screen, which leaves toasts no
    room); only the dialog draws it, and the main screen again once the dialog closes."""
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=size, notifications=True) as pilot:
        await settle(pilot)
        app.notify("cache broke", title="Alert", timeout=60)
        await until(pilot, lambda: len(app.screen.query(Toast)) == 1)
        await pilot.press(key)
        await until(pilot, lambda: isinstance(app.screen, ModalScreen))
        await settle(pilot)
        await quiet(pilot)  # the dialog's toasts placed and drawn (and the racks beneath emptied): read it then
        drawn = _screen_text(app)
        assert drawn.count("cache broke") <= 1, drawn
        assert not [t for s in app.screen_stack[:-1] for t in s.query(Toast) if t.region], drawn
        if key == "a" and size == (150, 45):
            assert drawn.count("cache broke") == 1, drawn
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await until(pilot, lambda: _screen_text(app).count("cache broke") == 1)


async def test_the_first_run_hint_leaves_at_the_first_key(tmp_path: Path) -> None:
    path = policy_log().write(tmp_path / "session.jsonl")
    app = TapedeckApp(path, follow=False, interval=0.02, use_watchfiles=False, keymap_file=NO_KEYMAP,
                      hint=first_run_hint)  # fmt: skip
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert [n.timeout <= 15 for n in app._notifications if n.message == first_run_hint(app)] == [True]
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        assert not [n for n in app._notifications if n.message == first_run_hint(app)]


async def test_n_moves_on_through_a_stream_while_the_log_grows(tmp_path: Path) -> None:
    log = streaming_log()
    matches = [e["seq"] for e in log.events if "boom" in orjson.dumps(e).decode()]  # a result, two deltas
    path = tmp_path / "s" / "session.jsonl"
    path.parent.mkdir(parents=True)
    shown = matches[-1] - 2  # the stream is still coming in
    path.write_bytes(log.lines([log.header, *log.events[:shown]]))
    hold_host(path)
    app = make_app(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        await pilot.press("g", "slash", *"boom", "enter")
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        visited = [screen.events.current_seq]
        for seq in range(shown, len(log.events)):  # the deltas arrive one by one after the jump
            with path.open("ab") as f:
                f.write(log.lines([log.events[seq]]))
            await until(pilot, lambda n=seq + 1: app.live.session.next_seq == n)  # type: ignore[union-attr]
            await settle(pilot)
            assert screen.events.current_seq == visited[-1]  # the cursor stays on the delta it jumped to
        await pilot.press("n")
        await settle(pilot)
        visited.append(screen.events.current_seq)
        assert visited == matches[1:], (visited, matches)


async def test_a_stream_cut_off_by_stop_is_tagged_interrupted(tmp_path: Path) -> None:
    log = streaming_log()  # turn 4's stream is coming in
    stream = next(e["seq"] for e in log.events if e["type"] == "assistant/chunk")
    log.add({"type": "assistant/chunk", "data": {"turn": 4, "step": 1,
                                                 "chunk": {"type": "finish", "reason": {"kind": "aborted"}}}})  # fmt: skip
    log.add({"type": "step/end", "data": {"turn": 4, "step": 1}})
    log.add(
        {"type": "turn/end", "data": {"turn": 4, "reason": {"kind": "aborted", "reason": {"kind": "user"}}}}
    )
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        row = screen.events.view.row_of_seq(stream)
        assert row is not None
        screen.events.go(row)
        await settle(pilot)
        line = screen.events.render_line(row - int(screen.events.scroll_y)).text
        assert "streamed" in line and "interrupted" in line, line
        assert "interrupted" not in str(screen.events.render_line(0).text)


@pytest.mark.parametrize("key", ["t", "S", "f", "A"])
async def test_a_key_in_the_same_burst_as_q_opens_nothing(tmp_path: Path, key: str) -> None:
    """Keys come in bursts over a slow link: one right behind ``q`` opened its screen while the app was closing,
    and that screen's start-up, finding none of its widgets, ended the app with a traceback."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for k in ("q", key):
            app.post_message(events.Key(k, k))
        await until(pilot, lambda: app.return_code is not None)  # q taken; the key behind it runs before the exit
    assert app.return_code == 0


@pytest.mark.parametrize(("keys", "overflows"), [("", True), ("C", True), ("R", False)])
async def test_the_footer_shows_whole_keys_only_at_80_columns(
    tmp_path: Path, keys: str, overflows: bool
) -> None:
    """At 80 columns the footer cut its last key mid-word (``n Next``, ``^s Review & s``): a key that does not fit
    whole is left out, Help and Quit first (the request view's footer too)."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(*keys)
        await settle(pilot)
        await quiet(pilot)
        footer = app.screen.query_one(Footer)
        palette = footer.query_one(".-command-palette")
        shown = [k for k in footer.query(FooterKey) if k is not palette and k.display]
        assert [k.description for k in shown[:2]] == ["Help", "Quit"]
        assert (len(shown) < len(footer.query(FooterKey)) - 1) == overflows  # some keys did not fit
        assert all(k.region.right <= palette.region.x for k in shown), [
            (k.description, k.region) for k in shown
        ]


async def test_the_status_line_keeps_the_row_the_search_and_the_filter_at_80_columns(tmp_path: Path) -> None:
    """Under a filter with a search at 80 columns the status line was cut mid-phrase ('not following'), and the
    match count and the row number past it never showed."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settled_main_screen(pilot)
        await pilot.press("f", *"tool/result,assistant/message", "tab", *"bash", "enter")
        await settle(pilot)
        await pilot.press("slash", *"files", "enter")
        await settle(pilot)
        line = screen.query_one("#status").render_line(0).text.rstrip()
        rows = len(screen.events.view)
        assert f"row {screen.events.cursor + 1}/{rows}" in line and "matches for 'files'" in line, line
        assert "filter" in line and line.startswith("FULL LOG"), line
        assert line == str(screen.query_one("#status").render()).rstrip()  # nothing wrapped out of sight


@pytest.mark.parametrize("key", ["C", "D", "t", "o", "c", "r", "p"])
async def test_a_policy_screens_heading_keeps_the_session_at_80_columns(tmp_path: Path, key: str) -> None:
    """At 80 columns a long heading was cut mid-word and lost the session it names; it now ends at a word with …
    before ``· session ID``."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settled_main_screen(pilot)
        await pilot.press(key)
        await until(pilot, lambda: "session t-1" in str(app.screen.query_one("#policy-heading").render()))
        heading = app.screen.query_one("#policy-heading")
        line = heading.render_line(0).text.rstrip()
        assert line.endswith("· session t-1") and line == str(heading.render()).rstrip(), line


async def test_a_narrow_list_keeps_its_summaries_and_leaves_tags_out(tmp_path: Path) -> None:
    """At 80 columns with the detail pane shown (d) the list is 48 wide: a sealed or folded row's tags took the whole
    summary (``❯     14 ch [sealed] [off]``, the user's words gone). The summary keeps its room; the tags that do
    not fit are left out (the detail pane names them)."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settled_main_screen(pilot)
        await pilot.press("d", "g")
        await settle(pilot)
        assert screen.detail.display and screen.events.size.width < 50
        lines = [screen.events.render_line(y).text for y in range(screen.events.size.height)]
        assert any("❯ list the" in line for line in lines), lines
        assert any("← a.txt b.txt" in line for line in lines), lines
        for line in lines:
            assert line.rstrip().endswith(("B", "ch", "]")), line  # a tag is left out whole, never cut


@pytest.mark.parametrize(("key", "line"), [("D", "#diagnostics-summary"), ("A", "#alerts-summary")])
async def test_a_screens_count_line_starts_where_its_table_and_every_other_summary_do(
    tmp_path: Path, key: str, line: str
) -> None:
    """The Diagnostics screen's count (``3 error(s), 0 warning(s)``, ``no problems found``) and the Alerts screen's
    (``8 alerts``) were the only lines under a table to start in the screen's first column, one left of the table's
    text and of every other screen's summary; they start with them now."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(key)
        await until(pilot, lambda: bool(app.screen.query(line)))
        await settle(pilot)
        table = app.screen.query_one(DataTable)
        assert app.screen.query_one(line).content_region.x == table.region.x + table.cell_padding


async def test_a_policy_screen_names_a_bug_in_its_derive_as_every_worker_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A view whose derive raised what nobody foresaw said "cannot derive this view: RuntimeError: …" in words of
    its own, its control characters pictured: every other worker says ``tui.failures.unexpected``'s "an unexpected
    error (…)", quoted and cut."""
    from tui.screens.diagnostics import DiagnosticsScreen

    def broken(self: object, live: object) -> None:
        raise RuntimeError("a bug in derive")

    monkeypatch.setattr(DiagnosticsScreen, "derive", broken)
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settled_main_screen(pilot)
        await pilot.press("D")

        def said() -> str:
            return str(app.screen.query_one("#policy-message").render())

        await until(pilot, lambda: "derive" in said())
        assert said() == "cannot derive this view: an unexpected error (RuntimeError: a bug in derive)", said()


@pytest.mark.parametrize("action", ["control_stop", "control_message"])
async def test_a_host_poll_answered_before_a_control_dialog_is_composed_is_no_failure(
    tmp_path: Path, action: str
) -> None:
    """Each poll of the host watch says on the stop or message dialog up now what sending it would do
    (``Dialog.warn``); a poll answered between the dialog's push and its compose found no warning line to say it on,
    and the watch toasted 'Host watch failed … NoMatches: No nodes match #dialog-warning' (the stop dialog's
    snapshot caught it at load 28, with the watch's first poll slowed by 0.2 s). The poll's answer comes here right
    after the push, and the line shows it once composed."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await app.run_action(action)  # pushed: composed in the loop's next turns
        app._host_changed(False, [], "the host has stopped", None)  # what a poll calls on the UI thread
        await quiet(pilot)
        dialog = app.control_dialog
        assert dialog is not None and dialog.is_mounted
        line = dialog.query_one("#dialog-warning", Static)  # the real watch's polls may have said more since
        assert line.display == (dialog.warning is not None), (line.display, dialog.warning)


@pytest.mark.parametrize("kind", ["confirm", "ask"])
async def test_a_warning_said_before_a_dialog_is_composed_shows_once_it_is(tmp_path: Path, kind: str) -> None:
    """``Dialog.warn`` before the dialog's compose is kept, and its warning line starts with it."""
    dialog = ConfirmScreen("Stop", "the body") if kind == "confirm" else AskScreen("Message", "the hint")
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        dialog.warn("As things stand nothing is sent: the host has stopped")
        await app.push_screen(dialog)
        await quiet(pilot)
        line = dialog.query_one("#dialog-warning", Static)
        assert line.display and "the host has stopped" in str(line.render()), line.render()
