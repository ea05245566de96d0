"""``tapedeck demo --no-tui`` names its log once: it printed the path as it started, the host printed it again, and
the closing lines a third time ('demo log kept at …')."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_without_the_tui_names_its_log_once(tmp_path: Path) -> None:
    root = tmp_path / "root"
    done = subprocess.run([sys.executable, "-m", "tui.cli", "demo", "--no-tui", "--speed", "0", "--sessions-root",
                           str(root)], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "TMPDIR": str(tmp_path)}, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (log,) = root.rglob("session.jsonl*")
    said = done.stdout + done.stderr
    assert said.count(str(log)) == 1, said
    assert "demo log kept" in done.stdout, done.stdout
