"""Notes and exports from the TUI: ``a`` notes the selected row (the sidecar gets it, the row shows ✎, the detail
pane the text), an unreadable sidecar is a toast, not a crash, and ``X`` exports the view (the whole list, or the
list up to the time-travel moment and the surface then) to an HTML file named in a toast."""

from __future__ import annotations

import html
import os
import re
import tempfile
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot
from textual.widgets import TextArea
from textual.widgets._toast import Toast

from core.read.event_filter import EventFilter
from core.read.notes import load_notes, set_note, sidecar_paths
from core.shared.text import quoted_path
from tests.conftest import FIXTURES
from tests.tui.logs import policy_log
from tests.tui.pilot import dialog_text, main_screen, make_app, settle, settled_main_screen, until
from tui.app import TapedeckApp
from tui.screens.confirm import AskScreen
from tui.screens.main import MainScreen
from tui.screens.main_share import export_target
from tui.widgets.detail import TextView

pytestmark = pytest.mark.anyio
SIZE = (150, 40)


@asynccontextmanager
async def _on_a_row(tmp_path: Path) -> AsyncIterator[tuple[TapedeckApp, Pilot[None], MainScreen, Path, int]]:
    """The app on a policy log written under ``tmp_path``, settled, with the seq of its selected row."""
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        seq = screen.events.current_seq
        assert seq is not None
        yield app, pilot, screen, path, seq


def _noted_stream(tmp_path: Path) -> Path:
    """A copy of a fixture under ``tmp_path`` whose first model stream has a note on its delta at seq 20."""
    path = tmp_path / "session.jsonl"
    path.write_bytes((FIXTURES / "tool-call-turn.session.jsonl").read_bytes())
    set_note(path, 20, "the call's arguments arrive here")
    return path


def _toasts(app: object) -> list[str]:
    return [str(n.message) for n in app._notifications]  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))


async def test_a_notes_the_selected_row_and_edits_it(tmp_path: Path) -> None:
    # in a directory whose name holds ESC: the toast names the sidecar as every message names a path (quoted_path)
    async with _on_a_row(tmp_path / "lo\x1bgs") as (app, pilot, screen, path, seq):
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        await pilot.press(*"check this step", "enter")
        await until(pilot, lambda: screen.events.notes.get(seq) == "check this step")
        assert {s: n.text for s, n in load_notes(path).items()} == {seq: "check this step"}
        assert f"Added a note on seq {seq} ({quoted_path(sidecar_paths(path)[0])})." in _toasts(app), _toasts(app)
        row = screen.events.cursor - int(screen.events.scroll_offset.y)  # type: ignore[attr-defined]
        line = "".join(s.text for s in screen.events.render_line(row))
        assert "✎ note" in line
        detail = screen.query_one("#detail-original", TextView)
        await until(pilot, lambda: "✎ note: check this step" in "".join(s.text for s in detail.lines))  # type: ignore[attr-defined]
        await pilot.press("a")  # the dialog opens with the note, to edit
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        assert app.screen.query_one(TextArea).text == "check this step"
        app.screen.query_one(TextArea).clear()
        await pilot.press("enter")
        await until(pilot, lambda: seq not in screen.events.notes)
        assert load_notes(path) == {}


async def test_a_note_keeps_its_lines_when_edited_typed_or_pasted(tmp_path: Path) -> None:
    """The note dialog holds several lines: a note of several lines (``tapedeck note``) opens whole in it, where it
    used to spill out of the one-line box; ctrl+j starts a new line, a paste keeps every line (a one-line box kept
    the first alone) and Enter saves them all."""
    async with _on_a_row(tmp_path) as (app, pilot, screen, path, seq):
        set_note(path, seq, "first line\nsecond line")
        screen.load_notes()
        await until(pilot, lambda: seq in screen.events.notes)
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        assert app.screen.query_one(TextArea).text == "first line\nsecond line"
        await pilot.press("!", "ctrl+j", "x")
        app.screen.post_message(events.Paste("\npasted one\npasted two"))
        await pilot.pause()
        await pilot.press("enter")
        said = "first line\nsecond line!\nx\npasted one\npasted two"
        await until(pilot, lambda: screen.events.notes.get(seq) == said)
        assert load_notes(path)[seq].text == said


