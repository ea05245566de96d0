"""User keymap files: where they live, what they may say, and that the app applies them."""

from __future__ import annotations

import pkgutil
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.binding import Binding
from textual.widgets import Button, Static

from core.alerts.engine import Alert
from core.read.event_filter import EventFilter
from core.shared.text import quoted_path
from tests.tui.logs import policy_log
from tests.tui.pilot import main_screen, make_app, palette_searched, quiet, settle, until
from tui.alerts import HistoryRecalled
from tui.app import POLICY_SCREENS, TapedeckApp
from tui.keymap import binding_owners, keymap_path, load_keymap
from tui.screens.config import ConfigScreen
from tui.screens.confirm import ConfirmScreen
from tui.screens.control import first_run_hint
from tui.screens.help import help_entries
from tui.settings import load_theme, save_theme
from tui.widgets.detail import TextView
from tui.widgets.search_bar import SearchBar

IDS = ["main.search", "main.filter", "app.help"]


def test_keymap_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "td"))
    assert keymap_path() == tmp_path / "td" / "keymap.toml"
    monkeypatch.delenv("TAPEDECK_HOME")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert keymap_path() == tmp_path / "cfg" / "tapedeck" / "keymap.toml"


def test_a_relative_xdg_config_home_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    # as 909e8d6 ignores a relative XDG_CACHE_HOME or XDG_DATA_HOME: the XDG spec says so, and the theme picked is
    # written beside the keymap, which would land in whichever directory the TUI was started from
    monkeypatch.delenv("TAPEDECK_HOME", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", "cfg")
    assert keymap_path() == Path.home() / ".config" / "tapedeck" / "keymap.toml"


def test_load_keymap(tmp_path: Path) -> None:
    path = tmp_path / "keymap.toml"
    assert load_keymap(path, IDS) == ({}, [])
    path.write_text('main.search = "ctrl+f"\n"main.filter" = " f2 , ctrl+g "\nnope = "x"\n[app]\nhelp = 3\n')
    keymap, problems = load_keymap(path, IDS)
    assert keymap == {"main.search": "ctrl+f", "main.filter": "f2,ctrl+g"}
    assert problems == [
        f'{path}: unknown binding id "nope" (press ? to see the ids)',
        f'{path}: app.help must be a string of keys such as "ctrl+f" or "f3,ctrl+f"',
    ]
    path.write_text('main.search = "\\u001b[2J"\nmain.filter = "f2,ctrl+\\u0085"\n')  # drawn in the footer, the palette
    assert load_keymap(path, IDS) == ({}, [
        f'{path}: main.search: "\\u001b[2J" holds a control character, which no key name does',
        f'{path}: main.filter: "f2,ctrl+\\u0085" holds a control character, which no key name does',
    ])  # fmt: skip
    # a private-use, unassigned or format character is no control, and no key sends it either: the binding was
    # taken, and the key could never be pressed (found by tests/test_hostile_files.py once its seed was a keymap)
    path.write_text('main.search = "\\ue000"\nmain.filter = "f2,a\\u200bb"\n')
    assert load_keymap(path, IDS) == ({}, [
        f'{path}: main.search: "\ue000" holds U+E000, a character no key name has',
        f'{path}: main.filter: "f2,a\u200bb" holds U+200B, a character no key name has',
    ])  # fmt: skip
    path.write_text("main.search = \n")
    keymap, problems = load_keymap(path, IDS)
    assert keymap == {} and len(problems) == 1 and "not valid TOML" in problems[0]


def test_a_keymap_or_settings_file_an_editor_saved_with_a_byte_order_mark_applies(tmp_path: Path) -> None:
    """A keymap saved with a UTF-8 byte-order mark (as Windows editors save one) was 'not valid TOML (Invalid
    statement (at line 1, column 1))' and every binding in it was dropped, while a policy config takes one; bytes
    that are not UTF-8 were named in Python's words. Both files are read as the policy config is."""
    path, settings = tmp_path / "keymap.toml", tmp_path / "tui.toml"
    path.write_bytes(b'\xef\xbb\xbfmain.search = "ctrl+f"\n')
    settings.write_bytes(b'\xef\xbb\xbftheme = "nord"\n')
    assert load_keymap(path, IDS) == ({"main.search": "ctrl+f"}, [])
    assert load_theme(settings) == ("nord", None)
    path.write_bytes(b'main.search = "ctrl+\xff"\n')
    assert load_keymap(path, IDS) == ({}, [f"{path}: not UTF-8 text: the byte at offset 20 (0xff) cannot be decoded; save it as UTF-8"])
    assert load_theme(path) == (None, f"{path}: not UTF-8 text: the byte at offset 20 (0xff) cannot be decoded; save it as UTF-8")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("main.search = " + "9" * 5000, "a number has more than 4300 digits"),
        ("main.search = " + "[" * 3000 + "]" * 3000, "it is nested too deeply"),
        ("main.search = " + "{a = " * 3000 + "1" + "}" * 3000, "it is nested too deeply"),
        ("a" + ".a" * 3000 + " = 1", "unknown binding id"),
    ],
    ids=["digits", "arrays", "inline-tables", "dotted-tables"],
)
def test_a_keymap_or_settings_file_python_cannot_hold_is_a_problem_not_a_crash(
    tmp_path: Path, text: str, reason: str
) -> None:
    """The TUI read these at start: ValueError or RecursionError stopped 'tapedeck watch' with a traceback. And the
    problem called such a file 'not valid TOML', which it is; it says what Python cannot hold in it, in the words
    the policy config's and the script's readers use (``core.shared.parsers.load_document``)."""
    path = tmp_path / "keymap.toml"
    path.write_text(text)
    keymap, problems = load_keymap(path, IDS)
    assert keymap == {} and len(problems) == 1 and reason in problems[0]
    theme, problem = load_theme(path)
    assert theme is None or reason == "unknown binding id"
    if reason != "unknown binding id":
        assert problems == [f"{path}: not a usable keymap: {reason}"]
        assert problem == f"{path}: not a usable TUI settings file: {reason}"


