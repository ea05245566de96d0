"""Keys as a demanding operator presses them, on every screen: each one does what the help says it does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import orjson
import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from tests.tui.logs import Log, append, hold_host, policy_log
from tests.tui.pilot import make_app, quiet, settle, settled_main_screen, until
from tests.tui.screens_policy.harness import panel
from tui.app import TapedeckApp
from tui.screens.main import MainScreen
from tui.screens.tape import TapeScreen
from tui.widgets.detail import DetailPane, TextView

pytestmark = pytest.mark.anyio
SIZE = (150, 40)


@asynccontextmanager
async def _filtered(tmp_path: Path, types: str) -> AsyncIterator[tuple[TapedeckApp, Pilot[None], MainScreen, Log]]:
    """The app on a policy log written under ``tmp_path``, settled, with the filter set to ``types``."""
    log = policy_log()
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        await pilot.press("f", *types, "enter")
        await settle(pilot)
        yield app, pilot, screen, log


async def test_n_in_the_surface_view_steps_through_the_matches_it_shows(tmp_path: Path) -> None:
    """On the surface view a search's matches are mostly off the surface (sealed turns). Enter and ``n`` went to the
    next match by seq, hidden or not: from the last row (where a followed list stands) ``n`` wrapped to the first
    match, hidden, and said so, every time, never reaching a match the view shows."""
    log = policy_log()
    tape = next(e["seq"] for e in log.events if "listed files" in orjson.dumps(e).decode())
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        await pilot.press("s", "G")
        await settle(pilot)
        assert screen.mode == "surface" and screen.events.cursor == len(screen.events.view) - 1
        await pilot.press("slash", *"files", "enter")
        await settle(pilot)
        assert len(screen.search_scan.seqs) > 1  # type: ignore[union-attr]  # the sealed prompt and the tape entry
        assert screen.events.current_seq == tape  # the one match the surface shows
        app.clear_notifications()
        await pilot.press("n")
        await settle(pilot)
        assert screen.events.current_seq == tape  # round to itself: no other match is shown
        assert not [n.message for n in app._notifications if "hidden" in n.message]


async def test_n_says_what_to_do_when_the_view_shows_no_match(tmp_path: Path) -> None:
    async with _filtered(tmp_path, "turn/start") as (app, pilot, screen, _):
        at = screen.events.current_seq
        await pilot.press("slash", *"answer", "enter")
        await settle(pilot)
        app.clear_notifications()
        await pilot.press("n")
        await settle(pilot)
        assert screen.events.current_seq == at
        said = [n.message for n in app._notifications]
        assert said == ["No match shown with the filter: x clears it."], said  # a sentence, as every toast


def _pane_text(pane: DetailPane, column: str) -> str:
    view = pane.query_one(column, TextView)
    return " ".join(" ".join(strip.text for strip in view.lines).split()) if view.display else ""


async def test_the_detail_pane_shows_a_fold_that_arrives_while_its_result_is_selected(tmp_path: Path) -> None:
    """The pane described the selected event once: a result folded (or sealed) while the operator looked at it
    kept its pane without the model's version beside it, and a row described while the log loaded said
    'loading' for good."""
    log = policy_log()
    t4 = log.turn(4, "read the config", "key = value\n" * 60)
    path = tmp_path / "session.jsonl"
    path.write_bytes(log.lines())
    hold_host(path)
    app = make_app(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        screen.events.go_seq(t4["result"])  # scroll lock on the result
        await settle(pilot)
        pane = screen.query_one(DetailPane)
        assert pane.seq == t4["result"] and _pane_text(pane, "#detail-visible") == ""
        start = len(log.events)
        log.fold(t4["result"], "[folded: key = value x 60]")
        append(path, log, start)
        await until(pilot, lambda: app.live is not None and app.live.session.next_seq == len(log.events))
        await settle(pilot)
        assert screen.events.current_seq == t4["result"]
        assert f"model sees · folded by seq {len(log.events) - 1}" in _pane_text(pane, "#detail-visible")


async def test_m_messages_the_agent_on_the_checkpoints_screen_too(tmp_path: Path) -> None:
    """``m`` sends the agent a message on every screen (README, the help's 'everywhere' keys), but the Checkpoints
    screen bound it to placing a checkpoint: an operator typing a message there placed a mark named after it.
    The screen's own checkpoint key is ``K``, the key that places one everywhere else."""
    from tui.screens.checkpoints import CheckpointsScreen
    from tui.screens.confirm import AskScreen

    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settled_main_screen(pilot)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, CheckpointsScreen))
        await settle(pilot)
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        assert app.screen.heading == "Message the agent"  # type: ignore[attr-defined]
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, CheckpointsScreen))
        await pilot.press("K")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        assert app.screen.heading == "Place a checkpoint"  # type: ignore[attr-defined]
        await pilot.press(*"try it", "enter")
        await until(pilot, lambda: (path.parent / "control.jsonl").exists())
        (line,) = (path.parent / "control.jsonl").read_bytes().splitlines()
        assert orjson.loads(line)["args"] == {"objective": "try it"}
        checkpoints = app.screen
        assert isinstance(checkpoints, CheckpointsScreen)
        await until(pilot, lambda: "checkpoint: try it" in panel(app))


