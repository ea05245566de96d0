"""DSH killed while its bridge appended an outcome line, with the real DSH: what the next start writes stays readable.

A write a SIGKILL (or a full disk) cuts short leaves the outcomes file ending in part of a line, with no newline. The
next outcome the bridge appends must not run on from those bytes into one line no reader can parse: the request it
answers would never be answered for ``control --wait``, the TUI or the fleet.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.bridge.files import OutcomeReader
from tests.dsh.harness import (
    DshInstall,
    DshWeb,
    ScriptedModel,
    bridge_json,
    killed_and_resumed,
    send,
    start_session,
    wait_for,
)
from tests.dsh.test_bridge_lifecycle import _hold_outcomes, _installed_world


def test_an_outcome_line_a_kill_cut_short_does_not_swallow_the_next_start_s_answer(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """DSH killed while a checkpoint ran (its outcome held by the test hook), as it wrote that outcome (the file
    ends in the first half of the line): the next start answers the checkpoint on a line of its own, which
    tapedeck's reader finds, as it finds the request sent after it; the cut line stays as it was."""
    world = _installed_world(dsh, model, tmp_path)
    hold = _hold_outcomes(world)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Killed mid-turn: steps=30 sleep=1")
        mark = send(d, "checkpoint", {"objective": "cut short"})
        wait_for(lambda: (bridge_json(d) or {}).get("inFlight"), 60, "the checkpoint in flight")
        line = json.dumps(
            {"requestId": mark["id"], "op": "checkpoint", "outcome": "applied", "detail": {"markId": 1}}
        )
        cut = line[: len(line) // 2].encode()
        outcomes_file = d / "control.outcomes.jsonl"
        reader = OutcomeReader(d)

        def cut_short() -> None:
            with outcomes_file.open("ab") as f:  # what the killed write left
                f.write(cut)
            hold.unlink()

        def final(request_id: str) -> dict | None:
            reader.read()
            found = reader.outcomes.get(request_id)
            return found if found is not None and found["outcome"] != "pending" else None

        with killed_and_resumed(web, sid, cut_short):
            done = wait_for(lambda: final(mark["id"]), 60, "the killed checkpoint's answer, read by tapedeck")
            assert done["outcome"] == "unknown", done
            after = send(d, "checkpoint", {"objective": "after the restart"})
            assert wait_for(lambda: final(after["id"]), 60, "the next answer")["outcome"] == "applied"
    assert outcomes_file.read_bytes().split(b"\n")[0] == cut
