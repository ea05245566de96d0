"""Every path-taking workspace tool refuses paths that leave the workspace, and does nothing when it refuses."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.host.tools import Workspace, WorkspaceError, workspace_tools

SECRET = "TOP-SECRET-OUTSIDE"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    (ws / "src").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    (ws / "src" / "ok.txt").write_text("inside\n")
    os.symlink(outside, ws / "dirlink")
    os.symlink(outside / "secret.txt", ws / "filelink")
    os.symlink(outside / "missing.txt", ws / "dangling")
    return ws, outside


def _tools(ws: Path) -> dict[str, Any]:
    return {t.name: t for t in workspace_tools(ws)}


# (tool, args for a given path) for every parameter that takes a path.
PATH_CALLS: list[tuple[str, Callable[[str], dict[str, Any]]]] = [
    ("read_file", lambda p: {"path": p}),
    ("list_dir", lambda p: {"path": p}),
    ("glob", lambda p: {"pattern": "*", "path": p}),
    ("grep", lambda p: {"pattern": "SECRET", "path": p}),
    ("write_file", lambda p: {"path": p, "content": "overwritten"}),
    ("edit_file", lambda p: {"path": p, "old_text": SECRET, "new_text": "edited"}),
]


def _escapes(ws: Path, outside: Path, tool: str) -> list[str]:
    target = "secret.txt" if tool not in ("list_dir", "glob") else ""
    return [
        f"../outside/{target}".rstrip("/"),
        f"src/../../outside/{target}".rstrip("/"),
        str(outside / target).rstrip("/"),
        f"dirlink/{target}".rstrip("/"),
        *(["filelink", "dangling"] if target else []),
    ]


@pytest.mark.parametrize(("tool", "make_args"), PATH_CALLS, ids=[name for name, _ in PATH_CALLS])
def test_escapes_are_refused_and_nothing_happens(
    layout: tuple[Path, Path], tool: str, make_args: Callable
) -> None:
    ws, outside = layout
    tools = _tools(ws)
    for path in _escapes(ws, outside, tool):
        outcome = tools[tool].run(make_args(path))
        assert outcome.is_error, (tool, path, outcome.text)
        assert outcome.error_code == "FS_SANDBOX_DENIED", (tool, path, outcome.text)
        assert "outside the workspace" in outcome.text
        assert SECRET not in outcome.text
    assert (outside / "secret.txt").read_text() == f"{SECRET}\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_refusal_says_why(layout: tuple[Path, Path]) -> None:
    ws, outside = layout
    read = _tools(ws)["read_file"]
    assert "'..'" in read.run({"path": "../outside/secret.txt"}).text
    assert "absolute" in read.run({"path": str(outside / "secret.txt")}).text
    assert "symbolic link" in read.run({"path": "filelink"}).text


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("glob", {"pattern": "../outside/*"}),
        ("glob", {"pattern": "/etc/*"}),
        ("grep", {"pattern": "SECRET", "glob": "../outside/*"}),
    ],
)
def test_glob_patterns_cannot_climb_out(layout: tuple[Path, Path], tool: str, args: dict[str, Any]) -> None:
    ws, _ = layout
    outcome = _tools(ws)[tool].run(args)
    assert outcome.is_error and outcome.error_code == "FS_SANDBOX_DENIED"


def test_searches_from_the_root_never_read_through_links(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    tools = _tools(ws)
    grep = tools["grep"].run({"pattern": "SECRET|inside"})
    assert not grep.is_error
    assert SECRET not in grep.text
    assert grep.text == "src/ok.txt:1:inside"
    found = tools["glob"].run({"pattern": "**/*"}).text.splitlines()
    assert found == ["src/ok.txt"]


def test_paths_inside_are_allowed_in_every_spelling(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    read = _tools(ws)["read_file"]
    for spelling in ("src/ok.txt", "./src/ok.txt", "src/../src/ok.txt", str(ws / "src" / "ok.txt")):
        outcome = read.run({"path": spelling})
        assert not outcome.is_error, (spelling, outcome.text)
        assert outcome.text == "     1|inside"


def test_link_that_stays_inside_is_followed(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    os.symlink(ws / "src", ws / "srclink")
    outcome = _tools(ws)["read_file"].run({"path": "srclink/ok.txt"})
    assert not outcome.is_error
    assert outcome.meta and outcome.meta["path"] == "src/ok.txt"


def test_bad_path_values_are_argument_errors(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    read = _tools(ws)["read_file"]
    for value in ("", "   ", "a\x00b"):
        outcome = read.run({"path": value})
        assert outcome.is_error and outcome.error_code == "INVALID_ARGUMENTS", value


def test_workspace_must_exist(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="not an existing directory"):
        Workspace(tmp_path / "nope")


def test_the_refusal_names_the_workspace_root_escaped_and_whole(tmp_path: Path) -> None:
    """The refusal of a path outside named the workspace root as it is, so a root whose name holds an escape sequence,
    a newline or a BiDi override put them raw into the model's context and the log, beside the path it quotes; the
    root is written as the tools write a name they list: whole, its controls as escapes."""
    ws = tmp_path / "ws\x1b]0;t\x07\nx\u202e"
    ws.mkdir()
    text = _tools(ws)["read_file"].run({"path": "/etc/passwd"}).text
    escapes = {"\x1b": "\\u001b", "\x07": "\\u0007", "\n": "\\n", "\u202e": "\\u202e"}
    root = "".join(escapes.get(c, c) for c in str(ws.resolve()))
    assert f"outside the workspace {root} (" in text, text
    assert not {"\x1b", "\x07", "\n", "\u202e"} & set(text), text


def test_a_workspace_that_is_no_directory_is_named_escaped(tmp_path: Path) -> None:
    """The refusal of a workspace root that is no directory named it as it is (a newline, an escape sequence)."""
    root = tmp_path / "ws\x1b]0;t\x07\nforged"
    with pytest.raises(WorkspaceError) as info:
        Workspace(root)
    named = str(root).replace("\x1b", "\\u001b").replace("\x07", "\\u0007").replace("\n", "\\n")
    assert str(info.value) == f"workspace {named} is not an existing directory"