async def test_escape_in_the_config_editor_cancels_the_edit_not_the_screen(tmp_path: Path) -> None:
    """``e`` (or Enter) on a key focuses the value editor; Esc there left the Config screen at once, the draft
    with it, where every other dialog's Esc cancels what is being typed. Esc now puts the key's value back and
    the cursor on the key table; a second Esc leaves the screen."""
    from textual.widgets import DataTable, Input

    from tests.tui.screens_policy.scenarios import demo
    from tui.screens.config import ConfigScreen

    path = demo(tmp_path / "s")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settled_main_screen(pilot)
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, ConfigScreen) and app.screen._view is not None)
        screen = app.screen
        box = screen.query_one("#config-value", Input)
        before = box.value
        await pilot.press("e", "end", *"99")
        await settle(pilot)
        assert box.has_focus and box.value == before + "99"
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen
        assert screen.query_one("#config-keys", DataTable).has_focus and box.value == before
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ConfigScreen))


@pytest.mark.parametrize("row", ["message", "result"])
async def test_j_opens_the_child_from_the_surface_view(fixtures_dir: Path, tmp_path: Path, row: str) -> None:
    """The surface view lists no ``tool/call`` row: a spawn shows as the answer that made it (``● → subagent(…)``)
    and its result. ``J`` took only the tool/call row, so on the surface it said 'This row is not a subagent
    spawn.' on every row that showed one. The answer and the result of a spawn open its child too."""
    from tests.core.test_lineage import lay_out

    parent, child = lay_out(fixtures_dir, tmp_path)
    app = make_app(parent)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        assert app.live is not None
        (call,) = [c for c in app.live.session.tool_calls.values() if c.name == "subagent"]
        await pilot.press("s")
        await settle(pilot)
        target = call.message_seq if row == "message" else call.result_seq
        assert target is not None and screen.events.go_seq(target) and screen.events.current_seq == target
        await pilot.press("J")
        await until(pilot, lambda: app.live is not None and app.live.path == child)


async def test_the_filter_dialog_shows_why_it_refused_on_a_small_terminal(tmp_path: Path) -> None:
    """At 80x24 the dialog's message line sits below the fold: Enter with a turn range it cannot read wrote the
    reason there, off the screen, and nothing the operator could see happened."""
    from textual.widgets import Label

    from tui.screens.filter import FilterScreen

    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled_main_screen(pilot)
        await pilot.press("f", "tab", "tab", *"abc", "enter")
        await settle(pilot)
        await quiet(pilot)
        assert isinstance(app.screen, FilterScreen)
        label = app.screen.query_one("#filter-error", Label)
        assert "abc" in str(label.render())
        region = label.region
        assert region.height and app.screen.region.contains_region(region), region
        dialog = app.screen.query_one("#filter-dialog")
        assert dialog.content_region.contains_region(region), (region, dialog.content_region)