async def test_the_note_dialog_draws_a_notes_controls_as_pictures_and_keeps_them(tmp_path: Path) -> None:
    """A note's text comes from its sidecar, which travels with a copied session directory: a note holding ESC ] 2
    retitled the terminal (ESC [ 2J cleared it) once ``a`` opened it, as the text box draws what it holds. It opens
    drawn as pictures, as the detail pane shows it, and Enter on it unchanged keeps the note as it was."""
    from tests.cli.test_events_cli import ESCAPES

    async with _on_a_row(tmp_path) as (app, pilot, screen, path, seq):
        set_note(path, seq, f"see {ESCAPES}")
        screen.load_notes()
        await until(pilot, lambda: seq in screen.events.notes)
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        await settle(pilot)
        drawn = "\n".join("".join(s.text for s in strip) for strip in app.screen._compositor.render_strips())
        assert not [c for c in drawn if ord(c) < 32 and c != "\n" or 0x7F <= ord(c) <= 0x9F], drawn
        assert "see ␛]52;c;" in drawn, drawn
        await pilot.press("enter")
        await until(pilot, lambda: any(f"Replaced the note on seq {seq}" in t for t in _toasts(app)))
        assert load_notes(path)[seq].text == f"see {ESCAPES}"


async def test_a_note_on_a_delta_marks_its_collapsed_stream_row(tmp_path: Path) -> None:
    """A note on one of a stream's deltas (made on the delta's own row, or with ``note --seq``) marks the stream's
    one row while it is collapsed, and the detail pane of that row shows it: a collapsed row used to show only a
    note on its first delta."""
    app = make_app(_noted_stream(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        events = screen.events
        assert events.go_seq(9) and events.block_at(9) is not None and events.block_at(9).end > 20  # type: ignore[union-attr]
        await pilot.pause()
        line = "".join(s.text for s in events.render_line(events.cursor - int(events.scroll_offset.y)))  # type: ignore[attr-defined]
        assert "✎ note" in line
        detail = screen.query_one("#detail-original", TextView)
        said = "✎ note on seq 20: the call's arguments arrive here"
        await until(pilot, lambda: said in "".join(s.text for s in detail.lines))  # type: ignore[attr-defined]


async def test_a_on_a_stream_row_edits_the_note_that_row_shows(tmp_path: Path) -> None:
    """The collapsed row of a stream shows the note on one of its deltas; ``a`` there opened an empty note on the
    stream's first delta, and saving it left two notes on the one row."""
    path = _noted_stream(tmp_path)
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        await until(pilot, lambda: 20 in getattr(screen, "notes", {}))
        assert screen.events.go_seq(9) and screen.events.current_block is not None
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        area = app.screen.query_one(TextArea)
        assert area.text == "the call's arguments arrive here"
        area.text = "edited"
        await pilot.press("enter")
        await until(pilot, lambda: {s: n.text for s, n in load_notes(path).items()} == {20: "edited"})


async def test_a_hostile_sidecar_is_a_toast(tmp_path: Path) -> None:
    path = policy_log().write(tmp_path / "session.jsonl")
    sidecar_paths(path)[0].write_text('{"notes": {"x": 1}}')
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await until(pilot, lambda: any("Notes not shown" in t for t in _toasts(app)))
        assert any("note key 'x' is not a seq" in t for t in _toasts(app))


async def test_x_exports_the_list_and_the_moment(tmp_path: Path) -> None:
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        screen.export_dir = exports = tmp_path / "ex\x1bports"  # named in the toasts as quoted_path names a path
        exports.mkdir()
        await pilot.press("X")
        await until(pilot, lambda: any(t.startswith("Exported ") for t in _toasts(app)))
        pages = list(exports.glob("tapedeck-*.html"))
        assert len(pages) == 1 and f"to {quoted_path(pages[0])} (" in next(
            t for t in _toasts(app) if t.startswith("Exported")
        )
        assert f"Exporting to {quoted_path(pages[0])} …" in _toasts(app), _toasts(app)
        assert "Surface at the end of the log" in pages[0].read_text()
        await pilot.press("T")  # time travel: the moment of the cursor
        await until(pilot, lambda: screen.stop is not None)
        at = screen.stop.moment.seq  # type: ignore[union-attr]
        await pilot.press("X")
        target = exports / pages[0].name.replace(".html", f"-at-{at}.html")
        await until(pilot, lambda: target.exists())
        assert f"Surface right after seq {at}" in target.read_text()


async def test_x_while_time_travelling_exports_the_view_at_the_moment(tmp_path: Path) -> None:
    """At an earlier moment ``X`` exported the whole list (the rows after the moment only dimmed) under a toast that
    said nothing of the moment; the page's list now ends at the moment, and the toast names what the operator was
    looking at: the surface at that moment, or (after ``s``) the list up to it."""
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        screen.export_dir = tmp_path
        rows = len(screen.events.view)
        screen.events.go(rows // 2)
        await pilot.press("T")
        await until(pilot, lambda: screen.stop is not None)
        await settle(pilot)
        stop = screen.stop
        assert stop is not None and screen.mode == "surface"
        at, label = stop.moment.seq, stop.moment.label()
        target = export_target(path, app.live.session.id, at, tmp_path)  # type: ignore[union-attr]
        await pilot.press("X")
        await until(pilot, lambda: any(t.startswith("Exported ") for t in _toasts(app)))
        said = next(t for t in _toasts(app) if t.startswith("Exported "))
        assert said.startswith(f"Exported the surface {label} ({len(stop.surface)} messages)"), said
        page = target.read_text()
        listed = [int(s) for s in re.findall(r'<li id="e(\d+)"', page)]
        assert listed and max(listed) <= at, (at, listed[-3:])
        assert f"Surface right after seq {at}" in page
        target.unlink()
        app._notifications.clear()  # type: ignore[attr-defined]
        await pilot.press("s")  # the list up to the moment
        assert screen.mode == "full"
        shown = len(screen.events.view)
        await pilot.press("X")
        await until(pilot, lambda: any(t.startswith("Exported ") for t in _toasts(app)))
        said = next(t for t in _toasts(app) if t.startswith("Exported "))
        assert said.startswith(f"Exported the list up to {label.removeprefix('at ')} ({shown} of {rows} rows)"), said
        assert [int(s) for s in re.findall(r'<li id="e(\d+)"', target.read_text())] == listed


async def test_x_finds_where_to_write_off_the_ui_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``X`` asked the file system whether the working directory is writable on the UI thread (a hung mount froze
    the screen); the export's worker asks it."""
    threads: list[str] = []
    real = os.access

    def access(path: object, mode: int) -> bool:
        threads.append(threading.current_thread().name)
        return real(path, mode)  # type: ignore[arg-type]

    monkeypatch.setattr("tui.screens.main_share.os.access", access)
    async with _on_a_row(tmp_path) as (app, pilot, screen, path, seq):
        screen.export_dir = tmp_path
        await pilot.press("X")
        await until(pilot, lambda: any(t.startswith("Exported ") for t in _toasts(app)))
        assert threads and threading.main_thread().name not in threads, threads


async def test_a_keymap_can_put_export_on_e(tmp_path: Path) -> None:
    """``e`` is *next error* (the pair of ``E``) by default; the README's keymap lines move it and give ``e`` to
    export."""
    keymap = tmp_path / "keymap.toml"
    keymap.write_text('main.export = "e"\nmain.next_error = "ctrl+e"\n')
    app = make_app(policy_log().write(tmp_path / "session.jsonl"), keymap=keymap)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.keymap_problems == []
        screen = main_screen(app)
        assert screen is not None
        screen.export_dir = tmp_path
        await pilot.press("e")
        await until(pilot, lambda: any(t.startswith("Exported ") for t in _toasts(app)))
        assert len(list(tmp_path.glob("tapedeck-*.html"))) == 1


@pytest.mark.parametrize(
    ("flt", "streams"),
    [(EventFilter(types=("tool/",), regex="call{1}"), False), (EventFilter(types=("assistant/chunk",)), True),
     (EventFilter(turns=(2, 2)), False), (EventFilter(regex='"OT"'), True)],
    ids=["tool-regex", "deltas", "turn", "stream-regex"],
)  # fmt: skip
async def test_x_with_a_filter_on_exports_the_rows_the_filter_shows(
    tmp_path: Path, flt: EventFilter, streams: bool
) -> None:
    """With a filter on, ``X`` wrote every event (its toast only said the filter was not applied); the page now
    lists the rows the list shows, through the export's own filter (a stream's row when a delta passes, each delta
    a row when the filter names them, as the list shows them), and the toast and the page name the filter."""
    app = make_app(_noted_stream(tmp_path) if streams else policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        screen.export_dir = tmp_path
        rows = len(screen.events.view)
        screen._set_filter(flt)
        await until(pilot, lambda: 0 < len(screen.events.view) != rows)
        shown = [screen.events.view.row(i)[0] for i in range(len(screen.events.view))]
        await pilot.press("X")
        await until(pilot, lambda: any(t.startswith("Exported ") for t in _toasts(app)))
        said = next(t for t in _toasts(app) if t.startswith("Exported "))
        assert f"the list filtered by {flt.describe()} ({len(shown)} rows)" in said, said
        page = next(tmp_path.glob("tapedeck-*.html")).read_text()
        assert [int(s) for s in re.findall(r'<li id="e(\d+)"', page)] == shown
        assert f"<tr><th>filter</th><td>{html.escape(flt.describe())} (" in page


async def test_x_names_one_row_in_the_singular(tmp_path: Path) -> None:
    """A filter that lets one row through had the toast say "(1 rows)" (the CLI says "1 row" since cd2d4c7)."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        screen.export_dir = tmp_path
        screen._set_filter(EventFilter(types=("tapedeck/route",)))
        await until(pilot, lambda: len(screen.events.view) == 1)
        await pilot.press("X")
        await until(pilot, lambda: any(t.startswith("Exported ") for t in _toasts(app)))
        said = next(t for t in _toasts(app) if t.startswith("Exported "))
        assert "(1 row) and the surface now" in said, said


async def test_x_with_a_filter_whose_regex_reads_as_markup_says_what_it_exported(tmp_path: Path) -> None:
    """The toast was markup: a filter regex with a bracket pair such as ``[/\\]`` (a path's separator) is a closing
    tag to it, and the export's toast crashed the TUI (MarkupError) once the page was written."""
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=SIZE, notifications=True) as pilot:  # toasts drawn: their text is parsed
        screen = await settled_main_screen(pilot)
        screen.export_dir = tmp_path
        screen._set_filter(EventFilter(regex=r"call[/\\]x|[red]call"))
        await pilot.press("X")
        await until(pilot, lambda: any(t.startswith("Exported ") for t in _toasts(app)))
        await settle(pilot)
        said = next(t for t in _toasts(app) if t.startswith("Exported "))
        assert r"the list filtered by /call[/\\]x|[red]call/ (" in said, said
        assert any(r"/call[/\\]x|[red]call/" in str(t.render()) for t in app.screen.query(Toast))


async def test_x_says_why_an_export_failed_on_any_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The export's worker caught only TapedeckError: a working directory removed under the TUI, or a bug in the
    export pass, left the "Exporting to …" toast as the last word. Any failure now ends in one toast, on one line,
    that names it, and the app goes on."""

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the pass broke\non a second line")

    monkeypatch.setattr("core.export.write.export", broken)
    async with _on_a_row(tmp_path) as (app, pilot, screen, path, seq):
        screen.export_dir = tmp_path
        await pilot.press("X")
        await until(pilot, lambda: any(t.startswith("Export failed") for t in _toasts(app)))
        said = next(t for t in _toasts(app) if t.startswith("Export failed"))
        assert said == r"Export failed: an unexpected error (RuntimeError: the pass broke\non a second line).", said
        assert app.is_running and not list(tmp_path.glob("tapedeck-*.html"))


async def test_x_names_a_failure_of_the_system_and_writes_beside_a_removed_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk or a directory the operator may not write in is to be foreseen, yet the export's toast called it
    "an unexpected error (OSError: …)", as it does a bug; it now names the file and the system's reason. A working
    directory removed under the TUI failed the same way (FileNotFoundError), where the export is written to the
    temp directory when the working directory cannot take it: it now is."""
    import errno

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "out.html"))

    async with _on_a_row(tmp_path) as (app, pilot, screen, path, seq):
        screen.export_dir = tmp_path
        with monkeypatch.context() as patch:
            patch.setattr("core.export.write.export_to_file", full)
            await pilot.press("X")
            await until(pilot, lambda: any(t.startswith("Export failed") for t in _toasts(app)))
        said = next(t for t in _toasts(app) if t.startswith("Export failed"))
        assert said == f"Export failed: {tmp_path / 'out.html'}: No space left on device.", said
        app._notifications.clear()  # type: ignore[attr-defined]
        gone, temp = tmp_path / "gone", tmp_path / "temp"
        gone.mkdir()
        temp.mkdir()
        monkeypatch.setattr(tempfile, "tempdir", str(temp))
        monkeypatch.chdir(gone)
        gone.rmdir()
        screen.export_dir = None
        await pilot.press("X")
        await until(pilot, lambda: any(t.startswith(("Exported ", "Export failed")) for t in _toasts(app)))
        assert any(t.startswith("Exported ") for t in _toasts(app)), _toasts(app)
        assert app.is_running and len(list(temp.glob("tapedeck-*.html"))) == 1


@pytest.mark.parametrize("change", ["replaced", "deleted"])
async def test_a_note_on_a_log_changed_while_it_was_written_is_said_at_once_and_not_saved(
    tmp_path: Path, change: str
) -> None:
    """The note dialog names a seq of the log as it was when ``a`` opened it. A log truncated and rewritten with
    another session meanwhile got the note anyway, on that seq (another event, or none) in a sidecar labelled
    with the new session. The note is now refused, in a toast that says why, and nothing is written; a log deleted
    meanwhile was said to be "truncated or replaced", and is said to be deleted, as the policy screens' confirm
    dialogs and the full result view say. And only Enter said so, once the operator had written the note to its
    end: the dialog says it while it is up, above the note, which stays as written."""
    from tests.tui.logs import HEADER, Log

    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settled_main_screen(pilot)
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        dialog = app.screen
        await pilot.press(*"look here")
        live = app.live
        assert live is not None
        epoch = live.epoch
        if change == "replaced":
            other = Log({**HEADER, "id": "another-session"})
            other.turn(1, "a new task", "out")
            path.write_bytes(other.lines())
        else:
            path.unlink()

        await until(pilot, lambda: "while this note was written" in dialog_text(dialog))
        how = "deleted" if change == "deleted" else "truncated or replaced"
        shown = dialog_text(dialog)
        assert f"The log was {how} while this note was written" in shown, shown
        assert "Enter saves nothing" in shown, shown
        assert app.screen is dialog and dialog.query_one("#ask-input").text == "look here"
        await until(pilot, lambda: live.epoch != epoch)
        await pilot.press("enter")
        await until(pilot, lambda: any("not saved" in t for t in _toasts(app)))
        said_then = next(t for t in _toasts(app) if "not saved" in t)
        if change == "replaced":
            await settle(pilot)
            assert not any(os.path.lexists(p) for p in sidecar_paths(path)), load_notes(path)
        else:
            assert "the log was deleted while it was written" in said_then and "replaced" not in said_then, said_then
            assert not list(tmp_path.iterdir())  # no note beside the log that is gone


async def test_a_log_replaced_by_another_session_while_watched_drops_the_old_notes(tmp_path: Path) -> None:
    """A followed log replaced by another session's kept showing the old session's notes on its rows (and ``a``
    offered them for editing). The notes are read again with the new file: none, and a toast says where the old
    session's are kept."""
    from tests.tui.logs import HEADER, Log

    path = policy_log().write(tmp_path / "session.jsonl")
    set_note(path, 2, "on the first session")
    app = make_app(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settled_main_screen(pilot)
        await until(pilot, lambda: screen.events.notes == {2: "on the first session"})
        other = Log({**HEADER, "id": "another-session"})
        other.turn(1, "a new task", "out")
        path.write_bytes(other.lines())
        await until(pilot, lambda: screen.events.notes == {})
        await until(pilot, lambda: any("holds the notes of another session" in t for t in _toasts(app)))
        assert sidecar_paths(path)[0].exists()  # kept
