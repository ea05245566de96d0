"""``tool_block_failed`` tries DSH's failed-command marker at the text's last newline only: it finds a marker
exactly where a search of the whole text does, for texts of any lines (Hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.shared.text import _SHELL_FAILED, tool_block_failed

pieces = st.sampled_from([
    "\n", "[", "]", "\n[", "x", "exit code: ", "killed by signal: ", "0", "3", "10", "SIGKILL", " ", "é", "\r",
    "\n[exit code: 2]", "\n[exit code: 0]", "\n[killed by signal: TERM]", "[exit code: 1]",
])  # fmt: skip


def block(text: str) -> dict[str, object]:
    return {"type": "tool-result", "toolCallId": "c", "content": [{"type": "text", "text": text}], "isError": False}


@settings(max_examples=500, deadline=None)
@given(st.lists(pieces, max_size=30).map("".join))
def test_the_marker_at_the_last_newline_is_the_marker_searched_for(text: str) -> None:
    assert tool_block_failed(block(text)) is (_SHELL_FAILED.search(text) is not None)


def test_only_the_last_line_fails_a_command() -> None:
    assert tool_block_failed(block("out\n[exit code: 3]"))
    assert tool_block_failed(block("a\n[exit code: 1]\nb\n[killed by signal: KILL]"))
    assert not tool_block_failed(block("out\n[exit code: 3]\nthen more]"))
    assert not tool_block_failed(block("[exit code: 3]"))  # no newline before it
    assert not tool_block_failed(block("out\n[exit code: 0]"))
