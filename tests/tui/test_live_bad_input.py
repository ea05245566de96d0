"""LiveSession on hostile input: a bad event is a diagnostic, loading finishes, following goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.log.helpers import user
from tests.tui.logs import Log, append, policy_log
from tests.tui.test_live import Follower, load, wait_for


def _bad_events(log: Log) -> list[int]:
    """Append one event of each kind that used to break a reader; return their seqs."""
    return [
        log.add({"type": "step/end", "data": {"turn": [[[]]], "step": 1}}),
        log.add({"type": "turn/end", "data": {"turn": 3, "reason": [1, "a", None]}}),
        log.add({"type": "assistant/chunk", "data": {"turn": 3, "step": 1, "chunk": "x"}}),
        log.add({**user("five"), "data": {**user("five")["data"], "content": 5}}),
    ]


@pytest.mark.parametrize("retain_bytes", [None, 1], ids=["in-memory", "index-backed"])
def test_mutated_log_loads_to_ready_with_diagnostics(tmp_path: Path, retain_bytes: int | None) -> None:
    log = policy_log()
    bad = _bad_events(log)
    log.add(user("after the damage"))
    live, _ = load(log.write(tmp_path / "session.jsonl"), retain_bytes=retain_bytes)
    assert live.ready and live.error is None
    assert live.session.next_seq == len(log.events)
    reported = [d.seq for d in live.session.diagnostics if d.code == "bad-event"]
    assert reported == bad
    assert live.session.surface[-1] == len(log.events) - 1
    for seq in bad:
        assert live.event(seq)["seq"] == seq  # still listed, as is


def test_follow_goes_on_past_a_bad_event(tmp_path: Path) -> None:
    log = policy_log()
    path = log.write(tmp_path / "session.jsonl")
    follower = Follower(path)
    live = follower.live
    try:
        wait_for(lambda: live.phase == "following")
        start = len(log.events)
        bad = _bad_events(log)
        append(path, log, start)
        wait_for(lambda: live.session.next_seq == len(log.events))
        start = len(log.events)
        last = log.add(user("still following"))
        append(path, log, start)
        wait_for(lambda: live.session.next_seq == len(log.events))
        assert live.session.surface[-1] == last
        assert [d.seq for d in live.session.diagnostics if d.code == "bad-event"] == bad
        assert live.error is None and follower.thread.is_alive()
    finally:
        follower.stop()