async def test_y_and_Y_on_a_stream_row_copy_the_stream_not_its_first_delta(tmp_path: Path) -> None:
    """A model stream's row (● streamed N chars · K deltas) stands for all its deltas, and its pane shows what they
    said; ``Y`` copied the first delta's data ({"turn":…,"chunk":{"type":"reasoning-delta","text":"The "}}) and
    ``y`` that one delta's JSON. ``Y`` now copies what the stream said, ``y`` its deltas (one JSON line each)."""
    from tests.tui.logs import streaming_log

    log = streaming_log()
    deltas = [e for e in log.events if e["type"] == "assistant/chunk"]
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        assert screen.events.go_seq(deltas[0]["seq"]) and screen.events.current_block is not None
        await pilot.press("Y")
        await until(pilot, lambda: "failure" in app.clipboard)
        assert app.clipboard == "The traceback came from boom; say so. \n\nThe failure was a raised `boom` "
        await pilot.press("y")
        await until(pilot, lambda: app.clipboard.startswith("{"))
        assert [orjson.loads(line) for line in app.clipboard.splitlines()] == deltas


async def test_the_filter_holds_in_the_full_log_while_time_travelling(tmp_path: Path) -> None:
    """``s`` during time travel shows the full log up to the moment; with a filter on, the status line still said
    'filter: type tool/result' while every event up to the moment was listed."""
    async with _filtered(tmp_path, "tool/result") as (app, pilot, screen, log):
        results = [e["seq"] for e in log.events if e["type"] == "tool/result"]
        screen.events.go_seq(results[1])
        await pilot.press("T")
        await until(pilot, lambda: screen.stop is not None)
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert screen.mode == "full" and "filter: type tool/result" in str(
            screen.query_one("#status").render()
        )
        shown = [screen.events.view.row(i)[0] for i in range(len(screen.events.view))]
        assert shown == [s for s in results if s <= screen.stop.moment.seq]  # type: ignore[union-attr]


async def test_escape_leaves_time_travel(tmp_path: Path) -> None:
    """The help lists esc 'Back' everywhere; on a session's main screen it did nothing while time travelling
    (and, for a session opened from the fleet table, left the session at once). It now goes back to live
    first, as L does."""
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        await pilot.press("k", "T")
        await until(pilot, lambda: screen.stop is not None)
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and screen.stop is None


def _with_a_bad_step_end(tmp_path: Path) -> tuple[Path, int]:
    """A policy log whose first ``step/end`` names its turn ``"one"`` (a diagnostic on that seq); the log and the seq."""
    log = policy_log()
    lines = log.lines().splitlines(keepends=True)
    bad = next(i for i, e in enumerate(log.events) if e["type"] == "step/end")
    lines[bad + 1] = b'{"type": "step/end", "seq": ' + str(bad).encode() + b', "data": {"turn": "one"}}\n'
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(lines))
    return path, bad


async def test_enter_on_a_diagnostic_says_what_hides_its_event(tmp_path: Path) -> None:
    """Enter on the Diagnostics screen goes to the event; one the view does not show was blamed on 'a filter or
    the surface view' whichever it was, and under a filter the cursor landed on the next row without a word. The
    toast now names what hides it and the key that shows it."""
    from tui.screens.diagnostics import DiagnosticsScreen

    path, bad = _with_a_bad_step_end(tmp_path)
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        for keys, hidden in ((["s"], "on the surface: s shows the full log"),
                             (["s", "f", *"tool/result", "enter"], "with the filter: x clears it")):  # fmt: skip
            await pilot.press(*keys)
            await settle(pilot)
            await pilot.press("D")
            await until(pilot, lambda: isinstance(app.screen, DiagnosticsScreen))
            await settle(pilot)
            app.clear_notifications()
            await pilot.press("enter")
            await until(pilot, lambda: app.screen is screen)
            await settle(pilot)
            assert [n.message for n in app._notifications] == [f"The event at seq {bad} is not shown {hidden}."]


