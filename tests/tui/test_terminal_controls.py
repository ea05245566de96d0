"""Text from a log never drives the operator's terminal: escape sequences in a tool result, a prompt or an
answer are drawn as pictures (␛, ␇) in the detail pane, not written to the terminal (where ESC ] 0 retitled the
window and ESC ] 52 would set the clipboard)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import Input, Label

from tests.cli.test_events_cli import ESCAPES
from tests.tui.logs import Log
from tests.tui.pilot import make_app, open_filter, settle, settled_main_screen, until
from tui.live import LiveSession
from tui.widgets.detail import describe, render_strips

pytestmark = pytest.mark.anyio


def _controls(text: str) -> list[str]:
    return [c for c in text if ord(c) < 32 and c != "\n" or 0x7F <= ord(c) <= 0x9F]


def test_the_detail_pane_draws_control_characters_as_pictures(tmp_path: Path) -> None:
    log = Log()
    seqs = log.turn(1, f"prompt {ESCAPES}", f"out {ESCAPES}")
    live = LiveSession(log.write(tmp_path / "session.jsonl"), follow=False)
    live.run()
    for seq in (seqs["prompt"], seqs["result"]):
        left, right, _ = describe(live, seq, 2000)
        for text in (left, right):
            if text is None:
                continue
            drawn = "".join(segment.text for strip in render_strips(text, 60) for segment in strip)
            assert not _controls(drawn), (seq, drawn)
            assert "␛]52;c;" in drawn, (seq, drawn)


def test_the_detail_pane_keeps_the_lines_of_a_result(tmp_path: Path) -> None:
    log = Log()
    seqs = log.turn(1, "prompt", "first line\n\tsecond line")
    live = LiveSession(log.write(tmp_path / "session.jsonl"), follow=False)
    live.run()
    left, _, _ = describe(live, seqs["result"], 2000)
    lines = ["".join(segment.text for segment in strip).rstrip() for strip in render_strips(left, 60)]
    assert "first line" in lines and any(line.endswith("second line") for line in lines), lines


async def test_the_full_result_view_draws_control_characters_as_pictures() -> None:
    """The Folds screen's ``v``: ESC [ 2J in a result cleared the whole terminal and ESC ] 0 retitled it."""
    from textual.app import App
    from textual.widgets import TextArea

    from tui.screens.folds import ResultScreen

    app: App[None] = App()
    async with app.run_test() as pilot:
        await app.push_screen(ResultScreen("bash · seq 5", f"out {ESCAPES}\nnext line", 0))
        await pilot.pause()
        shown = app.screen.query_one(TextArea).text
        assert not _controls(shown) and "␛]52;c;" in shown and shown.endswith("\nnext line"), shown


async def test_the_tape_screen_draws_control_characters_as_pictures(tmp_path: Path) -> None:
    """A tape entry quotes the model's replies, and the full recall view its tool output."""
    from textual.widgets import Static

    from tests.tui.pilot import make_app, settle

    log = Log()
    t1 = log.turn(1, "list the files", f"out {ESCAPES}")
    log.tape(1, 1, [t1["prompt"], t1["ask"], t1["result"], t1["answer"]], f"turn 1: {ESCAPES}")
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        await pilot.press("f")  # the full view, with the tool's output
        await settle(pilot)
        for name in ("#tape-text", "#tape-recall"):
            shown = str(app.screen.query_one(name, Static).render())
            assert not _controls(shown), (name, shown)
            assert "␛]52;c;" in shown or name == "#tape-recall", (name, shown)  # the full view quotes JSON


async def test_an_event_type_that_reads_as_markup_leaves_the_filter_dialog_up(tmp_path: Path) -> None:
    """The filter dialog lists the types seen in the log as markup: an event type ``[/b]`` (a closing tag to it)
    ended the TUI with a MarkupError when ``f`` was pressed, and so did a regex such as ``[/x](`` in its error
    line."""
    log = Log()
    log.turn(1, "prompt", "out")
    log.add({"type": "[/b]", "data": {"x": 1}})
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settled_main_screen(pilot)
        dialog = await open_filter(pilot)
        assert "[/b]" in str(dialog.query_one("#filter-seen", Label).render())
        dialog.query_one("#filter-regex", Input).value = "[/x]("
        await pilot.press("enter")
        await settle(pilot)
        assert "[/x](" in str(dialog.query_one("#filter-error", Label).render())


