"""A readable main screen: search that jumps and highlights, help in words, a legend for every column."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from rich.color import Color

from core.read.event_filter import EventFilter
from tests.tui.logs import policy_log
from tests.tui.pilot import main_screen, make_app, open_filter, quiet, settle, settled_main_screen, until
from tui.screens.help import HelpScreen
from tui.widgets.detail import TextView
from tui.widgets.search_bar import SearchBar

pytestmark = pytest.mark.anyio
SIZE = (150, 40)


async def test_search_enter_jumps_to_the_first_match_and_n_works_at_once(tmp_path: Path) -> None:
    log = policy_log()
    expected = [e["seq"] for e in log.events if "answer" in orjson.dumps(e).decode().casefold()]
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        await pilot.press("g", "slash", *"ANSWER", "enter")
        await settle(pilot)
        assert screen.events.current_seq == expected[0]
        assert not screen.query_one(SearchBar).display and screen.events.has_focus
        await pilot.press("n")
        assert screen.events.current_seq == expected[1]
        events = screen.events
        row = events.view.row_of_seq(expected[0])  # a match the cursor left: its word is lit
        assert row is not None
        strip = events.render_line(row - int(events.scroll_y))
        lit = events.get_component_rich_style("event-list--match").bgcolor
        assert [seg.text for seg in strip if seg.style is not None and seg.style.bgcolor == lit][-1] == "answer"


async def test_help_says_where_in_words(tmp_path: Path) -> None:
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for keys in (("question_mark",), ("escape", "c", "question_mark")):
            for key in keys:
                await pilot.press(key)
                await settle(pilot)
            assert isinstance(app.screen, HelpScreen)
            scopes = {entry.scope for entry in app.screen.entries}
            assert "everywhere" in scopes
            for scope in scopes:
                assert scope == scope.lower() and "screentab" not in scope and "datatable" not in scope, scope


async def test_theme_persists_across_restarts(tmp_path: Path) -> None:
    keymap = tmp_path / "config" / "keymap.toml"
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path, keymap=keymap)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.theme = "solarized-light"
        await settle(pilot)
        await until(pilot, lambda: (tmp_path / "config" / "tui.toml").is_file())
    again = make_app(path, keymap=keymap)
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert again.theme == "solarized-light"


def luminance(color: Color) -> float:
    r, g, b = color.get_truecolor()
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


async def test_light_theme_keeps_detail_json_readable(tmp_path: Path) -> None:
    app = make_app(policy_log().write(tmp_path / "session.jsonl"), keymap=tmp_path / "config" / "keymap.toml")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.theme = "solarized-light"
        await settle(pilot)
        view = main_screen(app).query_one("#detail-original", TextView)  # type: ignore[union-attr]
        colours = [seg.style.color for line in view.lines for seg in line if seg.style and seg.style.color and seg.text.strip()]
        assert colours and all(luminance(c) < 0.8 for c in colours), [c for c in colours if luminance(c) >= 0.8][:3]


async def test_time_column_switches_between_time_of_day_and_ago(tmp_path: Path) -> None:
    log = policy_log()
    for event in log.events:
        event["time"] = 1_786_000_000_000 + event["seq"] * 61_000  # a minute and a second apart
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        events = screen.events
        last = len(log.events) - 1
        line = events.render_line(events.cursor - int(events.scroll_y)).text
        assert line.split()[2] == "07:43:16", line  # 1786000000 + 36*61 s, UTC
        await pilot.press("w")
        line = events.render_line(events.cursor - int(events.scroll_y)).text
        assert "ago" in line, line
        await settle(pilot)
        title = " ".join(view_text(screen))
        assert f"seq {last}" in title and "UTC" in title


def view_text(screen: object) -> list[str]:
    view = screen.query_one("#detail-original", TextView)  # type: ignore[attr-defined]
    return [line.text for line in view.lines[:4]]


async def test_help_has_a_legend_for_the_main_view(tmp_path: Path) -> None:
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        terms = {term for term, _ in app.screen.legend}
        assert {"glyphs", "tags", "size", "chart", "time"} <= terms


async def test_filter_negation_and_the_hide_chunks_key(tmp_path: Path) -> None:
    log = policy_log()
    chunk = {"type": "assistant/chunk", "data": {"turn": 3, "step": 2, "chunk": {"type": "text-delta", "text": "ans"}}}
    chunks = [log.add(chunk) for _ in range(3)]
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        await pilot.press("h")
        await settle(pilot)
        shown = list(screen.events.view.base)
        assert not set(chunks) & set(shown) and len(shown) == len(log.events) - 3
        assert "not assistant/chunk" in str(screen.query_one("#status").render())
        await pilot.press("h")
        await settle(pilot)
        assert len(screen.events.view) == len(log.events) - 2  # back as one streamed block's row
        screen._set_filter(EventFilter.parse("!assistant/, !turn/", "", "", False, ""))
        await settle(pilot)
        types = {log.events[s]["type"] for s in screen.events.view.base}
        assert not {t for t in types if t.startswith(("assistant/", "turn/"))} and "tool/result" in types


async def test_the_errors_only_box_reads_off_without_colours(tmp_path: Path) -> None:
    """The filter's errors-only box drew its X whether ticked or not, told apart by colour alone: with NO_COLOR, on
    a monochrome terminal or in a tmux pane's capture it read as ticked. The X is drawn only when it is ticked."""
    from textual.widgets import Checkbox

    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        box = (await open_filter(pilot)).query_one("#filter-errors", Checkbox)
        assert "X" not in box.render_line(0).text, box.render_line(0).text
        box.focus()
        await pilot.press("space")
        await until(pilot, lambda: box.value)
        await quiet(pilot)
        assert "X" in box.render_line(0).text, box.render_line(0).text


