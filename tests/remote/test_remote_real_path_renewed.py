"""The real path behind each name of a log was looked up once, for the fleet's whole life: a session directory
replaced by a symbolic link to another session kept the real path of the directory it was, so the two names of
the one file it now reached were two rows of one session (its alerts reported twice). A name whose file may have
changed is looked up again at the next listing (a local one whose file is another by its stat; a remote one
reached through a link, or that was), here and over SSH, and the row of the session that did not move stays."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.fleet.follow import Fleet
from tests.alerts.crafted import HEADER, config
from tests.remote.conftest import LinkCalls
from tests.remote.sshd import MISSING, Sshd

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def _session(root: Path, name: str) -> Path:
    log = root / "--w--" / name / "session.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text(json.dumps({**HEADER, "id": name}) + "\n")
    return log


@pytest.mark.parametrize("where", ["local", "remote"])
def test_a_session_directory_replaced_by_a_link_to_another_is_one_row(
    sshd: Sshd, tmp_path: Path, where: str
) -> None:
    sshd.trust()
    root = tmp_path / "sessions"
    _session(root, "s-1"), _session(root, "s-2")
    name = f"testbox:{root}" if where == "remote" else str(root)
    fleet = Fleet([name], config())
    fleet.poll()
    kept = f"{name}/--w--/s-2/session.jsonl"
    assert sorted(fleet.watches) == [f"{name}/--w--/s-1/session.jsonl", kept]
    watch = fleet.watches[kept]
    shutil.rmtree(root / "--w--" / "s-1")
    (root / "--w--" / "s-1").symlink_to(root / "--w--" / "s-2")  # s-1 now names s-2's log
    fleet.rescan()
    assert (
        list(fleet.watches) == [kept] and fleet.watches[kept] is watch
    )  # the session that did not move stays
    fleet.poll()
    assert [row.ref.id for row in fleet.rows()] == ["s-2"]


def test_a_remote_name_reached_through_no_link_is_not_asked_again(
    sshd: Sshd, tmp_path: Path, link_calls: LinkCalls
) -> None:
    """Cheaply: only the names reached through a link (or that were) are looked up again at each listing."""
    sshd.trust()
    root = tmp_path / "sessions"
    _session(root, "s-1")
    (root / "--w--" / "s-2").symlink_to(root / "--w--" / "s-1")
    realpaths = link_calls("realpaths")
    fleet = Fleet([f"testbox:{root}"], config())
    fleet.rescan()
    fleet.rescan()
    assert [sorted(call["paths"]) for call in realpaths] == [
        [str(root / "--w--" / "s-1" / "session.jsonl"), str(root / "--w--" / "s-2" / "session.jsonl")],
        [str(root / "--w--" / "s-2" / "session.jsonl")],
    ]
