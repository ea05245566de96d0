"""No leftover of a merge or a patch is committed: a ``.orig``, ``.rej`` or ``~`` copy beside a file is dead text
that ``duplicates``, grep and readers take for the real one."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LEFTOVER_SUFFIXES = (".orig", ".rej", ".bak", "~")


def test_no_merge_or_patch_leftover_is_tracked() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing tells a tracked file from a stray one")
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode("utf-8", "surrogateescape").split("\0")
    leftovers = [name for name in tracked if name.endswith(LEFTOVER_SUFFIXES)]
    assert not leftovers, f"remove with git rm: {leftovers}"