async def test_n_under_a_filter_of_few_rows_steps_row_by_row(tmp_path: Path) -> None:
    """Fewer rows than matches (a narrow filter, a common word): n walks the rows, each to the next one shown."""
    log = policy_log()
    starts = [e["seq"] for e in log.events if e["type"] == "turn/start"]
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        await pilot.press("f", *"turn/start", "enter")
        await settle(pilot)
        await pilot.press("g", "slash", *"turn", "enter")
        await settle(pilot)
        assert screen.search_scan.seqs == starts  # type: ignore[union-attr]  # the matches the filter shows
        visited = [screen.events.current_seq]
        for _ in starts:
            await pilot.press("n")
            await settle(pilot)
            visited.append(screen.events.current_seq)
        assert visited == [*starts[1:], starts[0], starts[1]], visited


async def test_enter_on_a_diagnostic_opened_over_another_screen_goes_to_the_event(tmp_path: Path) -> None:
    """D works on every screen; opened over the Tape screen, Enter ('go to it') closed the Diagnostics screen and
    left the operator on the Tape screen, the cursor moved on a main screen out of sight."""
    from tui.screens.diagnostics import DiagnosticsScreen
    from tui.screens.tape import TapeScreen

    path, bad = _with_a_bad_step_end(tmp_path)
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TapeScreen))
        await pilot.press("D")
        await until(pilot, lambda: isinstance(app.screen, DiagnosticsScreen))
        await settle(pilot)
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is screen)
        await settle(pilot)
        assert screen.events.current_seq == bad


async def test_tape_turn_keys_say_why_when_there_is_no_other_turn(tmp_path: Path) -> None:
    """``[``/``]`` on the Tape screen walk the selected entry's turns; at either end they say so."""
    path = policy_log().write(tmp_path / "session.jsonl")  # one entry, sealing turn 1 alone
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("t")
        await until(
            pilot,
            lambda: isinstance(app.screen, TapeScreen) and app.screen.query_one(DataTable).row_count > 0,
        )
        await settle(pilot)
        for key, end in (("[", "first"), ("]", "last")):
            await pilot.press(key)
            await until(
                pilot, lambda end=end: any(f"the {end} turn" in n.message for n in app._notifications)
            )


async def test_e_and_E_on_the_surface_go_to_the_next_error_row_on_screen(tmp_path: Path) -> None:
    """The surface lists a tape entry (a late seq) above the turns it left raw: ``e`` on it went to the next error by
    seq, past the errors shown right below it."""
    log = Log()
    log.host()
    t1 = log.turn(1, "list the files", "a.txt\nb.txt\n" * 40)
    t2 = log.turn(2, "run the tests", "1 failed", error=True)
    tape = log.tape(1, 1, [t1["prompt"], t1["ask"], t1["result"], t1["answer"]], "turn 1: listed files")
    t3 = log.turn(3, "fix the failure", "Traceback: boom", error=True)
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        await pilot.press("s", "g")
        await settle(pilot)
        assert screen.events.current_seq == tape  # the first row of the surface
        await pilot.press("e")
        assert screen.events.current_seq == t2["result"]
        await pilot.press("e")
        assert screen.events.current_seq == t3["result"]
        await pilot.press("E")
        assert screen.events.current_seq == t2["result"]
        app.clear_notifications()
        await pilot.press("E")
        assert screen.events.current_seq == t2["result"]
        assert [n.message for n in app._notifications] == ["No previous error in this view."]