def test_the_request_views_kept_prefix_reads_as_a_sentence() -> None:
    """'prefix kept the first 294,805 of 318,732 bytes are the previous request' ran its label into the sentence,
    set apart by colour alone (none with NO_COLOR); the label ends in a colon, as the CLI's does."""
    from types import SimpleNamespace

    from tui.screens.request import diff_line

    diff = SimpleNamespace(before=object(), broke=False, prefix_bytes=294_805, total_bytes=318_732,
                           added=[1] * 5, removed=[], replaced=[])  # fmt: skip
    assert diff_line(SimpleNamespace(diff=diff)).plain == (  # type: ignore[arg-type]
        "prefix kept: the first 294,805 of 318,732 bytes are the previous request's  +5 −0 nodes"
    )


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_request_views_node_counts_stay_on_one_line(tmp_path: Path, size: tuple[int, int]) -> None:
    """At 80 columns the diff line wrapped between '+2 −0' and 'nodes'; the counts now keep to one line, after the
    sentence where they fit, else on the line below it (and move there, or back, as the terminal is resized)."""
    from textual.widgets import Static

    from tui.screens.request import RequestScreen

    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=size) as pilot:
        await settled_main_screen(pilot)
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, RequestScreen) and not app.screen.loading)
        line = app.screen.query_one("#request-diff", Static)

        def shown() -> list[str]:
            return [line.render_line(y).text.strip() for y in range(line.size.height)]

        await until(pilot, lambda: "nodes" in " ".join(shown()))
        assert len(shown()) == (2 if size[0] == 80 else 1), shown()
        assert shown()[-1].endswith("+2 −0 nodes"), shown()
        await pilot.resize_terminal(*((160, 45) if size[0] == 80 else (80, 24)))
        await until(pilot, lambda: len(shown()) == (1 if size[0] == 80 else 2))
        assert shown()[-1].endswith("+2 −0 nodes"), shown()


