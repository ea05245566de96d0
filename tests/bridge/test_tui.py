"""The TUI on a DSH session through the bridge: the header, every control key, outcomes from the bridge's file,
bridge checkpoints on the Checkpoints screen, the DSH settings on the Config screen, and the read-only message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from tests.bridge.conftest import append_outcome, dsh_log, td_pair, write_bridge
from tests.conftest import FIXTURES
from tests.tui.pilot import make_app, settle, until
from tests.tui.screens_policy.harness import plain
from tui.screens.checkpoints import CheckpointsScreen
from tui.screens.config import ConfigScreen
from tui.screens.confirm import AskScreen, ConfirmScreen
from tui.screens.folds import FoldsScreen
from tui.screens.policy_screen import requests_for
from tui.widgets.header import SessionHeader

SIZE = (150, 40)
pytestmark = pytest.mark.anyio


def _inbox(log: Path) -> list[dict[str, Any]]:
    path = log.parent / "control.jsonl"
    return [orjson.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


def _header(app: Any) -> str:
    return str(app.screen.query_one(SessionHeader).render())


def _message(app: Any) -> str:
    """The policy screen's message line (why a request was not sent)."""
    return plain(app.screen.query_one("#policy-message", Static).content)


def _answer(log: Path, request: dict[str, Any], outcome: str = "applied", **extra: Any) -> None:
    append_outcome(log.parent, {"requestId": request["id"], "op": request["op"], "outcome": outcome, **extra})


async def _paused_by_key(pilot: Pilot[Any], log: Path, state: str) -> None:
    """Once the header shows the bridge's ``state``, ``P`` sends a pause: it is the inbox's one request."""
    await settle(pilot)
    await until(pilot, lambda: state in _header(pilot.app))
    await pilot.press("P")
    await until(pilot, lambda: len(_inbox(log)) == 1)


async def test_every_operator_key_sends_to_the_bridge_and_shows_its_outcome(bridged) -> None:
    log = bridged("running")
    app = make_app(log)
    async with app.run_test(size=SIZE) as pilot:
        await _paused_by_key(pilot, log, "DSH running")
        pause = _inbox(log)[0]
        assert pause["op"] == "pause"
        _answer(log, pause, detail="paused")
        write_bridge(log.parent, app.live.host.pid, "paused")
        await until(pilot, lambda: "DSH paused" in _header(app))
        await until(pilot, lambda: [i.state for i in requests_for(app.live).items()] == ["applied"])
        await pilot.press("P")  # paused: the same key resumes
        await until(pilot, lambda: len(_inbox(log)) == 2)
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        await pilot.press(*"look at the tests", "enter")
        await until(pilot, lambda: len(_inbox(log)) == 3)
        await pilot.press("K")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        await pilot.press(*"why", "enter")
        await until(pilot, lambda: len(_inbox(log)) == 4)
        await pilot.press("S")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "DSH keeps running" in str(app.screen.body)
        await pilot.press("y")
        await until(pilot, lambda: len(_inbox(log)) == 5)
        resume, message, mark, stop = _inbox(log)[1:]
        assert [r["op"] for r in (resume, message, mark, stop)] == ["resume", "message", "checkpoint", "stop"]
        assert message["args"] == {"text": "look at the tests"} and mark["args"] == {"objective": "why"}
        _answer(log, stop, "rejected", error="no turn is running")
        await until(pilot, lambda: requests_for(app.live).items()[-1].state == "rejected")
        assert requests_for(app.live).items()[-1].reason == "no turn is running"


