"""A remote log the roots reach by two names (a root given relative and absolute, through a symbolic link, a session
directory or a log under a root given too) is one session, as a local one is (``tests/fleet/test_one_log_two_names.py``):
one row under the name listed first, one report of each alert; the far side's real paths are asked in one round trip
per listing, and once for each name."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.cli import main
from core.fleet.follow import Fleet
from tests.alerts.crafted import config
from tests.fleet.test_one_log_two_names import HOW, _root
from tests.remote.conftest import LinkCalls
from tests.remote.sshd import MISSING, Sshd

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

LOG = Path("--w--", "s-1", "session.jsonl")


def _names(sshd: Sshd, tmp_path: Path, how: str) -> tuple[list[str], str]:
    """The two remote names of the one log ``how`` says, and the name of the log its row is under (the first)."""
    root = _root(tmp_path)
    relative = os.path.relpath(root, sshd.home)  # the far side's relative paths start at its home
    names = {
        "relative and absolute": [relative, str(root)],
        "through a link": [str(root), str(tmp_path / "link")],
        "a session directory under its root": [str(root), str(root / LOG.parent)],
        "a log under its root": [str(root / LOG), str(tmp_path / "link")],
    }[how]
    first = names[0] if how == "a log under its root" else f"{names[0]}/{LOG}"
    return [f"testbox:{name}" for name in names], f"testbox:{first}"


@pytest.mark.parametrize("how", HOW)
def test_sessions_lists_a_remote_log_named_twice_once(
    sshd: Sshd, tmp_path: Path, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two rows of one session on the far side (three names given through a link: four rows), as the local listing
    had before it listed one."""
    sshd.trust()
    names, first = _names(sshd, tmp_path, how)
    assert main(["sessions", *names, "--json"]) in (0, None)
    rows = json.loads(capsys.readouterr().out)
    assert [(row["id"], row["path"]) for row in rows] == [("crafted-1", first)], rows


@pytest.mark.parametrize("how", HOW)
def test_alerts_reports_the_alerts_of_a_remote_log_named_twice_once(
    sshd: Sshd, tmp_path: Path, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each alert of the remote log was reported once per name (``--exec`` paging twice, an action sent twice)."""
    sshd.trust()
    names, first = _names(sshd, tmp_path, how)
    assert main(["alerts", *names, "--json"]) == 1
    alerts = json.loads(capsys.readouterr().out)
    assert [(a["cause"], a["seq"], a["path"]) for a in alerts] == [("error-streak", 3, first)], alerts


def test_the_fleet_asks_the_real_paths_of_a_listing_at_once_and_each_name_once(
    sshd: Sshd, tmp_path: Path, link_calls: LinkCalls
) -> None:
    """One round trip of real paths per listing that finds names not asked yet, none for a rescan that finds the
    same names; a name that appears later (a second link) is asked then, and is still the one session."""
    sshd.trust()
    names, first = _names(sshd, tmp_path, "through a link")
    realpaths = link_calls("realpaths")
    fleet = Fleet(names, config())
    fleet.rescan()
    assert [sorted(call["paths"]) for call in realpaths] == [[str(tmp_path / "sessions" / LOG)],
                                                               [str(tmp_path / "link" / LOG)]]  # fmt: skip
    assert list(fleet.watches) == [first]
    fleet.rescan()
    assert len(realpaths) == 2
    (tmp_path / "again").symlink_to(tmp_path / "sessions")
    fleet.targets.append(fleet.targets[0].at(str(tmp_path / "again")))
    fleet.rescan()
    assert [call["paths"] for call in realpaths[2:]] == [[str(tmp_path / "again" / LOG)]]
    assert list(fleet.watches) == [first]