def _escaping_session(directory: Path) -> Path:
    """A session whose id, tool names, paths, commands, checkpoint objective and a bad line hold escape sequences."""
    from core.policies.checkpoint import plan_checkpoint
    from core.policies.fold import plan_fold
    from tests.tui.screens_policy.harness import HEADER, LogBuilder
    from tests.tui.screens_policy.scenarios import CONFIG, table_text

    log = LogBuilder({**HEADER, "id": f"s-{ESCAPES}"})
    log.start_turn(f"fix it {ESCAPES}")
    log.calls(
        [
            ("read_file", {"path": f"data/{ESCAPES}.csv"}, table_text("a", 120), False),
            (f"tool{ESCAPES}", {"command": f"ls {ESCAPES}"}, f"out {ESCAPES}", True),
        ]
    )
    log.end_step()
    log.start_step()
    log.plan(lambda s: plan_fold(s, CONFIG.slice))
    log.plan(lambda s: plan_checkpoint(s, f"find {ESCAPES}", by="operator"))
    log.say("done")
    path = log.write(directory)
    with open(path, "ab") as f:
        f.write(f'{{"type": "x{ESCAPES}", "seq": 9\n'.encode())
    return path


@pytest.mark.parametrize(
    "screen", ["FoldsScreen", "CheckpointsScreen", "TapeScreen", "RouterScreen", "ConfigScreen", "ProlongScreen",
               "DiagnosticsScreen"]
)  # fmt: skip
async def test_the_policy_screens_draw_control_characters_as_pictures(tmp_path: Path, screen: str) -> None:
    """A path, a tool name or a checkpoint's objective holding ESC ] 2 retitled the terminal (and ESC [ 2J cleared
    it) when the Folds or Checkpoints screen drew it in a table cell or under it; every policy screen now draws them
    as pictures."""
    import importlib

    from tests.tui.screens_policy.harness import PolicyHarness
    from tests.tui.screens_policy.harness import settle as settle_screen

    module = screen.removesuffix("Screen").lower()
    app = PolicyHarness(_escaping_session(tmp_path / "s"), getattr(importlib.import_module(f"tui.screens.{module}"), screen))
    async with app.run_test(size=(160, 45)) as pilot:
        await settle_screen(pilot)
        drawn = "\n".join("".join(s.text for s in strip) for strip in app.screen._compositor.render_strips())
        assert not _controls(drawn), drawn


async def test_the_header_draws_control_characters_as_pictures(tmp_path: Path) -> None:
    """The main screen's header wrote the session's id, title, model and parent as the log has them, so an id
    holding ESC ] 2 retitled the terminal each time the header was drawn; it now draws them as pictures, and how the
    last turn ended (the kind of its ``turn/end`` reason, as the log says it) too."""
    from tests.tui.screens_policy.harness import HEADER, LogBuilder
    from tui.widgets.header import SessionHeader

    log = LogBuilder({**HEADER, "id": f"s-{ESCAPES}", "parentSession": f"p-{ESCAPES}"})
    log.add({"type": "session/title", "data": {"title": f"fix {ESCAPES}"}})
    log.start_turn("fix it")
    log.say("done")
    log.add({"type": "turn/end", "data": {"turn": log.turn, "reason": {"kind": f"k-{ESCAPES}"}}})
    app = make_app(log.write(tmp_path / "s"))
    async with app.run_test(size=(200, 45)) as pilot:
        screen = await settled_main_screen(pilot)
        shown = str(screen.query_one(SessionHeader).render())
        assert not _controls(shown), shown
        assert "fix ␛]52;c;" in shown and "s-␛]52;c;" in shown and "p-␛]52;c;" in shown, shown
        assert "turn 1 k-␛]52;c;" in shown, shown


async def test_toasts_draw_control_characters_as_pictures(tmp_path: Path) -> None:
    """A toast quotes the log and the host (an alert's reason, a request's answer, a path): ESC ] 2 in it
    retitled the terminal for the toast's whole timeout; it now shows as pictures."""
    from textual.widgets._toast import Toast

    from tests.tui.logs import policy_log

    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(160, 45), notifications=True) as pilot:
        screen = await settled_main_screen(pilot)
        app.notify(f"rejected: no such tool {ESCAPES}", title=f"expand {ESCAPES}", severity="warning", timeout=60)
        await until(pilot, lambda: len(screen.query(Toast)) == 1)
        await settle(pilot)
        shown = "\n".join("".join(s.text for s in strip) for strip in screen._compositor.render_strips())
        assert not _controls(shown), shown
        assert "no such tool ␛]52;c;" in shown and "expand ␛]52;c;" in shown, shown


