"""The TUI on a log line nested as deep as orjson reads (1,024 levels: a forged or damaged line): its row, detail
pane, request view, time travel and every screen, and the Folds screen's full result view. The CLI raises the
interpreter's recursion limit for every command, ``watch`` and ``fleet`` included (``core.cli.main``); the app
raises it too, so it holds however the app is started."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from textual.widgets import DataTable, TextArea

from bench.readers import SCREEN_KEYS, tui_crash
from core.shared.jsonout import DEEPEST_READ
from tests.conftest import FIXTURES
from tests.tui.pilot import make_app, opened, settled_main_screen
from tui.screens.folds import FoldsScreen, ResultScreen

pytestmark = pytest.mark.anyio
TURN = FIXTURES / "tool-call-turn.session.jsonl"
# (line of tool-call-turn.session.jsonl, the path to the value replaced): a user message's content, a tool call's
# arguments, a tool result's content, an answer's content, the request header
PLACES = [
    (5, ["data", "content"]), (19, ["data", "arguments"]), (20, ["data", "message", "content"]),
    (18, ["data", "message", "content"]), (8, ["data", "header"]),
]  # fmt: skip


@pytest.fixture(autouse=True)
def _default_recursion_limit() -> Iterator[None]:
    """The interpreter's default, as a process that builds the app without the CLI has it."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(limit)


def _deep(path: list[Any], levels: int, leaf: bytes = b"") -> bytes:
    """Line ``path[0]`` of the fixture with the value at ``path[1:]`` replaced by ``levels`` nested lists around
    ``leaf``."""
    event = orjson.loads(TURN.read_bytes().splitlines()[path[0]])
    holder = event
    for key in path[1:-1]:
        holder = holder[key]
    holder[path[-1]] = orjson.Fragment(b"[" * levels + leaf + b"]" * levels)
    return orjson.dumps(event)


def _log(tmp_path: Path, line: int, deep: bytes) -> Path:
    lines = TURN.read_bytes().splitlines()
    lines[line] = deep
    orjson.loads(deep)  # orjson still reads it
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.mark.parametrize(("line", "path"), PLACES, ids=["/".join(p) + f"@{n}" for n, p in PLACES])
async def test_every_view_takes_the_deepest_line_orjson_reads(tmp_path: Path, line: int, path: list[str]) -> None:
    """Built without the CLI, the app's row worker (the row's size), the detail pane and the alert engine ran out
    of the interpreter's 1,000 frames on such a line: a RecursionError in each worker."""
    deep = _deep([line, *path], DEEPEST_READ - len(path))
    assert await tui_crash(_log(tmp_path, line, deep), SCREEN_KEYS, at=(line - 1,)) is None


async def test_the_full_result_view_of_a_result_holding_the_deepest_nest(tmp_path: Path) -> None:
    """``v`` on a tool result whose content holds, beside its text, a value nested as deep as orjson reads."""
    path = ["data", "message", "content", 0, "content"]
    text = b'{"type":"text","text":"NEEDLE"},'
    deep = _deep([20, *path], DEEPEST_READ - len(path) - 1, b"[]")
    deep = deep.replace(b'"content":[[[', b'"content":[' + text + b"[[", 1)
    app = make_app(_log(tmp_path, 20, deep))
    async with app.run_test(size=(80, 24)) as pilot:
        await settled_main_screen(pilot)
        folds = await opened(pilot, "o", FoldsScreen)
        table = folds.query_one("#folds-table", DataTable)
        table.move_cursor(row=0)
        view = await opened(pilot, "v", ResultScreen)
        assert "NEEDLE" in view.query_one(TextArea).text
