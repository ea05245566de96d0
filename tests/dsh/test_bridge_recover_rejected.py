"""A line the bridge read and refused, whose answer was never written, with the real DSH: the next start answers it.

The bridge saves its inbox cursor before it answers the lines it passed (c6c04d43), so a DSH that dies in between
leaves a line read and unanswered; the next start's recoverRead re-reads the inbox up to the cursor. A line it
refuses (an unknown op) must be answered there too: poll starts past it, and nothing else ever would.
"""

from __future__ import annotations

from tests.dsh.harness import (
    DshHome,
    DshWeb,
    bridge_json,
    final_outcome,
    killed_and_resumed,
    outcomes,
    send,
    start_session,
    wait_for,
)
from tests.dsh.test_bridge_lifecycle import _inbox_read_to


def test_a_refused_line_read_before_dsh_died_unanswered_is_answered_rejected_at_the_next_start(
    world: DshHome,
) -> None:
    """The outcomes file is a directory while the bridge reads a request of no known op, so its rejected answer is
    lost (as a kill before the append would lose it); DSH is killed, the file put right, and the next start
    answers the request rejected, with the reason it had, before it reads the requests sent after it."""
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Short: steps=1 sleep=0", in_flight=False)
        (d / "control.outcomes.jsonl").mkdir()  # no append reaches it
        refused = send(d, "no.such.op")
        read_to = (d / "control.jsonl").stat().st_size
        wait_for(lambda: _inbox_read_to(d) == read_to, 60, "the bridge to read the request")
        wait_for(
            lambda: "append to the outcomes file" in (bridge_json(d) or {}).get("problem", ""),
            60,
            "the refusal, which it could not write",
        )
        with killed_and_resumed(web, sid, (d / "control.outcomes.jsonl").rmdir):
            after = send(d, "checkpoint", {"objective": "sent after the restart"})
            assert final_outcome(d, after["id"])["outcome"] == "applied"
    answered = [o for o in outcomes(d) if o["requestId"] == refused["id"]]
    assert [(o["outcome"], o["op"]) for o in answered] == [("rejected", "no.such.op")], answered
    assert "unknown control op" in answered[0]["error"], answered