async def test_the_header_names_an_old_bridge_plugin_until_dsh_runs_the_packaged_one(bridged) -> None:
    log = bridged("running")
    pid = orjson.loads((log.parent / "bridge.json").read_bytes())["pid"]
    write_bridge(log.parent, pid, "running", fingerprint=None)  # a plugin from before fingerprints
    app = make_app(log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await until(pilot, lambda: "DSH running (old bridge)" in _header(app))
        write_bridge(log.parent, pid, "running")  # `tapedeck bridge install` swapped the packaged plugin in
        await until(pilot, lambda: "DSH running" in _header(app) and "old bridge" not in _header(app))


async def test_requests_pending_when_the_bridge_exits_are_withdrawn_and_keys_say_why(bridged) -> None:
    log = bridged("idle")
    app = make_app(log)
    async with app.run_test(size=SIZE) as pilot:
        await _paused_by_key(pilot, log, "DSH idle")
        write_bridge(log.parent, None, "exited")
        await until(pilot, lambda: "DSH exited" in _header(app))
        await until(pilot, lambda: requests_for(app.live).items()[0].state == "cancelled")
        assert "the DSH bridge exited" in requests_for(app.live).items()[0].reason
        assert _inbox(log)[1] == {"withdraw": _inbox(log)[0]["id"], "at": _inbox(log)[1]["at"]}
        assert "bridge status" in (app.control_unavailable() or "")


async def test_a_request_the_dead_bridge_had_begun_to_run_reads_unknown_not_cancelled(bridged) -> None:
    """DSH died while it ran the request (bridge.json names it in flight): it may have taken effect, so the TUI
    says it is unknown whether it did, as control --wait does, instead of cancelled."""
    log = bridged("idle")
    app = make_app(log)
    async with app.run_test(size=SIZE) as pilot:
        await _paused_by_key(pilot, log, "DSH idle")
        sent = _inbox(log)[0]
        write_bridge(log.parent, None, "exited", inFlight=[{"id": sent["id"], "op": "pause"}])
        await until(pilot, lambda: "DSH exited" in _header(app))
        await until(pilot, lambda: requests_for(app.live).items()[0].state == "unknown")
        assert "may or may not have taken effect" in requests_for(app.live).items()[0].reason
        assert len(_inbox(log)) == 1  # nothing to withdraw: it ran


async def test_a_dsh_session_without_the_bridge_is_read_only_and_names_the_install(tmp_path: Path) -> None:
    log = dsh_log(tmp_path / "s")
    app = make_app(log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "read-only (no bridge)" in _header(app)
        await pilot.press("P")
        await pilot.pause(0.2)
        assert _inbox(log) == []
        assert "tapedeck bridge install" in (app.control_unavailable() or "")


async def test_checkpoints_screen_lists_bridge_marks_and_rewinds_to_one(bridged) -> None:
    done = {"requestId": "req-1", "op": "checkpoint", "outcome": "applied", "detail": {"markId": 1, "seq": 63, "objective": "find the bug"}}  # fmt: skip
    request = {"id": "req-1", "op": "checkpoint", "args": {"objective": "find the bug"}, "at": 1}
    log = bridged("idle", after_type="tool/call", insert=td_pair("c1", request, done))
    app = make_app(log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await until(pilot, lambda: "DSH idle" in _header(app))
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, CheckpointsScreen) and app.screen._view is not None)
        view = app.screen._view
        assert [(m.mark_id, m.active) for m in view.marks] == [(1, True)]
        assert view.preview_for(None).preview.region.shadowed_seqs == (63, 67, 103)
        await pilot.press("w")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        # the bridge rewinds at idle and writes a fixed note: no report, and not at the agent's next step
        said = " ".join(plain(static.content) for static in app.screen.query(Static))
        assert "DSH will replace 3 nodes" in said and "with one short note" in said and "once its turn ends" in said
        assert "report" not in said and "next step" not in said
        await pilot.press("y")
        await until(pilot, lambda: len(_inbox(log)) == 1)
        rewind = _inbox(log)[0]
        assert rewind["op"] == "rewind" and rewind["args"]["markId"] == 1
        assert rewind["args"]["preview"]["nodes"] == 3
        _answer(log, rewind, "pending", detail={"waitingFor": "idle"})
        waiting = "acknowledged; DSH applies it once its turn ends (at idle)"
        await until(pilot, lambda: requests_for(app.live).items()[-1].reason != "waiting for the host")
        assert requests_for(app.live).items()[-1].reason == waiting
        detail = {
            "markId": 1,
            "start": 63,
            "end": 103,
            "foldedNodes": 3,
            "seq": 120,
            "preview": rewind["args"]["preview"],
        }
        _answer(log, rewind, detail=detail)
        await until(pilot, lambda: requests_for(app.live).items()[-1].state == "applied")
        preview = rewind["args"]["preview"]
        assert requests_for(app.live).items()[-1].reason == (
            f"rewound to checkpoint 1: previewed 3 nodes / {preview['chars']} chars at seq {preview['seq']}; applied 3 at "
            "seq 120"
        )
        # DSH exited: w says so at once, where the whole dialog came up and only y said 'not sent'
        write_bridge(log.parent, None, "exited")
        await until(pilot, lambda: app.live.host.state == "exited")
        await pilot.press("w")
        await until(pilot, lambda: "Not sent: the DSH bridge exited" in _message(app))
        assert isinstance(app.screen, CheckpointsScreen) and len(_inbox(log)) == 1


def _pruned_result() -> str:
    """DSH's prune of the fixture's bash result (seq 65): a tool/result replacing it with a shorter text."""
    lines = (FIXTURES / "tool-call-turn.session.jsonl").read_text().splitlines()
    line = next(text for text in lines if '"tool/result"' in text)
    event = orjson.loads(line)
    event["data"]["message"]["content"][0]["content"] = [{"type": "text", "text": "[pruned]"}]
    event.update(surfaceOp={"op": "replace", "start": 65, "end": 65}, sourceEventSeqs=[65])
    return orjson.dumps(event).decode()


async def test_folds_screen_expands_a_result_dsh_pruned(bridged) -> None:
    log = bridged("idle", tail=[_pruned_result()])
    app = make_app(log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await until(pilot, lambda: "DSH idle" in _header(app))
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, FoldsScreen) and bool(app.screen._lines))
        assert [line.state for line in app.screen._lines.values()] == ["pruned"]
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: len(_inbox(log)) == 1)
        assert (_inbox(log)[0]["op"], _inbox(log)[0]["args"]) == ("expand", {"seq": 65})


