"""read_file, list_dir, write_file and edit_file: output shape, paging, caps, edit uniqueness, argument checks."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from core.host.tools import ToolLimits, workspace_tools


def _tools(ws: Path, **limits: Any) -> dict[str, Any]:
    return {t.name: t for t in workspace_tools(ws, ToolLimits(**limits))}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    return tmp_path


# read_file ---------------------------------------------------------------------------------------------------


def test_read_numbers_every_line(ws: Path) -> None:
    outcome = _tools(ws)["read_file"].run({"path": "pkg/mod.py"})
    lines = outcome.text.splitlines()
    assert lines[0] == "     1|line 1"
    assert lines[-1] == "    10|line 10"
    assert len(lines) == 10
    assert outcome.meta == {"path": "pkg/mod.py", "offset": 1, "lines": 10, "totalLines": 10}


def test_read_pages_with_offset_and_limit(ws: Path) -> None:
    outcome = _tools(ws)["read_file"].run({"path": "pkg/mod.py", "offset": 4, "limit": 3})
    assert outcome.text.splitlines() == [
        "     4|line 4",
        "     5|line 5",
        "     6|line 6",
        "[lines 4-6 of 10; read on with offset=7]",
    ]


def test_read_default_page_is_capped(ws: Path) -> None:
    outcome = _tools(ws, read_lines=4)["read_file"].run({"path": "pkg/mod.py", "limit": 100})
    assert outcome.text.splitlines()[-1] == "[lines 1-4 of 10; read on with offset=5]"


def test_read_output_cap_stops_at_whole_lines(ws: Path) -> None:
    (ws / "big.txt").write_text("".join(f"{'x' * 50} {i}\n" for i in range(1000)))
    outcome = _tools(ws, output_chars=1000)["read_file"].run({"path": "big.txt"})
    body = outcome.text.splitlines()
    assert len(outcome.text) < 1100
    assert body[-1].startswith("[lines 1-") and "of 1000; read on with offset=" in body[-1]
    assert all("|" in row for row in body[:-1])


def test_read_cuts_very_long_lines(ws: Path) -> None:
    (ws / "wide.txt").write_text("a" * 5000 + "\nshort\n")
    outcome = _tools(ws, line_chars=100)["read_file"].run({"path": "wide.txt"})
    first, second = outcome.text.splitlines()
    assert first == "     1|" + "a" * 100 + "…[line cut: 4900 more characters]"
    assert second == "     2|short"


def test_read_keeps_crlf_out_of_the_text(ws: Path) -> None:
    (ws / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    assert _tools(ws)["read_file"].run({"path": "dos.txt"}).text == "     1|one\n     2|two"


@pytest.mark.parametrize(
    ("setup", "args", "code", "phrase"),
    [
        (None, {"path": "nope.txt"}, "FS_NOT_FOUND", "does not exist"),
        (None, {"path": "pkg"}, "FS_IS_DIRECTORY", "list_dir"),
        ("bin", {"path": "blob.bin"}, "FS_NOT_TEXT", "binary"),
        (None, {"path": "pkg/mod.py", "offset": 11}, "INVALID_ARGUMENTS", "past the end"),
        (None, {"path": "pkg/mod.py", "offset": 0}, "INVALID_ARGUMENTS", "at least 1"),
        (None, {"path": "pkg/mod.py", "limit": "5"}, "INVALID_ARGUMENTS", "must be an integer"),
        (None, {"path": "pkg/mod.py", "offset": True}, "INVALID_ARGUMENTS", "must be an integer"),
        (None, {"file": "pkg/mod.py"}, "INVALID_ARGUMENTS", "does not take 'file'"),
        (None, {}, "INVALID_ARGUMENTS", "needs 'path'"),
    ],
)
def test_read_errors(ws: Path, setup: str | None, args: dict[str, Any], code: str, phrase: str) -> None:
    if setup == "bin":
        (ws / "blob.bin").write_bytes(b"\x89PNG\x00\x00\x01")
    outcome = _tools(ws)["read_file"].run(args)
    assert outcome.is_error
    assert outcome.error_code == code
    assert outcome.text.startswith("Error: ")
    assert phrase in outcome.text


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ({"path": "pkg/mod.py", "limit": "5"}, "read_file: 'limit' must be an integer (got \"5\")"),
        ({"path": "pkg/mod.py", "offset": True}, "read_file: 'offset' must be an integer (got true)"),
        ({"path": ["pkg/mod.py"]}, "read_file: 'path' must be a string (got [\"pkg/mod.py\"])"),
        ({"path": {"a": None}}, "read_file: 'path' must be a string (got {\"a\":null})"),
        ({"path": "x" * 100, "limit": "k" * 100_000}, "read_file: 'limit' must be an integer (got \"kkk"),
        ({"path": "pkg/mod.py", "k" * 100_000: 1}, "read_file does not take 'kkk"),
        ({"path": "pkg/mod.py", "a\x1b[2J": 1}, "read_file does not take 'a\\u001b[2J' (parameters:"),
    ],
)
def test_a_refused_argument_reads_as_the_json_the_model_sent(ws: Path, args: dict[str, Any], said: str) -> None:
    """A tool's refused argument was named by its Python type and quoted as Python writes it ('got str '5'',
    'got bool True', 'got list [...]'), cut at 60 characters unmarked, and an unknown argument's name whole: it reads
    as the JSON the model sent (as the inbox words a refused value), and a name is quoted cut, its controls escaped."""
    outcome = _tools(ws)["read_file"].run(args)
    assert outcome.error_code == "INVALID_ARGUMENTS" and outcome.text.startswith(f"Error: {said}"), outcome.text[:300]
    assert len(outcome.text) < 400 and "\x1b" not in outcome.text, outcome.text[:300]


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("read_file", {"path": "k" * 100_000}),  # the system's 'File name too long', naming the path
        ("read_file", {"path": "k/" * 50_000 + "x"}),
        ("read_file", {"path": "a\x1b[2J.txt"}),  # does not exist
        ("list_dir", {"path": "k" * 3000}),
        ("read_file", {"path": "pkg"}),
    ],
    ids=["name too long", "deep", "escape", "list_dir", "a directory"],
)
def test_a_path_a_tool_refuses_comes_back_cut_and_escaped(ws: Path, tool: str, args: dict[str, Any]) -> None:
    """A path a tool refused came back into the model's context and the log whole (100,039 characters for a path of
    100,000) and as Python writes a string; it is quoted as a pattern is: cut to 80 characters, controls escaped."""
    outcome = _tools(ws)[tool].run(args)
    assert outcome.is_error and len(outcome.text) < 300 and "\x1b" not in outcome.text, outcome.text[:300]
    assert "\\x1b" not in outcome.text and "'pkg' is a directory" in _tools(ws)["read_file"].run({"path": "pkg"}).text


def test_read_empty_file(ws: Path) -> None:
    (ws / "empty.txt").write_text("")
    outcome = _tools(ws)["read_file"].run({"path": "empty.txt"})
    assert not outcome.is_error
    assert outcome.text == "empty.txt is empty (0 lines)"


def test_integral_float_is_accepted_as_integer(ws: Path) -> None:
    outcome = _tools(ws)["read_file"].run({"path": "pkg/mod.py", "offset": 9.0})
    assert outcome.text.splitlines()[0] == "     9|line 9"


# list_dir ----------------------------------------------------------------------------------------------------


def test_list_dir_marks_directories_and_links(ws: Path) -> None:
    (ws / "b.txt").write_text("b")
    os.symlink("b.txt", ws / "alias")
    outcome = _tools(ws)["list_dir"].run({})
    assert outcome.text.splitlines() == ["./ holds 3 entries", "alias -> b.txt", "b.txt", "pkg/"]


def test_list_dir_caps_entries(ws: Path) -> None:
    for i in range(12):
        (ws / f"f{i:02}").write_text("")
    outcome = _tools(ws, list_entries=5)["list_dir"].run({"path": "."})
    lines = outcome.text.splitlines()
    assert lines[0] == "./ holds 13 entries"
    assert len(lines) == 1 + 5 + 1
    assert lines[-1] == "[8 more entries not shown; use glob to narrow down]"


def test_list_dir_of_a_file_is_an_error(ws: Path) -> None:
    outcome = _tools(ws)["list_dir"].run({"path": "pkg/mod.py"})
    assert outcome.is_error and outcome.error_code == "FS_NOT_DIRECTORY"


# write_file --------------------------------------------------------------------------------------------------


def test_write_creates_parents_and_reports(ws: Path) -> None:
    outcome = _tools(ws)["write_file"].run({"path": "new/deep/file.txt", "content": "a\nb\n"})
    assert outcome.text == "Created new/deep/file.txt (2 lines, 4 bytes)"
    assert (ws / "new" / "deep" / "file.txt").read_text() == "a\nb\n"
    assert outcome.meta == {"path": "new/deep/file.txt", "bytes": 4, "created": True}
    assert [p.name for p in (ws / "new" / "deep").iterdir()] == ["file.txt"]


def test_write_replaces_and_keeps_the_mode(ws: Path) -> None:
    script = ws / "run.sh"
    script.write_text("old")
    script.chmod(0o755)
    outcome = _tools(ws)["write_file"].run({"path": "run.sh", "content": "échec"})
    assert outcome.text == "Replaced run.sh (1 lines, 6 bytes)"
    assert script.read_text() == "échec"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
def test_a_write_syncs_its_text_before_the_rename_and_the_directory_after(
    ws: Path, tool: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[str] = []
    sync, replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        order.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        sync(fd)

    def rename(*args: Any, **kwargs: Any) -> None:
        order.append("rename")
        replace(*args, **kwargs)

    monkeypatch.setattr(os, "fsync", fsync)  # spies that call through: the syncs happen, and in this order
    monkeypatch.setattr(os, "replace", rename)
    args = {"path": "pkg/mod.py", "content": "x"} if tool == "write_file" else {
        "path": "pkg/mod.py", "old_text": "line 3\n", "new_text": "line three\n"}  # fmt: skip
    outcome = _tools(ws)[tool].run(args)
    assert not outcome.is_error, outcome.text
    assert order == ["file", "rename", "dir"]


def test_write_to_a_directory_is_refused(ws: Path) -> None:
    outcome = _tools(ws)["write_file"].run({"path": "pkg", "content": "x"})
    assert outcome.is_error and outcome.error_code == "FS_IS_DIRECTORY"
    assert (ws / "pkg").is_dir()


# edit_file ---------------------------------------------------------------------------------------------------


def test_edit_replaces_a_unique_match(ws: Path) -> None:
    outcome = _tools(ws)["edit_file"].run(
        {"path": "pkg/mod.py", "old_text": "line 7\n", "new_text": "seven\n"}
    )
    assert not outcome.is_error
    assert outcome.text == "Edited pkg/mod.py: replaced 1 occurrence starting at line 7"
    assert (ws / "pkg" / "mod.py").read_text().splitlines()[6] == "seven"
    assert outcome.meta and outcome.meta["diffs"] == [
        {"path": "pkg/mod.py", "oldText": "line 7\n", "newText": "seven\n"}
    ]


def test_edit_refuses_an_ambiguous_match_and_names_the_lines(ws: Path) -> None:
    before = (ws / "pkg" / "mod.py").read_text()
    outcome = _tools(ws)["edit_file"].run({"path": "pkg/mod.py", "old_text": "line 1", "new_text": "L1"})
    assert outcome.is_error and outcome.error_code == "EDIT_NOT_UNIQUE"
    assert "occurs 2 times" in outcome.text and "(lines 1, 10)" in outcome.text
    assert (ws / "pkg" / "mod.py").read_text() == before


def test_edit_replace_all(ws: Path) -> None:
    outcome = _tools(ws)["edit_file"].run(
        {"path": "pkg/mod.py", "old_text": "line", "new_text": "row", "replace_all": True}
    )
    assert outcome.text == "Edited pkg/mod.py: replaced 10 occurrences starting at line 1"
    assert "line" not in (ws / "pkg" / "mod.py").read_text()


def test_edit_without_a_match_changes_nothing(ws: Path) -> None:
    before = (ws / "pkg" / "mod.py").read_text()
    outcome = _tools(ws)["edit_file"].run({"path": "pkg/mod.py", "old_text": "line 99", "new_text": "x"})
    assert outcome.is_error and outcome.error_code == "EDIT_NO_MATCH"
    assert (ws / "pkg" / "mod.py").read_text() == before


def test_edit_keeps_crlf_line_endings(ws: Path) -> None:
    (ws / "dos.txt").write_bytes(b"alpha\r\nbeta\r\n")
    _tools(ws)["edit_file"].run({"path": "dos.txt", "old_text": "beta", "new_text": "gamma"})
    assert (ws / "dos.txt").read_bytes() == b"alpha\r\ngamma\r\n"


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"path": "pkg/mod.py", "old_text": "", "new_text": "x"}, "INVALID_ARGUMENTS"),
        ({"path": "pkg/mod.py", "old_text": "line 2", "new_text": "line 2"}, "INVALID_ARGUMENTS"),
        ({"path": "missing.py", "old_text": "a", "new_text": "b"}, "FS_NOT_FOUND"),
        ({"path": "latin1.txt", "old_text": "caf", "new_text": "b"}, "FS_NOT_TEXT"),
        ({"path": "pkg/mod.py", "old_text": "line 2"}, "INVALID_ARGUMENTS"),
    ],
)
def test_edit_errors(ws: Path, args: dict[str, Any], code: str) -> None:
    (ws / "latin1.txt").write_bytes("café".encode("latin-1"))
    outcome = _tools(ws)["edit_file"].run(args)
    assert outcome.is_error and outcome.error_code == code
    assert (ws / "latin1.txt").read_bytes() == "café".encode("latin-1")


def test_schemas_declare_every_parameter(ws: Path) -> None:
    for tool in workspace_tools(ws):
        schema = tool.schema
        assert set(schema) == {"name", "description", "parameters"}
        params = schema["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert set(params["required"]) <= set(params["properties"])
        assert all(p["description"] for p in params["properties"].values())
    assert [t.name for t in workspace_tools(ws)] == [
        "read_file",
        "list_dir",
        "glob",
        "grep",
        "bash",
        "write_file",
        "edit_file",
    ]


def test_special_files_are_not_opened(ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    outcome = _tools(ws)["read_file"].run({"path": "pipe"})
    assert outcome.is_error and outcome.error_code == "FS_NOT_REGULAR_FILE"
    grep = _tools(ws)["grep"].run({"pattern": "line"})
    assert not grep.is_error and "pipe" not in grep.text


def test_list_dir_caps_characters_too(ws: Path) -> None:
    for i in range(20):
        (ws / f"{'n' * 100}{i:02}").write_text("")
    outcome = _tools(ws, output_chars=500)["list_dir"].run({})
    assert len(outcome.text) < 700
    assert outcome.text.splitlines()[-1].endswith("more entries not shown; use glob to narrow down]")


def test_unencodable_text_is_an_error_not_a_crash(ws: Path) -> None:
    outcome = _tools(ws)["write_file"].run({"path": "s.txt", "content": "bad \ud800 surrogate"})
    assert outcome.is_error and outcome.error_code == "INVALID_ARGUMENTS"
    assert not any(p.name.startswith((".s.txt", "s.txt")) for p in ws.iterdir())


NAME = "a\x1b[2J\nb\u202e.txt"  # a real file name a model or a checkout may hold: an escape, a newline, a BiDi override
NAMED = "a\\u001b[2J\\nb\\u202e.txt"


@pytest.mark.parametrize(
    ("tool", "args", "said"),
    [
        ("read_file", {"path": NAME}, f"{NAMED} is empty (0 lines)"),
        ("read_file", {"path": f"d/{NAME}", "offset": 5}, f"offset 5 is past the end of d/{NAMED}, which has 1 lines"),
        ("list_dir", {"path": NAME + "dir"}, f"{NAMED}dir/ holds 0 entries"),
        ("write_file", {"path": NAME, "content": "x\n"}, f"Replaced {NAMED} (1 lines, 2 bytes)"),
        ("write_file", {"path": NAME + "2", "content": ""}, f"Created {NAMED}2 (0 lines, 0 bytes)"),
        ("edit_file", {"path": f"d/{NAME}", "old_text": "one", "new_text": "1"}, f"Edited d/{NAMED}: replaced 1"),
        ("edit_file", {"path": f"d/{NAME}", "old_text": "six", "new_text": "6"}, f"was not found in d/{NAMED}; it"),
        ("edit_file", {"path": f"d/{NAME}", "old_text": "o", "new_text": "0"}, f"occurs 2 times in d/{NAMED} (lines"),
    ],
    ids=["empty", "past the end", "list_dir", "replaced", "created", "edited", "no match", "twice"],
)
def test_a_name_a_tool_reports_comes_back_escaped(ws: Path, tool: str, args: dict[str, Any], said: str) -> None:
    """The tools' own messages (a success, and the refusals that name what they read) wrote a real file name as it
    is, an escape sequence, a newline and a BiDi override into the model's context and the log; it is quoted as a
    refused path is (core.shared.text.quoted): its controls as escapes, the rest as it reads."""
    (ws / NAME).write_text("")
    (ws / (NAME + "dir")).mkdir()
    (ws / "d").mkdir()
    (ws / "d" / NAME).write_text("one two\n")
    text = _tools(ws)[tool].run(args).text
    assert said in text.split("\n")[0] and not {"\x1b", "\u202e"} & set(text), text


LISTED = "k" * 100 + NAME  # longer than a message quotes a name: a listing must not cut it
UNDECODED = os.fsdecode(b"x\xff.txt")  # a name that is no UTF-8, as Python reads it from the directory


def test_a_listed_name_is_escaped_whole_and_opens_as_listed(ws: Path) -> None:
    """list_dir, glob and grep wrote each name as it is: a name holding a newline read as two entries, and its escape
    sequence and BiDi override reached the model and the TUI raw. Each row writes a name as the tools' messages do
    (core.shared.text.quoted: its controls as escapes) but whole, and a name passed back as it was listed opens the
    file it names."""
    (ws / LISTED).write_text("TODO\n")
    (ws / UNDECODED).write_text("TODO too\n")
    os.symlink(LISTED, ws / "alias")
    escaped, undecoded = "k" * 100 + NAMED, "x\\udcff.txt"
    tools = _tools(ws)
    listed = tools["list_dir"].run({}).text.split("\n")
    assert listed[1:] == [f"alias -> {escaped}", escaped, "pkg/", undecoded], listed
    assert tools["glob"].run({"pattern": "k*"}).text.split("\n") == [escaped]
    grepped = tools["grep"].run({"pattern": "TODO"}).text.split("\n")
    assert grepped == ["alias:1:TODO", f"{escaped}:1:TODO", f"{undecoded}:1:TODO too"], grepped
    assert tools["read_file"].run({"path": escaped}).text == "     1|TODO"
    assert tools["read_file"].run({"path": undecoded}).text == "     1|TODO too"
    assert tools["grep"].run({"pattern": "TODO", "path": escaped}).text == f"{escaped}:1:TODO"
    assert tools["write_file"].run({"path": escaped, "content": "x\n"}).text.startswith("Replaced ")
    assert (ws / LISTED).read_text() == "x\n"


def test_a_name_with_a_backslash_of_its_own_is_read_as_it_is_written_first(ws: Path) -> None:
    """A name that holds a backslash and an n is that name when it is there; where it is not, it is the name a listing
    writes so (a newline in it)."""
    (ws / "a\\nb").write_text("backslash\n")
    (ws / "a\nb").write_text("newline\n")
    read = _tools(ws)["read_file"]
    assert read.run({"path": "a\\nb"}).text == "     1|backslash"
    (ws / "a\\nb").unlink()
    assert read.run({"path": "a\\nb"}).text == "     1|newline"
    assert read.run({"path": "a\\u0000b"}).text == "Error: 'a\\u0000b' does not exist in the workspace"


def test_a_path_through_a_listed_directory_opens_and_creates_there(ws: Path) -> None:
    """Only a whole path that named nothing was read back as listed: a new file in a directory passed back as it was
    listed made a second directory of the escaped spelling beside it, and a file listed under a directory whose name
    holds a backslash of its own was not found. Each part of a path is read as written where that is there, else as
    listed."""
    (ws / "d\x1b").mkdir()
    (ws / "a\\nb").mkdir()
    (ws / "a\\nb" / "c\x1b").write_text("deep\n")
    tools = _tools(ws)
    assert tools["write_file"].run({"path": "d\\u001b/new.txt", "content": "x\n"}).text.startswith("Created ")
    assert sorted(os.listdir(ws)) == ["a\\nb", "d\x1b", "pkg"] and (ws / "d\x1b" / "new.txt").read_text() == "x\n"
    assert tools["glob"].run({"pattern": "a*/c*"}).text == "a\\nb/c\\u001b"
    assert tools["read_file"].run({"path": "a\\nb/c\\u001b"}).text == "     1|deep"
