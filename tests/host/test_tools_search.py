"""glob and grep: pattern semantics, filters, skipped directories and binary files, result caps."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from core.host.tools import ToolLimits, workspace_tools
from core.host.tools.workspace import glob_regex, literal_prefix


def _tools(ws: Path, **limits: Any) -> dict[str, Any]:
    return {t.name: t for t in workspace_tools(ws, ToolLimits(**limits))}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    files = {
        "README.md": "TODO: write docs\n",
        "src/app.py": "import os\n# TODO fix\nprint('todo')\n",
        "src/util.ts": "export const todo = 1;\n",
        "src/deep/x/y.py": "value = 'TODO'\n",
        ".git/config": "TODO in git\n",
        "node_modules/pkg/index.js": "// TODO vendored\n",
    }
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "src" / "image.bin").write_bytes(b"TODO\x00\x01\x02")
    return tmp_path


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("**/*.py", ".", ["src/app.py", "src/deep/x/y.py"]),
        ("*.py", ".", []),
        ("*.py", "src", ["src/app.py"]),
        ("src/*.{py,ts}", ".", ["src/app.py", "src/util.ts"]),
        ("src/**/y.py", ".", ["src/deep/x/y.py"]),
        ("src/[au]*", ".", ["src/app.py", "src/util.ts"]),
        ("src/[!a]*.?s", ".", ["src/util.ts"]),
        ("*.md", ".", ["README.md"]),
    ],
)
def test_glob_patterns(ws: Path, pattern: str, path: str, expected: list[str]) -> None:
    outcome = _tools(ws)["glob"].run({"pattern": pattern, "path": path})
    assert not outcome.is_error
    if expected:
        assert outcome.text.splitlines() == expected
    else:
        assert outcome.text.startswith("No files match")
    assert outcome.meta and outcome.meta["matches"] == len(expected)


def test_glob_skips_vcs_and_vendor_directories(ws: Path) -> None:
    found = _tools(ws)["glob"].run({"pattern": "**/*"}).text.splitlines()
    assert not any(p.startswith((".git/", "node_modules/")) for p in found)
    assert "src/image.bin" in found


def test_glob_caps_results(ws: Path) -> None:
    for i in range(30):
        (ws / "src" / f"gen{i:02}.py").write_text("")
    outcome = _tools(ws, glob_results=10)["glob"].run({"pattern": "**/*.py"})
    lines = outcome.text.splitlines()
    assert len(lines) == 11
    assert lines[-1] == "[22 more files match; use a narrower pattern or path]"
    assert outcome.meta and outcome.meta["matches"] == 32


def test_glob_regex_and_prefix_helpers() -> None:
    assert glob_regex("**/*.py").match("a/b/c.py") and glob_regex("**/*.py").match("c.py")
    assert not glob_regex("*.py").match("a/c.py")
    assert glob_regex("a[0-9].txt").match("a7.txt") and not glob_regex("a[0-9].txt").match("ab.txt")
    assert glob_regex("x.(y)").match("x.(y)")
    assert literal_prefix("src/a/*.py") == ("src/a", "*.py")
    assert literal_prefix("**/*.py") == ("", "**/*.py")


def test_grep_prints_path_line_text(ws: Path) -> None:
    outcome = _tools(ws)["grep"].run({"pattern": "TODO"})
    assert outcome.text.splitlines() == [
        "README.md:1:TODO: write docs",
        "src/app.py:2:# TODO fix",
        "src/deep/x/y.py:1:value = 'TODO'",
    ]
    assert outcome.meta == {"pattern": "TODO", "path": ".", "matches": 3, "files": 3, "complete": True}


def test_grep_ignore_case_and_glob_filters(ws: Path) -> None:
    grep = _tools(ws)["grep"]
    by_name = grep.run({"pattern": "todo", "ignore_case": True, "glob": "*.ts"})
    assert by_name.text == "src/util.ts:1:export const todo = 1;"
    by_path = grep.run({"pattern": "todo", "ignore_case": True, "glob": "deep/**/*.py", "path": "src"})
    assert by_path.text == "src/deep/x/y.py:1:value = 'TODO'"


def test_grep_a_single_file(ws: Path) -> None:
    outcome = _tools(ws)["grep"].run({"pattern": "^print", "path": "src/app.py"})
    assert outcome.text == "src/app.py:3:print('todo')"


def test_grep_no_match_is_not_an_error(ws: Path) -> None:
    outcome = _tools(ws)["grep"].run({"pattern": "nothing-like-this"})
    assert not outcome.is_error
    assert outcome.text == "No matches for /nothing-like-this/ in ."


def test_grep_invalid_regex(ws: Path) -> None:
    outcome = _tools(ws)["grep"].run({"pattern": "(unclosed"})
    assert outcome.is_error and outcome.error_code == "INVALID_ARGUMENTS"
    assert "invalid regex '(unclosed'" in outcome.text


def test_grep_missing_path(ws: Path) -> None:
    outcome = _tools(ws)["grep"].run({"pattern": "x", "path": "nowhere"})
    assert outcome.is_error and outcome.error_code == "FS_NOT_FOUND"


def test_grep_stops_at_the_match_cap(ws: Path) -> None:
    (ws / "many.txt").write_text("hit\n" * 50)
    outcome = _tools(ws, grep_matches=5)["grep"].run({"pattern": "hit", "path": "many.txt"})
    lines = outcome.text.splitlines()
    assert lines[:5] == [f"many.txt:{i}:hit" for i in range(1, 6)]
    assert lines[5].startswith("[stopped after 5 matches;")
    assert outcome.meta and outcome.meta["complete"] is False


def test_grep_output_cap_counts_characters(ws: Path) -> None:
    (ws / "wide.txt").write_text(("hit " + "w" * 200 + "\n") * 100)
    outcome = _tools(ws, output_chars=2000)["grep"].run({"pattern": "hit", "path": "wide.txt"})
    assert len(outcome.text) < 2200
    assert outcome.text.splitlines()[-1].startswith("[stopped after")


def test_glob_caps_characters(ws: Path) -> None:
    for i in range(40):
        (ws / "src" / f"{'long_name_' * 8}{i:02}.py").write_text("")
    outcome = _tools(ws, output_chars=1000)["glob"].run({"pattern": "src/*.py"})
    lines = outcome.text.splitlines()
    assert len(outcome.text) < 1200
    assert lines[-1].endswith("more files match; use a narrower pattern or path]")


def test_grep_anchors_hold_per_line_whatever_the_line_ends(tmp_path: Path) -> None:
    (tmp_path / "mixed.txt").write_bytes(b"abc\r\nxbc\nqq\n")
    grep = _tools(tmp_path)["grep"]
    assert grep.run({"pattern": "c$"}).text == "mixed.txt:1:abc\nmixed.txt:2:xbc"
    assert grep.run({"pattern": "^x"}).text == "mixed.txt:2:xbc"
    assert grep.run({"pattern": r"\Axb"}).text == "mixed.txt:2:xbc"
    assert grep.run({"pattern": r"c\z"}).text == "mixed.txt:1:abc\nmixed.txt:2:xbc"
    assert grep.run({"pattern": "c.x"}).text.startswith("No matches")


_LONG = "q" * 100_000


@pytest.mark.parametrize(
    ("tool", "args", "start"),
    [
        ("grep", {"pattern": "zzz" + _LONG}, "No matches for /zzzqqq"),
        ("grep", {"pattern": "(" + _LONG}, "invalid regex '(qqq"),
        ("grep", {"pattern": "x", "glob": "/" + _LONG}, "glob '/qqq"),
        ("glob", {"pattern": "zzz" + _LONG}, "No files match 'zzzqqq"),
        ("glob", {"pattern": "/" + _LONG}, "pattern '/qqq"),
        ("glob", {"pattern": "[z-a]" + _LONG}, "invalid glob '[z-a]qqq"),
    ],
    ids=["grep-none", "grep-invalid", "grep-glob-absolute", "glob-none", "glob-absolute", "glob-invalid"],
)
def test_a_long_pattern_is_quoted_cut(ws: Path, tool: str, args: dict[str, str], start: str) -> None:
    # the model's pattern of 100,000 characters came back whole in the tool's answer, into its own context
    text = _tools(ws)[tool].run(args).text
    assert start in text and "qqq…" in text and len(text) < 1000, text[:300]


@pytest.mark.parametrize(
    ("tool", "said"),
    [("grep", "No matches for /zzz/ in a\\u001b[2J\\nb\\u202e"), ("glob", "No files match 'zzz' under a\\u001b[2J\\nb\\u202e/")],
)
def test_a_directory_a_search_finds_nothing_in_is_named_escaped(ws: Path, tool: str, said: str) -> None:
    """A search that found nothing named the directory it searched as it is, so a real directory's escape sequence,
    newline and BiDi override went raw into the model's context and the log; it is quoted as a refused path is."""
    (ws / "a\x1b[2J\nb\u202e").mkdir()
    assert _tools(ws)[tool].run({"pattern": "zzz", "path": "a\x1b[2J\nb\u202e"}).text == said