async def test_the_cursor_row_stands_out_without_colours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With NO_COLOR the cursor row's background was greyed to the list's own, leaving bold alone to tell it from
    the rows around it (bold rows among them); it is drawn reversed."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settled_main_screen(pilot)
        events = screen.events
        assert app.no_color
        lines = [events.render_line(y) for y in range(events.size.height)]
        reversed_lines = [line.text for line in lines if any(seg.style and seg.style.reverse for seg in line)]
        assert len(reversed_lines) == 1 and "turn 3 ended" in reversed_lines[0], reversed_lines


async def test_a_table_cursor_stands_out_without_colours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The policy screens' tables (and the request view's) drew their cursor row by background alone, greyed away
    by NO_COLOR; it is drawn reversed there too."""
    from textual.widgets import DataTable

    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settled_main_screen(pilot)
        await pilot.press("t")
        await until(pilot, lambda: app.screen.__class__.__name__ == "TapeScreen")
        table = app.screen.query(DataTable).first()
        await until(pilot, lambda: table.row_count > 0)
        await quiet(pilot)
        lines = [table.render_line(y) for y in range(table.size.height)]
        assert [line.text for line in lines if any(seg.style and seg.style.reverse for seg in line)], lines


async def test_the_filter_dialog_names_the_types_that_arrive_while_it_is_up(tmp_path: Path) -> None:
    """The dialog's 'seen:' list was the types at the moment it opened: an event of a new type that arrived while
    it was up (or a replaced log's) was not named. It now follows the log."""
    from textual.widgets import Label

    from tests.tui.logs import append

    log = policy_log()
    path = log.write(tmp_path / "session.jsonl")
    start = len(log.events)
    log.add({"type": "tapedeck/checkpoint", "data": {"markId": 1, "by": "operator"}})  # written while it is up
    app = make_app(path, follow=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        seen = (await open_filter(pilot)).query_one("#filter-seen", Label)
        assert "tapedeck/checkpoint" not in str(seen.render())
        append(path, log, start)
        await until(pilot, lambda: "tapedeck/checkpoint" in str(seen.render()))


async def test_the_help_scrollbar_stands_out_without_colours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With NO_COLOR the help box's scrollbar (a long help at 80x24 scrolls) was greyed to a #282828 thumb on a
    black track, 1.4:1: where in the help one was could hardly be seen. What the terminal gets (the app's filters
    applied: under NO_COLOR, every colour dropped) draws the thumb reversed, in the terminal's own text colour, and
    the track in its background: they stand apart as text from its page."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settled_main_screen(pilot)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await settle(pilot)  # laid out, however slowly a loaded machine gets there
        box = app.screen.query_one("#help-dialog")
        assert box.show_vertical_scrollbar
        bar = box.vertical_scrollbar
        segments = [seg for y in range(bar.size.height) for seg in bar.render_line(y)]
        for line_filter in app.get_line_filters():
            segments = line_filter.apply(segments, box.background_colors[0])
        # a reversed blank is the thumb (drawn in the text's colour), a plain blank the track (the page's)
        blanks = [seg.style for seg in segments if seg.style and not seg.text.strip()]
        assert any(style.reverse for style in blanks) and not all(style.reverse for style in blanks), blanks
        assert all((style.color is None or style.color.is_default) and (style.bgcolor is None or style.bgcolor.is_default)
                   for style in blanks), blanks  # fmt: skip


async def test_a_saved_theme_of_no_such_name_is_named_cut(tmp_path: Path) -> None:
    """tui.toml naming a theme of 5,000 characters, none of Textual's: the warning quoted the name whole, a toast
    of 5,000 characters; it names it cut, as the keymap's problems name an unknown binding id."""
    keymap = tmp_path / "config" / "keymap.toml"
    keymap.parent.mkdir()
    (keymap.parent / "tui.toml").write_text(f'theme = "{"n" * 5000}"\n')
    app = make_app(policy_log().write(tmp_path / "session.jsonl"), keymap=keymap)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        [said] = [n.message for n in app._notifications if "no theme named" in n.message]
        assert "n" * 100 not in said and "…" in said, said[:200]