@pytest.mark.anyio
async def test_app_applies_the_keymap(tmp_path: Path) -> None:
    keymap = tmp_path / "con\x1bfig" / "keymap.toml"  # a directory whose name holds ESC: named as quoted_path does
    keymap.parent.mkdir()
    # the unknown id's hint names the key the same file gives help, which '?' no longer opens
    keymap.write_text('main.search = "ctrl+f"\nmain.bogus = "z"\n"app.help" = "f1"\n')
    (keymap.parent / "tui.toml").write_text('theme = "nord"\n')
    app = make_app(policy_log().write(tmp_path / "session.jsonl"), keymap=keymap)
    # both files are read as the app is built, before it runs: the UI thread does no I/O (it read them in on_mount)
    keymap.unlink()
    (keymap.parent / "tui.toml").unlink()
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        named = quoted_path(keymap)
        assert app.keymap_problems == [f'{named}: unknown binding id "main.bogus" (press f1 to see the ids)']
        assert [t.message for t in app._notifications] == app.keymap_problems
        assert app.theme == "nord"
        app.action_help()  # it names the file to write the keymap in as the problems name it (it wrote it raw)
        await pilot.pause()
        notes = str(app.screen.query_one("#help-notes", Static).render())
        assert notes.startswith(f"Rebind keys in {named} with lines like"), notes
        app.pop_screen()
        screen = main_screen(app)
        assert screen is not None
        await pilot.press("slash")
        assert not screen.query_one(SearchBar).display  # "/" no longer searches
        await pilot.press("ctrl+f")
        assert screen.query_one(SearchBar).display



