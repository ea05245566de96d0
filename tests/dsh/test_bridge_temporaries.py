"""The temporary files of the bridge's atomic replaces, with the real DSH: one a killed DSH left between its write and
its rename is removed when the plugin next starts on the session; one of a live process is never touched."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tests.dsh.harness import (
    NEVER_ALIVE_PID,
    DshHome,
    DshInstall,
    DshWeb,
    ScriptedModel,
    bridge_json,
    final_outcome,
    killed_and_resumed,
    send,
    start_session,
    wait_for,
)
from tests.dsh.test_bridge_lifecycle import _answering_after, _installed_world, _reload_to_new_instance


def test_a_temporary_file_a_dead_dsh_left_is_removed_at_the_next_start_and_a_live_ones_stays(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    world = DshHome(dsh, tmp_path, model.url)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Short: steps=1 sleep=0", in_flight=False)
        # what a killed DSH left (a pid no process has: the killed one's own may be a live process's again by the
        # time the plugin looks), and what a live process writes this moment (this test's pid), both from a while
        # ago: only the dead one's goes
        left = d / f".bridge.json.{NEVER_ALIVE_PID}.tmp"
        # the name taken, it wrote under another
        left_aside = d / f".bridge.standby.json.{NEVER_ALIVE_PID}.0123456789ab.tmp"
        live = d / f".bridge.state.json.{os.getpid()}.tmp"

        def plant() -> None:
            an_hour_ago = time.time() - 3600
            for temporary in (left, left_aside, live):
                temporary.write_text('{"pid": 1}\n')
                os.utime(temporary, (an_hour_ago, an_hour_ago))

        # killed as if between a temporary write and its rename; DSH resumes the session, and the plugin attaches it
        with killed_and_resumed(web, sid, plant):
            assert not left.exists() and not left_aside.exists()
            assert live.read_text() == '{"pid": 1}\n'
    assert sorted(p.name for p in d.glob(".*.tmp")) == [live.name]


def test_a_link_or_a_file_planted_at_a_temporary_name_is_neither_followed_nor_written(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """Whoever may write in the session directory plants, at the temporary names the bridge writes under (its
    DSH's pid in them), a symbolic link to a file outside the directory and a file of their own: the bridge's
    writes follow neither, nothing outside the directory is written, the planted file keeps its bytes, and
    bridge.json and bridge.state.json are still replaced as before (the bridge writes under another name)."""
    world = DshHome(dsh, tmp_path, model.url)
    outside = tmp_path / "outside.json"
    with DshWeb(world) as web:
        _, d = start_session(world, web, "Planted: steps=1 sleep=0", in_flight=False)
        pid = bridge_json(d)["pid"]  # type: ignore[index]
        link, planted = d / f".bridge.json.{pid}.tmp", d / f".bridge.state.json.{pid}.tmp"
        link.symlink_to(outside)
        planted.write_text("planted\n")
        at = int(time.time() * 1000)
        mark = send(d, "checkpoint", {"objective": "after the plants"})
        assert final_outcome(d, mark["id"])["outcome"] == "applied"
        wait_for(
            lambda: (bridge_json(d) or {}).get("heartbeat", 0) > at + 1000,
            60,
            "two heartbeats after the plants",
        )
        wait_for(lambda: _marks(d) == [1], 60, "the mark in bridge.state.json")
        assert not outside.exists() and not outside.is_symlink()
        assert link.is_symlink() and os.readlink(link) == str(outside)
        assert planted.read_text() == "planted\n"
        assert not (d / "bridge.json").is_symlink() and not (d / "bridge.state.json").is_symlink()
        # a write under way has its own temporary file this moment (the names taken, under a random one), gone at
        # its rename: only one that stays is left behind
        wait_for(
            lambda: sorted(p.name for p in d.glob(".*.tmp")) == sorted([link.name, planted.name]),
            30,
            "no temporary file but the plants",
        )


def _marks(d: Path) -> list[int] | None:
    """The mark ids bridge.state.json holds, None while it cannot be read."""
    try:
        return [m["markId"] for m in json.loads((d / "bridge.state.json").read_text())["marks"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def test_a_temporary_file_left_under_the_plugins_own_pid_is_removed_at_its_next_attach(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """A DSH restarted with the pid its killed predecessor had (a container's DSH starts with the same pid each
    time) finds that one's temporary file under its own name. Its writes make their files new and so leave that one
    alone, and no write of its own can be under way while it sweeps (each ends in the call that began it): the
    attach's sweep removes it. A reload's new instance, whose attach sweeps again, stands in for the restart."""
    world = _installed_world(dsh, model, tmp_path)
    with DshWeb(world) as web:
        _, d = start_session(world, web, "Own pid: steps=1 sleep=0", in_flight=False)
        own = d / f".bridge.json.{bridge_json(d)['pid']}.tmp"  # type: ignore[index]
        own.write_text('{"pid": 1}\n')
        an_hour_ago = time.time() - 3600
        os.utime(own, (an_hour_ago, an_hour_ago))
        attached = _reload_to_new_instance(d, world)
        wait_for(lambda: _answering_after(d, attached), 60, "the new instance's word, its sweep done")
        # the name is the first the plugin writes bridge.json under: a heartbeat's write under way has a file there
        # this moment, a new one; the planted file is the one an hour old
        assert not _an_hour_old(own)


def _an_hour_old(path: Path) -> bool:
    """Whether ``path`` is there and was last written more than half an hour ago."""
    try:
        return os.lstat(path).st_mtime < time.time() - 1800
    except FileNotFoundError:
        return False
