"""``tapedeck control`` on sessions run by DSH through the bridge: the inbox, the outcomes file, the exit codes."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.cli import main
from core.control.inbox import INBOX_NAME, ControlError, validate_request
from tests.bridge.conftest import append_outcome, dsh_log, write_bridge


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _inbox(log: Path) -> list[dict[str, Any]]:
    path = log.parent / INBOX_NAME
    return [orjson.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


def _answer(log: Path, answer: Callable[[dict[str, Any]], list[dict[str, Any]]]) -> threading.Thread:
    """Stand in for the plugin's inbox loop: answer the first request with the outcome lines ``answer`` gives."""

    def loop() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            requests = [r for r in _inbox(log) if "id" in r]
            if requests:
                for outcome in answer(requests[0]):
                    append_outcome(log.parent, outcome)
                return
            time.sleep(0.02)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


def test_a_request_to_a_live_bridge_lands_in_the_inbox(bridged, capsys) -> None:
    log = bridged("running")
    code, out, _ = _run(
        ["control", str(log), "message", "--arg", "text=look at the tests", "--arg", "mode=queue"], capsys
    )
    assert code == 0 and "live DSH bridge" in out
    [request] = _inbox(log)
    assert request["op"] == "message" and request["args"] == {"text": "look at the tests", "mode": "queue"}
    assert (log.parent / INBOX_NAME).stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(("outcome", "code"), [("applied", 0), ("rejected", 1), ("expired", 1)])
def test_wait_reads_the_outcome_from_the_bridge(bridged, capsys, outcome: str, code: int) -> None:
    log = bridged("running")
    _answer(log, lambda r: [
        {"requestId": r["id"], "op": r["op"], "outcome": "pending"},
        {"requestId": r["id"], "op": r["op"], "outcome": outcome, **({"error": "no"} if outcome != "applied" else {"detail": "paused"})},
    ])  # fmt: skip
    got, out, _ = _run(["control", str(log), "pause", "--wait", "--timeout", "20", "--json"], capsys)
    data = json.loads(out)["data"]
    assert got == code and data["outcome"] == outcome and data["op"] == "pause"


def test_wait_that_times_out_withdraws_the_request(bridged, capsys) -> None:
    log = bridged("running")
    got, _, err = _run(["control", str(log), "stop", "--wait", "--timeout", "0.3"], capsys)
    assert got == 2 and "it was withdrawn, so the DSH bridge will never apply it" in err  # not 'the host'
    request, withdrawal = _inbox(log)
    assert withdrawal == {"withdraw": request["id"], "at": withdrawal["at"]}


def test_a_withdrawal_the_bridge_answers_applied_in_time_is_the_outcome(bridged, capsys) -> None:
    """The bridge applied the op while the wait gave up: the late applied outcome wins over the withdrawal."""
    log = bridged("running")

    def late(request: dict[str, Any]) -> list[dict[str, Any]]:
        while len(_inbox(log)) < 2:  # wait for the withdrawal
            time.sleep(0.02)
        return [{"requestId": request["id"], "op": "stop", "outcome": "applied"}]

    _answer(log, late)
    got, out, _ = _run(["control", str(log), "stop", "--wait", "--timeout", "0.3"], capsys)
    assert got == 0 and out.startswith("applied: stop") and "from the DSH bridge" in out


def test_an_exited_bridge_exits_3_unless_queued(tmp_path: Path, capsys) -> None:
    log = dsh_log(tmp_path / "s")
    write_bridge(log.parent, None, "exited")
    got, _, err = _run(["control", str(log), "pause"], capsys)
    assert got == 3 and "no live DSH bridge" in err and _inbox(log) == []
    got, out, _ = _run(["control", str(log), "pause", "--queue"], capsys)
    assert got == 0 and "queued" in out and _inbox(log)[0]["queued"] is True


@pytest.mark.skipif(not Path("/etc/machine-id").is_file(), reason="names this machine by /etc/machine-id")
def test_a_request_queued_for_a_copy_brought_from_another_machine_names_no_directory(tmp_path: Path, capsys) -> None:
    """A request for a DSH session names the directory its bridge.json says the bridge serves (``to``), so that a
    copy of that directory never runs it. A copy brought from another machine to the same path holds that
    machine's bridge.json, naming this path: a request queued for the copy named the other machine's directory, and
    the copy's DSH cancelled it when it resumed. It names none then (the copy's DSH takes it by its time), and this
    machine's own directory when the bridge.json is of it."""
    log = dsh_log(tmp_path / "s")
    write_bridge(log.parent, None, "exited", dirId="0123456789abcdef0123456789abcdef:64769:1234")
    assert _run(["control", str(log), "pause", "--queue"], capsys)[0] == 0
    st = log.parent.stat()
    own = f"{Path('/etc/machine-id').read_text().strip()}:{st.st_dev}:{st.st_ino}"
    write_bridge(log.parent, None, "exited", dirId=own)
    assert _run(["control", str(log), "resume", "--queue"], capsys)[0] == 0
    assert [(r["op"], r.get("to")) for r in _inbox(log)] == [("pause", None), ("resume", own)]