async def test_the_filter_dialog_draws_the_types_seen_as_pictures(tmp_path: Path) -> None:
    """The filter dialog lists the event types seen in the log: a type holding ESC ] 2 retitled the terminal when
    ``f`` was pressed; it now shows as pictures."""
    from tests.tui.logs import policy_log

    log = policy_log()
    log.add({"type": f"x/{ESCAPES}", "data": {"turn": 3}})
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(160, 45)) as pilot:
        await settled_main_screen(pilot)
        dialog = await open_filter(pilot)
        shown = str(dialog.query_one("#filter-seen", Label).render())
        assert not _controls(shown), shown
        assert "x/␛]52;c;" in shown, shown


def test_the_rewind_preview_and_a_route_record_draw_control_characters_as_pictures() -> None:
    """A checkpoint's objective (the model's words) and a tool's name reached the terminal as the log had them in
    the Checkpoints screen's line over the region and in the rewind's confirm dialog, and a route record's values
    in the Router screen's detail."""
    from core.policies.checkpoint import plan_checkpoint
    from tests.tui.screens_policy.harness import LogBuilder, plain
    from tui.screens.checkpoints import derive_checkpoints, region_line, rewind_summary
    from tui.screens.router import route_detail, route_line

    log = LogBuilder()
    log.start_turn("look around")
    log.plan(lambda s: plan_checkpoint(s, f"find {ESCAPES}", by="operator"))
    log.call(f"tool{ESCAPES}", {"command": "ls"}, "a.txt")
    log.end_step()
    log.start_step()
    log.say("Nothing else to see.")
    view = derive_checkpoints(log.session())
    chosen = view.preview_for(None)
    assert chosen is not None
    for text in (plain(rewind_summary(view, chosen)), region_line(view, None).plain):
        assert not _controls(text), text
        assert "␛]52;c;" in text, text
    detail = route_detail(route_line(3, {"phase": "normal", "reason": f"x {ESCAPES}"})).plain
    assert not _controls(detail), detail


async def test_the_request_view_draws_control_characters_as_pictures(tmp_path: Path) -> None:
    """The request view (``R``) wrote the model, the tool names and the usage's keys as the log has them in its
    heading and tool line, so a model named with ESC ] 2 retitled the terminal when the view opened; they are now
    drawn as pictures, as the messages' previews are."""
    from tests.tui.screens_policy.harness import LogBuilder
    from tui.screens.request import RequestScreen

    log = LogBuilder(host=False)
    header = {"config": {"provider": "p", "model": f"m-{ESCAPES}"}, "system": "sys",
              "tools": [{"name": f"tool{ESCAPES}", "description": "d", "parameters": {"type": "object"}}]}  # fmt: skip
    log.add({"type": "request/header", "data": {"header": header, "reason": "initial"}})
    log.start_turn("fix it")
    log.call(f"tool{ESCAPES}", {"command": "ls"}, "out")
    log.end_step()
    log.start_step()
    log.say("done")
    app = make_app(log.write(tmp_path / "s"))
    async with app.run_test(size=(160, 45)) as pilot:
        await settled_main_screen(pilot)
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, RequestScreen) and app.screen.view is not None)
        await settle(pilot)
        drawn = "\n".join("".join(s.text for s in strip) for strip in app.screen._compositor.render_strips())
        assert not _controls(drawn), drawn
        assert "m-␛]52;c;" in drawn and "tool␛]52;c;" in drawn, drawn


async def test_the_headers_cost_line_draws_an_unpriced_model_as_pictures(tmp_path: Path, fixtures_dir: Path) -> None:
    """The header's cost line names a model no price table covers (``no price for MODEL``), as the log has it: a
    DSH request header's model holding ESC ] 2 retitled the terminal at every redraw of the header; it is now
    drawn as pictures, as the title and the id are."""
    import orjson

    from tui.widgets.header import SessionHeader

    events = [orjson.loads(line) for line in (fixtures_dir / "multi-turn.session.jsonl").read_bytes().splitlines()]
    for event in events:
        if event.get("type") == "request/header":
            event["data"]["header"]["config"]["model"] = f"m-{ESCAPES}"
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(event) + b"\n" for event in events))
    app = make_app(path)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await settled_main_screen(pilot)
        shown = str(screen.query_one(SessionHeader).render())
        assert not _controls(shown), shown
        assert "no price for m-␛]52;c;" in shown, shown


MARKUP = "[b]MK[/b][@click=app.quit]CL[/]"  # read as markup, the tags vanish and CL becomes a link that quits


def _hostile(value: object, key: str | None = None) -> object:
    """``value`` with Rich markup and escapes after each of its strings but an event's type."""
    if isinstance(value, str):
        return value if key == "type" else f"{value}{MARKUP}{ESCAPES}"
    if isinstance(value, list):
        return [_hostile(item) for item in value]
    if isinstance(value, dict):
        return {k: _hostile(item, k) for k, item in value.items()}
    return value


