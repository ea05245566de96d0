"""What the header says while a followed log cannot be read yet tells a missing log from one that is there but
holds no complete first line (empty, or its header still being written)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.test_live import Follower, wait_for
from tui.widgets.header import load_state


@pytest.mark.parametrize("content", [b"", b'{"type":"session","id":"s-1"'])
def test_a_log_that_is_there_but_has_no_first_line_is_not_said_to_be_missing(
    tmp_path: Path, content: bytes
) -> None:
    """`tapedeck watch` on an empty log said "waiting for the log to appear", though the log was there: an
    operator looked for a wrong path. It now says the log has no complete first line yet."""
    path = tmp_path / "session.jsonl"
    path.write_bytes(content)
    follower = Follower(path)
    try:
        wait_for(lambda: follower.live.phase not in ("opening",))
        assert load_state(follower.live) == "waiting for the log's first line"
    finally:
        follower.stop()


def test_a_missing_log_is_waited_for_to_appear(tmp_path: Path) -> None:
    follower = Follower(tmp_path / "later.jsonl")
    try:
        wait_for(lambda: follower.live.phase not in ("opening",))
        assert load_state(follower.live) == "waiting for the log to appear"
    finally:
        follower.stop()
