"""A copy of a bridged session directory (``cp -r``) that a DSH resumes: the requests its inbox held when it was
copied were sent to the original session, and must not run in the copy, with the real DSH."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

from core.bridge.files import served_dir
from core.cli import main
from core.control.inbox import inbox_line, make_request
from tests.dsh.harness import (
    DshHome,
    DshInstall,
    DshWeb,
    ScriptedModel,
    bridge_json,
    final_outcome,
    log_events,
    outcomes,
    send,
    send_line,
    start_session,
    td_runs,
    wait_for,
)


def test_a_resumed_copy_runs_none_of_the_requests_sent_to_the_original(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """DSH killed with a queued request and a plain one in the inbox (meant for the original's next start); the
    directory is copied to another DSH's session root, and that DSH resumes the copy: neither request runs there,
    each is answered cancelled saying the directory is a copy, while one queued for the copy after it was made runs
    there, as does one sent once it runs; the original's files are untouched, and its own next start still runs its
    queued request."""
    original = DshHome(dsh, tmp_path / "a", model.url)
    with DshWeb(original) as web:
        sid, d = start_session(original, web, "Killed mid-turn: steps=30 sleep=2")
        assert web.proc is not None
        os.killpg(web.proc.pid, signal.SIGKILL)
        web.proc.wait()
    before = int(time.time() * 1000) - 1000  # a second before the copy is made
    queued = send(d, "checkpoint", {"objective": "for the original"}, queued=True, at=before)
    plain = send(d, "message", {"text": "for the original too"}, at=before)
    elsewhere = DshHome(dsh, tmp_path / "b", model.url)
    copy = elsewhere.sessions / d.parent.name / d.name
    shutil.copytree(d, copy)
    # a request that names no directory counts as the copy's only from the millisecond after the copy was made on
    copied_at = (copy / "bridge.json").stat().st_ctime_ns // 1_000_000
    wait_for(lambda: int(time.time() * 1000) > copied_at, 60, "the clock to pass the copy's millisecond")
    for_copy = send(copy, "checkpoint", {"objective": "queued for the copy"}, queued=True)
    kept = {p.name: p.read_bytes() for p in d.iterdir() if p.is_file()}
    with DshWeb(elsewhere) as web:
        web.prompt(sid, "The copy's turn: steps=1 sleep=0")
        wait_for(lambda: (bridge_json(copy) or {}).get("dir") == str(copy), 60, "the copy's own bridge")
        for request in (queued, plain):
            done = final_outcome(copy, request["id"])
            assert done["outcome"] == "cancelled" and "a copy of" in done["error"], done
        assert final_outcome(copy, for_copy["id"])["detail"]["objective"] == "queued for the copy"
        mine = send(copy, "checkpoint", {"objective": "sent to the copy"})
        assert final_outcome(copy, mine["id"])["outcome"] == "applied"
    assert [run["request"]["id"] for run, _ in td_runs(log_events(copy))] == [for_copy["id"], mine["id"]]
    assert {p.name: p.read_bytes() for p in d.iterdir() if p.is_file()} == kept
    with DshWeb(original) as web:
        web.prompt(sid, "The original's turn: steps=1 sleep=0")
        assert final_outcome(d, queued["id"])["detail"]["objective"] == "for the original"
    assert [o["requestId"] for o in outcomes(d) if o["outcome"] == "applied"] == [queued["id"]]


def _killed_mid_turn(world: DshHome) -> tuple[str, Path]:
    """A session whose DSH was killed mid-turn (its bridge.json names its directory and that directory's identity)."""
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Killed mid-turn: steps=30 sleep=2")
        assert web.proc is not None
        os.killpg(web.proc.pid, signal.SIGKILL)
        web.proc.wait()
    return sid, d


def test_a_copy_brought_from_another_machine_runs_none_of_the_requests_queued_there(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path, capsys
) -> None:
    """A request queued with tapedeck for a DSH killed mid-turn names the directory it was sent to; the directory is
    copied to another machine (a DSH whose /etc/machine-id differs, where the original's path does not exist, so
    the copy looked moved), which resumes it: the request is cancelled there, saying the directory is a copy of a
    session on another machine, and the original's next start runs it."""
    original = DshHome(dsh, tmp_path / "a", model.url)
    sid, d = _killed_mid_turn(original)
    assert (
        main(["control", str(d), "checkpoint", "--queue", "--arg", "objective=for the original", "--json"])
        == 0
    )
    queued = json.loads(capsys.readouterr().out)
    assert queued["to"] == bridge_json(d)["dirId"]
    elsewhere = DshHome(dsh, tmp_path / "b", model.url, machine_id="0123456789abcdef0123456789abcdef")
    copy = elsewhere.sessions / d.parent.name / d.name
    shutil.copytree(d, copy)
    away = d.with_name(d.name + ".away")
    d.rename(away)  # the other machine has no directory at the original's path
    with DshWeb(elsewhere) as web:
        web.prompt(sid, "The copy's turn: steps=1 sleep=0")
        done = final_outcome(copy, queued["id"])
        assert done["outcome"] == "cancelled" and "on another machine" in done["error"], done
        assert bridge_json(copy)["dirId"].startswith("0123456789abcdef0123456789abcdef:")
    assert td_runs(log_events(copy)) == []
    away.rename(d)
    with DshWeb(original) as web:
        web.prompt(sid, "The original's turn: steps=1 sleep=0")
        assert final_outcome(d, queued["id"])["detail"]["objective"] == "for the original"


def test_a_request_sent_to_the_original_in_the_millisecond_of_the_copy_does_not_run_in_the_copy(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """A queued request tapedeck sent to the original in the very millisecond the copy's bridge.json was made (cp
    took it along) names the original's directory: the copy cancels it, however the times compare, and the original
    runs it."""
    original = DshHome(dsh, tmp_path / "a", model.url)
    sid, d = _killed_mid_turn(original)
    elsewhere = DshHome(dsh, tmp_path / "b", model.url)
    copy = elsewhere.sessions / d.parent.name / d.name
    shutil.copytree(d, copy)
    request = make_request(
        "checkpoint", {"objective": "for the original"}, queued=True, kind="dsh", to=served_dir(d)
    )
    request["at"] = int((copy / "bridge.json").stat().st_ctime_ns // 1_000_000)
    for where in (d, copy):
        send_line(where, inbox_line(request).rstrip(b"\n"))
    with DshWeb(elsewhere) as web:
        web.prompt(sid, "The copy's turn: steps=1 sleep=0")
        done = final_outcome(copy, request["id"])
        assert done["outcome"] == "cancelled" and f"a copy of {d}" in done["error"], done
    with DshWeb(original) as web:
        web.prompt(sid, "The original's turn: steps=1 sleep=0")
        assert final_outcome(d, request["id"])["outcome"] == "applied"


def test_a_moved_session_directory_reads_moved_and_runs_what_was_queued_for_it(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path, capsys
) -> None:
    """A bridged session directory moved (mv) to another DSH's session root, a new directory made at its old path,
    reads as moved, not as a copy that no bridge serves: no bridge reads its inbox until DSH resumes the session
    there (control without --queue exits 3), and the requests queued for it, before the move and after, run then."""
    original = DshHome(dsh, tmp_path / "a", model.url)
    sid, d = _killed_mid_turn(original)
    assert (
        main(["control", str(d), "checkpoint", "--queue", "--arg", "objective=before the move", "--json"])
        == 0
    )
    before = json.loads(capsys.readouterr().out)
    elsewhere = DshHome(dsh, tmp_path / "b", model.url)
    moved = elsewhere.sessions / d.parent.name / d.name
    moved.parent.mkdir(parents=True)
    d.rename(moved)
    d.mkdir()  # not the directory bridge.json was written for, though at its path
    assert main(["inspect", str(moved)]) == 0
    said = capsys.readouterr().out
    assert f"moved here from {d}" in said and "a copy" not in said, said
    assert main(["control", str(moved), "checkpoint"]) == 3
    assert f"moved here from {d}" in capsys.readouterr().err
    assert (
        main(["control", str(moved), "checkpoint", "--queue", "--arg", "objective=after the move", "--json"])
        == 0
    )
    after = json.loads(capsys.readouterr().out)
    with DshWeb(elsewhere) as web:
        web.prompt(sid, "The moved session's turn: steps=1 sleep=0")
        for request, objective in ((before, "before the move"), (after, "after the move")):
            assert final_outcome(moved, request["id"])["detail"]["objective"] == objective


def test_a_session_resumed_after_its_machine_id_changed_runs_what_was_queued_for_it(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """A container rebuilt on its volume gets a new /etc/machine-id, and its DSH resumes the session it ran before:
    the directory is the same one (its device, inode and path, as bridge.json's dirId and dir name them), so the
    request queued before DSH was killed runs there, as tapedeck reads that directory as the session itself; it is
    not cancelled as one sent to a copy of a session on another machine. Nor when the rebuilt container mounts the
    volume at another path, where the path bridge.json names is nothing: in one kernel's boot, the device and inode
    say which directory it is, as they do for a sibling container.

    The container resumed at once, the killed DSH's heartbeat under 5 s old: that bridge.json was taken for a
    bridge another machine runs in the directory, so this one was a copy. A heartbeat of a process that cannot be
    looked for here is no verdict: the new bridge waits on standby until it stops, then judges the directory."""
    world = DshHome(dsh, tmp_path / "a", model.url, machine_id="0123456789abcdef0123456789abcdef")
    sid, d = _killed_mid_turn(world)
    queued = send(d, "checkpoint", {"objective": "queued before the rebuild"}, queued=True)

    def rebuilt() -> bool:
        """The rebuild's `chmod -R` of the volume (every file's ctime is now), made again until the file system's
        clock, which is coarse (a tick of up to 10 ms), has passed the request's time."""
        for path in (d, *d.iterdir()):
            os.chmod(path, path.stat().st_mode)
        return (d / "bridge.json").stat().st_ctime_ns // 1_000_000 > queued["at"]

    wait_for(rebuilt, 60, "the file system's clock to pass the request's time")
    world.machine_id = (
        "fedcba9876543210fedcba9876543210"  # the rebuilt container, which mounts the volume elsewhere
    )
    world.volume_at = world.base / "volume"
    world.write_patch()
    with DshWeb(world) as web:
        killed = {
            **bridge_json(d),
            "heartbeat": int(time.time() * 1000),
        }  # as if killed while this one booted
        (d / "bridge.json").write_text(json.dumps(killed))
        web.prompt(sid, "After the rebuild: steps=1 sleep=0")
        done = final_outcome(d, queued["id"])
        assert done["outcome"] == "applied" and done["detail"]["objective"] == "queued before the rebuild", (
            done
        )
        assert bridge_json(d)["dirId"].startswith("fedcba9876543210fedcba9876543210:")
    assert not [o for o in outcomes(d) if "copy" in (o.get("error") or "")], outcomes(d)
