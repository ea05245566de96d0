"""bridge.json's heartbeat, with the real DSH traced by strace: a beat says the same state again, so it is renamed
into place but not synced to the disk. aef40cce synced every atomic write, the file and its directory, on DSH's one
thread once a second per session; on a file system whose sync waits for every write the machine has pending, that
held the agent itself. What changes the session's state is still synced."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import Processes
from tests.dsh.harness import DshHome, DshInstall, DshWeb, ScriptedModel, bridge_json, start_session, wait_for

pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace to see DSH's syncs")


def test_a_heartbeat_is_not_synced_to_the_disk(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path, processes: Processes
) -> None:
    world = DshHome(dsh, tmp_path, model.url)
    with DshWeb(world) as web:
        _, d = start_session(world, web, "Beat: steps=1 sleep=0", in_flight=False)
        wait_for(lambda: (bridge_json(d) or {}).get("state") == "idle", 60, "the session idle")
        assert web.proc is not None
        trace = tmp_path / "syncs.trace"
        tracer = processes.start(
            ["strace", "-f", "-y", "-e", "trace=fsync,fdatasync", "-o", str(trace), "-p", str(web.proc.pid)],
            stderr=open(tmp_path / "strace.err", "wb"),  # noqa: SIM115 - closed with the process
        )
        wait_for(lambda: b"attached" in (tmp_path / "strace.err").read_bytes(), 60, "strace attached to DSH")
        since = (bridge_json(d) or {})["heartbeat"]
        beats: set[int] = set()

        def three_beats() -> bool:
            beat = (bridge_json(d) or {}).get("heartbeat", since)
            if beat > since:
                beats.add(beat)
            return len(beats) >= 3

        wait_for(three_beats, 60, "three heartbeats while traced")
        tracer.terminate()
        tracer.wait(60)
        assert (bridge_json(d) or {}).get("state") == "idle"  # the state did not change meanwhile
        synced = [
            line for line in trace.read_text().splitlines() if re.search(r"\.bridge\.json\.\d+\.tmp", line)
        ]
        assert synced == [], synced