def test_config_set_on_dsh_takes_only_the_keys_dsh_can_change(bridged, capsys) -> None:
    log = bridged("idle")
    got, _, err = _run(
        ["control", str(log), "config.set", "--arg", "key=temperature", "--arg", "value=0.5"], capsys
    )
    assert (
        got == 2 and "model, reasoningEffort (this session) or <namespace>.<key>" in err and _inbox(log) == []
    )
    got, _, _ = _run(
        ["control", str(log), "config.set", "--arg", "key=reasoningEffort", "--arg", 'value="low"'], capsys
    )
    assert got == 0 and _inbox(log)[0]["args"] == {"key": "reasoningEffort", "value": "low"}
    got, _, err = _run(["control", str(log), "config.set", "--arg", "key=model", "--arg", "value=5"], capsys)
    assert got == 2 and "takes text, or null" in err
    got, _, _ = _run(
        ["control", str(log), "config.set", "--arg", "key=shell.timeoutMs", "--arg", "value=30000"], capsys
    )
    assert got == 0 and _inbox(log)[1]["args"] == {"key": "shell.timeoutMs", "value": 30000}


def test_mode_is_a_dsh_argument_only() -> None:
    assert validate_request("message", {"text": "x", "mode": "queue"}, "dsh") == {
        "text": "x",
        "mode": "queue",
    }
    with pytest.raises(ControlError, match='unknown argument "mode"'):
        validate_request("message", {"text": "x", "mode": "queue"})
    with pytest.raises(ControlError, match="steer, queue"):
        validate_request("message", {"text": "x", "mode": "later"}, "dsh")


def test_a_fleet_row_action_the_dead_bridge_had_begun_to_run_is_answered_unknown(
    bridged: Callable[..., Path],
) -> None:
    """A row action (``P`` in the fleet table) whose DSH died while running it: the toast's answer is that it may
    or may not have taken effect, as control --wait says, not 'no answer'."""
    from core.fleet.actions import RowAnswer, send_row_action

    log = bridged("running")
    answer = RowAnswer(log)
    request = send_row_action(log, "pause", {})
    write_bridge(log.parent, None, "exited", inFlight=[{"id": request["id"], "op": "pause", "origin": "fleet"}])
    found = answer.wait(request["id"], timeout=60)  # returns once the answer is read
    assert found is not None and found["outcome"] == "unknown", found
    assert "may or may not have taken effect" in found["error"]


@pytest.mark.parametrize(
    ("op", "named", "not_named"),
    [
        ("pause", "whether it is paused", "events"),
        ("resume", "whether it is paused", "events"),
        ("stop", "aborted by the operator", None),
    ],
)
def test_an_unknown_row_action_says_where_its_effect_shows(
    bridged: Callable[..., Path], op: str, named: str, not_named: str | None
) -> None:
    """The unknown answer names what tells whether that op took effect: the session's state for a pause or a resume
    (the op read from bridge.json, which the row's toast does not pass), the turn's end for a stop."""
    from core.fleet.actions import RowAnswer, send_row_action

    log = bridged("running")
    answer = RowAnswer(log)
    request = send_row_action(log, op, {})
    write_bridge(log.parent, None, "exited", inFlight=[{"id": request["id"], "op": op}])
    found = answer.wait(request["id"], timeout=60)  # returns once the answer is read
    assert found is not None and found["outcome"] == "unknown", found
    assert f"while it ran this {op}," in found["error"] and named in found["error"], found["error"]
    assert not_named is None or not_named not in found["error"], found["error"]


def test_an_unknown_config_set_says_a_session_setting_died_with_dsh(bridged, capsys) -> None:
    """control --wait on a config.set DSH died running: a model or reasoningEffort change lived in that DSH process
    only, so the answer says to send it again, and where a DSH setting's new value would show."""
    log = bridged("running")

    def die(request: dict[str, Any]) -> list[dict[str, Any]]:
        write_bridge(log.parent, None, "exited", inFlight=[{"id": request["id"], "op": "config.set"}])
        return []

    thread = _answer(log, die)
    code, out, _ = _run([
        "control", str(log), "config.set", "--arg", "key=model", "--arg", 'value="x"', "--wait", "--timeout", "10",
        "--json",
    ], capsys)  # fmt: skip
    thread.join()
    error = json.loads(out)["data"]["error"]
    assert code == 4 and "send it again" in error and "settings" in error and "events" not in error, error


def test_a_fleet_row_action_on_a_dsh_session_whose_bridge_json_cannot_be_used_says_why(
    bridged: Callable[..., Path], tmp_path: Path, sleeper: Callable[[], Any]
) -> None:
    """A row action on a copy of a bridged session, or one whose bridge was unloaded, was refused with 'a DSH
    session no tapedeck bridge runs (`tapedeck bridge install` adds it)': the bridge is installed, and installing it
    again changes nothing. The refusal says what ``control`` says: why the bridge.json there serves no one."""
    import shutil

    from core.fleet.actions import row_refusal, send_row_action

    log = bridged("running")
    copy = tmp_path / "copy"
    shutil.copytree(log.parent, copy)
    dsh = sleeper()
    unloaded = dsh_log(tmp_path / "unloaded")
    write_bridge(unloaded.parent, dsh.pid, "exited")
    for where, said in ((copy / log.name, f"written for {log.parent}, not for this directory"),
                        (unloaded, "unloaded at 20")):  # fmt: skip
        why = row_refusal(where)
        assert why is not None and said in why and "bridge install` adds it" not in why, why
        with pytest.raises(ControlError, match="nothing was sent"):
            send_row_action(where, "pause", {})