@pytest.mark.parametrize(
    ("size", "key", "said"),
    [
        (SIZE, "L", "Not time travelling"),
        (SIZE, "x", "No filter to clear"),
        (SIZE, "plus", "already shows all"),
        ((80, 24), "plus", "d shows it"),
    ],
)
async def test_main_keys_that_cannot_act_say_why(
    tmp_path: Path, size: tuple[int, int], key: str, said: str
) -> None:
    """L out of time travel, x with no filter and + with nothing more to show (or the detail pane folded away at
    80 columns) did nothing and said nothing."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=size) as pilot:
        await settled_main_screen(pilot)
        app.clear_notifications()
        await pilot.press(key)
        await until(pilot, lambda: any(said in n.message for n in app._notifications))


async def test_enter_on_an_original_closes_the_list_it_is_in(tmp_path: Path) -> None:
    """Enter on one of the rows an expanded tape entry lists beneath it did nothing; it closes that list, the
    cursor back on the tape entry."""
    log = policy_log()
    tape = next(e["seq"] for e in log.events if "listed files" in orjson.dumps(e).decode())
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        screen.events.go_seq(tape)
        rows = len(screen.events.view)
        await pilot.press("enter", "down")
        assert len(screen.events.view) > rows and screen.events.view.parent_of(screen.events.cursor) == tape
        await pilot.press("enter")
        assert len(screen.events.view) == rows and screen.events.current_seq == tape


@pytest.mark.parametrize(
    ("screen_key", "key"), [("C", "e"), ("C", "a"), ("C", "ctrl+s"), ("c", "w"), ("o", "x")]
)
async def test_a_dimmed_policy_key_pressed_anyway_says_why(
    fixtures_dir: Path, screen_key: str, key: str
) -> None:
    """On a DSH log no bridge runs, the policy screens dim the keys that would change it, and pressed they did
    nothing and said nothing (as the operator's keys say why in a toast)."""
    app = make_app(fixtures_dir / "tool-call-turn.session.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settled_main_screen(pilot)
        await pilot.press(screen_key)
        await until(pilot, lambda: app.screen.HEADING != "Main view")
        await settle(pilot)
        app.clear_notifications()
        await pilot.press(key)
        await until(pilot, lambda: any("bridge" in n.message for n in app._notifications))


async def test_tape_keys_with_no_entry_say_so(tmp_path: Path) -> None:
    """Before any turn completed the Tape screen lists no entry: ``f`` switched the view of a preview that is not
    there, saying nothing (``[``/``]`` say the same)."""
    log = Log()
    log.host()
    log.add({"type": "turn/start", "data": {"turn": 1}})
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settled_main_screen(pilot)
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TapeScreen))
        await settle(pilot)
        for key in ("f", "right_square_bracket"):
            app.clear_notifications()
            await pilot.press(key)
            await until(pilot, lambda: any("No tape entry" in n.message for n in app._notifications))


@pytest.mark.parametrize("key", ["R", "o"], ids=["request-view", "folds"])
async def test_home_end_g_and_G_go_to_a_tables_first_and_last_row(tmp_path: Path, key: str) -> None:
    """On the main list Home/g go to the first row and End/G to the last; in the screens' tables End scrolled
    sideways to the last column (in the request view at 80x24 it left the column labels and every short row blank),
    Home back, and g/G did nothing: the last row (the newest message, fold or alert) took PageDowns. They go to the
    first and the last row there too, the labels in sight."""
    from tui.screens.folds import FoldsScreen
    from tui.screens.request import RequestScreen

    log = policy_log()
    for n in range(4, 30):
        log.turn(n, f"task {n}", "done")
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settled_main_screen(pilot)
        await pilot.press(key)
        await until(pilot, lambda: isinstance(app.screen, RequestScreen | FoldsScreen))
        await settle(pilot)
        table = app.screen.query_one(DataTable)
        await until(pilot, lambda: table.row_count > 20)  # more rows than the view holds
        for keys, row in [("end", -1), ("home", 0), ("G", -1), ("g", 0)]:
            await pilot.press(keys)
            await settle(pilot)
            await quiet(pilot)
            assert table.cursor_row == row % table.row_count, (keys, table.cursor_row)
            assert table.scroll_x == 0, (keys, table.scroll_x)
            region = table._get_row_region(table.cursor_row)
            assert table.scroll_y <= region.y - table.header_height < table.scroll_y + table.size.height, keys
