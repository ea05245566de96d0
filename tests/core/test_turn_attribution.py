"""Events outside any turn (inbox splices and /compact blocks between turns) belong to no turn."""

from __future__ import annotations

from pathlib import Path

from core.read.load import load_session
from core.read.session import Session
from tests.tui.logs import Log


def between_turns_log() -> tuple[Log, list[int]]:
    """Two turns with a /compact block and an inbox splice between them; the seqs that are outside a turn."""
    log = Log()
    log.turn(1, "first", "ok")
    outside = [
        log.add({"type": "compaction/start", "data": {"compactionId": "c1"}}),
        log.add({"type": "compaction/end", "data": {"compactionId": "c1"}}),
        log.add({"type": "agent/inbox/spliced", "data": {"target": "next-turn", "start": 0, "inserted": []}}),
    ]
    log.turn(2, "second", "ok")
    return log, outside


def test_events_between_turns_are_outside_every_turn() -> None:
    log, outside = between_turns_log()
    session = Session.from_events(log.header, log.events)
    for seq in range(session.next_seq):
        assert session.in_turn(seq) == (seq not in outside), seq
    assert [s for s in range(session.next_seq) if session.in_turn(s) and session.turn_of(s) == 1] == list(range(11))


def test_real_dsh_splice_between_turns(fixtures_dir: Path) -> None:
    session = load_session(fixtures_dir / "multi-turn.session.jsonl")
    splices = [s for s in range(session.next_seq) if session.events[s]["type"] == "agent/inbox/spliced"]
    # the first splice comes before turn 1, the third between turns 1 and 2; the others are inside a turn
    assert [session.in_turn(s) for s in splices] == [False, True, False, True]