def test_a_name_that_is_no_utf8_neither_fails_a_search_nor_is_skipped(ws: Path) -> None:
    """glob (and grep's glob filter) matched RE2 against each name as Python reads it, a lone surrogate for each byte
    that is no UTF-8, which RE2 cannot take: one such file anywhere in the tree made every glob, and every grep with
    a glob, fail ('text that cannot be encoded'). Such a byte is matched as one character, U+FFFD."""
    (ws / "src" / os.fsdecode(b"n\xff.py")).write_text("# TODO here\n")
    tools = _tools(ws)
    assert tools["glob"].run({"pattern": "**/n?.py"}).text.split("\n")[0].startswith("src/n")
    assert tools["glob"].run({"pattern": "**/*.py"}).text.count("\n") == 2
    assert tools["grep"].run({"pattern": "TODO here", "glob": "n?.py"}).text.endswith(".py:1:# TODO here")
    assert tools["grep"].run({"pattern": "TODO here", "glob": "src/*.py"}).text.endswith(".py:1:# TODO here")


def test_each_byte_of_a_name_that_is_no_utf8_is_one_character_to_a_glob(ws: Path) -> None:
    """A cut-off UTF-8 sequence (b'\\xe2\\x82', two bytes a listing writes as two escapes) was matched as one U+FFFD,
    as a decoder replaces it, so '??' missed it and '?' matched: each such byte is one character, as said."""
    (ws / "src" / os.fsdecode(b"m\xe2\x82.py")).write_text("# TODO cut\n")
    tools = _tools(ws)
    assert tools["glob"].run({"pattern": "src/m??.py"}).text == "src/m\\udce2\\udc82.py"
    assert tools["glob"].run({"pattern": "src/m?.py"}).text.startswith("No files match ")
    assert tools["grep"].run({"pattern": "TODO cut", "glob": "m??.py"}).text.endswith(".py:1:# TODO cut")