@pytest.mark.anyio
async def test_the_hints_in_messages_name_the_keys_the_keymap_binds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Toasts and a screen's text that tell the operator which key to press ('A lists them', 'd shows it', 'T shows
    the session …', 's shows the full log', the detail pane's 'press + to show more', the config screen's 'e (or
    Enter) edits it, a edits …') named the default key even when keymap.toml rebinds it; each names the key the
    keymap gives, as ``?`` shows it."""
    keymap = tmp_path / "keymap.toml"
    keymap.write_text('"app.alerts" = "f5,ctrl+l"\n"main.detail" = "f6"\n"main.time_travel" = "ctrl+t"\n'
                      '"main.surface" = "f9"\n"main.more" = "f10"\n"policy.config.edit" = "f7"\n'
                      '"policy.config.other" = "f8"\n"main.follow" = "f11"\n"main.clear_filter" = "f12"\n'
                      '"app.diagnostics" = "ctrl+d"\n"main.search" = "ctrl+f"\n"app.help" = "f1"\n'
                      '"policy.confirm.yes" = "f2"\n"policy.confirm.no" = "f3,escape"\n"policy.folds.view" = "f4"\n'
                      '"policy.ask.cancel" = "f13"\n"list.expand" = "f14"\n"main.hide_chunks" = "f15"\n'
                      '"main.note" = "f16"\n"main.export" = "f17"\n"main.time" = "f18"\n"main.filter" = "f19"\n'
                      '"policy.folds.expand" = "f20"\n"control.checkpoint" = "f21"\n"control.pause" = "f22"\n'
                      '"control.message" = "f23"\n"control.stop" = "f24"\n"app.checkpoints" = "ctrl+f1"\n'
                      '"app.folds" = "ctrl+f2"\n"app.config" = "ctrl+f3"\n')  # fmt: skip
    app = make_app(policy_log().write(tmp_path / "session.jsonl"), keymap=keymap)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        assert screen is not None and app.keymap_problems == []
        alert = Alert("s", "/l", "budget", 1, "warning", "why", None)
        app.on_history_recalled(HistoryRecalled([alert]))
        app.burst.held.append(alert)
        app._sum_up_burst()
        screen.action_live()
        screen.detail.display = False
        screen.action_more()
        await pilot.pause()  # a toast is a message to the app
        assert [t.message for t in app._notifications] == [
            "1 alert in this log's history: f5 lists them",
            "1 more alert (budget): f5 lists them all",
            "Not time travelling: ^t shows the session as it stood at the selected row.",
            "The detail pane is folded away at this width: f6 shows it.",
        ]
        screen.detail.display = True
        prompt = next(n for n, e in enumerate(screen.live.session.events) if e.get("type") == "user/message")
        screen.detail.limit = 4
        screen.detail.show(prompt, keep_limit=True)
        await settle(pilot)
        pane = " ".join(" ".join(s.text for s in screen.detail.query_one("#detail-original", TextView).lines).split())
        assert "more chars (press f10 to show more)" in pane, pane
        screen.mode = "surface"
        assert screen._hiding() == "on the surface: f9 shows the full log"
        # the status line's hints, and the toast of a search key pressed with nothing searched
        screen.mode = "full"
        app.clear_notifications()
        screen.action_match(1)
        await pilot.pause()
        screen.filter = EventFilter()
        screen.action_clear_filter()
        await pilot.pause()
        assert [t.message for t in app._notifications] == [
            "No search matches; ^f searches.", "No filter to clear; f19 sets one."
        ]
        # the demo's first toast, and what ? says under the keys of the main screen and of Folds
        assert first_run_hint(app) == (
            "You are the operator: f21 checkpoint · f22 pause/resume · f23 message the agent · f24 stop · "
            "^f1 checkpoints & rewind · ^f2 folds & expand · ^f3 config · f1 every key"
        )
        app.action_help()
        await pilot.pause()
        legend = " ".join(text for _term, text in app.screen.legend)
        for said in ("f14 lists the originals", "its deltas; f14 lists them", "f15 hides the streams",
                     "f16 adds or edits it; f17 exports", "f18 switches between"):  # fmt: skip
            assert said in legend, legend
        app.pop_screen()
        monkeypatch.setattr(type(screen), "_problems", lambda _self: 2)
        screen.filter = EventFilter(regex="a" * 300)  # too long to describe: the status says the filter is on
        monkeypatch.setattr(screen.live, "follow", True)
        screen.events.following = False
        screen._update_status()
        status = str(screen.query_one("#status", Static).render())
        assert "filter on (f12 clears)" in status and "scroll lock (f11 follows)" in status, status
        assert "2 problems in the log (^d)" in status, status
        app.action_policy("folds")
        await settle(pilot)
        assert "(f1 explains the columns)" in str(app.screen.query_one("#folds-totals", Static).render())
        app.action_help()
        await pilot.pause()
        assert "operator expands (f20) do not count" in dict(app.screen.legend)["backoff"]
        app.pop_screen()
        app.pop_screen()
        palette = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert palette["Folds: Full result"] == "opens Folds and runs it (f4 there)"
        app.push_screen(ConfirmScreen("Send it?", "what it sends"))
        await pilot.pause()
        assert [str(b.label) for b in app.screen.query(Button)] == ["Send (f2)", "Cancel (f3)"]
        app.pop_screen()
        monkeypatch.setattr(ConfigScreen, "_select", lambda *_: None)  # the hint stays until a key is selected
        app.action_policy("config")
        await settle(pilot)
        hint = str(app.screen.query_one("#config-selected", Static).render())
        assert hint == "Select a key; f7 (or Enter) edits it, f8 edits a key not listed."
        app.pop_screen()
        # the dialogs that ask for a line say which key cancels them: the one the keymap gives, not Esc
        hints = []
        for open_dialog in (app.action_control_message, screen.action_note,
                            lambda: (app.action_policy("checkpoints"), app.screen.action_mark())):  # fmt: skip
            depth = len(app.screen_stack)
            open_dialog()
            await settle(pilot)
            hints.append(str(app.screen.query_one(".policy-dialog-hint", Static).render()))
            while len(app.screen_stack) > depth:
                app.pop_screen()
        assert hints == [
            "The model reads it at its next step. Enter sends, f13 cancels.",
            "Kept beside the log, never in it. Enter saves (empty: removes), ctrl+j starts a new line, f13 cancels.",
            "Objective of the exploration (optional); Enter sends, f13 cancels.",
        ]



def test_the_classes_that_bind_keys_are_listed_from_disk_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """``key_of`` runs on the app's thread, at each redraw of the detail pane since 2a107a7: it listed the modules of
    ``tui.screens`` and ``tui.widgets`` (directory reads) at every call, where the UI thread does no I/O."""
    first = binding_owners()

    def read_again(*_: object) -> None:
        raise AssertionError("the packages were listed again")

    monkeypatch.setattr(pkgutil, "iter_modules", read_again)
    assert binding_owners() == first and first


# Distinct keys no default binding uses: one per binding id, so each rebinding shows as itself in `?`.
SPARE_KEYS = [f"{mods}f{n}" for mods in ("", "ctrl+", "shift+", "ctrl+shift+") for n in range(1, 25)]


def _open_every_screen(app: TapedeckApp) -> list[tuple[str, Callable[[], object]]]:
    """How to reach each screen and dialog without its (rebound) key: through the actions themselves."""
    main = main_screen(app)
    assert main is not None
    return [
        ("main screen", lambda: None),
        *((f"{module} screen", lambda m=module: app.action_policy(m)) for _k, module, *_ in POLICY_SCREENS),
        ("request view", main.action_request),
        ("filter dialog", main.action_filter),
        ("search bar", main.action_search),
        ("message dialog", app.action_control_message),
        ("stop confirm", app.action_control_stop),
        ("alerts screen", app.action_alerts),
        ("help", app.action_help),
    ]


def _ids_shown_rebound(app: TapedeckApp, keymap: dict[str, str], where: str) -> set[str]:
    """The binding ids ``?`` lists here (its fixed keys have none); each must show the key the keymap gave it."""
    shown = set()
    for entry in (e for e in help_entries(app, app.screen) if not e.fixed):
        assert entry.binding_id in keymap, f"{where}: {entry.binding_id} is shown by ? but cannot be rebound"
        expected = app.get_key_display(Binding(keymap[entry.binding_id], "noop"))
        assert expected in entry.keys.split(" / "), f"{where}: {entry.binding_id} shows {entry.keys}"
        shown.add(entry.binding_id)
    return shown


@pytest.mark.anyio
async def test_every_binding_id_help_shows_on_every_screen_can_be_rebound(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    path = policy_log().write(root / "--w--" / "s1" / "session.jsonl")
    ids = make_app(path).binding_ids()
    assert len(ids) <= len(SPARE_KEYS)
    keymap = dict(zip(ids, SPARE_KEYS, strict=False))
    keymap_file = tmp_path / "keymap.toml"
    keymap_file.write_text("".join(f'"{binding_id}" = "{key}"\n' for binding_id, key in keymap.items()))
    shown: set[str] = set()

    app = make_app(path, keymap=keymap_file)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        assert app.keymap_problems == []
        for where, open_screen in _open_every_screen(app):
            depth = len(app.screen_stack)
            open_screen()
            await settle(pilot)
            shown |= _ids_shown_rebound(app, keymap, where)
            while len(app.screen_stack) > depth:
                app.pop_screen()
            await settle(pilot)

    fleet = make_app(root, keymap=keymap_file)
    async with fleet.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        shown |= _ids_shown_rebound(fleet, keymap, "fleet table")
        # the status line's hint names the keys the keymap gives (it said n, / and Enter)
        status = str(fleet.screen.query_one("#fleet-status", Static).render())
        assert status.startswith(" · ".join(f"{fleet.get_key_display(Binding(keymap[i], 'noop'))} {what}" for i, what in (
            ("fleet.next", "next attention"), ("fleet.filter", "filter"), ("fleet.open", "open")))), status  # fmt: skip

    # The request view's keys and the Router screen's T among them (once refused by the keymap file).
    assert {"request.prev", "request.next", "request.close", "router.time_travel", "fleet.next"} <= shown
    assert len(shown) >= 60


@pytest.mark.anyio
@pytest.mark.parametrize("keys", ["[/b]", "[b]x", "[@click=app.quit]q"])
async def test_a_key_that_reads_as_markup_shows_as_written_in_the_palette(tmp_path: Path, keys: str) -> None:
    """The command palette (ctrl+p) names each action's keys, as the keymap gives them, in text it reads as markup:
    a binding to the key '[/b]' ended 'tapedeck watch' with a MarkupError as the palette listed it, and '[b]x' was
    listed as 'key x'; each shows as written."""
    keymap = tmp_path / "keymap.toml"
    keymap.write_text(f'main.search = "{keys}"\n')
    app = make_app(policy_log().write(tmp_path / "session.jsonl"), keymap=keymap)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p", *"Sear")
        # the palette lists what its search found (its own worker) later than the keys: 0.5 s was a guess
        await until(pilot, lambda: palette_searched(app) and app.screen.query_one("CommandList").option_count > 0)
        await quiet(pilot)  # and draws it
        drawn = "\n".join("".join(s.text for s in strip) for strip in app.screen._compositor.render_strips())
        assert f"key {keys}" in drawn, drawn


@pytest.mark.parametrize("name", ["keymap.toml", "tui.toml"])
def test_a_keymap_or_settings_file_past_a_mib_is_refused_unread(name: str, tmp_path: Path) -> None:
    """Both were read whole (``read_bytes``), however large: a keymap of gigabytes was read into memory and parsed
    at every start; the policy config is refused past 1 MiB, and so are they, with its message."""
    path = tmp_path / name
    path.write_bytes(b'theme = "textual-dark"\nmain.search = "ctrl+f"\n' + b"#" * (1 << 20) + b"\n")
    expected = f"{path}: larger than 1 MiB, which no {'keymap' if name == 'keymap.toml' else 'TUI settings file'} is"
    if name == "keymap.toml":
        assert load_keymap(path, IDS) == ({}, [expected])
    else:
        assert load_theme(path) == (None, expected)
    with path.open("r+b") as f:  # a sparse file of 4 GiB: only the first MiB is read
        f.truncate(4 << 30)
    assert (load_keymap(path, IDS)[1] if name == "keymap.toml" else [load_theme(path)[1]]) == [expected]


def test_a_keymap_or_settings_path_is_named_as_every_message_names_a_path(tmp_path: Path) -> None:
    """An unknown id, keys that are no string, a theme that is none and a theme not saved named their file as it
    was: a directory holding ESC ] 2 (TAPEDECK_HOME may be anywhere) retitled the terminal from the help screen, and
    a newline split the message. They name it as ``quoted_path`` does, as the reader's own messages (not TOML, too
    large) already did."""
    home = tmp_path / "td\x1b]2;x\x07\nhome"
    home.mkdir()
    named = quoted_path(home)
    path = home / "keymap.toml"
    path.write_text('nope = "x"\nmain.search = 3\ntheme = 3\n')
    assert load_keymap(path, IDS)[1] == [
        f'{named}/keymap.toml: unknown binding id "nope" (press ? to see the ids)',
        f'{named}/keymap.toml: main.search must be a string of keys such as "ctrl+f" or "f3,ctrl+f"',
        f'{named}/keymap.toml: unknown binding id "theme" (press ? to see the ids)',
    ]
    assert load_theme(path) == (None, f'{named}/keymap.toml: theme must be a string such as "textual-dark"')
    assert save_theme(path / "tui.toml", "nord") == f"{named}/keymap.toml/tui.toml: cannot save the theme (File exists)"