@pytest.mark.parametrize("fixture", ["tool-call-turn", "compaction-recovery"])
async def test_every_screen_draws_a_logs_strings_as_the_text_they_are(
    tmp_path: Path, fixtures_dir: Path, fixture: str
) -> None:
    """A sweep over a real DSH log each of whose strings ends in Rich markup and escapes: the list and the detail
    pane row by row, the surface, every policy screen, the request view, the alerts, the filter dialog and help
    draw them as pictures and as the text they are (a tag read as markup would vanish, and ``[@click=…]`` make a
    link that runs an action); the header drew how a turn ended as the log had it."""
    import orjson

    lines = (fixtures_dir / f"{fixture}.session.jsonl").read_bytes().splitlines()
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(_hostile(orjson.loads(line))) + b"\n" for line in lines))
    app = make_app(path)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        await settled_main_screen(pilot)
        keys = [*["down"] * len(lines), "s", "s", *("escape" if k == "-" else k for k in "t-o-c-r-p-C-D-A-R-f-?-")]
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
            drawn = "\n".join("".join(s.text for s in strip) for strip in app.screen._compositor.render_strips())
            assert not _controls(drawn), (key, drawn)
            for line in drawn.splitlines():  # each tag shown before what it would have styled, unless cut there
                assert all(m.start() < 3 or line[m.start() - 3 : m.start()] == "[b]" for m in re.finditer("MK", line)), line


def test_the_headers_machine_label_draws_what_the_link_said_as_pictures() -> None:
    """A remote session's header says why its machine is unreachable in the SSH link's words, which quote the
    server (its disconnect message, an SFTP status text): ESC ] 2 there retitled the terminal at every redraw of
    the header while the machine stayed away; it is drawn as pictures, as the session's id beside it is."""
    from types import SimpleNamespace

    from tui.widgets.header import remote_label

    live = SimpleNamespace(remote=SimpleNamespace(target=SimpleNamespace(where="box")),
                           unreachable=f"box: unreachable since 10:00:00 (bye {ESCAPES})")  # fmt: skip
    text, _ = remote_label(live)  # type: ignore[arg-type]
    assert not _controls(text) and text.startswith(" on box: unreachable since 10:00:00 (bye ␛]52;c;"), text


def test_config_values_the_log_set_are_drawn_as_pictures() -> None:
    """The Config screen writes a value as JSON, which escapes the C0 controls but not a C1 control (0x9b, a CSI)
    or a BiDi override: a value a log's config event set to one reached the terminal from the review dialog, the
    check line, the current value and the table of logged changes; each is drawn as pictures."""
    from tui.screens.config import Check, diff_text, show_value

    old = "old\x9b2J\u202e"
    check = Check("prolong.logFile", '"new"', "new", (("prolong.logFile", old, "new"),))
    for shown in (show_value(old), diff_text(check).plain):
        assert not _controls(shown) and "\u202e" not in shown and "old�2J�" in shown, shown


async def test_a_policy_screens_message_line_and_outcomes_draw_control_characters_as_pictures(tmp_path: Path) -> None:
    """The message line under a policy screen says why a view could not be derived, quoting the log (a host config
    key that does not validate), and the outcome panel gives the host's reason for a rejection: both were drawn as
    they came, so ESC ] 2 in either retitled the terminal while the screen was up; the outcome's are drawn as
    pictures, and the key comes with them written as JSON escapes, as every config message names a key."""
    from tests.tui.screens_policy.harness import LogBuilder, PolicyHarness, rewind_rejected
    from tests.tui.screens_policy.harness import settle as settle_screen
    from tests.tui.screens_policy.scenarios import demo
    from tui.screens.checkpoints import CheckpointsScreen
    from tui.screens.config import ConfigScreen

    log = LogBuilder()
    log.events[0]["data"] = {**log.events[0]["data"], "config": {"slice": {f"x{ESCAPES}": 1}}}
    log.start_turn("hi")
    log.say("ok")
    app = PolicyHarness(log.write(tmp_path / "bad"), ConfigScreen)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle_screen(pilot, lambda: "does not validate" in str(app.screen.query_one("#policy-message").render()))
        drawn = "\n".join("".join(s.text for s in strip) for strip in app.screen._compositor.render_strips())
        assert not _controls(drawn) and "key x\\u001b]52;c;" in drawn, drawn
    path = demo(tmp_path / "s")
    app = PolicyHarness(path, CheckpointsScreen, follow=True)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle_screen(pilot)
        await rewind_rejected(pilot, path, f"no {ESCAPES}")
        drawn = "\n".join("".join(s.text for s in strip) for strip in app.screen._compositor.render_strips())
        assert not _controls(drawn) and "no ␛]52;c;" in drawn, drawn
