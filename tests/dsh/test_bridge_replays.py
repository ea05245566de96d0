"""A request replayed, with the real DSH: a line the bridge reads again is refused where the bridge takes lines from
the inbox (``take``), whether its request was answered already or still waits in the op queue, and a request run
meanwhile by a ``td`` command given by hand is not run again from its line (``execute``); each runs once, with one
outcome, and DSH logs one ``td`` command for it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.dsh.harness import (
    DshHome,
    DshInstall,
    DshWeb,
    ScriptedModel,
    bridge_json,
    final_outcome,
    killed_and_resumed,
    log_events,
    outcomes,
    send,
    start_session,
    td_runs,
    wait_for,
)
from tests.dsh.test_bridge_lifecycle import _hold_outcomes, _installed_world, _reload_to_new_instance


def _read_again(d: Path) -> os.stat_result:
    """Put a copy of the inbox in its place (another file, the same lines), wait until the bridge has read it whole
    from its start, and return its stat."""
    inbox = d / "control.jsonl"
    copy = d / "control.jsonl.copy"
    copy.write_bytes(inbox.read_bytes())
    os.chmod(copy, 0o600)
    os.replace(copy, inbox)
    st = inbox.stat()
    wait_for(lambda: _read_to(d) == (st.st_ino, st.st_size), 60, "the bridge to read the copy")
    return st


def _read_to(d: Path) -> tuple[int, int] | None:
    """The inbox file (inode) the bridge reads and how far it has read it, as its state file says."""
    try:
        cursor = json.loads((d / "bridge.state.json").read_text())["cursor"]
        return cursor["ino"], cursor["offset"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _runs(d: Path, request_id: str) -> int:
    return [run["request"]["id"] for run, _ in td_runs(log_events(d))].count(request_id)


def test_a_request_read_again_or_run_by_hand_runs_once(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    world = DshHome(dsh, tmp_path, model.url)
    hold = world.base / "hold"  # while it exists, the bridge holds every request it read before running it
    world.extra_env["TAPEDECK_BRIDGE_HOLD"] = str(hold)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Read again: steps=30 sleep=1")
        answered = send(d, "checkpoint", {"objective": "answered before the re-read"})
        assert final_outcome(d, answered["id"])["outcome"] == "applied"
        hold.touch()
        waiting = send(d, "checkpoint", {"objective": "waiting through the re-read"})
        first = (d / "control.jsonl").stat()
        wait_for(lambda: _read_to(d) == (first.st_ino, first.st_size), 60, "the bridge to read both")
        inbox = _read_again(d)  # both lines come again: one answered, one the bridge holds in its op queue
        by_hand = send(d, "checkpoint", {"objective": "run by hand while its line waits"})
        wait_for(
            lambda: _read_to(d) == (inbox.st_ino, (d / "control.jsonl").stat().st_size), 60, "the third read"
        )
        web.command(sid, "/td " + json.dumps(by_hand))
        assert final_outcome(d, by_hand["id"])["outcome"] == "applied"
        hold.unlink()
        assert final_outcome(d, waiting["id"])["outcome"] == "applied"
        # ops run in the order they were taken: once this one is answered, a second run of either is logged
        marker = send(d, "checkpoint", {"objective": "after them"})
        assert final_outcome(d, marker["id"])["outcome"] == "applied"
    finals = [o["requestId"] for o in outcomes(d) if o["outcome"] != "pending"]
    assert finals == [answered["id"], by_hand["id"], waiting["id"], marker["id"]], finals
    assert [_runs(d, r["id"]) for r in (answered, waiting, by_hand)] == [1, 1, 1]


def _marks(d: Path) -> list[int] | None:
    """The mark ids bridge.state.json holds, None while it cannot be read."""
    try:
        return [m["markId"] for m in json.loads((d / "bridge.state.json").read_text())["marks"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def test_a_td_command_replayed_across_a_reload_while_its_first_run_has_no_outcome_is_refused(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """A checkpoint ran (its mark kept) and its outcome is not written yet (the test hook holds it) when the plugin
    reloads; its td command given again by hand then reaches the new instance, which has neither the outcome nor
    that instance's run to go by, only the record every instance of the process shares of the runs that began: it
    refuses the command, places no second mark, and the request keeps the one outcome of its first run."""
    world = _installed_world(dsh, model, tmp_path)
    hold = _hold_outcomes(world)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Idle first: steps=1 sleep=0", in_flight=False)
        wait_for(lambda: (bridge_json(d) or {}).get("state") == "idle", 60, "idle")
        mark = send(d, "checkpoint", {"objective": "runs across the reload"})
        wait_for(lambda: (bridge_json(d) or {}).get("inFlight"), 60, "the checkpoint in flight")
        wait_for(lambda: _marks(d) == [1], 60, "the mark kept")
        _reload_to_new_instance(d, world)
        replayed = web.command(sid, "/td " + json.dumps(mark))["result"]
        assert replayed["kind"] == "error" and "already ran" in replayed["text"], replayed
        hold.unlink()
        assert final_outcome(d, mark["id"])["detail"]["markId"] == 1
        after = send(d, "checkpoint", {"objective": "after the replay"})
        assert final_outcome(d, after["id"])["detail"]["markId"] == 2  # the replay placed no mark
    assert _marks(d) == [1, 2]
    finals = [o["requestId"] for o in outcomes(d) if o["outcome"] != "pending"]
    assert finals == [mark["id"], after["id"]], finals


def test_a_td_command_given_by_hand_that_dsh_died_running_is_refused_when_given_again(
    world: DshHome,
) -> None:
    """A checkpoint given by hand as a td command ran (its mark kept) and DSH was killed before its outcome was
    written (the test hook holds it); given again by hand to the DSH that resumes the session, it is refused: the
    record of the run that began, which the new process reads back, says it may have taken effect, and it did."""
    hold = _hold_outcomes(world)
    with DshWeb(world) as web:
        sid, d = start_session(world, web, "Idle first: steps=1 sleep=0", in_flight=False)
        wait_for(lambda: (bridge_json(d) or {}).get("state") == "idle", 60, "idle")
        mark = {"id": "by-hand-1", "op": "checkpoint", "args": {"objective": "given by hand"}}
        assert web.command(sid, "/td " + json.dumps(mark))["result"]["kind"] == "success"
        wait_for(lambda: _marks(d) == [1], 60, "the mark kept")
        with killed_and_resumed(web, sid, meanwhile=hold.unlink) as restarted:
            replayed = restarted.command(sid, "/td " + json.dumps(mark))["result"]
            assert replayed["kind"] == "error" and "already ran" in replayed["text"], replayed
            after = send(d, "checkpoint", {"objective": "after the replay"})
            assert final_outcome(d, after["id"])["detail"]["markId"] == 2  # the replay placed no mark
    assert _marks(d) == [1, 2]
    assert [o["requestId"] for o in outcomes(d) if o["outcome"] != "pending"].count(mark["id"]) == 1
