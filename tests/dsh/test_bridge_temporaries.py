"""The temporary files of the bridge's atomic replaces, with the real DSH: one a killed DSH left between its write and
its rename is removed when the plugin next starts on the session; one of a live process is never touched."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from tests.dsh.harness import DshHome, DshInstall, DshWeb, ScriptedModel, bridge_json, start_session, wait_for


def test_a_temporary_file_a_dead_dsh_left_is_removed_at_the_next_start_and_a_live_ones_stays(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    world = DshHome(dsh, tmp_path, model.url)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Short: steps=1 sleep=0", in_flight=False)
        assert web.proc is not None
        os.killpg(web.proc.pid, signal.SIGKILL)  # as if killed between a temporary write and its rename
        web.proc.wait()
        dead = web.proc.pid
    # what the killed DSH left (its pid is gone), and what a live process writes this moment (this test's pid), both
    # from a while ago: only the dead one's goes
    left = d / f".bridge.json.{dead}.tmp"
    live = d / f".bridge.state.json.{os.getpid()}.tmp"
    an_hour_ago = time.time() - 3600
    for temporary in (left, live):
        temporary.write_text('{"pid": 1}\n')
        os.utime(temporary, (an_hour_ago, an_hour_ago))
    with DshWeb(world) as web:
        # DSH resumes the session, and the plugin attaches it
        web.prompt(sid, "After the restart: steps=1 sleep=0")
        assert web.proc is not None
        new = web.proc.pid
        wait_for(lambda: (bridge_json(d) or {}).get("pid") == new, 60, "the restarted DSH's bridge.json")
        assert not left.exists()
        assert live.read_text() == '{"pid": 1}\n'
    assert sorted(p.name for p in d.glob(".*.tmp")) == [live.name]
