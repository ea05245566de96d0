"""An outcome append that a write cuts short, with the real DSH: a file size limit on the DSH process (RLIMIT_FSIZE,
which Node takes as a short write, then EFBIG) stops the outcome line part way. The bridge writes on what the first
write left, and the write that fails says so in bridge.json's ``problem``, never leaving a cut line unsaid."""

from __future__ import annotations

import contextlib
import os
import resource
import stat
import time
from pathlib import Path

from tests.dsh.harness import (
    DshHome,
    DshInstall,
    DshWeb,
    ScriptedModel,
    bridge_json,
    send,
    start_session,
    wait_for,
)


def _largest(d: Path) -> int:
    """The size of the largest regular file in ``d``, DSH running: a temporary file the bridge writes this moment
    (a heartbeat's) is listed and may be renamed before it is measured, and is passed over then."""
    sizes = []
    for entry in os.scandir(d):
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISREG((found := entry.stat(follow_symlinks=False)).st_mode):
                sizes.append(found.st_size)
    return max(sizes)


FILLER = b'{"filler": "' + b"x" * 60_000 + b'"}\n'


def test_an_outcome_append_cut_short_by_a_file_size_limit_is_said_to_have_failed(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    world = DshHome(dsh, tmp_path, model.url)
    with DshWeb(world) as web:
        _, d = start_session(world, web, "Short: steps=1 sleep=0", in_flight=False)
        wait_for(lambda: (bridge_json(d) or {}).get("state") == "idle", 60, "the session idle")
        assert web.proc is not None
        # room for all DSH writes elsewhere meanwhile; the outcomes file 40 bytes short of the limit, which the
        # outcome line is longer than
        limit = _largest(d) + (1 << 20)
        file = d / "control.outcomes.jsonl"
        with file.open("ab") as out:
            while out.tell() + len(FILLER) <= limit - 40:
                out.write(FILLER)
            out.write(b" " * (limit - 40 - out.tell() - 1) + b"\n")
        assert file.stat().st_size == limit - 40
        resource.prlimit(
            web.proc.pid,
            resource.RLIMIT_FSIZE,
            (limit, resource.prlimit(web.proc.pid, resource.RLIMIT_FSIZE)[1]),
        )
        request = send(d, "checkpoint", {"objective": "cut short"})
        wait_for(lambda: file.stat().st_size == limit, 60, "the outcome's first write to reach the limit")
        after = time.time() * 1000
        # any bridge.json written from now on says what the write that failed left: the outcome is not written
        shown = wait_for(
            lambda: (b := bridge_json(d)) and b["heartbeat"] > after and b,
            60,
            "a heartbeat after the cut write",
        )
        assert shown.get("problem", "").startswith(
            f"cannot append to the outcomes file {file}: write failed with EFBIG"
        ), shown
        assert [r["id"] for r in shown.get("inFlight", [])] == [request["id"]]  # its outcome is not written
        assert not file.read_bytes().endswith(b"\n")  # the cut line stays as the limit left it
