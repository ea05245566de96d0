"""Hostile tool arguments: bad glob classes, catastrophic regexes, huge single-line files, stop mid-call."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.host.tools import ToolLimits, workspace_tools
from core.host.tools.base import WorkspaceTool


def _tools(ws: Path, **limits: Any) -> dict[str, WorkspaceTool]:
    return {t.name: t for t in workspace_tools(ws, ToolLimits(**limits))}


class StopAfter(threading.Event):
    """A stop event that reads as set from its ``n``-th check on, as if ``stop`` arrived mid-call."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.left = n

    def is_set(self) -> bool:
        self.left -= 1
        return self.left < 0 or super().is_set()


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("glob", {"pattern": "[z-a]*"}),
        ("glob", {"pattern": "src/[b-a]/*.py"}),
        ("grep", {"pattern": "x", "glob": "[z-a]"}),
        ("grep", {"pattern": "(unclosed"}),
    ],
)
def test_bad_patterns_are_argument_errors(tmp_path: Path, tool: str, args: dict[str, Any]) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x\n")
    outcome = _tools(tmp_path)[tool].run(args)
    assert outcome.is_error and outcome.error_code == "INVALID_ARGUMENTS", outcome.text


def _in_thread(call: Any) -> Any:
    box: list[Any] = []
    worker = threading.Thread(target=lambda: box.append(call()), daemon=True)
    worker.start()
    worker.join(60)  # a generous wait: a backtracking engine needs years here
    assert box, "the call never returned"
    return box[0]


def test_catastrophic_regex_finishes(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(("a" * 60 + "!\n") * 50)
    outcome = _in_thread(lambda: _tools(tmp_path)["grep"].run({"pattern": "(a+)+$"}))
    assert not outcome.is_error and outcome.text.startswith("No matches")


def test_catastrophic_glob_finishes(tmp_path: Path) -> None:
    (tmp_path / ("a" * 200)).write_text("")
    outcome = _in_thread(lambda: _tools(tmp_path)["glob"].run({"pattern": "*a*a*a*a*a*a*a*a*a*a*a*b"}))
    assert not outcome.is_error and outcome.text.startswith("No files match")


def test_regex_features_a_linear_engine_lacks_are_explained(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("abab\n")
    outcome = _tools(tmp_path)["grep"].run({"pattern": r"(ab)\1"})
    assert outcome.is_error and outcome.error_code == "INVALID_ARGUMENTS"
    assert "backreference" in outcome.text or "not supported" in outcome.text


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("grep", {"pattern": "needle"}),
        ("glob", {"pattern": "**/*.txt"}),
        ("read_file", {"path": "big.txt"}),
    ],
)
def test_stop_reaches_a_running_tool(tmp_path: Path, tool: str, args: dict[str, Any]) -> None:
    for d in range(10):
        (tmp_path / f"d{d}").mkdir()
        for f in range(10):
            (tmp_path / f"d{d}" / f"f{f}.txt").write_text("hay\n" * 100)
    (tmp_path / "big.txt").write_text("hay\n" * 500_000)
    outcome = _tools(tmp_path)[tool].run(args, StopAfter(10))
    assert outcome.is_error and outcome.error_code == "ABORTED", outcome.text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pattern=st.text(st.sampled_from("ab*?[]!{},/-\\^.()+$|"), max_size=12))
def test_no_glob_or_regex_raises(tmp_path: Path, pattern: str) -> None:
    if not (tmp_path / "ab").exists():
        (tmp_path / "ab").write_text("ab\n")
    tools = _tools(tmp_path)
    for tool, args in (("glob", {"pattern": pattern}), ("grep", {"pattern": pattern}),
                       ("grep", {"pattern": "a", "glob": pattern})):  # fmt: skip
        outcome = tools[tool].run(args)
        assert outcome.error_code in (None, "INVALID_ARGUMENTS", "FS_SANDBOX_DENIED"), (tool, args, outcome)


READ_HUGE_LINE = """
import sys
from core.host.tools import ToolLimits, workspace_tools
# A generous deadline: on a loaded machine the read may be slow, and only its memory is measured here.
read = {t.name: t for t in workspace_tools(sys.argv[1], ToolLimits(call_seconds=3600))}["read_file"]
out = read.run({"path": "huge.txt"})
assert not out.is_error, out.text
assert out.text.startswith("     1|aaaa") and "more characters]" in out.text, out.text[-200:]
# VmHWM is this process's own peak; ru_maxrss would also count the parent's size inherited across exec.
print(next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")) // 1024)
"""


def test_read_file_streams_a_huge_single_line(tmp_path: Path) -> None:
    size = 200 * 1024 * 1024
    with open(tmp_path / "huge.txt", "wb") as f:
        f.write(b"a" * 65536)
        f.truncate(size)  # the rest is a sparse run of the same line: no disk, 200 MB to read
    done = subprocess.run(
        [sys.executable, "-c", READ_HUGE_LINE, str(tmp_path)], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr
    peak_mb = int(done.stdout)
    assert peak_mb < 150, f"read_file peaked at {peak_mb} MB for a {size >> 20} MB line"


def test_edit_file_refuses_a_file_too_large_to_hold(tmp_path: Path) -> None:
    with open(tmp_path / "huge.txt", "wb") as f:
        f.write(b"needle\n" + b"text\n" * 4096)  # text where the binary sniff looks, sparse after
        f.truncate(64 * 1024 * 1024)
    outcome = _tools(tmp_path)["edit_file"].run({"path": "huge.txt", "old_text": "needle", "new_text": "pin"})
    assert outcome.is_error and outcome.error_code == "INVALID_ARGUMENTS" and "bash" in outcome.text
    with open(tmp_path / "huge.txt", "rb") as f:
        assert f.read(7) == b"needle\n"


def test_an_unexpected_exceptions_text_is_escaped_and_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool bug's exception text went to the model cut at 200 characters but as it came: text it quotes (a file's
    name, a line it read) put an escape sequence, a newline or a BiDi override raw into the model's context and the
    log. It is quoted as every other message of the tools quotes text from outside, at the same 200 characters."""
    tool = _tools(tmp_path)["read_file"]

    def broken(*_: Any) -> None:
        raise ValueError("bad a\x1b[2J\nb\u202e" + "k" * 1000)

    monkeypatch.setattr(type(tool), "execute", broken)
    outcome = tool.run({"path": "x"})
    assert outcome.error_code == "TOOL_FAILED" and outcome.text.startswith(
        "Error: read_file failed unexpectedly (ValueError: bad a\\u001b[2J\\nb\\u202ekkk"
    ), outcome.text
    assert outcome.text.endswith("k…)") and len(outcome.text) < 300, outcome.text
