"""Confinement holds while another process swaps a workspace directory for a link to the outside."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from core.host.tools import workspace_tools
from tests.conftest import Processes
from tests.lines import Lines

SECRET = "SECRET-OUTSIDE"
CALLS = 2000

# Swaps ws/d between a real directory and a symbolic link to the outside until killed.
SWAPPER = """
import os, shutil, sys
ws, outside = sys.argv[1], sys.argv[2]
d, parked = os.path.join(ws, "d"), os.path.join(ws, "parked")
print("ready", flush=True)
while True:
    os.rename(d, parked)
    try:
        os.symlink(outside, d)
        os.stat(d)  # let the link stand for a moment
        os.unlink(d)
    except FileExistsError:
        pass  # a write made a fresh d while the real one was parked; it is dropped below
    while True:
        try:
            os.rename(parked, d)
            break
        except OSError:
            shutil.rmtree(d, ignore_errors=True)
"""


def test_swapping_a_directory_for_a_link_never_lets_a_call_out(tmp_path: Path, processes: Processes) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "d").mkdir(parents=True)
    outside.mkdir()
    (ws / "d" / "f.txt").write_text("inside\n")
    (outside / "f.txt").write_text(f"{SECRET}\n")
    tools = {t.name: t for t in workspace_tools(ws)}
    swapper = processes.start([sys.executable, "-c", SWAPPER, str(ws), str(outside)], stdout=subprocess.PIPE, text=True)
    leaks: list[str] = []
    try:
        assert swapper.stdout is not None and Lines(swapper.stdout).next() == "ready\n"
        for i in range(CALLS):
            calls = [
                ("read_file", {"path": "d/f.txt"}),
                ("write_file", {"path": f"d/w{i % 7}.txt", "content": "written\n"}),
                ("edit_file", {"path": "d/f.txt", "old_text": "\n", "new_text": " \n"}),
                ("grep", {"pattern": "SECRET", "path": "d"}),
            ]
            name, args = calls[i % len(calls)]
            outcome = tools[name].run(args)
            if SECRET in outcome.text:
                leaks.append(f"{name}: {outcome.text[:80]}")
    finally:
        swapper.kill()
        swapper.wait()
    escaped = sorted(p.name for p in outside.iterdir() if p.name != "f.txt")
    assert (outside / "f.txt").read_text() == f"{SECRET}\n"
    assert escaped == [], f"{len(escaped)} writes landed outside the workspace"
    assert leaks == [], f"{len(leaks)} reads came from outside: {leaks[:3]}"
