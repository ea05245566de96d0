"""The text tables the CLI prints row by row (``surface``, ``events``, ``fold``) keep every row's columns where
the header and the other rows have them, whatever one row's text holds: a source longer than its column
(``plugin:@deepseek-ai/dsh-system-prompt`` is 37 characters in a 34-wide column), an event type longer than
the type column (``web/deepseek-search-llm-request``), a tool and path longer than the tool column, wide
characters, tabs, line breaks or escapes. Such a text is cut in the middle with ``…``, its tail kept; ``--json``
keeps it whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from rich.cells import cell_len

from core.cli import main
from core.cli.common import column
from tests.log.helpers import HEADER, assistant, number, raw_log, tool_call, tool_result, user

DSH_PROMPT = "@deepseek-ai/dsh-system-prompt"
HOSTILE = "\x1b[31mred\x1b[0m\ttab\nline 中文中文 of a plugin whose name runs on/and-on/tail-part"
LONG_PATH = "src/a/deeply/nested/package/parser_module.py"


def _plugin(text: str, name: str, role: str = "user") -> dict[str, Any]:
    event = user(text)
    event["data"]["source"] = {"kind": "plugin", "plugin": name}
    event["data"]["role"] = role
    return event


def _reads(event: dict[str, Any]) -> dict[str, Any]:
    """``event``, an assistant message, with its tool call reading ``LONG_PATH``."""
    event["data"]["message"]["content"][0]["arguments"] = json.dumps({"path": LONG_PATH})
    return event


def _log(tmp_path: Path) -> Path:
    """One turn: a prompt, two plugin messages (the DSH system prompt's, and a hostile one with a long role), an
    event of the longest known type, a read of a long path and its result, an answer."""
    events = number(
        [
            {"type": "turn/start", "data": {"turn": 1}},
            {"type": "step/start", "data": {"turn": 1, "step": 1}},
            user("run it"),
            _plugin("context", DSH_PROMPT),
            _plugin("odd", HOSTILE, role="a-role-longer-than-its-column"),
            {"type": "web/deepseek-search-llm-request", "data": {"turn": 1, "step": 1}},
            _reads(assistant(1, 1, "", [("c1", "read_file")])),
            tool_call(1, 1, "c1", "read_file", json.dumps({"path": LONG_PATH})),
            tool_result(1, 1, "c1", "x = 1\n" * 400, 7),
            {"type": "step/end", "data": {"turn": 1, "step": 1}},
            {"type": "step/start", "data": {"turn": 1, "step": 2}},
            assistant(1, 2, "done"),
            {"type": "step/end", "data": {"turn": 1, "step": 2}},
            {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}},
        ]
    )
    path = tmp_path / "session.jsonl"
    path.write_bytes(raw_log(events, HEADER))
    return path


def _lines(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(argv) == 0
    return capsys.readouterr().out.splitlines()


def _at(line: str, cells: int) -> str:
    """The character of ``line`` that takes terminal cell ``cells`` (from 0)."""
    at = 0
    while cell_len(line[: at + 1]) <= cells:
        at += 1
    return line[at]


def test_surface_rows_keep_their_columns_whatever_the_source_and_role(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The size column ends at the same cell on every row (a longer source pushed it right), the source keeps its
    tail, and no escape of the log reaches the terminal; ``--json`` has the sources whole."""
    log = _log(tmp_path)
    rows = _lines(["surface", str(log)], capsys)[:-1]
    assert len(rows) == 6
    size_end = 6 + 1 + 1 + 9 + 1 + 34 + 1 + 6  # seq, mark, role, source and size, with the spaces between
    assert [(_at(row, size_end - 1) != " ", _at(row, size_end), _at(row, size_end + 1)) for row in rows] == [
        (True, " ", " ")
    ] * 6, rows
    dsh = next(row for row in rows if "dsh-system-prompt" in row)
    assert " user      plugin:@dee…k-ai/dsh-system-prompt      7  [" in dsh, dsh
    hostile = next(row for row in rows if "tail-part" in row)
    assert " a-…column plugin:␛[31" in hostile and "ns on/and-on/tail-part " in hostile, hostile
    assert not {"\x1b", "\t"} & set(hostile), hostile
    surface = json.loads("\n".join(_lines(["surface", str(log), "--json"], capsys)))
    assert {row["source"] for row in surface} >= {f"plugin:{DSH_PROMPT}", f"plugin:{HOSTILE}"}


def test_events_rows_keep_their_columns_whatever_the_type(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The type column ends at the same cell on every row, the longest known type's row included."""
    rows = _lines(["events", str(_log(tmp_path))], capsys)
    long = next(row for row in rows if "llm-request" in row)
    assert long.startswith("     5 t1   web/deep…earch-llm-request   "), long
    type_end = 6 + 1 + 4 + 1 + 26  # seq, turn and type, with the spaces between
    assert {_at(row, type_end) for row in rows} == {" "}, rows


def test_fold_rows_keep_the_tail_of_a_long_tool_and_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tool column keeps the file's name of a long path (it kept the first 16 characters: ``read_file src/a/``)
    and the status column starts where its header does."""
    rows = _lines(["fold", str(_log(tmp_path))], capsys)
    header, row = rows[0], rows[1]
    assert row.index("read_…_module.py shown") + 17 == header.index("status"), rows


@given(st.text(), st.integers(1, 60))
@example(f"plugin:{DSH_PROMPT}", 34)
@example("中文中文中文中文中文", 6)
@example("👩\u200d👩\u200d👧 family", 5)
@example("e\u0301" * 40, 10)
def test_a_column_cell_is_as_wide_as_its_column(text: str, width: int) -> None:
    """Every cell takes exactly its column's cells, holds no control character, tab or line break, and is the text
    itself, padded, when the text fits."""
    cell = column(text, width)
    assert cell_len(cell) == width
    assert "\t" not in cell and "\n" not in cell and "\x1b" not in cell
    if text.isprintable() and cell_len(text) <= width:
        assert cell == text + " " * (width - cell_len(text))
    elif cell_len(text) > width and text.isprintable():
        assert "…" in cell
