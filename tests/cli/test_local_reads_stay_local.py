"""A reading command on a local log loads nothing of the SSH stack: asyncssh and asyncio cost a third of a short
command's start-up, and only a ``[user@]host:PATH`` argument needs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dsh" / "bash-spill.session.jsonl"
PROBE = """
import sys
from core.cli import main
main(sys.argv[1:])
sys.stdout.flush()
print("\\nLOADED", sorted(m for m in ("asyncssh", "asyncio", "core.remote.link") if m in sys.modules), file=sys.stderr)
"""


@pytest.mark.parametrize("command", [["inspect", "--json"], ["surface", "--json"], ["events", "--json"]])
def test_a_local_read_loads_no_ssh_client(command: list[str], tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *command, str(FIXTURE)],
        capture_output=True, text=True, env={"XDG_CACHE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}, check=True,
    )  # fmt: skip
    assert done.stdout.strip()
    assert done.stderr.strip().endswith("LOADED []"), done.stderr