async def test_config_screen_offers_the_dsh_settings_and_sends_one(bridged) -> None:
    log = bridged("idle")
    app = make_app(log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await until(pilot, lambda: "DSH idle" in _header(app))
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, ConfigScreen) and app.screen._view is not None)
        assert app.screen._view.values == (
            ("model", "deepseek-v4-flash"), ("reasoningEffort", None), ("shell.timeoutMs", None),
        )  # fmt: skip
        await pilot.press("down")
        await pilot.press("e")
        box = app.screen.query_one("#config-value")
        box.value = "low"
        await pilot.pause(0.1)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: len(_inbox(log)) == 1)
        assert _inbox(log)[0]["args"] == {"key": "reasoningEffort", "value": "low"}
        # DSH exited: the next change says so at once instead of bringing up its review
        write_bridge(log.parent, None, "exited")
        await until(pilot, lambda: app.live.host.state == "exited")
        box.value = "high"
        await pilot.pause(0.1)
        await pilot.press("enter")
        await until(pilot, lambda: "Not sent: the DSH bridge exited" in _message(app))
        assert isinstance(app.screen, ConfigScreen) and len([r for r in _inbox(log) if "op" in r]) == 1


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # a plain test: the module's anyio mark wants a backend
def test_a_bridge_outcome_is_never_read_ahead_of_the_state_it_wrote_before_it(
    bridged, monkeypatch: pytest.MonkeyPatch, anyio_backend: str
) -> None:
    """A host check read bridge.json's state, then the bridge's outcomes: a pause the bridge applied between the
    two reads (it writes 'paused' to bridge.json, then the outcome) was toasted 'applied' while the header said
    'DSH running', and P, going by that state, sent a second pause. The outcomes are now read first."""
    import tui.live
    from tui.live import LiveSession

    log = bridged("running")
    live = LiveSession(log, follow=False)
    live.run()
    assert live.check_host().state == "running"
    real = tui.live.read_host_state
    applied: list[bool] = []

    def read(*args: Any, **kwargs: Any) -> Any:
        state = real(*args, **kwargs)
        if not applied:  # the bridge applies the pause right after this read
            write_bridge(log.parent, live.host.pid, "paused")
            append_outcome(log.parent, {"requestId": "r-1", "op": "pause", "outcome": "applied"})
            applied.append(True)
        return state

    monkeypatch.setattr(tui.live, "read_host_state", read)
    for _ in range(2):
        state = live.check_host().state
        outcome = live.outcome_for("r-1")
        assert state == "paused" if outcome is not None and outcome.get("outcome") == "applied" else state == "running"
    assert state == "paused"


def test_an_outcome_file_that_cannot_be_read_leaves_the_view_reading_and_says_which_file(
    bridged, monkeypatch: pytest.MonkeyPatch, anyio_backend: str
) -> None:
    """A bridge's ``control.outcomes.jsonl`` that cannot be read (permission denied here; the server's refusal over
    SSH) ended the whole view on its error screen, the log readable as it was: the host check before the first
    paint reads the outcomes, and its OSError was taken for the log's, so the screen even named the log. The view
    now loads; the problem is kept for the host watch to tell, naming the outcome file."""
    from core.bridge.files import OutcomeReader
    from tui.live import LiveSession

    log = bridged("running")
    append_outcome(log.parent, {"requestId": "r-1", "op": "pause", "outcome": "applied"})

    def refused(self: OutcomeReader, offset: int, length: int) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(OutcomeReader, "_read_range", refused)
    live = LiveSession(log, follow=False)
    live.run()
    assert live.error is None and live.count > 0 and live.host.state == "running"
    assert live.outcomes_problem == f"{log.parent / 'control.outcomes.jsonl'}: cannot read (Permission denied)"
