"""A session watched under one name keeps it when a second name of its file appears (a symbolic link to its
session directory, beside it). The fleet kept, of a file's names, the first one listed: a new link whose name
sorts earlier took the row over (the session dropped, read again from its first byte under the new name, its row's
place and alerts with it), where ``AlertFollower`` kept the watched name. Both keep it now, here and over SSH."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.alerts.follow import AlertFollower
from core.fleet.follow import Fleet
from tests.alerts.crafted import config
from tests.fleet.test_one_log_two_names import _root
from tests.remote.sshd import MISSING, Sshd

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


@pytest.mark.parametrize("where", ["local", "remote"])
def test_a_new_name_of_a_watched_file_does_not_take_its_row_over(
    sshd: Sshd, tmp_path: Path, where: str
) -> None:
    sshd.trust()
    root = _root(tmp_path)  # one session, --w--/s-1
    name = f"testbox:{root}" if where == "remote" else str(root)
    fleet = Fleet([name], config())
    fleet.rescan()
    [key] = list(fleet.watches)
    assert key == f"{name}/--w--/s-1/session.jsonl"
    watch = fleet.watches[key]
    (root / "--w--" / "s-0").symlink_to(root / "--w--" / "s-1")  # sorts first
    fleet.rescan()
    assert list(fleet.watches) == [key] and fleet.watches[key] is watch
    fleet.poll()
    assert [row.key for row in fleet.rows()] == [key]
    os.remove(root / "--w--" / "s-0")
    fleet.rescan()
    assert list(fleet.watches) == [key] and fleet.watches[key] is watch


def test_the_alert_follower_keeps_the_watched_name_too(tmp_path: Path) -> None:
    root = _root(tmp_path)
    follower = AlertFollower([root], config())
    [path] = list(follower.watches)
    watch = follower.watches[path]
    (root / "--w--" / "s-0").symlink_to(root / "--w--" / "s-1")
    follower.rescan()
    assert list(follower.watches) == [path] and follower.watches[path] is watch
