"""User keymap files: where they live, what they may say, and that the app applies them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.logs import policy_log
from tests.tui.pilot import main_screen, make_app, settle
from tui.keymap import keymap_path, load_keymap
from tui.widgets.search_bar import SearchBar

IDS = ["main.search", "main.filter", "app.help"]


def test_keymap_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "td"))
    assert keymap_path() == tmp_path / "td" / "keymap.toml"
    monkeypatch.delenv("TAPEDECK_HOME")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert keymap_path() == tmp_path / "cfg" / "tapedeck" / "keymap.toml"


def test_load_keymap(tmp_path: Path) -> None:
    path = tmp_path / "keymap.toml"
    assert load_keymap(path, IDS) == ({}, [])
    path.write_text('main.search = "ctrl+f"\n"main.filter" = " f2 , ctrl+g "\nnope = "x"\n[app]\nhelp = 3\n')
    keymap, problems = load_keymap(path, IDS)
    assert keymap == {"main.search": "ctrl+f", "main.filter": "f2,ctrl+g"}
    assert problems == [
        f"{path}: unknown binding id 'nope' (press ? to see the ids)",
        f'{path}: app.help must be a string of keys such as "ctrl+f" or "f3,ctrl+f"',
    ]
    path.write_text("main.search = \n")
    keymap, problems = load_keymap(path, IDS)
    assert keymap == {} and len(problems) == 1 and "not valid TOML" in problems[0]


@pytest.mark.anyio
async def test_app_applies_the_keymap(tmp_path: Path) -> None:
    keymap = tmp_path / "keymap.toml"
    keymap.write_text('main.search = "ctrl+f"\nmain.bogus = "z"\n')
    app = make_app(policy_log().write(tmp_path / "session.jsonl"), keymap=keymap)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        assert app.keymap_problems == [f"{keymap}: unknown binding id 'main.bogus' (press ? to see the ids)"]
        screen = main_screen(app)
        assert screen is not None
        await pilot.press("slash")
        assert not screen.query_one(SearchBar).display  # "/" no longer searches
        await pilot.press("ctrl+f")
        assert screen.query_one(SearchBar).display
