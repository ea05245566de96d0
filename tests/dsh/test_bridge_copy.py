"""A copy of a bridged session directory (``cp -r``) that a DSH resumes: the requests its inbox held when it was
copied were sent to the original session, and must not run in the copy, with the real DSH."""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

from tests.dsh.harness import (
    DshHome,
    DshInstall,
    DshWeb,
    ScriptedModel,
    bridge_json,
    final_outcome,
    log_events,
    outcomes,
    send,
    start_session,
    td_runs,
    wait_for,
)


def test_a_resumed_copy_runs_none_of_the_requests_sent_to_the_original(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """DSH killed with a queued request and a plain one in the inbox (meant for the original's next start); the
    directory is copied to another DSH's session root, and that DSH resumes the copy: neither request runs there,
    each is answered cancelled saying the directory is a copy, while one queued for the copy after it was made runs
    there, as does one sent once it runs; the original's files are untouched, and its own next start still runs its
    queued request."""
    original = DshHome(dsh, tmp_path / "a", model.url)
    with DshWeb(original) as web:
        sid, d = start_session(original, web, "Killed mid-turn: steps=30 sleep=2")
        assert web.proc is not None
        os.killpg(web.proc.pid, signal.SIGKILL)
        web.proc.wait()
    before = int(time.time() * 1000) - 1000  # a second before the copy is made
    queued = send(d, "checkpoint", {"objective": "for the original"}, queued=True, at=before)
    plain = send(d, "message", {"text": "for the original too"}, at=before)
    elsewhere = DshHome(dsh, tmp_path / "b", model.url)
    copy = elsewhere.sessions / d.parent.name / d.name
    shutil.copytree(d, copy)
    for_copy = send(copy, "checkpoint", {"objective": "queued for the copy"}, queued=True)
    kept = {p.name: p.read_bytes() for p in d.iterdir() if p.is_file()}
    with DshWeb(elsewhere) as web:
        web.prompt(sid, "The copy's turn: steps=1 sleep=0")
        wait_for(lambda: (bridge_json(copy) or {}).get("dir") == str(copy), 30, "the copy's own bridge")
        for request in (queued, plain):
            done = final_outcome(copy, request["id"])
            assert done["outcome"] == "cancelled" and "a copy of" in done["error"], done
        assert final_outcome(copy, for_copy["id"])["detail"]["objective"] == "queued for the copy"
        mine = send(copy, "checkpoint", {"objective": "sent to the copy"})
        assert final_outcome(copy, mine["id"])["outcome"] == "applied"
    assert [run["request"]["id"] for run, _ in td_runs(log_events(copy))] == [for_copy["id"], mine["id"]]
    assert {p.name: p.read_bytes() for p in d.iterdir() if p.is_file()} == kept
    with DshWeb(original) as web:
        web.prompt(sid, "The original's turn: steps=1 sleep=0")
        assert final_outcome(d, queued["id"])["detail"]["objective"] == "for the original"
    assert [o["requestId"] for o in outcomes(d) if o["outcome"] == "applied"] == [queued["id"]]
